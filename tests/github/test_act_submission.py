"""submission.yml run as a workflow (act, tests/github/act_harness.py) against the fake hub:
a sealed pull request that passes (and another account reads nothing of it), one that fails,
one flagged then cleared by a staff review of its digest and then pushed again, and one from
an unapproved account. The smoke job opens and plays the agent in the docker sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.github.act_harness import submission_key
from tests.github.conftest import ALICE, CAROL, LABEL, STAFF, agent_files, package_digest, pr_payload

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def bot_comments(hub, number: int) -> list[str]:
    return [c["body"] for c in hub.comments.get(number, []) if c["user"] == hub.bot]


def assert_green(run, *jobs):
    assert run.code == 0, run.log[-4000:]
    for job in jobs:
        assert run.job(job) == "succeeded", f"{job}: {run.job(job)}\n{run.log[-4000:]}"


SECRET_MARK = b"sk-live-only-alice-and-staff-read-this"
AGENTS = Path(__file__).resolve().parents[1] / "agents"
# stderr_chatty at a rate a round's session stays under the output cap with (20 KB a call is
# over it: the smoke test refuses that), still writing a line to stderr on every call.
CHATTY = (AGENTS / "stderr_chatty" / "agent.py").read_bytes().replace(b'"." * 20_000', b'"." * 40')


def readable_by_anyone(hub, run) -> list[tuple[str, bytes]]:
    """What another account can read: the repository's files (the pull request's head), the
    comments, the statuses, the artifacts, and the run's log."""
    out = [(f"blob {sha}", data) for sha, data in hub.blobs.items()]
    out += [(f"comment on #{n}", c["body"].encode()) for n, cs in hub.comments.items() for c in cs]
    out += [("status", repr(st).encode()) for st in hub.statuses]
    out += [(str(p), p.read_bytes()) for p in Path(run.artifacts).rglob("*") if p.is_file()]
    return out + [("log", run.log.encode())]


def test_a_passing_submission_gets_success_and_one_comment(act, hub, act_docker):
    pull = hub.add_pull(
        7,
        ALICE,
        agent_files(
            "alice", "stderr_chatty", extra={"agent.py": CHATTY, "api.json": b'{"key": "' + SECRET_MARK + b'"}'}
        ),
    )
    run = act.run("submission.yml", "pull_request_target", pr_payload(7, ALICE, pull.head_sha), actor=ALICE)
    assert_green(run, "collect", "smoke", "report")
    # Another account reads nothing of the submission, and the key is in no log.
    for where, data in readable_by_anyone(hub, run):
        for secret in (SECRET_MARK, b"def act(", b"class Agent:", b"call 1: ....."):
            assert secret not in data, f"{secret!r} is readable in {where}"
    assert submission_key() not in run.log
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


def test_a_flagged_submission_is_held_then_cleared_by_a_staff_review_then_held_again_when_pushed(act, hub, act_docker):
    flagged = agent_files("alice", extra={"helper.py": b"import subprocess\n"})
    pull = hub.add_pull(13, ALICE, flagged)
    run = act.run("submission.yml", "pull_request_target", pr_payload(13, ALICE, pull.head_sha), actor=ALICE)
    assert_green(run, "collect", "smoke", "report")
    assert hub.statuses[-1]["state"] == "pending" and LABEL in hub.statuses[-1]["description"]
    body = bot_comments(hub, 13)[0]
    assert "Held for staff review" in body and "1 import that needs a staff look" in body
    assert "subprocess" not in body and "helper.py" not in body
    # A member of staff opens it (arena open-submission), reads it, comments the digest it
    # printed and labels it: the labeled event runs the check again.
    hub.add_comment(13, STAFF, f"/cleared {package_digest(flagged)}")
    pull.labels.append(LABEL)
    hub.add_label_event(13, "labeled", LABEL, STAFF, "2026-11-20T10:00:00Z")
    run = act.run(
        "submission.yml",
        "pull_request_target",
        pr_payload(13, ALICE, pull.head_sha, action="labeled", labels=[LABEL], label=LABEL, sender=STAFF),
        actor=STAFF,
    )
    assert_green(run, "collect", "smoke", "report")
    assert hub.statuses[-1]["state"] == "success"
    (body,) = bot_comments(hub, 13)  # the one comment, edited
    assert f"cleared by staff (`{STAFF[1]}`) for the digest `{package_digest(flagged)}`" in body
    print(f"act: submission.yml (flagged, then reviewed) ran in {run.timing}")
    # v2 (a new import) is pushed, and the pull request closed and reopened at once: the reopen
    # cancels the synchronize run, so the label is still on. The review named v1's bytes: held.
    v2 = agent_files("alice", extra={"helper.py": b"import socket\n"})
    pushed = hub.add_pull(13, ALICE, v2, labels=[LABEL])
    run = act.run(
        "submission.yml",
        "pull_request_target",
        pr_payload(13, ALICE, pushed.head_sha, action="reopened", labels=[LABEL]),
        actor=ALICE,
    )
    assert_green(run, "collect", "smoke", "report")
    assert hub.statuses[-1]["sha"] == pushed.head_sha and hub.statuses[-1]["state"] == "pending"
    (body,) = bot_comments(hub, 13)
    assert "Held for staff review" in body and "no staff review names this submission's digest" in body
    print(f"act: submission.yml (re-pushed after the review) ran in {run.timing}")


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

    act = Act(
        scratch,
        hub,
        act_wheels,
        tmp_path / "act",
        docker_host=f"unix://{tmp_path}/no-engine.sock",
        toolcache=act_toolcache,
    )
    pull = hub.add_pull(14, ALICE, agent_files("alice"))
    run = act.run("submission.yml", "pull_request_target", pr_payload(14, ALICE, pull.head_sha), actor=ALICE)
    assert run.job("collect") == "succeeded" and run.job("smoke") == "failed" and run.job("report") == "succeeded"
    (body,) = bot_comments(hub, 14)
    assert "the arena failed, not your agent: it will be re-run" in body and "Smoke test failed" not in body
    assert hub.statuses[-1]["state"] == "error"
    print(f"act: submission.yml (the arena failed) ran in {run.timing}")
