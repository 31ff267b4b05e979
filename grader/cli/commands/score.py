"""arena score: requested ladder runs (`/score` on your merged submission's pull request).

`request` reads the issue_comment payload, checks the commenter (approved, owns the merged
submission), counts the rolling quota from the committed request log, replies, and on success
appends the request to the log (the workflow commits it) and sets step outputs for the run
(queued, request_id, handle, commit). `finish` records how the run ended, adds the owner's
sealed history entry (`--history`, from `arena history seal`) to history/, and replies; a run
the arena failed is not counted.

With `--push BRANCH` (the workflow's way) each commits its change to the log and pushes it,
computing it again from the new main whenever the push is refused because main moved, and
replies only once the push went through: a request is queued only when it is recorded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.github import workflow
from grader.github.events import comment_event, load_event
from grader.github.push import commit_and_push
from grader.github.requested_runs import ScoreDecision, decide, finish_reply
from grader.history.owner_history import merge as merge_history
from grader.history.owner_history import push_replays
from grader.play.field import SUBMISSIONS, export_tree
from grader.season.accounts import load_registry
from grader.season.competition import load_competition
from grader.season.quota import STATUSES, load_log, write_log


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="requested ladder runs: queue and finish",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("request", help="decide a /score comment")
    r.add_argument("--event", type=Path, required=True, help="the issue_comment payload ($GITHUB_EVENT_PATH)")
    _common(r)
    r.set_defaults(func=run_request)
    f = actions.add_parser("finish", help="record how a requested run ended and reply")
    f.add_argument("--request", required=True, help="the request id (c-<comment id>)")
    f.add_argument("--status", required=True, choices=[s for s in STATUSES if s != "queued"])
    f.add_argument("--round-id", help="the published round's id")
    f.add_argument("--results-url", help="where the round's results can be read")
    f.add_argument("--repository", required=True, help="OWNER/NAME")
    f.add_argument(
        "--history",
        type=Path,
        help="the owner's sealed history entry (`arena history seal`'s --out), added to history/<handle>.yaml",
    )
    _common(f)
    f.set_defaults(func=run_finish)
    t = actions.add_parser("take", help="write a merged submission's folder from a commit's blobs (as data)")
    t.add_argument("--commit", required=True, help="the merge commit the request names")
    t.add_argument("--handle", required=True)
    t.add_argument("--repo-dir", type=Path, default=Path("."), help="the clone (default .)")
    t.add_argument("--out", type=Path, required=True, help="the folder to write submissions/<handle>/ under")
    t.set_defaults(func=run_take)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--accounts", type=Path, default=Path("accounts.yaml"))
    p.add_argument("--config", type=Path, default=Path("config/competition.yaml"))
    p.add_argument("--log", type=Path, default=Path("requests/score.yaml"), help="the committed request log")
    p.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    p.add_argument("--now", help="the time to decide at (ISO 8601; default now)")
    p.add_argument(
        "--push",
        metavar="BRANCH",
        help="commit the log to BRANCH of origin and push it (retried "
        "from the new state when the branch moved), then reply; run in the clone's top folder",
    )


def run_request(args: argparse.Namespace) -> int:
    event = comment_event(load_event(args.event))
    repo = workflow.repo(event.repository, args.api_url)
    now = workflow.now(args.now)
    decided: list[ScoreDecision | None] = [None]

    def change() -> list[str] | None:
        # Read from the files as they are now: after a refused push, main's newer state.
        decision = decide(
            repo, event, load_registry(args.accounts), load_competition(args.config), load_log(args.log), now
        )
        decided[0] = decision
        if decision is None or not decision.queued:
            return None
        assert decision.log is not None  # a queued request comes with the log that records it
        write_log(args.log, decision.log)
        return [str(args.log)]

    if args.push:
        request_id = f"c-{event.comment_id}"
        commit_and_push(Path("."), args.push, change, f"requested run {request_id} queued")
    else:
        change()
    decision = decided[0]
    if decision is None:
        workflow.write_outputs({"queued": False})
        print("not a new /score command on a pull request; nothing to do", file=sys.stderr)
        return 0
    # The reply follows the record: a request is counted, and queued, once it is recorded.
    repo.post_comment(event.number, decision.reply)
    request = decision.request
    workflow.write_outputs(
        {
            "queued": decision.queued,
            "request_id": request.id if request else "",
            "handle": request.handle if request else "",
            "commit": request.commit if request else "",
        }
    )
    print(decision.reply.splitlines()[-1])
    return 0


def run_finish(args: argparse.Namespace) -> int:
    competition = load_competition(args.config)

    def change() -> list[str]:
        paths = [str(args.log)]
        if args.history:
            paths += [str(p) for p in merge_history(args.history, Path("."))]
        write_log(args.log, load_log(args.log).finish(args.request, args.status, args.round_id))
        return paths

    if args.push:
        commit_and_push(Path("."), args.push, change, f"requested run {args.request}: {args.status}")
        if args.history:
            push_replays(Path("."))  # the owner's replays, refs of their own beside the branch
    else:
        change()
    log = load_log(args.log)
    request = log.get(args.request)
    assert request is not None  # finish() refused a request the log does not hold
    repo = workflow.repo(args.repository, args.api_url)
    owner = load_registry(args.accounts).by_id(request.account_id) if args.accounts.exists() else None
    reply = finish_reply(
        request, args.status, log, competition, workflow.now(args.now), args.results_url, owner.login if owner else None
    )
    repo.post_comment(request.pull_request, reply)
    print(reply.splitlines()[-1])
    return 0


def run_take(args: argparse.Namespace) -> int:
    """submissions/<handle>/ at the commit, from its blobs: never `git archive` or a checkout,
    which would apply the repository's attributes (export-subst) to what is played."""
    if "/" in args.handle or args.handle in ("", ".", ".."):
        print(f"score take: {args.handle!r} is not a handle", file=sys.stderr)
        return 1
    export_tree(args.repo_dir, args.commit, args.out, (f"{SUBMISSIONS}/{args.handle}",))
    folder = args.out / SUBMISSIONS / args.handle
    if not folder.is_dir():
        print(f"score take: {args.commit[:12]} has no {SUBMISSIONS}/{args.handle}/", file=sys.stderr)
        return 1
    print(folder)
    return 0
