"""Faults: why an agent stopped, and who pays for it (design §4).

A fault is a recorded status with a short free-text detail, never an exception
that escapes a game. The agent's kinds score zero; the arena's kinds are re-run
and, when there are too many, hold the round back.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class FaultKind(enum.Enum):
    # The agent's.
    TIMEOUT = "timeout"
    EOF = "eof"
    AGENT_ERROR = "agent_error"
    PROTOCOL = "protocol"
    BUDGET = "budget"
    FORFEIT = "forfeit"
    # The arena's.
    LAUNCH_FAILED = "launch_failed"
    PIPE = "pipe"
    OOM = "oom"
    INFRASTRUCTURE = "infrastructure"

    @property
    def is_agents_fault(self) -> bool:
        """True when the agent pays (scored zero); False when the arena re-runs it."""
        return self in _AGENTS

    @classmethod
    def parse(cls, name: str) -> "FaultKind":
        """The kind named `name` (its value, e.g. "agent_error")."""
        try:
            return cls(name)
        except ValueError:
            raise ValueError(f"unknown fault kind {name!r}; known: {[k.value for k in cls]}") from None


_AGENTS = frozenset({FaultKind.TIMEOUT, FaultKind.EOF, FaultKind.AGENT_ERROR,
                     FaultKind.PROTOCOL, FaultKind.BUDGET, FaultKind.FORFEIT})

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
        value = value[:max(limit - 3, 0)] + "..."
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

    def to_dict(self) -> dict:
        return {"kind": self.kind.value, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: dict) -> "Fault":
        return cls(FaultKind.parse(data["kind"]), str(data.get("detail", "")))

    def __str__(self) -> str:
        return f"{self.kind.value}: {self.detail}" if self.detail else self.kind.value
