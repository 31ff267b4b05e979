"""arena merge SHARD_DIR...: join the shards of a round and publish the round as one.

Each shard is the `<private-out>/<round-id>` folder of one runner's `arena round --shard I/N`."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.commands.round import command_of
from grader.cli.main import ARENA_FAILED
from grader.rounds.orchestrate import merge_shards


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="join shards of a round and publish it", description=__doc__)
    p.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR")
    p.add_argument("--out", required=True, type=Path, help="folder of public results (rounds/)")
    p.add_argument("--private-out", required=True, type=Path, help="staff folder for the joined full record")
    p.set_defaults(func=run, parser=p)


def run(args: argparse.Namespace) -> int:
    outcome = merge_shards(args.shards, args.out, args.private_out, command_of(args, hidden=True))
    if outcome.status == "published":
        print(outcome.public_path)
    return ARENA_FAILED if outcome.status == "held" else 0  # held: the arena failed its environments
