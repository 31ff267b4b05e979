"""arena image build: build the agents' docker image (python:3.11-slim + the pinned numpy)."""

from __future__ import annotations

import argparse
import sys

from grader.sandbox.base import LaunchError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("image", help="the agents' docker image", description=__doc__)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    build = actions.add_parser("build", help="build the image with the docker SDK")
    build.add_argument("--tag", default=None, help="image tag (default: the one the docker sandbox uses)")
    build.set_defaults(func=run_build)


def run_build(args: argparse.Namespace) -> int:
    from grader.sandbox.docker import DOCKERFILE, IMAGE_TAG, build_image
    tag = args.tag or IMAGE_TAG
    print(f"arena image build: building {tag} from:\n{DOCKERFILE}", file=sys.stderr)
    try:
        image_id = build_image(tag, log=lambda line: print(line, file=sys.stderr))
    except LaunchError as exc:
        print(f"arena image build: {exc}", file=sys.stderr)
        return 1
    print(f"{tag} {image_id}")
    return 0
