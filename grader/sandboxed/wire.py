"""The arena's wire: length-prefixed frames of a JSON header and raw array bytes.

Standard library and numpy only: this file runs inside the sandbox (the runner
imports it by path) as well as on the host (grader.common.protocol re-exports it), so
there is exactly one implementation of the framing.

A frame is

    prefix   8 bytes  little-endian uint32 header length, uint32 body length
    header   UTF-8 JSON object; "op" names the message; "arrays", when present,
             lists [dtype, shape] for each array attached in the body, in order
    body     the arrays' raw C-order bytes, back to back, no padding

See docs/protocol.md for the messages.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

PREFIX = struct.Struct("<II")
MAX_HEADER_BYTES = 64 * 1024
# Frames the host sends carry at most a 12x12 board (a few KiB); the cap only
# stops a corrupt or hostile length from making a reader allocate gigabytes.
MAX_BODY_BYTES = 16 * 1024 * 1024
# Only plain numeric dtypes travel: no objects, no pickles.
DTYPES = frozenset({"|i1", "|u1", "<i4", "<i8", "<f4", "<f8"})

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode
_loads = json.loads


class WireError(ValueError):
    """A frame that breaks the wire format; the message says what is wrong."""


def encode_header(header: dict) -> bytes:
    """The JSON bytes of a header (compact, ASCII)."""
    return _dumps(header).encode("ascii")


def array_spec(array: np.ndarray) -> list:
    """The [dtype, shape] entry that describes `array` in a header."""
    dtype = array.dtype.str
    if dtype not in DTYPES:
        raise WireError(f"dtype {dtype!r} cannot travel on the wire (allowed: {sorted(DTYPES)})")
    return [dtype, list(array.shape)]


def encode(header: dict, arrays: tuple | list = ()) -> bytes:
    """One whole frame: `header` (a dict with "op") plus `arrays` attached in order."""
    if arrays:
        header = dict(header, arrays=[array_spec(a) for a in arrays])
        body = b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)
    else:
        body = b""
    head = encode_header(header)
    return PREFIX.pack(len(head), len(body)) + head + body


def encode_raw(head: bytes, *buffers: bytes) -> bytes:
    """A frame from an already encoded header and body buffers (the hot path:
    the host caches the `act` header, which never changes within a board)."""
    body_len = sum(len(b) for b in buffers)
    return b"".join((PREFIX.pack(len(head), body_len), head, *buffers))


def parse_header(head: bytes | bytearray | memoryview) -> dict:
    """Decode and check a header's JSON; it must be an object with a string "op"."""
    try:
        header = _loads(bytes(head))
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireError(f"header is not JSON: {exc}") from None
    except RecursionError:  # a header is small, but `[[[[...` 16 KiB deep exhausts json's recursion
        raise WireError("header is nested too deeply to be a message") from None
    if not isinstance(header, dict) or not isinstance(header.get("op"), str):
        raise WireError(
            f"header must be a JSON object with a string 'op', got {type(header).__name__} {bytes(head[:60])!r}"
        )
    return header


def _compile(header: dict) -> tuple:
    """(dtype, count, shape, nbytes) per announced array, checked; () when there are none."""
    specs = header.get("arrays")
    if specs is None:
        return ()
    if not isinstance(specs, list):
        raise WireError(f"header 'arrays' must be a list, got {type(specs).__name__}")
    out = []
    for i, spec in enumerate(specs):
        if (
            not isinstance(spec, list)
            or len(spec) != 2
            or spec[0] not in DTYPES
            or not isinstance(spec[1], list)
            or not all(type(n) is int and 0 <= n <= MAX_BODY_BYTES for n in spec[1])
        ):
            raise WireError(f"header arrays[{i}] must be [dtype in {sorted(DTYPES)}, [dims]], got {spec!r}")
        dtype = np.dtype(spec[0])
        count = 1
        for n in spec[1]:
            count *= n
        out.append((dtype, count, tuple(spec[1]), count * dtype.itemsize))
    return tuple(out)


class FrameReader:
    """Incremental frame parser: feed it bytes as they arrive, pop whole frames.

    `max_header` and `max_body` bound what a peer may announce, so a wrong or
    hostile length is a WireError instead of an unbounded allocation. Headers
    of the ops in `cached_ops` are parsed once and remembered by their bytes:
    an `act` header never changes within a board, and that saves the JSON
    parse on the hot path. Cached header dicts are shared: do not mutate them.
    """

    __slots__ = ("buffer", "max_header", "max_body", "cached_ops", "_cache")
    CACHE_ENTRIES = 1024
    CACHE_HEADER_BYTES = 256

    def __init__(
        self, max_header: int = MAX_HEADER_BYTES, max_body: int = MAX_BODY_BYTES, cached_ops: frozenset = frozenset()
    ):
        self.buffer = bytearray()
        self.max_header = max_header
        self.max_body = max_body
        self.cached_ops = cached_ops
        self._cache: dict[bytes, tuple] = {}

    def feed(self, data: bytes) -> None:
        """Append bytes read from the peer."""
        self.buffer += data

    def pending(self) -> int:
        """How many bytes are buffered and not yet returned as a frame."""
        return len(self.buffer)

    def pop(self) -> tuple[dict, list[np.ndarray]] | None:
        """The next whole frame as (header, arrays), or None if it has not all arrived."""
        buf = self.buffer
        if len(buf) < 8:
            return None
        head_len, body_len = PREFIX.unpack_from(buf)
        if head_len > self.max_header:
            raise WireError(f"header of {head_len} bytes announced (limit {self.max_header})")
        if body_len > self.max_body:
            raise WireError(f"body of {body_len} bytes announced (limit {self.max_body})")
        body_at = 8 + head_len
        end = body_at + body_len
        if len(buf) < end:
            return None
        head = bytes(buf[8:body_at])
        cached = self._cache.get(head)
        if cached is None:
            header = parse_header(head)
            cached = (header, _compile(header))
            if header["op"] in self.cached_ops and head_len <= self.CACHE_HEADER_BYTES:
                if len(self._cache) >= self.CACHE_ENTRIES:
                    self._cache.clear()
                self._cache[head] = cached
        header, layout = cached
        if layout:
            body = buf[body_at:end]  # a copy: the arrays own their (writable) memory
            arrays = []
            offset = 0
            for dtype, _count, shape, nbytes in layout:
                if offset + nbytes > body_len:
                    raise WireError(f"arrays need {offset + nbytes} bytes, body has {body_len}")
                arrays.append(np.ndarray(shape, dtype, body, offset))
                offset += nbytes
            if offset != body_len:
                raise WireError(f"body has {body_len - offset} bytes beyond the announced arrays")
        elif body_len:
            raise WireError(f"frame has {body_len} body bytes but announces no arrays")
        else:
            arrays = []
        del buf[:end]
        return header, arrays


def action_frame(action: int) -> bytes:
    """The runner's reply to `act` for an integer `action`: a header alone, always in this
    one form, so that the host can recognise the common reply by its bytes."""
    head = b'{"op":"action","action":%d}' % action
    return PREFIX.pack(len(head), 0) + head


# Every cell of the largest board and more, encoded once: the act reply is the hot path. The
# host looks a reply up in ACTION_OF (bytes -> cell) before it parses anything.
ACTION_FRAMES = tuple(action_frame(i) for i in range(1024))
ACTION_OF = {frame: i for i, frame in enumerate(ACTION_FRAMES)}


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to a blocking fd."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int, reader: FrameReader) -> tuple[dict, list[np.ndarray]] | None:
    """Block until one whole frame has arrived on `fd`; None at end of file."""
    frame = reader.pop()
    while frame is None:
        data = os.read(fd, 1 << 16)
        if not data:
            if reader.pending():
                raise WireError(f"end of file inside a frame ({reader.pending()} bytes pending)")
            return None
        reader.feed(data)
        frame = reader.pop()
    return frame
