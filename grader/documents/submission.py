"""Submissions: a folder or zip holding `agent.py` with `class Agent`, plus data files.

A sealed submission (grader.documents.sealing: a manifest and the sealed zip, what a pull request
carries) is opened with the arena's key, unpacked as a zip is, and its digest checked against
the manifest's.

The loader checks a submission without ever importing it on the host: the
class is found by parsing agent.py with `ast`. A zip is screened before a byte
is extracted (absolute paths, `..`, links, too many files, too large, a ratio
that marks a zip bomb) and then extracted into a fresh folder.
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.common import owner
from grader.documents import sealing

MAX_FILES = 200
MAX_TOTAL_BYTES = 50 * 1024 * 1024  # uncompressed, all files together
MAX_ZIP_BYTES = 20 * 1024 * 1024  # the zip file itself
MAX_RATIO = 100  # uncompressed / compressed, per member and overall
IGNORED_DIRS = frozenset({"__pycache__", ".git"})
MAX_DEPTH = 32  # folders inside folders: deeper trees exhaust the recursion of the tools that walk them
# A file's path inside the submission, in bytes: a sandbox copies it under a folder of its own,
# and a path near the system's limit (4096) there would fail that copy, as the arena's fault.
MAX_PATH_BYTES = 1024


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
    if source.is_dir() and sealing.is_package(source):
        return _open_package(source, Path(extract_to) if extract_to else extraction_folder())
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


def _open_package(source: Path, folder: Path) -> Submission:
    """Open a sealed submission into `folder` with the arena's key; its digest must be the manifest's."""
    try:
        manifest, sealed = sealing.read_package(source)
        plain = sealing.open_sealed(sealed, manifest)
    except (sealing.SealError, OSError) as exc:
        raise SubmissionError(f"{source.name}: {exc}") from None
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(prefix=".arena-opened-", suffix=".zip", dir=folder.parent) as archive:
        archive.write(plain)
        archive.flush()
        _extract_zip(Path(archive.name), folder)
    files = _scan_folder(folder)
    _check_agent(folder / "agent.py")
    submission = Submission(path=folder.resolve(), digest=_digest(folder, files), files=files)
    if submission.digest != manifest.digest:
        raise SubmissionError(
            f"{source.name}: opened, its files' digest is {submission.digest}, the manifest says {manifest.digest}"
        )
    return submission


def shown_name(name: str) -> str:
    """A file name fit for a message: as it is when it is UTF-8, else its bytes' repr (a name
    read from disk that is not UTF-8 holds surrogate escapes, which no writer can encode)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return repr(os.fsencode(name))
    return name


def _refuse_unreadable(exc: OSError) -> None:
    raise SubmissionError(f"{shown_name(str(exc.filename))}: cannot be read: {exc.strerror}")


def _scan_folder(folder: Path) -> tuple[str, ...]:
    files: list[str] = []
    total = 0
    # onerror: a folder os.walk cannot read would otherwise be skipped, leaving its files out.
    for root, dirs, names in os.walk(folder, followlinks=False, onerror=_refuse_unreadable):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in dirs + names:
            _check_name(Path(root, name).relative_to(folder).as_posix())
        if dirs and len(Path(root).relative_to(folder).parts) >= MAX_DEPTH:  # before os.walk goes deeper
            raise SubmissionError(
                f"{Path(root, dirs[0]).relative_to(folder).as_posix()[:200]}...: folders nested "
                f"more than {MAX_DEPTH} deep"
            )
        for name in dirs:
            if Path(root, name).is_symlink():
                raise SubmissionError(
                    f"{Path(root, name).relative_to(folder).as_posix()}: symbolic links are not allowed in a submission"
                )
        # Every entry is checked before any is counted, so a bad entry is named even past the caps.
        sizes = []
        for name in names:
            full = Path(root, name)
            rel = full.relative_to(folder).as_posix()
            try:
                st = full.lstat()
            except OSError as exc:
                raise SubmissionError(f"{rel}: cannot be read: {exc.strerror}") from None
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
        raise SubmissionError(missing_agent(files))
    return tuple(sorted(files))


def missing_agent(files: list[str]) -> str:
    """Why a submission whose files are `files` (relative paths) has no agent.py, and where one
    is when it sits a folder or more too deep (a kit folder copied in whole, say)."""
    found = sorted((f for f in files if PurePosixPath(f).name == "agent.py"), key=lambda f: (f.count("/"), f))
    if not found:
        return (
            "no agent.py at the top of the submission, nor in its folders (in a pull request: the top is "
            "submissions/<your handle>/)"
        )
    inner = PurePosixPath(found[0]).parent.as_posix()
    # Short: a pull request's comment shows the first 300 characters of it.
    return (
        f"no agent.py at the top of the submission, but there is {found[0]}: move what is in {inner}/ up to "
        "the top (in a pull request: into submissions/<your handle>/ itself)"
    )


def agent_methods(folder: Path) -> set[str] | None:
    """The methods `class Agent` of a loaded submission defines itself; None when it has base
    classes (they may supply more)."""
    tree = parse_python((folder / "agent.py").read_bytes(), "agent.py")
    agent = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Agent")
    if agent.bases:
        return None
    return {n.name for n in agent.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _check_name(rel: str) -> None:
    """A name every tool downstream can carry: UTF-8, as the digest, the reports and the
    results are (a name read from disk that is not holds surrogate escapes), and a path short
    enough to be copied into a sandbox's session (`MAX_PATH_BYTES`)."""
    try:
        size = len(rel.encode("utf-8"))
    except UnicodeEncodeError:
        raise SubmissionError(f"{shown_name(rel)}: a file name that is not UTF-8") from None
    if size > MAX_PATH_BYTES:
        raise SubmissionError(
            f"{rel[:100]}...: a path of {size} bytes inside the submission, over "
            f"{MAX_PATH_BYTES}: shorten its folders' names or nest them less"
        )


def parse_python(source: bytes, rel: str) -> ast.Module:
    """The AST of one Python file of a submission; SubmissionError naming the file when it does
    not parse, including source nested too deeply for Python's parser, which raises
    RecursionError or MemoryError rather than SyntaxError."""
    try:
        return ast.parse(source, filename=rel)
    except SyntaxError as exc:
        raise SubmissionError(f"{rel}: syntax error at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes
        raise SubmissionError(f"{rel}: cannot be parsed: {exc}") from None
    except (RecursionError, MemoryError):
        raise SubmissionError(f"{rel}: nested too deeply for Python's parser") from None


def _check_agent(path: Path) -> None:
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise SubmissionError(f"agent.py: cannot be read: {exc.strerror}") from None
    tree = parse_python(source, "agent.py")
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
        try:
            data = (folder / rel).read_bytes()
        except OSError as exc:
            raise SubmissionError(f"{rel}: cannot be read: {exc.strerror}") from None
        h.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return "sha256:" + h.hexdigest()


# What a damaged or unusual zip raises while it is read: its bytes are data, so each is a refusal.
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, UnicodeDecodeError, OSError)


def _extract_zip(archive: Path, dest: Path) -> None:
    size = archive.stat().st_size
    if size > MAX_ZIP_BYTES:
        raise SubmissionError(f"{archive.name}: zip of {size} bytes is over the {MAX_ZIP_BYTES // 2**20} MiB limit")
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            _check_members(archive, members)
            _write_members(archive, zf, members, dest)
    except SubmissionError:
        raise
    except UnicodeDecodeError:
        raise SubmissionError(f"{archive.name}: an entry's name is marked UTF-8 but is not UTF-8") from None
    except _ZIP_ERRORS as exc:  # RuntimeError: an encrypted member; NotImplementedError: an unknown method
        raise SubmissionError(f"{archive.name}: cannot be unpacked: {type(exc).__name__}: {exc}") from None
    _flatten_top_folder(archive, dest)


def _check_members(archive: Path, members: list[zipfile.ZipInfo]) -> None:
    """Refuse, before a byte is written, every entry that could not be unpacked as the folder
    it claims to be: too many or too large, absolute, `..`, links and special files, names that
    are not UTF-8 or hold control characters, and names that clash (twice the same, or one
    name both a file and a folder)."""
    if len(members) > MAX_FILES:
        raise SubmissionError(f"{archive.name}: {len(members)} entries, more than {MAX_FILES}")
    total = 0
    files: set[str] = set()
    folders: set[str] = set()
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
        # The path as it lands on disk: empty and `.` components vanish there.
        path = "/".join(p for p in name.split("/") if p not in ("", "."))
        if not path:
            raise SubmissionError(f"{archive.name}: an entry with no name ({name!r})")
        if path.count("/") > MAX_DEPTH:
            raise SubmissionError(f"{archive.name}: {name[:200]!r}...: folders nested more than {MAX_DEPTH} deep")
        above = path.split("/")[:-1]
        for i in range(len(above)):
            folders.add("/".join(above[: i + 1]))
        if info.is_dir():
            folders.add(path)
        elif path in files:
            raise SubmissionError(f"{archive.name}: {path!r} appears twice")
        else:
            files.add(path)
        total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise SubmissionError(f"{archive.name}: unpacks to more than {MAX_TOTAL_BYTES // 2**20} MiB")
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise SubmissionError(
                f"{archive.name}: {name!r} compresses {info.file_size // max(info.compress_size, 1)}:1, "
                f"a zip bomb (limit {MAX_RATIO}:1)"
            )
    clash = sorted(files & folders)
    if clash:
        raise SubmissionError(f"{archive.name}: {clash[0]!r} is both a file and a folder")


def _write_members(archive: Path, zf: zipfile.ZipFile, members: list[zipfile.ZipInfo], dest: Path) -> None:
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


def _flatten_top_folder(archive: Path, dest: Path) -> None:
    """A zip whose agent.py sits in one top folder (what "compress folder" makes) is accepted:
    the folder's entries move up. The folder is renamed out of the way first, since it may
    hold an entry of its own name."""
    entries = [p for p in dest.iterdir() if p.name not in IGNORED_DIRS and p.name != "__MACOSX"]
    if (
        (dest / "agent.py").exists()
        or len(entries) != 1
        or not entries[0].is_dir()
        or not (entries[0] / "agent.py").exists()
    ):
        return
    inner = entries[0].rename(dest / f".arena-top-{os.getpid()}")
    for item in sorted(inner.iterdir()):
        target = dest / item.name
        if target.exists():
            raise SubmissionError(f"{archive.name}: {entries[0].name}/{item.name} and {item.name} are both at the top")
        item.rename(target)
    inner.rmdir()


EXTRACT_PREFIX = "arena-sub-"


def extraction_folder() -> Path:
    """A new folder for a zip's files, removed when this process exits; named with the
    process's owner tag, so that folders a killed arena left are removed by the next one
    (the first extraction of a process sweeps them)."""
    _extractions_swept()
    folder = Path(tempfile.mkdtemp(prefix=f"{EXTRACT_PREFIX}{owner.tag()}-", dir=tempfile.gettempdir()))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def sweep_extractions() -> list[str]:
    """Remove the extraction folders of arenas that no longer run; the names removed."""
    return [
        f"folder {name}"
        for name in owner.sweep(Path(tempfile.gettempdir()), EXTRACT_PREFIX, lambda p: shutil.rmtree(p))
    ]


@functools.cache
def _extractions_swept() -> list[str]:
    return sweep_extractions()
