"""arena grades ROUND.yaml...: the grade export, a CSV a gradebook imports (grader.grades).

One row per student per round (rounds given oldest first): sae with its window (sae_b0,
sae_b_max), best_sae over the rows of the export's window, standing and rank (empty where the
round publishes none), wins, draws, losses and faults. A row measured over another window is
carried with the reason in its status column and compared with nothing. The export's window is
--window, else the newest round's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.files import atomic_write_bytes
from grader.grades import export, parse_window
from grader.results import load_results


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("grades", help="the grade export: a CSV per student and round, SAE with its window",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rounds", nargs="+", type=Path, metavar="ROUND.yaml", help="results files, oldest first")
    p.add_argument("--window", help="the SAE window rows are compared over, B0,BMAX (default: the newest round's)")
    p.add_argument("--out", type=Path, help="write the CSV here (default stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rounds = [load_results(path) for path in args.rounds]  # each validated; a bad one is named
    text = export(rounds, parse_window(args.window) if args.window else None)
    if args.out is None:
        sys.stdout.write(text)
    else:
        atomic_write_bytes(args.out, text.encode("utf-8"))
        print(f"grades: {text.count(chr(10)) - 1} rows from {len(rounds)} rounds to {args.out}", file=sys.stderr)
    return 0
