"""Faults: why an agent stopped, and who pays for it (docs/architecture.md, "The agent and the wire").

A fault is a recorded status with a short free-text detail, never an exception
that escapes a game. The agent's kinds score zero; the arena's kinds are re-run
and, when there are too many, hold the round back.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any


class Payer(enum.Enum):
    """Who pays for a fault: the agent (scored zero) or the arena (re-run)."""

    AGENT = "agent"
    ARENA = "arena"


class FaultKind(enum.Enum):
    """Why an agent stopped. Each kind's payer and description are its row in FAULT_ROWS:
    the one source of the kinds (the site and the bench read it; `python -m grader.cli.registries
    --write` writes the results schema's lists and the docs' tables from it)."""

    TIMEOUT = "timeout"
    EOF = "eof"
    AGENT_ERROR = "agent_error"
    PROTOCOL = "protocol"
    BUDGET = "budget"
    FORFEIT = "forfeit"
    LAUNCH_FAILED = "launch_failed"
    PIPE = "pipe"
    OOM = "oom"
    INFRASTRUCTURE = "infrastructure"

    @property
    def payer(self) -> Payer:
        """Who pays for this kind."""
        return FAULT_ROWS[self][0]

    @property
    def description(self) -> str:
        """When this kind is recorded, in Markdown (docs/protocol.md's table is written from it)."""
        return FAULT_ROWS[self][1]

    @property
    def is_agents_fault(self) -> bool:
        """True when the agent pays (scored zero); False when the arena re-runs it."""
        return self.payer is Payer.AGENT

    @classmethod
    def parse(cls, name: str) -> FaultKind:
        """The kind named `name` (its value, e.g. "agent_error")."""
        try:
            return cls(name)
        except ValueError:
            raise FaultKindError(name, f"unknown fault kind {name!r}; known: {[k.value for k in cls]}") from None


class FaultKindError(ValueError):
    """A fault kind that is not one of FaultKind's; `name` is what was given."""

    def __init__(self, name: object, message: str):
        super().__init__(message)
        self.name = name


# Each kind's payer and when it is recorded (Markdown: docs/protocol.md's table is written from
# these rows by `python -m grader.cli.registries --write`).
FAULT_ROWS: dict[FaultKind, tuple[Payer, str]] = {
    FaultKind.TIMEOUT: (Payer.AGENT, "no reply by the hard limit, the ceiling, or far over the pace"),
    FaultKind.EOF: (Payer.AGENT, "the runner ended (exit, `sys.exit`, a crash of the interpreter) after `started`"),
    FaultKind.AGENT_ERROR: (
        Payer.AGENT,
        "the agent's code raised (import, `Agent()`, any method), it wrote past the "
        "output cap, or a process of its was killed for memory with the sandbox at "
        "its own memory limit",
    ),
    FaultKind.PROTOCOL: (Payer.AGENT, "a malformed frame, a non-integer or off-board action, an unexpected reply"),
    FaultKind.BUDGET: (Payer.AGENT, "its processes used more CPU time than the share"),
    FaultKind.FORFEIT: (
        Payer.AGENT,
        "its first 10 moves in the session were illegal (also a game's 3rd illegal move, in the game record)",
    ),
    FaultKind.LAUNCH_FAILED: (Payer.ARENA, "the sandbox did not start, or ended before `started`"),
    FaultKind.PIPE: (Payer.ARENA, "the host's own pipe operations failed (not a closed pipe: that is `eof`)"),
    FaultKind.OOM: (
        Payer.ARENA,
        "the kernel killed a sandbox process for memory below the sandbox's limit: the host ran short",
    ),
    FaultKind.INFRASTRUCTURE: (Payer.ARENA, "reserved for the round runner: the grader itself failed"),
}


def kinds(payer: Payer | None = None) -> tuple[str, ...]:
    """The kinds' names in declaration order, all or only `payer`'s: what the results schema's
    lists, the docs' tables, the site's tables and the bench are made from."""
    return tuple(k.value for k in FaultKind if payer is None or k.payer is payer)


DETAIL_MAX = 300
# A lone surrogate (U+D800..U+DFFF) is a str in Python but no UTF-8 encoder takes it, and JSON's
# `\ud800` escape makes one from ASCII bytes: text from an agent may carry them.
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(value: object, limit: int) -> str:
    """Text from an agent (or any untrusted source) made safe to record and publish: a str as
    it is, anything else by its repr; cut to `limit` characters (the last three `...` when
    cut); every lone surrogate replaced by U+FFFD, so that any UTF-8 writer takes it."""
    if not isinstance(value, str):
        try:
            value = repr(value)
        except Exception as exc:  # an object whose repr raises: say so, do not fail
            value = f"<unprintable {type(value).__name__}: its repr raised {type(exc).__name__}>"
    if len(value) > limit:
        value = value[: max(limit - 3, 0)] + "..."
    return _SURROGATES.sub("\ufffd", value)


@dataclass(frozen=True)
class Fault:
    """A fault of `kind`; `detail` is a short human explanation (kept under 300 chars, and
    always encodable as UTF-8: details quote what agents send, see `clean_text`)."""

    kind: FaultKind
    detail: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", clean_text(self.detail, DETAIL_MAX))

    @property
    def is_agents_fault(self) -> bool:
        return self.kind.is_agents_fault

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fault:
        return cls(FaultKind.parse(data["kind"]), str(data.get("detail", "")))

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}" if self.detail else self.kind.value
