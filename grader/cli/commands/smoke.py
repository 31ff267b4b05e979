"""arena smoke PATH: the server's gate for a submission, from the command line.

Screens the submission (format, size, flagged imports, opaque data files), then plays one
public environment per public board shape in the sandbox and judges each board's mean act()
time against its pace. Prints a YAML report on stdout (kit version if given, the sandbox's
interpreter and numpy, per board the mean act time against the pace, the first failing board,
the tail of the agent's own output, and the docker image it ran in). Exit 0 pass, 1 the agent
failed, 2 the arena failed (no engine, no image, a launch that failed on the arena's side:
`result: arena_error`, never a verdict on the agent). A flagged submission passes with
`needs_staff_label: true`: it cannot be activated until staff have read it. Each phase's act
time and output are projected to a round's session in a field of --field-size entrants (the
next round's; default the largest a round plays), against that session's CPU share and output
cap, which grow with the field; the report carries the sandbox's peak memory.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.cli.main import ARENA_FAILED, INPUT_FAILED
from grader.common.errors import OptionError
from grader.common.limits import DEFAULT_LIMITS
from grader.documents.yaml_io import dump_yaml
from grader.play.smoke import SmokeSettings, run_smoke
from grader.sandbox import ISOLATING, get_sandbox

WITHHELD = "[withheld: the agent's own output is its owner's only]"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "smoke",
        help="screen and smoke-test a submission (the upload gate)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", type=Path, help="a submission folder or zip")
    p.add_argument("--sandbox", choices=ISOLATING, default="local", help="where it runs (default local)")
    p.add_argument(
        "--kit-version",
        default=os.environ.get("ARENA_KIT_VERSION"),
        help="the starter kit's version, printed in the report (default $ARENA_KIT_VERSION)",
    )
    p.add_argument(
        "--withhold-output",
        action="store_true",
        help="leave the agent's own output, and which files and imports the screening flagged, out "
        "of the report (they are the owner's and staff's only; a workflow's artifacts and comments "
        "are public)",
    )
    p.add_argument(
        "--field-size",
        type=int,
        help="the entrants of the round to project each phase to (default: the largest a round plays, "
        f"{DEFAULT_LIMITS.largest_field})",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.path.exists():
        raise FileNotFoundError(f"{args.path}: no such file or folder")
    size = args.field_size
    if size is not None and not 2 <= size <= DEFAULT_LIMITS.largest_field:
        raise OptionError(
            "--field-size", size, f"--field-size {size}: a round plays 2 to {DEFAULT_LIMITS.largest_field} entrants"
        )
    report = run_smoke(
        args.path,
        get_sandbox(args.sandbox),
        SmokeSettings(field=size),
        kit_version=args.kit_version,
        log=lambda line: print(line, file=sys.stderr),
    )
    data = report.to_dict()
    if args.withhold_output and data.get("stderr_tail"):
        data["stderr_tail"] = WITHHELD
    if args.withhold_output:
        # A flag's file and detail say what the agent does (imports socket, say): the kinds stay.
        data["flags"] = [{"kind": f["kind"], "file": WITHHELD, "line": None, "detail": WITHHELD} for f in data["flags"]]
    sys.stdout.write(dump_yaml(data))
    if report.result == "arena_error":
        print(f"arena smoke: {report.reason}", file=sys.stderr)
        return ARENA_FAILED
    return 0 if report.passed else INPUT_FAILED
