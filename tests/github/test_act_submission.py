"""submission.yml run as a workflow (act, tests/github/act_harness.py) against the fake hub:
a pull request that passes, one that fails, one flagged then cleared by a staff label, and
one from an unapproved account. The smoke job plays the agent in the docker sandbox."""

from __future__ import annotations

import pytest

from tests.github.conftest import ALICE, CAROL, LABEL, STAFF, agent_files, pr_payload

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def bot_comments(hub, number: int) -> list[str]:
    return [c["body"] for c in hub.comments.get(number, []) if c["user"] == hub.bot]


def assert_green(run, *jobs):
    assert run.code == 0, run.log[-4000:]
    for job in jobs:
        assert run.job(job) == "succeeded", f"{job}: {run.job(job)}\n{run.log[-4000:]}"


def test_a_passing_submission_gets_success_and_one_comment(act, hub, act_docker):
    pull = hub.add_pull(7, ALICE, agent_files("alice", "stderr_chatty"))
    run = act.run("submission.yml", "pull_request_target", pr_payload(7, ALICE, pull.head_sha), actor=ALICE)
    assert_green(run, "collect", "smoke", "report")
    (body,) = bot_comments(hub, 7)
    assert "smoke test passed" in body and "| 12x10 |" in body
    assert hub.statuses[-1]["sha"] == pull.head_sha and hub.statuses[-1]["state"] == "success"
    assert hub.statuses[-1]["context"] == "arena/submission"
    assert "actions/runs/" in hub.statuses[-1]["target_url"]
    # The agent's own output is for its owner only (the rules): never in the public comment.
    assert "tail of your agent" not in body and "call 1: ....." not in body
    print(f"act: submission.yml (pass) ran in {run.timing}")


def test_a_failing_submission_gets_failure_naming_the_board(act, hub, act_docker):
    pull = hub.add_pull(8, ALICE, agent_files("alice", "crash_on_import"))
    run = act.run("submission.yml", "pull_request_target", pr_payload(8, ALICE, pull.head_sha), actor=ALICE)
    assert_green(run, "collect", "smoke", "report")
    (body,) = bot_comments(hub, 8)
    assert "**Smoke test failed" in body and "Traceback" not in body
    assert hub.statuses[-1]["state"] == "failure"
    print(f"act: submission.yml (fail) ran in {run.timing}")


def test_a_flagged_submission_is_held_then_cleared_by_a_staff_label(act, hub, act_docker):
    flagged = agent_files("alice", extra={"helper.py": b"import subprocess\n"})
    pull = hub.add_pull(13, ALICE, flagged)
    run = act.run("submission.yml", "pull_request_target", pr_payload(13, ALICE, pull.head_sha), actor=ALICE)
    assert_green(run, "collect", "smoke", "report")
    assert hub.statuses[-1]["state"] == "pending" and LABEL in hub.statuses[-1]["description"]
    assert "Held for staff review" in bot_comments(hub, 13)[0] and "subprocess" in bot_comments(hub, 13)[0]
    # A member of staff reads it and labels it: the labeled event runs the check again.
    pull.labels.append(LABEL)
    hub.add_label_event(13, "labeled", LABEL, STAFF, "2026-11-20T10:00:00Z")
    run = act.run("submission.yml", "pull_request_target",
                  pr_payload(13, ALICE, pull.head_sha, action="labeled", labels=[LABEL], label=LABEL, sender=STAFF),
                  actor=STAFF)
    assert_green(run, "collect", "smoke", "report")
    assert hub.statuses[-1]["state"] == "success"
    (body,) = bot_comments(hub, 13)  # the one comment, edited
    assert f"cleared by staff ({STAFF[1]})" in body
    print(f"act: submission.yml (flagged, then labeled) ran in {run.timing}")


def test_an_unapproved_account_is_refused_and_nothing_runs(act, hub):
    pull = hub.add_pull(9, CAROL, agent_files("carol"))
    run = act.run("submission.yml", "pull_request_target", pr_payload(9, CAROL, pull.head_sha), actor=CAROL)
    assert_green(run, "collect", "report")
    assert run.job("smoke") is None, "the smoke job must not run for an unapproved account"
    assert not hub.posted("GET", "/git/blobs/")
    assert "this account has not been approved yet" in bot_comments(hub, 9)[0]
    assert hub.statuses[-1]["state"] == "failure"
    print(f"act: submission.yml (unapproved) ran in {run.timing}")


def test_an_arena_failure_of_the_smoke_gate_is_never_the_agents(scratch, hub, act_wheels, act_toolcache, tmp_path):
    """No docker engine answers on the smoke runner: the smoke job fails on the arena's side and
    delivers no report, and the pull request is told so - never that the agent failed."""
    from tests.github.act_harness import Act
    act = Act(scratch, hub, act_wheels, tmp_path / "act", docker_host=f"unix://{tmp_path}/no-engine.sock",
              toolcache=act_toolcache)
    pull = hub.add_pull(14, ALICE, agent_files("alice"))
    run = act.run("submission.yml", "pull_request_target", pr_payload(14, ALICE, pull.head_sha), actor=ALICE)
    assert run.job("collect") == "succeeded" and run.job("smoke") == "failed" and run.job("report") == "succeeded"
    (body,) = bot_comments(hub, 14)
    assert "the arena failed, not your agent: it will be re-run" in body and "Smoke test failed" not in body
    assert hub.statuses[-1]["state"] == "error"
    print(f"act: submission.yml (the arena failed) ran in {run.timing}")
