"""The smoke test measures each entrant's peak resident memory from its sandbox's cgroup, in
both sandboxes, and the field carries it to the capacity plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from engine import public_tier
from grader.common.limits import MIB
from grader.play.field import Field, FieldEntry, read_field_measures
from grader.play.smoke import SmokeSettings, run_smoke

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parent.parent.parent
PACE_AGENT = ROOT / "tests" / "agents" / "pace_fraction"


def agent_holding(folder: Path, mib: int, fraction: float = 0.5) -> Path:
    """A copy of the pace_fraction agent that holds `mib` MiB from prepare on."""
    shutil.copytree(PACE_AGENT, folder)
    (folder / "pace.json").write_text(json.dumps({"seconds_per_cell": 0.0001, "fraction": fraction, "hold_mib": mib}))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_the_smoke_test_measures_an_agents_peak_memory(backend, request, tmp_path):
    sandbox = request.getfixturevalue(f"{backend}_sandbox")  # skipped, saying why, where it cannot run
    board = [public_tier()[0]]  # one board: each is a fresh sandbox with its own peak
    big = run_smoke(agent_holding(tmp_path / "big", 950), sandbox, SmokeSettings(), boards=board)
    assert big.passed, big.reason  # 950 MiB is inside its 1 GiB limit
    # The high-water mark counts the page cache too, which the kernel reclaims at the limit.
    assert 950 * MIB <= big.memory_peak_bytes <= 1024 * MIB
    assert big.to_dict()["memory_peak_bytes"] == big.memory_peak_bytes
    small = run_smoke(ROOT / "examples" / "random", sandbox, SmokeSettings(), boards=board)
    assert small.passed and 0 < small.memory_peak_bytes < 200 * MIB


def test_the_field_carries_the_peak_to_the_plan(tmp_path):
    field = Field(
        "public",
        None,
        "2026-01-01T00:00:00Z",
        entrants=[
            FieldEntry("ann", 1, "d1", "p", pace_fraction=0.5, memory_bytes=950 * MIB),
            FieldEntry("bob", 2, "d2", "p"),
        ],
    )
    path = tmp_path / "field.yaml"
    path.write_text(yaml.safe_dump(field.to_dict(), sort_keys=False))
    measures = read_field_measures(path)
    assert [(m.handle, m.pace_fraction, m.memory_bytes) for m in measures] == [
        ("ann", 0.5, 950 * MIB),
        ("bob", None, None),
    ]


def test_the_field_takes_each_entrants_peak_from_its_smoke_test(tmp_path, monkeypatch):
    import grader.play.field as field_mod
    from grader.play.smoke import BoardResult, SmokeReport
    from tests.github.conftest import REGISTRY, agent_files

    root = tmp_path / "main"
    root.mkdir()
    (root / "accounts.yaml").write_text(yaml.safe_dump(REGISTRY))
    for handle in ("alice", "bob", "carol"):  # carol is not approved
        for rel, data in agent_files(handle).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    seen = []

    def smoke(folder, sandbox, settings):
        seen.append(settings.round_field())
        board = BoardResult("6x8", "e", "env-x", result="pass", pace_ms=4.8, memory_peak_bytes=300 * MIB)
        return SmokeReport(submission=folder.name, sandbox="local", result="pass", boards=[board])

    monkeypatch.setattr(field_mod, "run_smoke", smoke)
    taken = field_mod.build_field(root, "ladder", sandbox=object())
    assert [(e.handle, e.memory_bytes) for e in taken.entrants] == [("alice", 300 * MIB), ("bob", 300 * MIB)]
    assert seen == [2, 2]  # projected to the next round's field: the approved accounts with a submission


def test_arena_smoke_takes_the_field_size_to_project_to(tmp_path, capsys):
    from grader.cli.main import main

    agent = ROOT / "examples" / "random"
    assert main(["smoke", str(agent), "--field-size", "1"]) == 1
    assert "--field-size 1: a round plays 2 to 300 entrants" in capsys.readouterr().err
