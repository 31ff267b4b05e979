"""Screening a submission before anything of it runs: what needs a staff label to activate.

Two kinds of flag (docs/rules.md §5 and §7), found without executing a byte of the submission:

- `import`: a module that reaches outside the agent's game (processes, sockets, native code,
  the host's shell), found in every .py file by walking its AST - `import x`, `from x import`,
  `__import__("x")`, `importlib.import_module("x")` - calls such as `os.system(...)`, and
  whatever reaches modules or code by a name computed at run time (`__builtins__`,
  `__import__`, `eval`, `exec`, `compile`, `sys.modules`, importlib);
- `opaque`: a data file a human cannot open where the rules ask for data that one can:
  pickles (by name or by their magic bytes), native libraries, bytecode, and any other
  non-text file except .npy/.npz arrays of plain dtypes (read from their headers only, with
  pickles refused, so nothing is unpickled on the host).

A flag does not fail the smoke test: it holds activation until a staff member labels the
pull request. A file that cannot be parsed is left to the loader (grader.documents.submission).
Screening is advisory: names can always be hidden from a reader of names, and the sandbox
holds without it (docs/security.md).
"""

from __future__ import annotations

import ast
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.documents.submission import Submission

# Modules (and their submodules) whose import is flagged, with the reason a reader is shown.
FLAGGED_MODULES = {
    "subprocess": "starts processes",
    "multiprocessing": "starts processes",
    "concurrent": "starts processes or thread pools",
    "pty": "starts processes on a terminal",
    "socket": "opens network connections",
    "ssl": "opens network connections",
    "http.client": "opens network connections",
    "http.server": "opens network connections",
    "urllib.request": "opens network connections",
    "xmlrpc": "opens network connections",
    "urllib3": "opens network connections",
    "requests": "opens network connections",
    "asyncio": "opens network connections and subprocesses",
    "ftplib": "opens network connections",
    "smtplib": "opens network connections",
    "ctypes": "loads native code",
    "cffi": "loads native code",
    "mmap": "maps memory and files directly",
    "signal": "handles the sandbox's signals",
    "resource": "changes resource limits",
    "pickle": "loads pickled objects",
    "marshal": "loads code objects",
    "shelve": "loads pickled objects",
    "dill": "loads pickled objects",
    "joblib": "loads pickled objects",
    "importlib": "imports modules named at run time",
    "builtins": "reaches the interpreter's builtins",
}
# Names that reach code or modules chosen at run time, past any list of imports.
DYNAMIC_NAMES = {
    "__builtins__": "reaches the interpreter's builtins (a way around the import list)",
    "__import__": "imports a module named at run time",
    "eval": "runs code built at run time",
    "exec": "runs code built at run time",
    "compile": "compiles code built at run time",
}
# Calls on the os module that run or replace processes.
FLAGGED_OS_CALLS = frozenset(
    {
        "system",
        "popen",
        "fork",
        "forkpty",
        "execv",
        "execve",
        "execl",
        "execle",
        "execlp",
        "execlpe",
        "execvp",
        "execvpe",
        "spawnl",
        "spawnle",
        "spawnlp",
        "spawnlpe",
        "spawnv",
        "spawnve",
        "spawnvp",
        "spawnvpe",
        "posix_spawn",
        "posix_spawnp",
        "kill",
        "killpg",
    }
)
OPAQUE_SUFFIXES = {
    ".pkl": "a pickle",
    ".pickle": "a pickle",
    ".joblib": "a joblib pickle",
    ".pt": "a torch pickle",
    ".pth": "a torch pickle",
    ".ckpt": "a checkpoint",
    ".so": "a native library",
    ".pyd": "a native library",
    ".dll": "a native library",
    ".dylib": "a native library",
    ".pyc": "Python bytecode",
    ".pyo": "Python bytecode",
    ".exe": "an executable",
    ".bin": "a binary blob",
    ".h5": "an HDF5 file",
    ".onnx": "an ONNX model",
}
# Protocol 2+ pickles start with PROTO (0x80) and the protocol number.
PICKLE_MAGIC = tuple(bytes([0x80, n]) for n in range(2, 6))
ELF_MAGIC = b"\x7fELF"
TEXT_SAMPLE = 64 * 1024


@dataclass(frozen=True)
class Flag:
    """One thing staff must look at before the submission may be activated."""

    kind: str  # "import" or "opaque"
    file: str
    line: int | None
    detail: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "file": self.file, "line": self.line, "detail": self.detail}

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.detail}"


def screen(submission: Submission) -> list[Flag]:
    """Every flag of a loaded submission, in file order."""
    flags: list[Flag] = []
    for rel in submission.files:
        path = submission.path / rel
        if rel.endswith(".py"):
            flags += scan_python(path, rel)
        else:
            flag = scan_data(path, rel)
            if flag is not None:
                flags.append(flag)
    return flags


def scan_python(path: Path, rel: str) -> list[Flag]:
    """Flagged imports and calls of one Python file (none if it is not Python: it cannot run).
    A file too deeply nested for the host's parser is flagged whole: Python's compiler may
    still run it, so what it imports cannot be left unread."""
    try:
        tree = ast.parse(path.read_bytes(), filename=rel)
    except (SyntaxError, ValueError):
        return []
    except (RecursionError, MemoryError):
        return [
            Flag(
                "import",
                rel,
                None,
                "too deeply nested for the screen to parse: its imports are unchecked; read it before labelling",
            )
        ]
    flags = []
    for node in ast.walk(tree):
        for module, line in _imported(node):
            reason = flagged_module(module)
            if reason:
                flags.append(Flag("import", rel, line, f"imports {module} ({reason})"))
        call = _os_call(node)
        if call:
            flags.append(
                Flag("import", rel, getattr(node, "lineno", None), f"calls os.{call} (runs or signals processes)")
            )
        dynamic = _dynamic(node)
        if dynamic:
            flags.append(Flag("import", rel, getattr(node, "lineno", None), dynamic))
    return sorted(flags, key=lambda f: (f.line or 0, f.detail))


def _dynamic(node: ast.AST) -> str | None:
    """Reaching builtins, imports or code by a name computed at run time (`__builtins__[...]`,
    `__import__(name)`, `eval`, `sys.modules`): screening reads names, so it flags these for
    a reader rather than guess what they reach. The sandbox holds without screening."""
    if isinstance(node, ast.Name) and node.id in DYNAMIC_NAMES:
        return f"uses {node.id} ({DYNAMIC_NAMES[node.id]})"
    if isinstance(node, ast.Attribute) and node.attr in ("__builtins__", "__import__"):
        return f"uses .{node.attr} ({DYNAMIC_NAMES[node.attr]})"
    if isinstance(node, ast.Constant) and node.value in ("__builtins__", "__import__"):
        return f"uses {node.value} by name ({DYNAMIC_NAMES[node.value]})"
    if isinstance(node, ast.Attribute) and node.attr in ("__globals__", "__subclasses__"):
        return f"uses .{node.attr} (reaches objects past the import list)"
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    ):
        return "uses sys.modules (reaches modules without importing them)"
    return None


def flagged_module(module: str) -> str | None:
    """The reason `module` is flagged (it or a package above it is listed), else None."""
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        reason = FLAGGED_MODULES.get(".".join(parts[:i]))
        if reason:
            return reason
    return None


def _imported(node: ast.AST) -> list[tuple[str, int]]:
    """Dotted names a node imports; `from a import b` yields a.b (b may be a submodule)."""
    if isinstance(node, ast.Import):
        return [(alias.name, node.lineno) for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        found = [
            (f"{node.module}.{alias.name}", node.lineno)
            for alias in node.names
            if flagged_module(f"{node.module}.{alias.name}") and not flagged_module(node.module)
        ]
        return found or [(node.module, node.lineno)]
    if (
        isinstance(node, ast.Call)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("__import__", "import_module"):
            return [(node.args[0].value, node.lineno)]
    return []


def _os_call(node: ast.AST) -> str | None:
    """`os.system(...)`-style calls, and `from os import system` (the name alone is enough)."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("os", "posix")
        and node.attr in FLAGGED_OS_CALLS
    ):
        return node.attr
    if isinstance(node, ast.ImportFrom) and node.module in ("os", "posix"):
        names = [a.name for a in node.names if a.name in FLAGGED_OS_CALLS or a.name == "*"]
        return names[0] if names else None
    return None


def scan_data(path: Path, rel: str) -> Flag | None:
    """A flag if the data file is opaque, else None."""
    suffix = Path(rel).suffix.lower()
    if suffix in OPAQUE_SUFFIXES:
        return Flag(
            "opaque", rel, None, f"{OPAQUE_SUFFIXES[suffix]}; ship data a human can open (JSON, CSV, text, .npz)"
        )
    with open(path, "rb") as fh:
        head = fh.read(TEXT_SAMPLE)
    if head.startswith(PICKLE_MAGIC):
        return Flag("opaque", rel, None, "a pickle (by its first bytes)")
    if head.startswith(ELF_MAGIC):
        return Flag("opaque", rel, None, "a native executable or library")
    if suffix == ".npy":
        return _npy_flag(path, rel)
    if suffix == ".npz":
        return _npz_flag(path, rel)
    if _is_text(head):
        return None
    return Flag("opaque", rel, None, "a binary file that is not an .npy/.npz array; ship data a human can open")


def _is_text(head: bytes) -> bool:
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        return exc.start >= len(head) - 3
    return True


class NpyVersionError(ValueError):
    """An .npy header of a format version whose header this reader does not parse:
    `version` is the (major, minor) its magic bytes give."""

    def __init__(self, version: tuple[int, int], message: str):
        super().__init__(message)
        self.version = version


def _npy_dtype(stream) -> np.dtype:
    """The dtype of an .npy stream, from its header alone."""
    version = np.lib.format.read_magic(stream)
    reader = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if reader is None:
        raise NpyVersionError(version, f"unsupported .npy version {version}")
    _, _, dtype = reader(stream)
    return dtype


def _npy_flag(path: Path, rel: str) -> Flag | None:
    try:
        with open(path, "rb") as fh:
            dtype = _npy_dtype(fh)
    except Exception as exc:  # numpy's header reader raises many kinds on hostile bytes: all mean unreadable
        return Flag("opaque", rel, None, f"not a readable .npy array ({type(exc).__name__})")
    return Flag("opaque", rel, None, "an .npy array of Python objects (a pickle)") if dtype.hasobject else None


def _npz_flag(path: Path, rel: str) -> Flag | None:
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.filename.endswith(".npy"):
                    return Flag("opaque", rel, None, f"an .npz holding {info.filename!r}, which is not an array")
                with zf.open(info) as member:
                    # The header sits in the first bytes; read no more than it needs.
                    dtype = _npy_dtype(io.BytesIO(member.read(TEXT_SAMPLE)))
                if dtype.hasobject:
                    return Flag("opaque", rel, None, f"an .npz whose {info.filename!r} holds Python objects (a pickle)")
    except Exception as exc:  # a damaged or hostile archive (zlib.error, EOFError, encryption...): unreadable
        return Flag("opaque", rel, None, f"not a readable .npz archive ({type(exc).__name__})")
    return None
