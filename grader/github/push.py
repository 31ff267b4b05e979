"""Commit to main from a workflow, and retry when main moved in between.

A job that records something on main (the request log of `/score`, say) computes its change
from main as it is, commits and pushes; when the push is refused because main moved (a
merge, a round, another request), it takes main again and computes the change again from the
new state, so nothing another writer committed is lost and nothing is recorded twice.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ATTEMPTS = 8
# What GitHub answers a push that no retry can fix: a ruleset, a read-only or unknown credential.
REFUSED_FOR_GOOD = ("GH013", "Permission to", "Permission denied", "could not read Username", "marked as read only")


class PushError(RuntimeError):
    """The change could not be committed to main; the message says why."""


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PushError(f"git {' '.join(args)}: {exc}") from None
    if check and done.returncode != 0:
        raise PushError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done


def commit_and_push(
    repo: Path,
    branch: str,
    change: Callable[[], list[str] | None],
    message: str,
    remote: str = "origin",
    attempts: int = ATTEMPTS,
    log=None,
) -> bool:
    """Apply `change` to `branch` as it is on `remote` and push it, again from the new state
    each time the push is refused; True once pushed, False when `change` had nothing to record
    (it returns the paths it wrote, or None). PushError after `attempts` refusals."""
    for attempt in range(1, attempts + 1):
        _git(repo, "fetch", "--quiet", remote, branch)
        _git(repo, "checkout", "--quiet", "-B", branch, "FETCH_HEAD")
        paths = change()
        if not paths:
            return False
        _git(repo, "add", "--", *paths)
        if not _git(repo, "diff", "--cached", "--quiet", check=False).returncode:
            return False  # nothing changed: already recorded
        _git(repo, "commit", "--quiet", "-m", message)
        pushed = _git(repo, "push", "--quiet", remote, f"HEAD:{branch}", check=False)
        if pushed.returncode == 0:
            return True
        lines = pushed.stderr.strip().splitlines()
        if any(marker in pushed.stderr for marker in REFUSED_FOR_GOOD):
            # Not a moved main: the rules on the branch or the credentials refuse this push, and
            # would refuse it again (docs/deploy.md: the workflows push with the arena's key).
            raise PushError(
                f"{branch}: the push was refused: "
                + " ".join(line.removeprefix("remote: ").strip() for line in lines if line.strip())
            )
        why = next((line.strip() for line in lines if "rejected" in line), lines[-1] if lines else "")
        (log or (lambda line: print(line, file=sys.stderr)))(
            f"push to {branch} refused (attempt {attempt} of {attempts}; main moved?): {why}"
        )
        time.sleep(min(2**attempt, 30) / 4)
    raise PushError(f"{branch}: the push was refused {attempts} times; nothing was recorded")
