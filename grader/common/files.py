"""Files the arena writes: atomically, gzip that gives the same bytes for the same input, one-line JSON.

Below both the results document (grader.rounds.results) and a round's working records
(grader.rounds.records), so that neither imports the other for them.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o644)  # mkstemp makes 0600; results are for everyone to read
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def gzip_bytes(data: bytes, level: int = 6) -> bytes:
    """gzip with no file name and a zero mtime: the same input gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=level) as gz:
        gz.write(data)
    return buf.getvalue()


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # one encoder for every line


def dumps_json(data: Any) -> str:
    """`data` as compact JSON, one line (what json.dumps with these separators writes)."""
    return _COMPACT.encode(data)
