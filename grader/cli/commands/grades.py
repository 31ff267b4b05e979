"""arena grades ROUND.yaml...: the grade export, a CSV a gradebook imports (grader.verification.grades).

One row per student per round, in the order the rounds were played (when each file was
added to rounds/, from git; the final last), from files or folders of them: sae with its window (sae_b0,
sae_b_max), best_sae over the rows of the export's window, standing and rank (empty where the
round publishes none), wins, draws, losses and faults. A row measured over another window is
carried with the reason in its status column and compared with nothing. The export's window is
--window, else the newest round's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
from pathlib import Path

from grader.common.files import atomic_write_bytes
from grader.rounds.results import load_results
from grader.season.competition import INVALIDATIONS_PATH, load_invalidations
from grader.verification.grades import chronological, export, parse_window


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "grades",
        help="the grade export: a CSV per student and round, SAE with its window",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "rounds",
        nargs="+",
        type=Path,
        metavar="ROUND.yaml|DIR",
        help="results files, or folders of them (rounds/); sorted in the order they were played",
    )
    p.add_argument("--window", help="the SAE window rows are compared over, B0,BMAX (default: the newest round's)")
    p.add_argument(
        "--invalidations",
        type=Path,
        default=INVALIDATIONS_PATH,
        help=f"results staff invalidated (default {INVALIDATIONS_PATH}, when it exists)",
    )
    p.add_argument("--out", type=Path, help="write the CSV here (default stdout)")
    p.set_defaults(func=run)


def results_files(paths: list[Path]) -> list[Path]:
    """The results files named: a folder gives every `<round-id>.yaml` directly in it."""
    out = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.glob("*.yaml") if p.is_file())
            if not found:
                raise FileNotFoundError(f"{path}: no results file (<round-id>.yaml) in this folder")
            out += found
        else:
            out.append(path)
    return list(dict.fromkeys(out))


def added_at(path: Path) -> str | None:
    """When the file was first committed (ISO time, from git), or None outside a checkout."""
    try:
        found = subprocess.run(
            ["git", "-C", str(path.parent), "log", "--diff-filter=A", "--format=%cI", "--", path.name],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    if not found:
        return None
    return dt.datetime.fromisoformat(found[-1]).astimezone(dt.UTC).isoformat()


def run(args: argparse.Namespace) -> int:
    paths = results_files(args.rounds)
    loaded = [(load_results(path), added_at(path)) for path in paths]  # each validated; a bad one is named
    rounds = chronological(loaded)
    struck = {(i.round, i.handle): i.reason for i in load_invalidations(args.invalidations)}
    text = export(rounds, parse_window(args.window) if args.window else None, struck)
    order = f"in the order played: {', '.join(r['round']['id'] for r in rounds)}"
    if args.out is None:
        sys.stdout.write(text)
        print(f"grades: {len(rounds)} rounds, {order}", file=sys.stderr)
    else:
        atomic_write_bytes(args.out, text.encode("utf-8"))
        print(
            f"grades: {text.count(chr(10)) - 1} rows from {len(rounds)} rounds to {args.out} ({order})", file=sys.stderr
        )
    return 0
