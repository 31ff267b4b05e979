"""The wire protocol, host side: re-exports the one framing implementation.

The framing lives in grader/sandboxed/wire.py because the in-sandbox runner
(stdlib + numpy only, started by path) needs it too; importing it from there
keeps a single implementation. The message names are listed here so the host
code names them in one place; docs/protocol.md documents them.
"""

from __future__ import annotations

from grader.sandboxed.wire import (  # noqa: F401  (re-exported API)
    ACTION_OF,
    DTYPES,
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    PREFIX,
    FrameReader,
    WireError,
    array_spec,
    encode,
    encode_header,
    encode_raw,
    parse_header,
    read_frame,
    write_all,
)

# Host -> runner.
OP_PREPARE = "prepare"
OP_ACT = "act"
OP_OUTCOME = "outcome"
OP_FREEZE = "freeze"
OP_PAIRING = "pairing"
OP_END_PAIRING = "end_pairing"
# Runner -> host.
OP_STARTED = "started"
OP_READY = "ready"
OP_OK = "ok"
OP_ACTION = "action"
OP_BAD_ACTION = "bad_action"
OP_ERROR = "error"
OP_REFUSED = "refused"

# Replies never carry arrays, so the host accepts only small frames back.
REPLY_MAX_HEADER = 16 * 1024
REPLY_MAX_BODY = 0


def act_header(rows: int, cols: int) -> bytes:
    """The encoded header of an `act` frame for a rows x cols board (constant per board)."""
    return encode_header({"op": OP_ACT, "arrays": [["<f4", [3, rows, cols]], ["|i1", [rows * cols]]]})
