"""The site's page cache never serves a stale page: its key covers what pages render from
outside the rounds (the fault kinds, the limits, the public tier), and a round read from its
JSON twin renders as the same round read from its YAML."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from grader.common import limits as limits_mod
from grader.rounds.results import check_twin, read_document, twin_path, write_twin
from grader.season.site_settings import load_site_config
from grader.site import build, model
from tests.site.conftest import site_text

FIXTURES = Path(__file__).parent / "fixtures"


def _build(rounds: Path, out: Path, cache: Path | None) -> dict[str, str]:
    config = load_site_config(FIXTURES / "site-ended.yaml")
    build(
        rounds,
        out,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=config,
        cache_dir=cache,
        data_commit="a",
        log=lambda m: None,
    )
    return site_text(out)


def _rounds(tmp_path: Path) -> Path:
    rounds = tmp_path / "rounds"
    shutil.copytree(FIXTURES / "rounds", rounds)
    return rounds


def test_a_change_of_fault_kinds_renders_the_pages_again(tmp_path, monkeypatch):
    rounds, cache = _rounds(tmp_path), tmp_path / "cache"
    before = _build(rounds, tmp_path / "out", cache)
    # An agent's fault the fixture rounds hold, shown on its account page by kind.
    shown = [k for k in model.FAULT_KINDS if any(f"<code>{k}</code>" in t or f">{k}<" in t for t in before.values())]
    assert shown, "the fixture site shows no fault kind: this test would prove nothing"
    monkeypatch.setattr(model, "FAULT_KINDS", tuple(k for k in model.FAULT_KINDS if k not in shown))
    cached = _build(rounds, tmp_path / "out", cache)
    fresh = _build(rounds, tmp_path / "fresh", None)
    assert cached != before and cached == fresh


def test_a_change_of_limits_renders_the_pages_again(tmp_path, monkeypatch):
    rounds, cache = _rounds(tmp_path), tmp_path / "cache"
    before = _build(rounds, tmp_path / "out", cache)
    changed = dataclasses.replace(limits_mod.DEFAULT_LIMITS, act_soft_seconds=0.75)
    monkeypatch.setattr(limits_mod, "DEFAULT_LIMITS", changed)
    monkeypatch.setattr("grader.site.builder.DEFAULT_LIMITS", changed)
    monkeypatch.setattr("grader.site.docs.DEFAULT_LIMITS", changed)
    cached = _build(rounds, tmp_path / "out", cache)
    fresh = _build(rounds, tmp_path / "fresh", None)
    assert cached != before and cached == fresh


def test_rounds_read_from_their_twins_render_as_from_their_yaml(tmp_path):
    plain = _build(FIXTURES / "rounds", tmp_path / "plain", None)
    rounds = _rounds(tmp_path)
    for path in sorted(rounds.glob("*.yaml")):
        assert not twin_path(path).exists()  # written before twins: they still load
        write_twin(path)
    assert _build(rounds, tmp_path / "twins", None) == plain


def test_a_stale_twin_is_not_read_and_verify_names_it(tmp_path):
    """A results file edited after its twin was written is read from the YAML, never the twin;
    `check_twin` (what `arena verify` runs) names the stale twin, and a forged one."""
    rounds = _rounds(tmp_path)
    path = sorted(rounds.glob("public-*.yaml"))[0]
    write_twin(path)
    doc, from_twin = read_document(path)
    assert from_twin and check_twin(path, doc) == []
    path.write_bytes(path.read_bytes().replace(b"arena_version: ", b"arena_version: edited-", 1))
    edited, from_twin = read_document(path)
    assert not from_twin and edited["provenance"]["arena_version"].startswith("edited-")
    assert "a stale twin" in check_twin(path, edited)[0]
    write_twin(path)
    twin = twin_path(path)
    twin.write_bytes(twin.read_bytes().replace(b'"arena_version":"edited-', b'"arena_version":"forged-', 1))
    assert "document differs" in check_twin(path, edited)[-1]
