"""arena github: make a course's GitHub repository what the arena's workflows need.

`setup --repo OWNER/NAME` (run from a clone of the arena, with an administrator's token in
GITHUB_TOKEN or GH_TOKEN; GITHUB_API_URL names another API, a GitHub Enterprise server or the
rehearsal's fake) makes sure of the review label, the environments and their branch policy,
the ruleset on main and who may bypass it, the Actions settings (read-only default token,
approval for outside contributors' pull requests), Pages built by a workflow, the secrets and
variables by name, and site.yaml's kit.repository; a second run changes nothing. It ends with
the runner registration commands. `--dry-run` prints the plan and calls nothing. Exit 0: the
repository is ready; 1: something staff must do is listed under "Still to do".
docs/deploy.md is the whole procedure.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.season.competition import load_competition


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "github",
        help="set up the course's GitHub repository for the workflows",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = actions.add_parser("setup", help="make the repository what the workflows need (idempotent)")
    s.add_argument("--repo", required=True, help="OWNER/NAME")
    s.add_argument("--dry-run", action="store_true", help="print the plan; call nothing")
    s.add_argument(
        "--checkout",
        type=Path,
        default=Path("."),
        help="the clone of the arena (its workflows, site.yaml, config/competition.yaml); default .",
    )
    s.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL, else https://api.github.com)")
    s.set_defaults(func=run_setup)


def run_setup(args: argparse.Namespace) -> int:
    from grader.github.api import GitHubCallError, connect
    from grader.github.setup import Setup
    from grader.github.workflow import api_url

    competition = args.checkout / "config" / "competition.yaml"
    label = load_competition(competition).review_label if competition.exists() else "arena: staff reviewed"
    setup = Setup(args.repo, label, args.checkout)
    if args.dry_run:
        for line in setup.plan():
            print(line)
        return 0
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    if not token:
        print(
            "arena github: error: no token: set GITHUB_TOKEN (or GH_TOKEN) to a repository administrator's token, "
            "e.g. GITHUB_TOKEN=$(gh auth token)",
            file=sys.stderr,
        )
        return 1
    setup.gh = connect(token, api_url(args.api_url))
    try:
        report = setup.apply()
    except GitHubCallError as exc:
        print(f"arena github: error: {exc}", file=sys.stderr)
        return 1
    if report.todo:
        print(f"arena github: {args.repo}: {len(report.todo)} command(s) still to run (above)", file=sys.stderr)
        return 1
    print(f"arena github: {args.repo} is ready for the workflows")
    return 0
