"""Where the arena's source tree is, and which commit the running code is.

The arena runs from a checkout (`make install` installs it editable, so the package sits in
the checkout) or from a plain `pip install .` made inside a checkout, as the workflows do: the
package is then a copy in site-packages, and the templates, docs, kit and git history are in
the checkout the command runs in. `source_tree()` finds the tree in that order; `git_commit()`
names its commit, `-dirty` when the code that runs is not exactly that commit's (uncommitted
changes, or an installed copy that differs from the checkout's files).
"""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

import engine
import grader

PROJECT_NAME = 'name = "othello-arena"'
CODE = ("engine", "grader")


def is_arena_tree(path: Path) -> bool:
    """`path` holds the arena's sources: its pyproject.toml, engine/ and grader/."""
    pyproject = path / "pyproject.toml"
    try:
        return (path / "engine").is_dir() and (path / "grader").is_dir() and PROJECT_NAME in pyproject.read_text()
    except OSError:
        return False


def package_parent() -> Path:
    return Path(grader.__file__).resolve().parent.parent


def source_tree(start: Path | None = None) -> Path | None:
    """`start` if given and a tree; else the tree the package lives in; else the current folder
    when it is the arena's tree (a non-editable install run inside its checkout); else None."""
    if start is not None:
        return Path(start).resolve() if is_arena_tree(Path(start)) else None
    for candidate in (package_parent(), Path.cwd()):
        if is_arena_tree(candidate):
            return candidate.resolve()
    return None


def installed_copy_differs(tree: Path) -> bool:
    """The running package is a copy (not `tree`'s own files) whose sources differ from `tree`'s."""
    for module in (engine, grader):
        assert module.__file__ is not None  # both are packages of files, never namespaces
        installed = Path(module.__file__).resolve().parent
        source = tree / module.__name__
        if installed == source.resolve():
            continue
        if _differs(installed, source):
            return True
    return False


def _differs(installed: Path, source: Path) -> bool:
    for path in source.rglob("*.py"):
        rel = path.relative_to(source)
        other = installed / rel
        if not other.is_file() or not filecmp.cmp(path, other, shallow=False):
            return True
    return any(not (source / p.relative_to(installed)).is_file() for p in installed.rglob("*.py"))


def git_commit(root: Path | None = None) -> str:
    """The commit of the arena's code, `-dirty` when the running code differs from it; `unknown` outside git."""
    tree = source_tree(root)
    if tree is None:
        return "unknown"
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True, timeout=20)
        if head.returncode != 0:
            return "unknown"
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", *CODE], cwd=tree, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    dirty = bool(status.stdout.strip()) or installed_copy_differs(tree)
    return head.stdout.strip() + ("-dirty" if dirty else "")
