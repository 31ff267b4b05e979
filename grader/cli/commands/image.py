"""arena image build: build the agents' docker image (python:3.11-slim + the pinned numpy), offline.

The numpy wheel is fetched on the host and checked by sha256; nothing inside the build
reaches the network. Where python:3.11-slim cannot be pulled, the base is a stand-in built
from Debian's packages with mmdebstrap, said loudly here and recorded in the image's labels.
"""

from __future__ import annotations

import argparse
import sys

from grader.cli.main import ARENA_FAILED
from grader.sandbox.base import LaunchError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("image", help="the agents' docker image", description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    build = actions.add_parser("build", help="build the image with the docker SDK (no network inside the build)")
    build.add_argument("--tag", default=None, help="image tag (default: the one the docker sandbox uses)")
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    from grader.sandbox import image
    from grader.sandbox.docker import client

    tag = args.tag or image.IMAGE_TAG

    def log(line: str) -> None:
        print(f"arena image build: {line}", file=sys.stderr)

    try:
        engine = client()
    except LaunchError as exc:
        log(f"{exc}; start a docker engine first (docs/runners.md)")
        return ARENA_FAILED
    log(f"building {tag} (numpy {image.NUMPY_VERSION}, no network inside the build)")
    try:
        record = image.build(engine, tag, log=log)
    except image.ImageError as exc:
        log(str(exc))
        return ARENA_FAILED
    if record.stand_in:
        log(f"WARNING: {tag} is built on a STAND-IN base, not {image.BASE_IMAGE}: {record.base}")
    print(f"{record.tag} {record.id} base: {record.base}")
    return 0
