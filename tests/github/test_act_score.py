"""score.yml run as a workflow (act, tests/github/act_harness.py) against the fake hub: a
/score that is accepted while a merge lands on main (its record is pushed again on the new
main, and the reply follows the push), played (smoke test and a ladder round of one of the
sealed submission in the docker sandbox) and answered to its owner off the site; one refused
by the quota; one with an unknown argument."""

from __future__ import annotations

import datetime as dt
import subprocess

import pytest
import yaml

from grader.documents.yaml_io import format_time
from grader.season.quota import Request, RequestLog
from tests.github.conftest import ALICE, ROUND_SECRETS, agent_files, comment_payload

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]
SMALL = {"ARENA_REQUESTED_BUDGET": "200", "ARENA_REQUESTED_ENVS": "1"}  # checkpoints 0, 100, 200: an SAE window


def merged_submission(scratch, hub, number: int, owner_key: str | None = None):
    """alice's submission merged on main: the pull request's merge commit is main's commit."""
    files = agent_files("alice", owner_key=owner_key)
    sha = scratch.commit(files, "merge alice's submission")
    pull = hub.add_pull(number, ALICE, files, merged=True)
    pull.merge_commit_sha = sha
    return pull


def replies(hub, number):
    return [c["body"] for c in hub.comments.get(number, []) if c["user"] == hub.bot]


def test_an_accepted_score_is_played_and_reaches_its_owner_not_the_site(act, hub, scratch, act_docker):
    from nacl.public import PrivateKey

    from grader.documents.sealing import encode_key
    from grader.history.owner_history import parse_history

    owner = PrivateKey.generate()  # alice's own key, as her kit keeps it
    merged_submission(scratch, hub, 40, encode_key(bytes(owner.public_key)))
    seen = {"merged": False, "recorded_at_reply": None}

    def meanwhile(method: str, path: str) -> None:
        if method == "GET" and path.endswith("/pulls/40") and not seen["merged"]:
            seen["merged"] = True  # while the request job decides, a merge lands on main
            scratch.commit({"notes/merged.txt": "another pull request, merged\n"}, "a merge lands on main")
        if method == "POST" and path.endswith("/issues/40/comments") and seen["recorded_at_reply"] is None:
            try:
                seen["recorded_at_reply"] = "c-5001" in scratch.show("requests/score.yaml")
            except RuntimeError:  # no log on main at all
                seen["recorded_at_reply"] = False

    hub.on_request = meanwhile
    run = act.run(
        "score.yml",
        "issue_comment",
        comment_payload(40, ALICE, ALICE, 5001),
        actor=ALICE,
        secrets=ROUND_SECRETS,
        variables=SMALL,
    )
    assert run.code == 0, run.log[-5000:]
    for job in ("request", "run", "finish"):
        assert run.job(job) == "succeeded", f"{job}: {run.jobs}\n{run.log[-5000:]}"
    log = yaml.safe_load(scratch.show("requests/score.yaml"))
    (entry,) = log["requests"]
    assert entry["id"] == "c-5001" and entry["status"] == "published" and entry["round_id"]
    assert scratch.log()[:3] == [
        "requested run c-5001: published",
        "requested run c-5001 queued",
        "a merge lands on main",
    ]
    assert seen["recorded_at_reply"] is True, "the reply came before the request was on main"
    assert "refused (attempt 1 of" in run.log  # the first push met the moved main
    # Off the site: nothing under rounds/; the round and alice's log in her history, sealed to her.
    assert scratch.files("rounds") == []
    history = parse_history(scratch.show("history/alice.yaml").encode(), "history/alice.yaml")
    (kept,) = history.entries
    assert kept.round == entry["round_id"] and kept.kind == "requested" and kept.request == "c-5001"
    payload = kept.open(owner)
    results = payload["results"]
    assert results["round"]["private"] is True and results["provenance"]["commit"] != "unknown"
    assert list(payload["log"]) and "win_rate" not in scratch.show("history/alice.yaml")
    # And her replays of it (a ladder round), locked with the ladder's seed until the end.
    assert scratch.files("history") == ["history/alice.yaml"]  # the replays: a ref of their own, not on main
    assert (
        subprocess.run(
            [
                "git",
                "-C",
                str(scratch.origin),
                "cat-file",
                "-e",
                f"refs/replays/alice/{entry['round_id']}:{entry['round_id']}.replays",
            ]
        ).returncode
        == 0
    )
    assert payload["replays"]["file"] == f"{entry['round_id']}.replays"
    queued, done = replies(hub, 40)
    assert "queued a private ladder round of one" in queued
    assert done.splitlines()[1].startswith("@alice-gh: ")
    for expected in ("It is a private round", "history/alice.yaml", "make history"):
        assert expected in done, done
    for withheld in ("| games used |", "Zero-shot point", "SAE 0", "Faults:"):  # a pull request is public
        assert withheld not in done, done
    # No artifact of the run holds the round in plain (a public repository's artifacts are public).
    assert "requested-round" not in run.log
    print(f"act: score.yml (accepted, played) ran in {run.timing}")


def test_a_score_over_the_quota_and_one_with_an_argument_are_answered(act, hub, scratch):
    merged_submission(scratch, hub, 41)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    log = RequestLog()
    for i in range(3):
        log = log.add(
            Request(
                f"c-{i + 1}",
                ALICE[0],
                "alice",
                41,
                "a" * 40,
                now - dt.timedelta(hours=3 - i),
                "published",
                f"ladder-00000{i}",
            )
        )
    scratch.commit({"requests/score.yaml": yaml.safe_dump(log.to_dict(), sort_keys=False)}, "three runs this week")
    before = scratch.head()
    run = act.run(
        "score.yml",
        "issue_comment",
        comment_payload(41, ALICE, ALICE, 5002),
        actor=ALICE,
        secrets=ROUND_SECRETS,
        variables=SMALL,
    )
    assert run.code == 0 and run.job("request") == "succeeded", run.log[-4000:]
    assert run.job("run") is None and run.job("finish") is None
    (reply,) = replies(hub, 41)
    assert "no requested runs left: 0 of 3" in reply
    assert f"the next one frees at {format_time(now - dt.timedelta(hours=3) + dt.timedelta(days=7))}" in reply
    print(f"act: score.yml (over the quota) ran in {run.timing}")
    run = act.run(
        "score.yml",
        "issue_comment",
        comment_payload(41, ALICE, ALICE, 5003, body="/score please"),
        actor=ALICE,
        secrets=ROUND_SECRETS,
        variables=SMALL,
    )
    assert run.code == 0 and run.job("request") == "succeeded", run.log[-4000:]
    assert "`/score` takes no argument" in replies(hub, 41)[-1]
    assert scratch.head() == before  # nothing was queued or committed
    print(f"act: score.yml (unknown argument) ran in {run.timing}")
