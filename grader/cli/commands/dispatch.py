"""arena dispatch: check a round's dispatch inputs before its field is taken.

round.yml's tier, budget, envs and shards are checked first, so a bad input fails in seconds,
not after the smoke tests.

Exit 0 with one line saying what the round will play; exit 1 naming every input that is wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.github import workflow
from grader.rounds.dispatch import check_dispatch
from grader.season.competition import load_competition


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dispatch",
        help="check a round's dispatch inputs before the field is taken",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Taken as text: the workflow's inputs arrive as strings, and a bad one is named, not a traceback.
    p.add_argument("--tier", required=True)
    p.add_argument("--budget", required=True, help="self-play games per environment")
    p.add_argument("--envs", default="", help="N, or ids/names separated by commas; empty: the whole tier")
    p.add_argument("--shards", required=True, help="how many runners share the environments")
    p.add_argument("--config", type=Path, default=Path("config/competition.yaml"))
    p.add_argument("--now", help="the time the round starts (ISO 8601; default now)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check = check_dispatch(
        args.tier, args.budget, args.envs, args.shards, load_competition(args.config), workflow.now(args.now)
    )
    if check.problems:
        for problem in check.problems:
            print(f"arena dispatch: {problem}", file=sys.stderr)
        print(
            "arena dispatch: the round is not started; dispatch it again with these inputs corrected", file=sys.stderr
        )
        return 1
    print(
        f"round inputs: OK: {args.tier} tier, budget {check.budget}, {check.envs} environments "
        f"over {check.shards} shard{'s' if check.shards != 1 else ''}"
    )
    return 0
