"""Build submission.zip and check the zip exactly as the server will.

    python package.py          (or: make package)

The zip holds agent.py and every file beside it (your modules, JSON/CSV/.npz data), without
the kit's own files (check.py, play.py, package.py, kitenv.py, README.md, Makefile, kit.json,
wheels/), hidden files and folders (.venv, .git) or caches. It is then opened with the
server's own loader (`grader.submission`: size, file count, paths, agent.py with
`class Agent` and its methods) and screened with the server's own screening
(`grader.screening`: imports and data files that need a staff member's look). It says
whether `make check` has passed on these exact files.

Exit status: 0 a valid submission.zip, 1 the server would refuse it, 2 the kit could not run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import kitenv


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="package.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", type=Path, default=kitenv.KIT_DIR,
                   help="the folder holding agent.py (default: this kit folder)")
    p.add_argument("--out", type=Path, default=kitenv.KIT_DIR / "submission.zip",
                   help="where the zip goes (default: submission.zip in the kit folder)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data = kitenv.start(__file__)
    except kitenv.KitSetupError as exc:
        return kitenv.fail(exc)

    from grader.kit import KitError, submission_files, write_submission_zip
    from grader.screening import screen
    from grader.submission import MAX_ZIP_BYTES, SubmissionError, load_submission

    folder = args.agent.resolve()
    exclude = kitenv.excludes(folder, data)
    out = args.out.resolve()
    if out.parent == folder:
        exclude.append(out.name)  # an old zip beside agent.py is not part of the new one
    try:
        files = submission_files(folder, exclude)
    except KitError as exc:
        return kitenv.fail(exc)
    write_submission_zip(folder, files, out)
    size = out.stat().st_size
    print(f"wrote {out.name}: {len(files)} files, {size} bytes (the server takes up to {MAX_ZIP_BYTES // 2**20} MiB)")
    for rel in files:
        print(f"  {rel}")
    with tempfile.TemporaryDirectory(prefix="arena-package-") as tmp:
        try:
            # The server's loader, on the zip itself: what an upload goes through first.
            submission = load_submission(out, extract_to=Path(tmp, "unpacked"))
        except SubmissionError as exc:
            print(f"REFUSED: the server would not accept {out.name}: {exc}")
            return 1
        flags = screen(submission)
    print(f"digest: {submission.digest}")
    for flag in flags:
        print(f"needs staff review: {flag.describe()}")
    if flags:
        print("  (a flag does not refuse the upload, but it cannot be activated until staff have read it)")
    print(checked_line(submission.digest, data))
    print(f"OK: {out.name} is a valid submission; upload it, or put its files in your pull request")
    return 0


def checked_line(digest: str, data: dict) -> str:
    """Whether `make check` passed on exactly these files, by the digest check.py remembered."""
    try:
        last = json.loads(kitenv.LAST_CHECK.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last = None
    if last and last.get("digest") == digest and last.get("version") == data["version"]:
        verdict = "passed" if last.get("result") == "pass" else "FAILED"
        return f"make check {verdict} on these exact files ({last.get('when')})"
    return "make check has not been run on these exact files: run it before you upload"


if __name__ == "__main__":
    sys.exit(main())
