"""Build submission.zip and check the zip exactly as the server will.

    python package.py          (or: make package)

The zip holds agent.py and every file beside it (your modules, JSON/CSV/.npz data), without
the kit's own files (check.py, play.py, package.py, kitenv.py, README.md, Makefile, kit.json,
wheels/), hidden files and folders (.venv, .git) or caches. It is then opened with the
server's own loader (`grader.documents.submission`: size, file count, paths, agent.py with
`class Agent` and its methods) and screened with the server's own screening
(`grader.season.screening`: imports and data files that need a staff member's look). It says
whether `make check` or `make check-long` passed on these exact files (check.py remembers
every verdict by the files' digest; the latest one counts), refuses files on which the latest
check failed (unless --force), and ends with how to get an account and the steps from the
zip to a pull request.

The zip is then sealed to the arena's public key (kit.json's `submission_key`; libsodium's
sealed box, X25519 + XSalsa20-Poly1305): `submission/` gets submission.sealed, which only the
arena opens, and manifest.yaml (your handle, the kit version and the digests), the two files
a pull request carries. Your handle: `make package HANDLE=<your handle>` (or --handle).

Exit status: 0 a valid submission.zip, 1 the server would refuse it or `make check` failed on
these files, 2 the kit could not run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import kitenv


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="package.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--agent", type=Path, default=kitenv.KIT_DIR, help="the folder holding agent.py (default: this kit folder)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=kitenv.KIT_DIR / "submission.zip",
        help="where the zip goes (default: submission.zip in the kit folder)",
    )
    p.add_argument(
        "--handle",
        default=os.environ.get("HANDLE") or None,
        help="your account's handle (accounts.yaml), named in the sealed package's manifest "
        "(default: $HANDLE, as `make package HANDLE=...` sets it)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="package files on which `make check` failed anyway (the smoke test on your pull "
        "request will fail the same way)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data = kitenv.start(__file__)
    except kitenv.KitSetupError as exc:
        return kitenv.fail(exc)

    from grader.common.patterns import HANDLE_RE, HANDLE_RULE
    from grader.documents.submission import MAX_ZIP_BYTES, SubmissionError, load_submission
    from grader.kit.build import (
        NO_REPOSITORY,
        KitError,
        site_line,
        submission_files,
        submit_steps,
        write_sealed_package,
        write_submission_zip,
    )
    from grader.season.screening import screen

    if args.handle is not None and not HANDLE_RE.match(args.handle):
        print(
            f"REFUSED: HANDLE={args.handle!r} is not a handle: {HANDLE_RULE}. Give your account's handle as it "
            "is in the arena's accounts.yaml, e.g. make package HANDLE=bob (not Bob)"
        )
        return 1
    folder = args.agent.resolve()
    exclude = kitenv.excludes(folder, data)
    out = args.out.resolve()
    sealed_dir = out.parent / "submission"
    # A sealed package left from an earlier run is never what this run packaged: it goes now,
    # so that a refused or unsealed run cannot leave the old agent to be committed.
    stale = clear_package(sealed_dir)
    if stale:
        print(
            f"removed the previous sealed package from {sealed_dir.name}/ ({', '.join(stale)}): it held "
            "your earlier files, not these"
        )
    if out.parent == folder:
        exclude += [out.name, sealed_dir.name]  # an old package beside agent.py is not part of the new one
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
            # The server's loader, on the zip itself: what a pull request goes through first.
            submission = load_submission(out, extract_to=Path(tmp, "unpacked"))
        except SubmissionError as exc:
            print(f"REFUSED: the server would not accept {out.name}: {exc}")
            return 1
        flags = screen(submission)
    print(f"digest: {submission.digest}")
    for flag in flags:
        print(f"needs staff review: {flag.describe()}")
    if flags:
        print("  (a flag does not refuse the submission, but it cannot be activated until staff have read it)")
    verdict, check, line = checked_line(submission.digest, data)
    print(line)
    if verdict == "fail":
        if not args.force:
            out.unlink()
            print(
                f"REFUSED: {check} failed on these exact files, so {out.name} was not kept. Fix your agent, "
                f"run `{check}` until it passes, then `make package` again "
                "(`python package.py --force` packages it anyway)"
            )
            return 1
        print(f"packaged anyway (--force): a round would fail your agent as {check} did")
    repository = data.get("repository")
    if not args.handle:
        print(
            f"NOT SEALED: {sealed_dir.name}/ holds no package now; say your handle to seal these files for a "
            "pull request: make package HANDLE=<your handle> (python package.py --handle <your handle>)"
        )
        print_register_steps(repository)
        return 1
    from grader.documents.sealing import OWNER_KEY_FILE, owner_public_key

    # Your own key pair, kept in the kit folder (a hidden file: never packaged): the manifest
    # carries its public half, so that what is yours alone can be sealed to you.
    key_file = kitenv.KIT_DIR / OWNER_KEY_FILE
    if not key_file.exists():
        problem = carry_over_key(key_file)
        if problem:
            print(f"REFUSED: {problem}")
            return 1
    owner_key = owner_public_key(key_file)
    manifest = write_sealed_package(
        out, submission.digest, args.handle, data["version"], data["submission_key"], sealed_dir, owner_key
    )
    print(
        f"sealed to the arena's key {manifest.recipient[:16]}...: {sealed_dir.name}/submission.sealed "
        f"({manifest.sealed}) and {sealed_dir.name}/manifest.yaml, for submissions/{args.handle}/"
    )
    if verdict != "fail":
        print(f"OK: {out.name} is a valid submission")
    print_register_steps(repository)
    print("To submit it:")
    for number, step in enumerate(submit_steps(repository), 1):
        print(f"  {number}. {step}")
    print(f"The arena's repository: {repository}" if repository else f"The arena's repository: {NO_REPOSITORY}")
    print(site_line(repository))
    return 0


def clear_package(sealed_dir: Path) -> list[str]:
    """Remove a sealed package's files from `sealed_dir`; the names removed."""
    from grader.documents.sealing import PACKAGE_FILES

    removed = []
    for name in PACKAGE_FILES:
        if (sealed_dir / name).exists():
            (sealed_dir / name).unlink()
            removed.append(name)
    return removed


def carry_over_key(key_file: Path) -> str | None:
    """This kit has no owner key yet. A kit you used before (a folder beside this one) holds the
    key your history is sealed to: carry it over, never make a new one silently. None when done
    (carried over, or a new key is to be made because no earlier kit has one); else why not."""
    import shutil

    found = sorted(p for p in key_file.parent.parent.glob(f"*/{key_file.name}") if p.parent != key_file.parent)
    if len(found) == 1:
        shutil.copy2(found[0], key_file)
        key_file.chmod(0o600)
        print(f"your key: carried over {found[0]} into this kit ({key_file.name}): your history stays sealed to it")
        return None
    if len(found) > 1:
        listed = ", ".join(str(p) for p in found)
        return (
            f"this kit has no {key_file.name}, and several kits beside it have one ({listed}). Copy the one of "
            f"the kit you packaged with into this folder (cp <that kit>/{key_file.name} {key_file.parent}/), "
            "then run make package again: your history is sealed to that key"
        )
    print(
        f"your key: made {key_file} (never packaged). Keep it: your history is sealed to it. When you move to a "
        f"newer kit, copy {key_file.name} into the new kit's folder with your agent.py"
    )
    return None


def print_register_steps(repository: str | None) -> None:
    """How to get an account, which comes before the first submission's pull request."""
    from grader.kit.build import register_steps

    print("Before your first submission, get an account (once):")
    for number, step in enumerate(register_steps(repository), 1):
        print(f"  {number}. {step}")


def checked_line(digest: str, data: dict) -> tuple[str | None, str, str]:
    """(the latest verdict of any check on exactly these files or None, the check that gave it:
    `make check` or `make check-long`, the line that says it)."""
    last = kitenv.read_checks().get(digest)
    if isinstance(last, dict) and last.get("version") == data["version"]:
        check = last.get("check") or "make check"
        if last.get("result") == "pass":
            return "pass", check, f"{check} passed on these exact files ({last.get('when')}), its latest check"
        reason = f": {last['reason']}" if last.get("reason") else ""
        return "fail", check, f"{check} FAILED on these exact files ({last.get('when')}), its latest check{reason}"
    return (
        None,
        "make check",
        "make check has not been run on these exact files: run it before you open the pull request",
    )


if __name__ == "__main__":
    sys.exit(main())
