"""The pull-request flow against a local GitHub: collect -> (smoke) -> report.

Each test drives `arena pr collect` and `arena pr report` through the command line, as the
workflow does, with github3.py pointed at the fake server.
"""

from __future__ import annotations

import pytest
import yaml

from grader.cli.main import main
from grader.documents.yaml_io import dump_yaml
from tests.github.conftest import (
    AFTER_FREEZE,
    ALICE,
    BEFORE_FREEZE,
    BOB,
    CAROL,
    LABEL,
    STAFF,
    agent_files,
    package_digest,
    plain_files,
    pr_event,
)

pytestmark = pytest.mark.timeout(60)

PASSED_SMOKE = {
    "schema_version": 1,
    "result": "pass",
    "reason": None,
    "needs_staff_label": False,
    "interpreter": "3.11.9",
    "numpy": "2.4.6",
    "sandbox": "docker",
    "submission": {"name": "submission", "digest": "sha256:00"},
    "flags": [],
    "boards": [
        {"shape": s, "result": "pass", "mean_act_ms": 0.4, "pace_ms": p}
        for s, p in (("6x8", 4.8), ("8x8", 6.4), ("10x10", 10.0), ("12x10", 12.0))
    ],
    "first_failing_board": None,
    "stderr_tail": "",
}


def collect(hub, repo_files, tmp_path, event, now=BEFORE_FREEZE) -> dict:
    out = tmp_path / "collect"
    code = main(
        [
            "pr",
            "collect",
            "--event",
            str(event),
            "--accounts",
            str(repo_files / "accounts.yaml"),
            "--config",
            str(repo_files / "config" / "competition.yaml"),
            "--out",
            str(out),
            "--api-url",
            hub.api,
            "--now",
            now.isoformat(),
        ]
    )
    assert code == 0
    return yaml.safe_load((out / "decision.yaml").read_text())


def report(hub, tmp_path, smoke: dict | None) -> None:
    args = ["pr", "report", "--decision", str(tmp_path / "collect" / "decision.yaml"), "--api-url", hub.api]
    if smoke is not None:
        path = tmp_path / "smoke.yaml"
        path.write_text(dump_yaml(smoke))
        args += ["--smoke", str(path)]
    assert main(args) == 0


def bot_comments(hub, number: int) -> list[str]:
    return [c["body"] for c in hub.comments.get(number, []) if c["user"] == hub.bot]


def test_owner_passes_and_one_comment_is_posted(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(7, ALICE, agent_files("alice"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 7, ALICE, pull.head_sha))
    assert decision["verdict"] == "smoke" and decision["handle"] == "alice"
    fetched = tmp_path / "collect" / "submission" / "submission.sealed"
    assert fetched.read_bytes() == pull_file(hub, pull, "submissions/alice/submission.sealed")
    assert decision["digest"] == package_digest(agent_files("alice")) or decision["digest"].startswith("sha256:")
    report(hub, tmp_path, PASSED_SMOKE)
    (body,) = bot_comments(hub, 7)
    assert "smoke test passed" in body and "| 12x10 | 0.4 ms | 12 ms | pass |" in body
    assert hub.statuses[-1] == {
        "sha": pull.head_sha,
        "state": "success",
        "context": "arena/submission",
        "description": "smoke test passed; becomes active when merged",
    }
    # A second run (a new push) edits the same comment: one comment per pull request.
    report(hub, tmp_path, PASSED_SMOKE)
    assert len(bot_comments(hub, 7)) == 1
    assert hub.posted("PATCH", r"/issues/comments/\d+")


def pull_file(hub, pull, path) -> bytes:
    entry = next(e for e in hub.trees[pull.head_sha] if e["path"] == path)
    return hub.blobs[entry["sha"]]


def test_failed_smoke_names_first_board_and_pace_and_never_publishes_stderr(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(8, ALICE, agent_files("alice"))
    collect(hub, repo_files, tmp_path, pr_event(tmp_path, 8, ALICE, pull.head_sha))
    failed = PASSED_SMOKE | {
        "result": "fail",
        "first_failing_board": "8x8",
        "stderr_tail": "Traceback ...\nValueError: ``` oops",
        "boards": [
            PASSED_SMOKE["boards"][0],
            {
                "shape": "8x8",
                "result": "fail",
                "mean_act_ms": 40.5,
                "pace_ms": 6.4,
                "reason": "timeout: mean act() 40.5 ms is more than 3x the pace",
            },
            {"shape": "10x10", "result": "not_run", "mean_act_ms": None, "pace_ms": 10.0},
        ],
    }
    report(hub, tmp_path, failed)
    (body,) = bot_comments(hub, 8)
    assert "failed on the 8x8 board" in body and "mean act() 40.5 ms against a pace of 6.4 ms" in body
    # The agent's output is its owner's only (the rules): a pull request's comment is public.
    assert "Traceback" not in body and "oops" not in body and "is not published here" in body
    assert hub.statuses[-1]["state"] == "failure"


def test_unapproved_account_is_refused_and_nothing_is_fetched(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(9, CAROL, agent_files("carol"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 9, CAROL, pull.head_sha))
    assert decision["verdict"] == "refused"
    assert "this account has not been approved yet" in decision["reasons"][0]
    assert not hub.posted("GET", "/git/blobs/") and not (tmp_path / "collect" / "submission").exists()
    report(hub, tmp_path, None)
    assert "this account has not been approved yet" in bot_comments(hub, 9)[0]
    assert hub.statuses[-1]["state"] == "failure"


def test_impostor_with_the_owners_login_is_refused(hub, repo_files, tmp_path, token):
    impostor = (5555, ALICE[1])  # alice's old login, re-registered by somebody else
    pull = hub.add_pull(10, impostor, agent_files("alice"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 10, impostor, pull.head_sha))
    assert decision["verdict"] == "refused" and "has no arena account" in decision["reasons"][0]
    pull = hub.add_pull(11, BOB, agent_files("alice"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 11, BOB, pull.head_sha))
    assert decision["verdict"] == "refused"
    assert decision["reasons"] == ["submissions/alice/ belongs to another account; yours is submissions/bob/"]


def test_renamed_login_is_harmless(hub, repo_files, tmp_path, token):
    renamed = (ALICE[0], "alice-new-name")
    pull = hub.add_pull(12, renamed, agent_files("alice"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 12, renamed, pull.head_sha))
    assert decision["verdict"] == "smoke" and "rename is harmless" in decision["notes"][0]


def test_flagged_submission_is_held_until_staff_review_of_its_digest(hub, repo_files, tmp_path, token):
    files = agent_files("alice")
    digest = package_digest(files)
    pull = hub.add_pull(13, ALICE, files, labels=[])
    flagged = PASSED_SMOKE | {
        "needs_staff_label": True,
        "submission": {"name": "submission", "digest": digest},
        "flags": [{"kind": "import", "file": "agent.py", "line": 3, "detail": "imports subprocess (starts processes)"}],
    }
    collect(hub, repo_files, tmp_path, pr_event(tmp_path, 13, ALICE, pull.head_sha))
    report(hub, tmp_path, flagged)
    assert hub.statuses[-1]["state"] == "pending" and "needs a staff review" in hub.statuses[-1]["description"]
    body = bot_comments(hub, 13)[0]
    assert "Held for staff review" in body and "1 import that needs a staff look" in body
    assert "subprocess" not in body and "agent.py" not in body  # what the agent does is not published

    def labeled(at: str, by=STAFF) -> dict:
        hub.add_label_event(13, "labeled", LABEL, by, at)
        return collect(
            hub, repo_files, tmp_path, pr_event(tmp_path, 13, ALICE, pull.head_sha, "labeled", [LABEL], LABEL)
        )

    # A student cannot clear it by labelling it themselves, nor by commenting a review.
    pull.labels.append(LABEL)
    hub.add_comment(13, ALICE, f"/cleared {digest}")
    decision = labeled("2026-10-02T10:00:00Z", by=ALICE)
    assert not decision["flags_cleared"] and "not staff" in decision["notes"][0]
    # Staff's label alone clears nothing: a review names the digest it read.
    hub.add_label_event(13, "unlabeled", LABEL, STAFF, "2026-10-02T11:00:00Z")
    decision = labeled("2026-10-02T12:00:00Z")
    assert not decision["flags_cleared"] and "no staff review names this submission's digest" in decision["notes"][0]
    report(hub, tmp_path, flagged)
    assert hub.statuses[-1]["state"] == "pending"
    # A review of another digest clears nothing either.
    hub.add_comment(13, STAFF, "/cleared sha256:" + "1" * 64)
    assert not labeled("2026-10-02T12:30:00Z")["flags_cleared"]
    # Staff's review of this digest, with the label, clears it.
    hub.add_comment(13, STAFF, f"/cleared {digest}")
    decision = labeled("2026-10-02T13:00:00Z")
    assert decision["flags_cleared"] and decision["cleared_by"] == STAFF[1] and decision["cleared_digest"] == digest
    report(hub, tmp_path, flagged)
    assert hub.statuses[-1]["state"] == "success" and "cleared by staff" in bot_comments(hub, 13)[0]
    # ... but only for the bytes the smoke test opened: a report of another digest is held.
    report(hub, tmp_path, flagged | {"submission": {"name": "submission", "digest": "sha256:" + "2" * 64}})
    assert hub.statuses[-1]["state"] == "pending"

    # A new push voids the review: the label is removed and the hold is back.
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 13, ALICE, pull.head_sha, "synchronize", [LABEL]))
    assert decision["remove_label"] and not decision["flags_cleared"]
    report(hub, tmp_path, flagged)
    assert hub.posted("DELETE", "/issues/13/labels/") and LABEL not in pull.labels
    assert hub.statuses[-1]["state"] == "pending"


def test_a_push_after_review_is_held_even_when_the_label_stays(hub, repo_files, tmp_path, token):
    """v1 reviewed and labelled; v2 pushed and the pull request reopened at once, so the
    synchronize run (which would remove the label) is cancelled: v2 is still held."""
    v1 = agent_files("alice", extra={"helper.py": b"import subprocess\n"})
    hub.add_pull(18, ALICE, v1, labels=[LABEL])
    hub.add_comment(18, STAFF, f"/cleared {package_digest(v1)}")
    hub.add_label_event(18, "labeled", LABEL, STAFF, "2026-10-02T10:00:00Z")
    v2 = agent_files("alice", extra={"helper.py": b"import socket\n"})
    pull2 = hub.add_pull(18, ALICE, v2, labels=[LABEL])  # the same pull request, at its new head
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 18, ALICE, pull2.head_sha, "reopened", [LABEL]))
    assert decision["digest"] == package_digest(v2) and not decision["flags_cleared"]
    smoke = PASSED_SMOKE | {
        "needs_staff_label": True,
        "submission": {"name": "submission", "digest": decision["digest"]},
        "flags": [{"kind": "import", "file": "helper.py", "line": 1, "detail": "imports socket"}],
    }
    report(hub, tmp_path, smoke)
    assert hub.statuses[-1]["state"] == "pending" and "Held for staff review" in bot_comments(hub, 18)[-1]


def test_plain_files_are_refused_with_how_to_repackage(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(19, ALICE, plain_files("alice"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 19, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused" and "make package HANDLE=" in decision["reasons"][0]
    report(hub, tmp_path, None)
    assert "not a sealed submission" in bot_comments(hub, 19)[0]


def test_a_package_made_for_another_handle_or_with_a_changed_sealed_file_is_refused(hub, repo_files, tmp_path, token):
    bob = agent_files("bob")
    files = {k.replace("submissions/bob/", "submissions/alice/"): v for k, v in bob.items()}
    pull = hub.add_pull(20, ALICE, files)
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 20, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused" and "made for the handle 'bob'" in decision["reasons"][0]
    files = agent_files("alice")
    files["submissions/alice/submission.sealed"] += b"x"
    pull = hub.add_pull(21, ALICE, files)
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 21, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused" and "the manifest says" in decision["reasons"][0]


def test_freeze_is_enforced(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(14, ALICE, agent_files("alice"))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 14, ALICE, pull.head_sha), now=AFTER_FREEZE)
    assert decision["verdict"] == "smoke" and decision["frozen"]  # a practice smoke test is still allowed
    report(hub, tmp_path, PASSED_SMOKE)
    assert hub.statuses[-1]["state"] == "failure" and "frozen" in hub.statuses[-1]["description"]
    assert "cannot become your active one" in bot_comments(hub, 14)[0]


def test_smoke_job_that_delivered_nothing_is_the_arenas_error(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(15, ALICE, agent_files("alice"))
    collect(hub, repo_files, tmp_path, pr_event(tmp_path, 15, ALICE, pull.head_sha))
    report(hub, tmp_path, None)
    assert hub.statuses[-1]["state"] == "error"


@pytest.mark.parametrize(
    "files,changed,modes,reason",
    [
        ({"submissions/alice/agent.py": b"class Agent: pass", "README.md": b"x"}, None, None, "may change only"),
        ({"submissions/alice/agent.py": b"", "submissions/bob/agent.py": b""}, None, None, "2 handles"),
        (
            {"submissions/alice/agent.py": b"", "submissions/alice/data": b"/etc/passwd"},
            None,
            {"submissions/alice/data": "120000"},
            "symbolic link",
        ),
        (
            {"submissions/alice/agent.py": b"", "submissions/alice/vendor": b""},
            None,
            {"submissions/alice/vendor": "160000"},
            "submodule",
        ),
    ],
)
def test_refused_shapes(hub, repo_files, tmp_path, token, files, changed, modes, reason):
    pull = hub.add_pull(16, ALICE, files, changed, modes=modes)
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 16, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused" and reason in " ".join(decision["reasons"])


def test_deleting_a_submission_is_refused(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(17, ALICE, {"accounts.yaml": b"x"}, changed=[], removed=["submissions/alice/agent.py"])
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 17, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused" and "may not delete" in decision["reasons"][0]


def test_staff_changes_to_the_arena_are_not_submissions(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(18, STAFF, {"grader/x.py": b"x = 1\n"})
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 18, STAFF, pull.head_sha))
    assert decision["verdict"] == "ignored"
    report(hub, tmp_path, None)
    # No comment; the status main's ruleset requires, so that staff's pull request can merge.
    assert not hub.comments.get(18)
    assert [(s["sha"], s["state"], s["context"]) for s in hub.statuses] == [
        (pull.head_sha, "success", "arena/submission")
    ]


def registration(registry: dict) -> bytes:
    return yaml.safe_dump(registry, sort_keys=False).encode()


@pytest.mark.parametrize(
    "change,verdict,reason",
    [
        (
            lambda r: r["accounts"].__setitem__(
                4242, {"login": "dave", "handle": "dave", "approved": False, "staff": False}
            ),
            "accepted",
            None,
        ),
        (
            lambda r: r["accounts"].__setitem__(
                4242, {"login": "dave", "handle": "dave", "approved": True, "staff": False}
            ),
            "refused",
            "starts unapproved",
        ),
        (
            lambda r: r["accounts"].__setitem__(
                4243, {"login": "eve", "handle": "eve", "approved": False, "staff": False}
            ),
            "refused",
            "somebody else",
        ),
        (lambda r: r["accounts"][ALICE[0]].__setitem__("handle", "alice2"), "refused", "never changes"),
        (
            lambda r: r["accounts"].__setitem__(
                4242, {"login": "dave", "handle": "alice", "approved": False, "staff": False}
            ),
            "refused",
            "already the handle",
        ),
    ],
)
def test_registration_pull_requests(hub, repo_files, tmp_path, token, change, verdict, reason):
    import copy

    from tests.github.conftest import REGISTRY

    head = copy.deepcopy(REGISTRY)
    change(head)
    dave = (4242, "dave")
    pull = hub.add_pull(19, dave, {"accounts.yaml": registration(head)})
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 19, dave, pull.head_sha))
    assert decision["kind"] == "registration" and decision["verdict"] == verdict
    if reason:
        assert reason in " ".join(decision["reasons"])
    report(hub, tmp_path, None)
    assert hub.statuses[-1]["state"] == ("success" if verdict == "accepted" else "failure")


def test_writes_need_a_token(hub, repo_files, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    pull = hub.add_pull(20, ALICE, agent_files("alice"))
    collect(hub, repo_files, tmp_path, pr_event(tmp_path, 20, ALICE, pull.head_sha))  # reads need none
    path = tmp_path / "smoke.yaml"
    path.write_text(dump_yaml(PASSED_SMOKE))
    code = main(
        [
            "pr",
            "report",
            "--decision",
            str(tmp_path / "collect" / "decision.yaml"),
            "--api-url",
            hub.api,
            "--smoke",
            str(path),
        ]
    )
    # The workflow's token missing is the arena's failure, said in one line.
    assert code == 2 and "arena pr: the arena failed: GitHubCallError: GitHub refused to comment on #20: 401" in (
        capsys.readouterr().err
    )


def test_end_to_end_with_a_real_smoke_test_of_the_fetched_folder(hub, repo_files, tmp_path, token):
    """collect -> smoke (local sandbox, on the files fetched as data) -> report."""
    from grader.sandbox.local import bwrap_problem
    from tests.smoke.test_smoke import FAST

    if bwrap_problem():
        pytest.skip(bwrap_problem())
    from grader.play.smoke import run_smoke
    from grader.sandbox.local import LocalSandbox

    original = plain_files("alice")["submissions/alice/agent.py"]
    pull = hub.add_pull(40, ALICE, agent_files("alice", extra={"agent.py": b"import subprocess\n" + original}))
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 40, ALICE, pull.head_sha))
    assert decision["verdict"] == "smoke"
    smoke = run_smoke(tmp_path / "collect" / "submission", LocalSandbox(), FAST)
    assert smoke.passed and smoke.needs_staff_label
    report(hub, tmp_path, smoke.to_dict())
    (body,) = bot_comments(hub, 40)
    assert "Held for staff review" in body and "1 import that needs a staff look" in body
    assert "subprocess" not in body
    assert hub.statuses[-1]["state"] == "pending"


def test_a_folder_name_with_a_newline_is_refused_with_a_comment(hub, repo_files, tmp_path, token):
    pull = hub.add_pull(31, ALICE, {"submissions/alice\nx/agent.py": b"class Agent: pass\n"})
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 31, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused" and "control character" in decision["reasons"][0]
    report(hub, tmp_path, None)
    (body,) = bot_comments(hub, 31)
    assert "**Refused**" in body and hub.statuses[-1]["state"] == "failure"


def test_agent_text_reaches_a_comment_as_code_never_as_a_link(hub, repo_files, tmp_path, token):
    """GitHub autolinks bare addresses in plain text, never inside a code span."""
    import re

    pull = hub.add_pull(32, ALICE, agent_files("alice"))
    collect(hub, repo_files, tmp_path, pr_event(tmp_path, 32, ALICE, pull.head_sha))
    failed = PASSED_SMOKE | {
        "result": "fail",
        "reason": "log in at https://evil.example/login or www.evil.example",
        "boards": [
            {
                "shape": "6x8",
                "result": "fail",
                "mean_act_ms": 9.0,
                "pace_ms": 4.8,
                "reason": "see www.evil.example <b>now</b> @staff `x`",
            }
        ],
    }
    report(hub, tmp_path, failed)
    (body,) = bot_comments(hub, 32)
    for address in ("https://evil.example/login", "www.evil.example"):
        for line in body.splitlines():
            if address in line:
                # every occurrence sits inside a code span: outside the spans, no address is left
                assert address not in re.sub(r"`[^`]*`", "", line), line
    assert "see www.evil.example <b>now</b> @staff 'x'" in body


def test_a_package_a_folder_too_deep_is_told_where_it_is(hub, repo_files, tmp_path, token):
    """The kit's `submission/` folder copied in whole: the comment names the folder the two
    files are in and says to move them up; nothing is started."""
    nested = {
        path.replace("submissions/alice/", "submissions/alice/submission/"): data
        for path, data in agent_files("alice").items()
    }
    pull = hub.add_pull(41, ALICE, nested)
    decision = collect(hub, repo_files, tmp_path, pr_event(tmp_path, 41, ALICE, pull.head_sha))
    assert decision["verdict"] == "refused"
    assert decision["reasons"] == [
        "submissions/alice/ holds the sealed package in submission/: move manifest.yaml "
        "and submission.sealed up into submissions/alice/ itself"
    ]
    report(hub, tmp_path, None)
    (body,) = bot_comments(hub, 41)
    assert "holds the sealed package in submission/: move manifest.yaml" in body
    assert "interpreter" not in body and "numpy ?" not in body
    assert hub.statuses[-1]["state"] == "failure"
