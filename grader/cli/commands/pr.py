"""arena pr: the pull-request workflow's logic.

`collect` (read-only token, runs nothing of the PR): decide what the pull request is - a
submission of one handle, an account registration, or something else - whether its author owns
the handle and is approved, whether the field is frozen and whether a staff member has cleared
the flags; write the decision to OUT/decision.yaml and the submission's files, fetched as data,
to OUT/submission/. `report` (the only job with a write token): post one comment on the pull
request and set the `arena/submission` status from the decision and the smoke report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.documents.yaml_io import dump_yaml, read_yaml
from grader.github import workflow
from grader.github.events import load_event, pull_request_event
from grader.github.pr_check import Decision, collect
from grader.github.pr_report import BOT_LOGIN, check_smoke_report, compose, publish
from grader.season.accounts import load_registry
from grader.season.competition import load_competition


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pr",
        help="decide and report on a submission pull request",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = actions.add_parser("collect", help="decide about a pull request and fetch its submission as data")
    c.add_argument("--event", type=Path, required=True, help="the pull_request_target payload ($GITHUB_EVENT_PATH)")
    c.add_argument("--accounts", type=Path, default=Path("accounts.yaml"), help="the registry on main")
    c.add_argument("--config", type=Path, default=Path("config/competition.yaml"))
    c.add_argument("--out", type=Path, required=True, help="folder for decision.yaml and submission/")
    c.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    c.add_argument("--now", help="the time to decide at (ISO 8601; default now)")
    c.set_defaults(func=run_collect)
    r = actions.add_parser("report", help="post the comment and status for a decision and its smoke report")
    r.add_argument("--decision", type=Path, required=True)
    r.add_argument("--smoke", type=Path, help="the smoke report (absent: the smoke job did not deliver one)")
    r.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    r.add_argument("--bot-login", default=BOT_LOGIN, help=f"the login the arena comments as (default {BOT_LOGIN})")
    r.add_argument("--target-url", help="link for the status (the workflow run)")
    r.set_defaults(func=run_report)


def run_collect(args: argparse.Namespace) -> int:
    event = pull_request_event(load_event(args.event))
    registry = load_registry(args.accounts)
    competition = load_competition(args.config)
    repo = workflow.repo(event.repository, args.api_url)
    args.out.mkdir(parents=True, exist_ok=True)
    decision = collect(repo, event, registry, competition, workflow.now(args.now), args.out / "submission")
    (args.out / "decision.yaml").write_text(dump_yaml(decision.to_dict()), encoding="utf-8")
    workflow.write_outputs({"verdict": decision.verdict, "handle": decision.handle or ""})
    print(
        f"pull request #{event.number}: {decision.kind}, {decision.verdict}"
        + "".join(f"\n  - {r}" for r in decision.reasons),
        file=sys.stderr,
    )
    print(decision.verdict)
    return 0


def run_report(args: argparse.Namespace) -> int:
    decision = Decision.from_dict(read_yaml(args.decision), str(args.decision))
    smoke = None
    if args.smoke is not None and args.smoke.exists():
        smoke = check_smoke_report(read_yaml(args.smoke), str(args.smoke))
    outcome = compose(decision, smoke)
    if outcome is None:
        print(f"pull request #{decision.number}: not a submission; nothing to post", file=sys.stderr)
        return 0
    repo = workflow.repo(decision.repository, args.api_url)
    comment = publish(repo, decision, outcome, args.bot_login, args.target_url)
    print(f"pull request #{decision.number}: {outcome.state}: {outcome.description} (comment {comment})")
    return 0
