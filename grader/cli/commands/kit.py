"""arena kit build: build the starter kit students download, and the version the site shows.

Writes `othello-arena-kit.zip` into --out (default build/kit, where the site's settings look
for it) and the kit version into kit/version (or --version-file). The zip holds the files of
kit/ (README.md rendered from the grader's configuration: the runtime row of its image, the
pace per board, the limits), kit.json (version, runtime row, requirements, the kit's own
files) and a wheel of this project, which the kit's `check.py --setup` installs into a .venv
so that `check.py` runs the server's own smoke gate. Prints the zip's path and the version.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.kit.build import build_kit


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "kit",
        help="the students' starter kit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    build = actions.add_parser(
        "build",
        help="build the kit zip and kit/version",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument("--out", type=Path, help="folder for the zip (default build/kit of the checkout)")
    build.add_argument(
        "--source",
        type=Path,
        help="the arena's checkout to build from (default: the one this arena runs from); the "
        "runtime row and limits are read from the arena running this command, so use its own",
    )
    build.add_argument("--version-file", type=Path, help="where the version goes (default kit/version of the checkout)")
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    result = build_kit(
        root=args.source, out=args.out, version_path=args.version_file, log=lambda line: print(line, file=sys.stderr)
    )
    print(result.zip_path)
    print(result.version)
    return 0
