"""Faults: why an agent stopped, and who pays for it (design §4).

A fault is a recorded status with a short free-text detail, never an exception
that escapes a game. The agent's kinds score zero; the arena's kinds are re-run
and, when there are too many, hold the round back.
"""

from __future__ import annotations

import enum
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


@dataclass(frozen=True)
class Fault:
    """A fault of `kind`; `detail` is a short human explanation (kept under 300 chars)."""

    kind: FaultKind
    detail: str = ""

    def __post_init__(self) -> None:
        if len(self.detail) > DETAIL_MAX:
            object.__setattr__(self, "detail", self.detail[:DETAIL_MAX - 3] + "...")

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
