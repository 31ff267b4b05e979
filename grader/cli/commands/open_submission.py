"""arena open-submission: open a sealed submission to review it (staff).

PATH is a submission's folder as a pull request carries it (manifest.yaml and
submission.sealed), or, with --ref, `submissions/<PATH>/` read from a git ref's blobs (a
pull request's head after `git fetch origin pull/N/head`, say). It is opened with the arena's
key (ARENA_SUBMISSION_KEY, or this user's key file), checked against its manifest, written as
plain files to --out, and screened; the last line is the comment that clears exactly this
digest, to post on the pull request with the review label.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from grader.documents.sealing import MANIFEST_NAME, Manifest
from grader.documents.submission import SubmissionError, load_submission
from grader.github.pr_check import REVIEW_COMMAND
from grader.play.field import SUBMISSIONS, GitError, export_tree
from grader.season.screening import screen


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "open-submission",
        help="open a sealed submission to review it (staff)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", help="the sealed submission's folder, or a handle with --ref")
    p.add_argument("--ref", help="read submissions/<PATH>/ from this git ref's blobs")
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="the clone --ref is read from (default .)")
    p.add_argument("--out", type=Path, required=True, help="an empty or new folder for the plain files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.out.exists() and any(args.out.iterdir()):
        print(f"open-submission: {args.out} is not empty", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="arena-open-") as scratch:
        folder = Path(args.path)
        if args.ref:
            try:
                export_tree(args.repo_dir, args.ref, Path(scratch), (f"{SUBMISSIONS}/{args.path}",))
            except GitError as exc:
                print(f"open-submission: {exc}", file=sys.stderr)
                return 1
            folder = Path(scratch) / SUBMISSIONS / args.path
        try:
            submission = load_submission(folder, extract_to=args.out)
            manifest = Manifest.from_bytes((folder / MANIFEST_NAME).read_bytes())
        except (SubmissionError, OSError) as exc:
            print(f"open-submission: {exc}", file=sys.stderr)
            return 1
    print(f"handle {manifest.handle}, kit {manifest.kit_version}: {len(submission.files)} files in {args.out}")
    for rel in submission.files:
        print(f"  {rel}")
    flags = screen(submission)
    for flag in flags:
        print(f"needs staff review: {flag.describe()}")
    print(f"digest: {submission.digest}")
    print("to clear exactly these files after reading them, comment on the pull request, then add the review label:")
    print(f"{REVIEW_COMMAND} {submission.digest}")
    return 0
