"""Perft against published counts and the reference's counts for every capture rule."""

from __future__ import annotations

import pytest
import yaml

from engine import Capture, parse_spec, perft, perft_divide
from engine.reference import RefBoard
from engine.reference import perft as ref_perft
from tests.conftest import DATA, NO_JIT, skip_without_jit

PUBLISHED = yaml.safe_load((DATA / "perft.yaml").read_text())
PER_RULE = yaml.safe_load((DATA / "perft_rules.yaml").read_text())
FAST_DEPTH = 4 if NO_JIT else 8


def spec_of(entry: dict, win: str = "most"):
    return parse_spec(
        {
            "layout": {"rows": entry["rows"], "cols": entry["cols"], "obstacles": entry["obstacles"]},
            "rules": {"win": win, "capture": entry["capture"]},
        }
    )


def assert_perft(spec, depth: int, expected: int) -> None:
    """Compare, and on a mismatch show the per-move divide of the kernels and the reference."""
    got = perft(spec, depth)
    if got != expected:
        ours = perft_divide(spec, depth)
        board = RefBoard(spec.layout, spec.rules)
        theirs = {}
        for m in board.legal():
            child = board.copy()
            child.play(m)
            theirs[str(m)] = ref_perft(child, depth - 1)
        pytest.fail(
            f"perft({depth}) = {got}, expected {expected}\n kernels divide: {ours}\n reference divide: {theirs}"
        )


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_counts(name):
    entry = PUBLISHED[name]
    spec = spec_of(entry)
    for depth, expected in enumerate(entry["counts"][:FAST_DEPTH], start=1):
        assert_perft(spec, depth, expected)


@pytest.mark.slow
@skip_without_jit
@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_counts_deep(name):
    entry = PUBLISHED[name]
    spec = spec_of(entry)
    for depth in (9, 10):
        assert_perft(spec, depth, entry["counts"][depth - 1])


def test_depth_zero_is_one():
    assert perft(spec_of(PUBLISHED["standard-8x8"]), 0) == 1


@pytest.mark.parametrize("name", list(PER_RULE))
def test_every_rule_against_reference_counts(name):
    entry = PER_RULE[name]
    spec = spec_of(entry)
    for depth, expected in enumerate(entry["counts"][: 3 if NO_JIT else 5], start=1):
        assert_perft(spec, depth, expected)


def test_every_capture_rule_has_golden_perft_data():
    covered = {entry["capture"] for entry in PER_RULE.values()}
    missing = {c.value for c in Capture} - covered
    assert not missing, f"capture rules without golden perft data: {missing}"


def test_turn_limit_ends_the_tree():
    spec = parse_spec(
        {"layout": {"rows": 8, "cols": 8}, "rules": {"win": "band", "k": 0.8, "capture": "standard", "turn_limit": 2}}
    )
    assert perft(spec, 2) == 12
    assert perft(spec, 5) == 12  # every line ends at 2 placements
