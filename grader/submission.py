"""Submissions: a folder or zip holding `agent.py` with `class Agent`, plus data files.

The loader checks a submission without ever importing it on the host: the
class is found by parsing agent.py with `ast`. A zip is screened before a byte
is extracted (absolute paths, `..`, links, too many files, too large, a ratio
that marks a zip bomb) and then extracted into a fresh folder.
"""

from __future__ import annotations

import ast
import atexit
import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from grader import owner

MAX_FILES = 200
MAX_TOTAL_BYTES = 50 * 1024 * 1024  # uncompressed, all files together
MAX_ZIP_BYTES = 20 * 1024 * 1024  # the zip file itself
MAX_RATIO = 100  # uncompressed / compressed, per member and overall
IGNORED_DIRS = frozenset({"__pycache__", ".git"})


class SubmissionError(ValueError):
    """A submission that cannot run; the message names the file and the reason."""


@dataclass(frozen=True)
class Submission:
    """A checked submission: its folder, its content digest and its files (relative, sorted)."""

    path: Path
    digest: str
    files: tuple[str, ...]


def load_submission(source: str | os.PathLike, extract_to: str | os.PathLike | None = None) -> Submission:
    """Check a submission folder or zip and return it; raise SubmissionError naming the problem.

    A zip is extracted into `extract_to` (a new temporary folder when None).
    """
    source = Path(source)
    if not source.exists():
        raise SubmissionError(f"{source}: no such file or folder")
    if source.is_dir():
        folder = source
    elif zipfile.is_zipfile(source):
        folder = Path(extract_to) if extract_to else extraction_folder()
        _extract_zip(source, folder)
    else:
        raise SubmissionError(f"{source}: neither a folder nor a zip file")
    files = _scan_folder(folder)
    _check_agent(folder / "agent.py")
    return Submission(path=folder.resolve(), digest=_digest(folder, files), files=files)


def _scan_folder(folder: Path) -> tuple[str, ...]:
    files: list[str] = []
    total = 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in dirs:
            if Path(root, name).is_symlink():
                raise SubmissionError(f"{Path(root, name).relative_to(folder).as_posix()}: "
                                      "symbolic links are not allowed in a submission")
        # Every entry is checked before any is counted, so a bad entry is named even past the caps.
        sizes = []
        for name in names:
            full = Path(root, name)
            rel = full.relative_to(folder).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise SubmissionError(f"{rel}: symbolic links are not allowed in a submission")
            if not stat.S_ISREG(st.st_mode):
                raise SubmissionError(f"{rel}: not a regular file")
            sizes.append((rel, st.st_size))
        for rel, size in sizes:
            files.append(rel)
            total += size
            if len(files) > MAX_FILES:
                raise SubmissionError(f"{folder}: more than {MAX_FILES} files")
            if total > MAX_TOTAL_BYTES:
                raise SubmissionError(f"{folder}: more than {MAX_TOTAL_BYTES // 2**20} MiB of files")
    if "agent.py" not in files:
        raise SubmissionError(f"{folder}: no agent.py at the top of the submission")
    return tuple(sorted(files))


def _check_agent(path: Path) -> None:
    try:
        source = path.read_bytes()
        tree = ast.parse(source, filename="agent.py")
    except SyntaxError as exc:
        raise SubmissionError(f"agent.py: syntax error at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes
        raise SubmissionError(f"agent.py: cannot be parsed: {exc}") from None
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if "Agent" not in classes:
        raise SubmissionError("agent.py: no top-level `class Agent`")
    methods = {n.name for n in classes["Agent"].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # A base class may supply the methods, so only an Agent with no bases must define them.
    missing = [m for m in ("prepare", "act", "observe_outcome") if m not in methods]
    if missing and not classes["Agent"].bases:
        raise SubmissionError(f"agent.py: class Agent has no {', '.join(missing)} method")


def _digest(folder: Path, files: tuple[str, ...]) -> str:
    """sha256 over (name, size, content) of every file in sorted order."""
    h = hashlib.sha256()
    for rel in files:
        data = (folder / rel).read_bytes()
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return "sha256:" + h.hexdigest()


def _extract_zip(archive: Path, dest: Path) -> None:
    size = archive.stat().st_size
    if size > MAX_ZIP_BYTES:
        raise SubmissionError(f"{archive.name}: zip of {size} bytes is over the {MAX_ZIP_BYTES // 2**20} MiB limit")
    with zipfile.ZipFile(archive) as zf:
        members = zf.infolist()
        if len(members) > MAX_FILES:
            raise SubmissionError(f"{archive.name}: {len(members)} entries, more than {MAX_FILES}")
        total = 0
        for info in members:
            name = info.filename
            parts = name.replace("\\", "/").split("/")
            if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
                raise SubmissionError(f"{archive.name}: absolute path {name!r}")
            if ".." in parts:
                raise SubmissionError(f"{archive.name}: path with '..' {name!r}")
            kind = (info.external_attr >> 16) & 0o170000
            if kind == stat.S_IFLNK:
                raise SubmissionError(f"{archive.name}: symbolic link {name!r}")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise SubmissionError(f"{archive.name}: special file {name!r}")
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise SubmissionError(f"{archive.name}: unpacks to more than {MAX_TOTAL_BYTES // 2**20} MiB")
            if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise SubmissionError(f"{archive.name}: {name!r} compresses {info.file_size // max(info.compress_size, 1)}:1, "
                                      f"a zip bomb (limit {MAX_RATIO}:1)")
        dest.mkdir(parents=True, exist_ok=True)
        written = 0
        for info in members:
            target = dest / info.filename
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            # The header sizes can lie; count what really comes out.
            with zf.open(info) as src, open(target, "wb") as out:
                while chunk := src.read(1 << 16):
                    written += len(chunk)
                    if written > MAX_TOTAL_BYTES:
                        raise SubmissionError(f"{archive.name}: unpacks to more than {MAX_TOTAL_BYTES // 2**20} MiB")
                    out.write(chunk)
    # A zip whose agent.py sits in one top folder (what "compress folder" makes) is accepted.
    entries = [p for p in dest.iterdir() if p.name not in IGNORED_DIRS and p.name != "__MACOSX"]
    if not (dest / "agent.py").exists() and len(entries) == 1 and entries[0].is_dir() and (entries[0] / "agent.py").exists():
        inner = entries[0]
        for item in inner.iterdir():
            item.rename(dest / item.name)
        inner.rmdir()


EXTRACT_PREFIX = "arena-sub-"


def extraction_folder() -> Path:
    """A new folder for a zip's files, removed when this process exits; named with the
    process's owner tag, so that folders a killed arena left are removed by the next one
    (the first extraction of a process sweeps them)."""
    global _SWEPT
    root = Path(tempfile.gettempdir())
    if not _SWEPT:
        _SWEPT = True
        owner.sweep(root, EXTRACT_PREFIX, lambda p: shutil.rmtree(p))
    folder = Path(tempfile.mkdtemp(prefix=f"{EXTRACT_PREFIX}{owner.tag()}-", dir=root))
    atexit.register(shutil.rmtree, folder, True)
    return folder


_SWEPT = False
