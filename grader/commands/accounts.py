"""arena accounts: check the accounts registry.

`check REGISTRY` validates it, listing every problem with its path. With `--base` (the registry
on main) it also refuses what a change may not do: a handle changed, an account removed, and
for an author who is not staff (`--author-id`) anything but adding their own unapproved account.
`require-staff --id N` exits 1 unless GitHub account N is staff (a workflow_dispatch gate).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.accounts import check_change, load_registry
from grader.documents import DocumentError
from grader.github import workflow


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("accounts", help="validate the accounts registry and changes to it", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = actions.add_parser("check", help="validate a registry, and a change from --base")
    c.add_argument("registry", type=Path)
    c.add_argument("--base", type=Path, help="the registry on main, to check the change against")
    c.add_argument("--author-id", type=int, help="GitHub numeric id of the change's author")
    c.set_defaults(func=run_check)
    s = actions.add_parser("require-staff", help="exit 1 unless the GitHub account is staff")
    s.add_argument("--id", type=int, required=True, dest="github_id")
    s.add_argument("--registry", type=Path, default=Path("accounts.yaml"))
    s.add_argument("--triggering-actor", help="login of whoever started this attempt (GITHUB_TRIGGERING_ACTOR; "
                                              "a re-run keeps the first actor's id): must be staff too")
    s.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    s.set_defaults(func=run_require_staff)


def run_check(args: argparse.Namespace) -> int:
    try:
        head = load_registry(args.registry)
        problems = check_change(load_registry(args.base), head, args.author_id) if args.base else []
    except DocumentError as exc:
        print(f"arena accounts: {exc}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"arena accounts: {args.registry}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"{args.registry}: OK, {len(head.accounts)} accounts, {len(head.approved())} approved")
    return 0


def run_require_staff(args: argparse.Namespace) -> int:
    registry = load_registry(args.registry)
    problem = workflow.staff_problem(registry, args.github_id, args.triggering_actor, args.api_url)
    if problem is None:
        account = registry.by_id(args.github_id)
        assert account is not None  # staff_problem found no problem: the account is there
        print(f"GitHub account {args.github_id} is staff ({account.handle})")
        return 0
    print(f"arena accounts: {problem} (in {args.registry})", file=sys.stderr)
    return 1
