"""Arena faults re-run the environment; past the threshold the round is held, not published."""

from __future__ import annotations

import pytest

import grader.rounds.play as play
from grader.common.faults import Fault, FaultKind
from grader.common.limits import DEFAULT_LIMITS
from grader.play.agent_handle import AgentHandle
from grader.play.session import HandleSession, open_session
from grader.rounds.orchestrate import run_round
from grader.verification.verify import verify
from tests.rounds.conftest import field, small_plan, without_execution

pytestmark = pytest.mark.timeout(120)


def failing_launches(count: int, who: str | None = "alpha", fault: Fault | None = None):
    """An open_session that fails `who`'s first `count` launches with the arena's launch_failed
    (or `fault`; who=None: every launch of an agent, the arena's control agent's too: the arena
    is broken)."""
    state = {"left": count}
    fault = fault or Fault(FaultKind.LAUNCH_FAILED, "no sandbox today")

    def opener(entrant, spec, limits, sandbox=None):
        if (entrant.name == who or (who is None and entrant.kind != "reference")) and state["left"] > 0:
            state["left"] -= 1
            return HandleSession(who, AgentHandle.failed(fault, DEFAULT_LIMITS, who))
        return open_session(entrant, spec, limits, sandbox)

    return opener


def test_an_arena_fault_reruns_the_environment(tmp_path, monkeypatch):
    plan = small_plan(field(("alpha", "Learner"), references=("random",)), envs="random-2 most/standard")
    clean = run_round(plan, tmp_path / "clean", tmp_path / "pc", command="clean")
    monkeypatch.setattr(play, "open_session", failing_launches(1))
    rerun = run_round(plan, tmp_path / "out", tmp_path / "private", command="rerun")
    assert rerun.status == "published"
    faults = without_execution(rerun.public_path)
    assert faults == without_execution(clean.public_path)  # the re-run is the same environment
    text = rerun.public_path.read_text()
    assert "launch_failed" in text and "no sandbox today" not in text


def test_an_environment_the_arena_always_fails_holds_the_round(tmp_path, monkeypatch, capsys):
    plan = small_plan(field(("alpha", "Learner"), references=("random",)), envs="random-2 most/standard")
    monkeypatch.setattr(play, "open_session", failing_launches(99, who=None))
    outcome = run_round(plan, tmp_path / "out", tmp_path / "private", command="held")
    assert outcome.status == "held"
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "private" / plan.round_id / "held.yaml").exists()
    assert "held, not published" in capsys.readouterr().err
    # Fixed, and run again with the same arguments: it retries and publishes.
    monkeypatch.setattr(play, "open_session", open_session)
    assert run_round(plan, tmp_path / "out", tmp_path / "private", command="again").status == "published"


def test_too_many_arena_faults_hold_the_round(tmp_path, monkeypatch):
    plan = small_plan(
        field(("alpha", "Learner"), references=("random",)), envs="random-2 most/standard", max_arena_faults=0
    )
    monkeypatch.setattr(play, "open_session", failing_launches(1))
    assert run_round(plan, tmp_path / "out", tmp_path / "private", command="x").status == "held"


def test_one_agent_failing_the_arenas_way_every_time_is_charged_and_holds_nothing(tmp_path, monkeypatch):
    """The same entrant, the same arena fault, again on the re-run, while the control agent
    plays: the entrant's doing. It gets agent_error naming the fault; the others' results are
    those of a round without the trouble; no arena fault is left to hold the round."""
    plan = small_plan(
        field(("alpha", "Learner"), ("bravo", "FirstLegal"), references=("random",)),
        envs="random-2 most/standard",
        max_arena_faults=0,
    )
    clean = run_round(plan, tmp_path / "clean", tmp_path / "pc", command="clean")
    monkeypatch.setattr(play, "open_session", failing_launches(99, who="alpha"))
    outcome = run_round(plan, tmp_path / "out", tmp_path / "private", command="charged")
    assert outcome.status == "published"
    data = without_execution(outcome.public_path)
    statuses = {row["name"]: row["status"] for row in data["environments"][0]["agents"]}
    assert statuses["alpha"] == "agent_error" and statuses["bravo"] == "ok" and statuses["random"] == "ok"
    import yaml

    full = yaml.safe_load(outcome.full_path.read_text())
    assert full["provenance"]["execution"]["arena_faults"] == []
    clean_rows = {r["name"]: r for r in without_execution(clean.public_path)["environments"][0]["agents"]}
    rows = {r["name"]: r for r in data["environments"][0]["agents"]}
    for name in ("bravo", "random"):  # their learning is untouched by alpha's trouble
        assert (
            rows[name]["curve"] == clean_rows[name]["curve"]
            and rows[name]["self_play"] == clean_rows[name]["self_play"]
        )


def test_a_host_short_of_memory_is_never_charged_to_an_agent_below_its_limit(tmp_path, monkeypatch, capsys):
    """The kernel kills the same agent for memory below its own limit on every attempt, while
    the control agent plays: the host ran short, so no agent is charged; the environment is held
    with that reason and what to change."""
    plan = small_plan(
        field(("alpha", "Learner"), ("bravo", "FirstLegal"), references=("random",)), envs="random-2 most/standard"
    )
    oom = Fault(FaultKind.OOM, "killed for memory during prepare below its limit of 1024 MiB: the host ran short")
    monkeypatch.setattr(play, "open_session", failing_launches(99, who="alpha", fault=oom))
    outcome = run_round(plan, tmp_path / "out", tmp_path / "private", command="short")
    assert outcome.status == "held" and not (tmp_path / "out").exists()
    err = capsys.readouterr().err
    assert "the host ran short of memory" in err and "alpha below its own limit of 1024 MiB" in err
    assert "never charged to the agent" in err and "give the runner more memory" in err
    import yaml

    held = yaml.safe_load((tmp_path / "private" / plan.round_id / "held.yaml").read_text())
    kinds = {f["kind"] for h in held["held_environments"] for f in h["arena_faults"]}
    assert kinds == {"oom"}
    assert play.charged_fault([{"entrant": "alpha", "kind": "oom", "detail": "", "phase": "p"}] * 2) is None
    assert play.charged_fault([{"entrant": "alpha", "kind": "pipe", "detail": "", "phase": "p"}] * 2) is not None


def test_an_agent_over_the_pace_at_the_end_of_its_session_times_out(tmp_path):
    """The rules (5.1, the limits table): a mean act() time over the board's pace is `timeout`,
    judged at the end of the session, even when the agent never reached the early stop."""
    import dataclasses

    from grader.common.limits import DEFAULT_LIMITS

    limits = dataclasses.replace(DEFAULT_LIMITS, pace_min_acts=20)
    plan = small_plan(
        field(("alpha", "Learner"), ("slow", "OverPace"), references=("random",)),
        envs="random-2 most/standard",
        limits=limits,
    )
    outcome = run_round(plan, tmp_path / "out", tmp_path / "private", command="pace")
    rows = {r["name"]: r for r in without_execution(outcome.public_path)["environments"][0]["agents"]}
    assert rows["slow"]["status"] == "timeout" and rows["alpha"]["status"] == "ok"
    # Given after its last game, the fault ended no game: the round verifies all the same.
    assert verify(outcome.public_path, tmp_path / "private").replayed > 0
