"""arena appeal --round ROUND.yaml --student HANDLE: the evidence an appeal is given.

The student's per-environment win, draw and fault counts in that round (grader.verification.appeal), by
environment label, without environment identities (YAML on stdout).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.documents.yaml_io import dump_yaml
from grader.rounds.results import load_results
from grader.verification.appeal import evidence


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "appeal",
        help="one student's appeal evidence for a round (no environment identities)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--round",
        required=True,
        type=Path,
        dest="round_path",
        metavar="ROUND.yaml",
        help="the round's results file (rounds/<round-id>.yaml)",
    )
    p.add_argument("--student", required=True, help="the student's handle (their account)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(dump_yaml(evidence(load_results(args.round_path), args.student)))
    return 0
