"""arena perft SPEC --depth N: count the leaves of the game tree (the count is the last line)."""

from __future__ import annotations

import argparse
import sys
import time

from engine.perft import perft, perft_divide
from grader.common.errors import OptionError
from grader.documents.specs import resolve_spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("perft", help="count game-tree leaves at a depth", description=__doc__)
    p.add_argument("spec", help="spec file, or a public/paper environment id or name")
    p.add_argument("--depth", type=int, required=True)
    p.add_argument("--divide", action="store_true", help="also print the count below each first move")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.depth < 0:
        raise OptionError("--depth", args.depth, f"--depth must be >= 0, got {args.depth}")
    spec = resolve_spec(args.spec)
    start = time.perf_counter()
    if args.divide and args.depth >= 1:
        for move, count in perft_divide(spec, args.depth).items():
            print(f"{move}: {count}")
    count = perft(spec, args.depth)
    print(f"perft depth {args.depth}: {time.perf_counter() - start:.2f}s", file=sys.stderr)
    print(count)
    return 0
