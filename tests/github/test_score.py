"""Requested runs: `/score` against a local GitHub, the quota across the rolling 7-day window."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from grader.cli.main import main
from grader.documents.yaml_io import format_time
from grader.season.quota import Request, RequestLog, load_log, write_log
from tests.github.conftest import ALICE, BOB, CAROL, agent_files, comment_event

pytestmark = pytest.mark.timeout(60)
T0 = dt.datetime(2026, 11, 1, 10, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def request(hub, repo_files, tmp_path, event, now) -> dict:
    outputs = tmp_path / "outputs.txt"
    outputs.write_text("")
    code = main(
        [
            "score",
            "request",
            "--event",
            str(event),
            "--accounts",
            str(repo_files / "accounts.yaml"),
            "--config",
            str(repo_files / "config" / "competition.yaml"),
            "--log",
            str(repo_files / "requests" / "score.yaml"),
            "--api-url",
            hub.api,
            "--now",
            now.isoformat(),
        ]
    )
    assert code == 0
    return dict(line.split("=", 1) for line in outputs.read_text().splitlines())


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs.txt"))


def seed_log(repo_files, times, statuses=None, account=ALICE[0], handle="alice"):
    log = RequestLog()
    for i, t in enumerate(times):
        log = log.add(Request(f"c-{i + 1}", account, handle, 1, "a" * 40, t, (statuses or {}).get(i, "published")))
    write_log(repo_files / "requests" / "score.yaml", log)


def replies(hub, number):
    return [c["body"] for c in hub.comments.get(number, []) if c["user"] == hub.bot]


def test_quota_counts_across_the_seven_day_boundary(hub, repo_files, tmp_path, token, outputs):
    pull = hub.add_pull(30, ALICE, agent_files("alice"), merged=True)
    seed_log(repo_files, [T0, T0 + DAY, T0 + 2 * DAY])
    # One second before the first run leaves the window: all three still count.
    just_before = T0 + 7 * DAY - dt.timedelta(seconds=1)
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 30, ALICE, ALICE, 501), just_before)
    assert out["queued"] == "false"
    assert (
        f"0 of 3 requested runs left in the rolling window; the next one frees at {format_time(T0 + 7 * DAY)}"
        in replies(hub, 30)[-1]
    )
    # At exactly seven days it has dropped out: one run is free, and it is taken.
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 30, ALICE, ALICE, 502), T0 + 7 * DAY)
    assert out == {"queued": "true", "request_id": "c-502", "handle": "alice", "commit": pull.merge_commit_sha}
    assert (
        f"0 of 3 requested runs left in the rolling window; the next one frees at {format_time(T0 + 8 * DAY)}"
        in replies(hub, 30)[-1]
    )
    log = load_log(repo_files / "requests" / "score.yaml")
    assert log.get("c-502").status == "queued" and log.get("c-502").commit == pull.merge_commit_sha


def test_arena_failures_are_not_counted(hub, repo_files, tmp_path, token, outputs):
    hub.add_pull(31, ALICE, agent_files("alice"), merged=True)
    seed_log(repo_files, [T0, T0 + DAY, T0 + 2 * DAY], statuses={1: "arena_failed"})
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 31, ALICE, ALICE, 601), T0 + 3 * DAY)
    assert out["queued"] == "true"
    assert "0 of 3 requested runs left" in replies(hub, 31)[-1]


def test_same_comment_twice_is_one_request(hub, repo_files, tmp_path, token, outputs):
    hub.add_pull(32, ALICE, agent_files("alice"), merged=True)
    event = comment_event(tmp_path, 32, ALICE, ALICE, 701)
    assert request(hub, repo_files, tmp_path, event, T0)["queued"] == "true"
    assert request(hub, repo_files, tmp_path, event, T0)["queued"] == "false"
    assert len(load_log(repo_files / "requests" / "score.yaml").requests) == 1 and len(replies(hub, 32)) == 1


@pytest.mark.parametrize(
    "who,pr_author,merged,text",
    [
        (CAROL, CAROL, True, "this account has not been approved yet"),
        ((7777, "stranger"), ALICE, True, "has no arena account"),
        (BOB, ALICE, True, "you can ask for runs of your own (`bob`) only"),
        (ALICE, ALICE, False, "only a merged submission can be scored"),
    ],
)
def test_refusals(hub, repo_files, tmp_path, token, outputs, who, pr_author, merged, text):
    hub.add_pull(33, pr_author, agent_files(pr_author[1].split("-")[0]), merged=merged)
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 33, who, pr_author, 801), T0)
    assert out["queued"] == "false" and text in replies(hub, 33)[-1]
    assert not (repo_files / "requests" / "score.yaml").exists()


def test_other_comments_are_ignored(hub, repo_files, tmp_path, token, outputs):
    hub.add_pull(34, ALICE, agent_files("alice"), merged=True)
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 34, ALICE, ALICE, 901, body="nice /score"), T0)
    assert out == {"queued": "false"} and not hub.comments.get(34)


def test_finish_records_the_outcome_and_replies(hub, repo_files, tmp_path, token, outputs):
    pull = hub.add_pull(35, ALICE, agent_files("alice"), merged=True)
    request(hub, repo_files, tmp_path, comment_event(tmp_path, 35, ALICE, ALICE, 1001), T0)
    code = main(
        [
            "score",
            "finish",
            "--request",
            "c-1001",
            "--status",
            "arena_failed",
            "--repository",
            "arena-org/arena",
            "--config",
            str(repo_files / "config" / "competition.yaml"),
            "--log",
            str(repo_files / "requests" / "score.yaml"),
            "--api-url",
            hub.api,
            "--now",
            (T0 + DAY).isoformat(),
        ]
    )
    assert code == 0
    log = yaml.safe_load((repo_files / "requests" / "score.yaml").read_text())
    assert log["requests"][0]["status"] == "arena_failed"
    assert "not counted" in replies(hub, 35)[-1] and "3 of 3 requested runs left" in replies(hub, 35)[-1]
    assert pull.merge_commit_sha


def test_an_unknown_argument_is_answered_not_ignored(hub, repo_files, tmp_path, token, outputs):
    hub.add_pull(31, ALICE, agent_files("alice"), merged=True)
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 31, ALICE, ALICE, 601, body="/score please"), T0)
    assert out["queued"] == "false"
    (reply,) = replies(hub, 31)
    assert "@alice-gh" in reply and "`/score` takes no argument, so `/score please` was not run" in reply
    assert not (repo_files / "requests" / "score.yaml").exists()
    # Another command that merely starts with the word is not this one: nothing is said.
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 31, ALICE, ALICE, 602, body="/scoreboard"), T0)
    assert out["queued"] == "false" and len(replies(hub, 31)) == 1


def test_a_published_run_reaches_its_owner_without_its_numbers(hub, repo_files, tmp_path, token, outputs):
    """A pull request is public and a requested run private: the reply tells its owner the run
    is done and where its numbers are (the sealed history), and carries none of them."""
    hub.add_pull(36, ALICE, agent_files("alice"), merged=True)
    request(hub, repo_files, tmp_path, comment_event(tmp_path, 36, ALICE, ALICE, 1101), T0)
    code = main(
        [
            "score",
            "finish",
            "--request",
            "c-1101",
            "--status",
            "published",
            "--round-id",
            "ladder-0123abcdef",
            "--repository",
            "arena-org/arena",
            "--results-url",
            "https://github.com/arena-org/arena/blob/main/history/alice.yaml",
            "--accounts",
            str(repo_files / "accounts.yaml"),
            "--config",
            str(repo_files / "config" / "competition.yaml"),
            "--log",
            str(repo_files / "requests" / "score.yaml"),
            "--api-url",
            hub.api,
            "--now",
            (T0 + DAY).isoformat(),
        ]
    )
    assert code == 0
    reply = replies(hub, 36)[-1]
    assert reply.splitlines()[1].startswith("@alice-gh: ")  # the owner is told
    for expected in (
        "It is a private round: it is not on the site",
        "`make history` in your kit opens them",
        "history/alice.yaml",
        "SAE with its window",
    ):
        assert expected in reply, reply
    for withheld in ("| games used |", "win rate 0", "SAE 0", "Faults:"):
        assert withheld not in reply, reply
    # The option that put the numbers in the reply is gone: asked for, it is refused, not obeyed.
    assert (
        main(
            [
                "score",
                "finish",
                "--request",
                "c-1101",
                "--status",
                "published",
                "--round-file",
                "x.yaml",
                "--repository",
                "arena-org/arena",
            ]
        )
        == 1
    )


def test_staff_rerun_a_students_run_recorded_as_such_and_not_counted(hub, repo_files, tmp_path, token, outputs):
    from tests.github.conftest import STAFF

    pull = hub.add_pull(36, ALICE, agent_files("alice"), merged=True)
    seed_log(repo_files, [T0, T0 + DAY, T0 + 2 * DAY])  # alice has used all three of her runs
    out = request(hub, repo_files, tmp_path, comment_event(tmp_path, 36, STAFF, ALICE, 1101), T0 + 3 * DAY)
    assert out == {"queued": "true", "request_id": "c-1101", "handle": "alice", "commit": pull.merge_commit_sha}
    reply = replies(hub, 36)[-1]
    assert f"@{STAFF[1]}: queued a staff re-run for `alice`: a private ladder round of one" in reply
    assert "recorded as a staff re-run and not counted against alice's requested runs" in reply
    entry = yaml.safe_load((repo_files / "requests" / "score.yaml").read_text())["requests"][-1]
    assert entry["account_id"] == ALICE[0] and entry["requested_by"] == STAFF[0]
    log = load_log(repo_files / "requests" / "score.yaml")
    assert log.quota(ALICE[0], T0 + 3 * DAY, 3, 7 * DAY).used == 3  # still three: the re-run is not counted
    code = main(
        [
            "score",
            "finish",
            "--request",
            "c-1101",
            "--status",
            "published",
            "--round-id",
            "ladder-0123456789",
            "--repository",
            "arena-org/arena",
            "--accounts",
            str(repo_files / "accounts.yaml"),
            "--config",
            str(repo_files / "config" / "competition.yaml"),
            "--log",
            str(repo_files / "requests" / "score.yaml"),
            "--api-url",
            hub.api,
            "--now",
            (T0 + 3 * DAY).isoformat(),
        ]
    )
    assert code == 0
    done = replies(hub, 36)[-1]
    assert f"@{ALICE[1]}: request `c-1101`" in done
    assert "the staff re-run of your submission, ladder round `ladder-0123456789` is done" in done
    assert "A staff re-run is not counted against your requested runs." in done


def test_a_log_without_requested_by_still_reads(repo_files):
    seed_log(repo_files, [T0])
    text = (repo_files / "requests" / "score.yaml").read_text()
    assert "requested_by" not in text
    assert load_log(repo_files / "requests" / "score.yaml").requests[0].counted


def _git(cwd, *args):
    import subprocess

    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
    }
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def test_a_request_is_replied_to_only_once_recorded_even_when_main_moves(
    hub, repo_files, tmp_path, token, outputs, monkeypatch
):
    """A merge lands on main between the decision and the push: the push is refused, the
    request is recorded again on the new main, and the reply comes after the push."""
    import grader.cli.commands.score as command

    origin, other = tmp_path / "origin.git", tmp_path / "other"
    _git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(origin))
    _git(repo_files, "init", "--quiet", "-b", "main")
    _git(repo_files, "add", ".")
    _git(repo_files, "commit", "--quiet", "-m", "registry and config")
    _git(repo_files, "remote", "add", "origin", str(origin))
    _git(repo_files, "push", "--quiet", "origin", "main")
    _git(tmp_path, "clone", "--quiet", str(origin), str(other))
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "arena-bot")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "arena-bot@example.org")
    hub.add_pull(33, ALICE, agent_files("alice"), merged=True)
    real, calls = command.decide, []

    def decide_while_main_moves(*args, **kwargs):
        calls.append(len(replies(hub, 33)))
        if len(calls) == 1:  # a merge lands on main after this decision, before its push
            (other / "merged.txt").write_text("a merge\n")
            _git(other, "add", "merged.txt")
            _git(other, "commit", "--quiet", "-m", "a merge")
            _git(other, "push", "--quiet", "origin", "main")
        return real(*args, **kwargs)

    monkeypatch.setattr(command, "decide", decide_while_main_moves)
    monkeypatch.chdir(repo_files)
    code = main(
        [
            "score",
            "request",
            "--event",
            str(comment_event(tmp_path, 33, ALICE, ALICE, 701)),
            "--api-url",
            hub.api,
            "--now",
            T0.isoformat(),
            "--push",
            "main",
        ]
    )
    assert code == 0
    assert calls == [0, 0], "decided twice (the second time on the moved main), no reply before the record"
    assert _git(repo_files, "log", "--format=%s", "origin/main").splitlines()[:2] == [
        "requested run c-701 queued",
        "a merge",
    ]
    shown = _git(repo_files, "show", "origin/main:requests/score.yaml")
    assert "c-701" in shown
    (reply,) = replies(hub, 33)
    assert "queued a private ladder round of one" in reply
