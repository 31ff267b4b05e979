"""Red team, hostile bytes (issue 14): every byte an agent sends is data. A header nested past
any parser's recursion, lone surrogates in its messages or frames, an exception that cannot be
printed, a forged `ready`: each ends in a fault of the agent's kind, and the round, the smoke
report and `arena play` that meet it still write their record, in both sandboxes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from grader.cli import main
from grader.faults import FaultKind
from grader.results import load_results
from grader.smoke import SmokeSettings, run_smoke
from grader.verify import verify
from .conftest import AGENTS, TEST_LIMITS, play

pytestmark = pytest.mark.timeout(240)


def encodable(text: str) -> bool:
    """Whether every UTF-8 writer (YAML, JSON without ASCII escapes, a file) takes `text`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("name, kind, detail", [
    ("deep_header", FaultKind.PROTOCOL, "nested too deeply"),
    ("surrogate_error", FaultKind.AGENT_ERROR, "RuntimeError: bad \ufffd text \ufffd here"),
    ("surrogate_frame", FaultKind.AGENT_ERROR, "act() raised {'nested': ["),
    ("str_raises", FaultKind.AGENT_ERROR, "Unprintable: <the exception's message cannot be shown: str() raised ValueError>"),
    ("surrogate_repr", FaultKind.PROTOCOL, "act() returned Cell \ufffd\ufffd"),
])
def test_hostile_bytes_end_in_the_agents_fault(launch, assert_unharmed, name, kind, detail):
    handle = launch(name)
    assert handle.fault is None, handle.fault
    faults = play(handle, 10)
    assert [f.kind for f in faults] == [kind], (faults, handle.stderr_text()[-2000:])
    assert detail in faults[0].detail
    assert encodable(faults[0].detail) and len(faults[0].detail) <= 300
    json.dumps(faults[0].to_dict(), ensure_ascii=False).encode("utf-8")
    handle.close()
    assert_unharmed()


def test_a_forged_ready_keeps_only_short_encodable_versions(launch, assert_unharmed):
    handle = launch("forged_ready")
    assert handle.fault is None, handle.fault
    assert set(handle.versions) == {"python", "numpy"}
    assert all(encodable(v) and len(v) <= 40 for v in handle.versions.values()), handle.versions
    assert handle.versions["numpy"] == "{'a': [1, 2]}"
    faults = play(handle, 2)
    assert [f.kind for f in faults] == [FaultKind.PROTOCOL] and "unexpected reply 'ready'" in faults[0].detail
    handle.close()
    assert_unharmed()


SMOKE = SmokeSettings(games_vs_random=2, self_play_games=1, frozen_games=1, limits=TEST_LIMITS)


@pytest.mark.parametrize("name, kind", [("surrogate_error", "agent_error"), ("str_raises", "agent_error"),
                                        ("deep_header", "protocol"), ("forged_ready", "protocol")])
def test_a_smoke_report_is_written_for_a_hostile_agent(sandbox, name, kind):
    report = run_smoke(AGENTS / name, sandbox, SMOKE)
    assert report.result == "fail" and report.first_failure is not None
    assert report.first_failure.fault["kind"] == kind
    text = yaml.safe_dump(report.to_dict(), allow_unicode=True)
    assert encodable(text) and yaml.safe_load(text)["result"] == "fail"


def test_arena_play_records_a_hostile_agents_fault(sandbox, capsys):
    assert main(["play", "random-2 most/standard", "--black", str(AGENTS / "deep_header"), "--white", "random",
                 "--sandbox", sandbox.name]) == 0
    record = json.loads(capsys.readouterr().out)
    agent = record["agents"][str(AGENTS / "deep_header")]
    assert agent["fault"]["kind"] == "protocol" and "nested too deeply" in agent["fault"]["detail"]


def test_a_round_with_hostile_agents_publishes_and_verifies(sandbox, tmp_path, capsys):
    out, private = tmp_path / "rounds", tmp_path / "private"
    argv = ["round", "--tier", "public", "--envs", "random-2 most/standard", "--budget", "4", "--checkpoints", "0,4",
            "--games-per-checkpoint", "2", "--pairing-games", "2", "--sandbox", sandbox.name,
            "--agents", f"sur={AGENTS / 'surrogate_error'}", f"unprintable={AGENTS / 'str_raises'}",
            f"deep={AGENTS / 'deep_header'}", f"frame={AGENTS / 'surrogate_frame'}", "random",
            "--out", str(out), "--private-out", str(private)]
    assert main(argv) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    data = load_results(path)
    statuses = {a["name"]: a["status"] for a in data["environments"][0]["agents"]}
    assert statuses == {"sur": "agent_error", "unprintable": "agent_error", "deep": "protocol",
                        "frame": "agent_error", "random": "ok"}
    assert verify(path, private).replayed > 0
    # The staff's environment record keeps the fault details, written as UTF-8.
    record = json.loads(gzip.decompress((private / data["round"]["id"] / "envs" / "env-0000.json.gz").read_bytes()))
    assert record["entrants"]["sur"]["fault"]["detail"] == "act() raised RuntimeError: bad \ufffd text \ufffd here"

