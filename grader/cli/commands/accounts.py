"""arena accounts: check the accounts registry.

`check REGISTRY` validates it, listing every problem with its path. With `--base` (the registry
on main) it also refuses what a change may not do: a handle changed, an account removed, and
for an author who is not staff (`--author-id`) anything but adding their own unapproved account.
`require-staff --id N` exits 1 unless GitHub account N is staff (a workflow_dispatch gate).
`approve HANDLE` approves an account in the registry file; `add --id N --login L --handle H
[--staff] [--approved]` adds one (how the first staff account is made: docs/staff.md). Both
edit the file only: commit it and merge it to main, as any change to the registry.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.documents.yaml_io import DocumentError
from grader.github import workflow
from grader.season.accounts import AccountError, add_account, approve, check_change, load_registry, write_registry


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "accounts",
        help="validate the accounts registry and changes to it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = actions.add_parser("check", help="validate a registry, and a change from --base")
    c.add_argument("registry", type=Path)
    c.add_argument("--base", type=Path, help="the registry on main, to check the change against")
    c.add_argument("--author-id", type=int, help="GitHub numeric id of the change's author")
    c.set_defaults(func=run_check)
    s = actions.add_parser("require-staff", help="exit 1 unless the GitHub account is staff")
    s.add_argument("--id", type=int, required=True, dest="github_id")
    s.add_argument("--registry", type=Path, default=Path("accounts.yaml"))
    s.add_argument(
        "--triggering-actor",
        help="login of whoever started this attempt (GITHUB_TRIGGERING_ACTOR; "
        "a re-run keeps the first actor's id): must be staff too",
    )
    s.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    s.set_defaults(func=run_require_staff)
    a = actions.add_parser("approve", help="approve an account (edits the registry file)")
    a.add_argument("handle")
    a.add_argument("--registry", type=Path, default=Path("accounts.yaml"))
    a.set_defaults(func=run_approve)
    n = actions.add_parser("add", help="add an account (edits the registry file); the first staff account")
    n.add_argument(
        "--id",
        type=int,
        required=True,
        dest="github_id",
        help="GitHub numeric account id (`gh api users/LOGIN --jq .id`)",
    )
    n.add_argument("--login", required=True)
    n.add_argument("--handle", required=True)
    n.add_argument("--staff", action="store_true")
    n.add_argument("--approved", action="store_true")
    n.add_argument("--registry", type=Path, default=Path("accounts.yaml"))
    n.set_defaults(func=run_add)


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


def run_approve(args: argparse.Namespace) -> int:
    try:
        registry, account = approve(load_registry(args.registry), args.handle)
    except (DocumentError, AccountError) as exc:
        print(f"arena accounts: {exc}", file=sys.stderr)
        return 1
    write_registry(args.registry, registry)
    print(
        f"approved {account.handle} (GitHub id {account.github_id}, login {account.login}) in {args.registry}; "
        "commit it and merge it to main: the account's submissions are then smoke-tested and enter the field"
    )
    return 0


def run_add(args: argparse.Namespace) -> int:
    try:
        registry, account = add_account(
            load_registry(args.registry) if args.registry.exists() else load_registry_empty(),
            args.github_id,
            args.login,
            args.handle,
            args.staff,
            args.approved,
        )
    except (DocumentError, AccountError) as exc:
        print(f"arena accounts: {exc}", file=sys.stderr)
        return 1
    write_registry(args.registry, registry)
    role = "staff" if account.staff else "student"
    state = "approved" if account.approved else "not approved yet"
    print(
        f"added {account.handle} (GitHub id {account.github_id}, login {account.login}, {role}, {state}) "
        f"to {args.registry}; commit it and merge it to main"
    )
    return 0


def load_registry_empty():
    """The registry of a repository that has none yet."""
    from grader.season.accounts import parse_registry

    return parse_registry({"schema_version": 1, "accounts": {}})
