"""What a session used: act time per phase, time in the other calls, CPU time against the share.

The ledger only counts and judges; the handle turns what it finds into the session's fault.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from grader.common.faults import Fault, FaultKind
from grader.common.limits import Limits
from grader.common.policy import PHASES, SESSION, pace_fault, pace_stop_fault

# The CPU share is read from the cgroup at most this often (a file read per act would cost).
CPU_CHECK_INTERVAL = 0.5


@dataclass
class ActStats:
    """Timing of the agent's act() replies, as the host measured them: the time charged
    (wall time less the run-queue delay, grader.common.policy.own_act_seconds) and the delay not
    charged."""

    count: int = 0
    total_seconds: float = 0.0
    max_seconds: float = 0.0
    soft_overruns: int = 0
    queued_seconds: float = 0.0

    @property
    def mean_seconds(self) -> float:
        return self.total_seconds / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "total_seconds": round(self.total_seconds, 6),
            "mean_seconds": round(self.mean_seconds, 6),
            "max_seconds": round(self.max_seconds, 6),
            "soft_overruns": self.soft_overruns,
            "queued_seconds": round(self.queued_seconds, 6),
        }


class Ledger:
    """The accounts of one session. Acts are counted in the phase under way (grader.common.policy.PHASES),
    each phase's pace judged on its own mean; `current` is that phase's stats."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.phase = SESSION
        self.phase_stats: dict[str, ActStats] = {SESSION: ActStats()}
        self.current = self.phase_stats[SESSION]
        self.call_seconds = 0.0  # waiting on prepare, observe_outcome and freeze
        self.cpu_seconds = 0.0
        self.next_cpu_check = time.monotonic() + CPU_CHECK_INTERVAL

    def enter_phase(self, phase: str) -> None:
        """The acts from now on belong to `phase`."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r} (one of {', '.join(PHASES)})")
        self.phase = phase
        self.current = self.phase_stats.setdefault(phase, ActStats())

    def count_act(self, elapsed: float, queued: float = 0.0) -> ActStats:
        """One act reply charged `elapsed` seconds, `queued` more seconds of run-queue delay
        not charged, in the phase under way (whose stats are returned)."""
        stats = self.current
        stats.count += 1
        stats.total_seconds += elapsed
        stats.queued_seconds += queued
        if elapsed > stats.max_seconds:
            stats.max_seconds = elapsed
        if elapsed > self.limits.act_soft_seconds:
            stats.soft_overruns += 1
        return stats

    @property
    def act_stats(self) -> ActStats:
        """Every act of the session: its phases' together."""
        phases = self.phase_stats.values()
        return ActStats(
            sum(s.count for s in phases),
            sum(s.total_seconds for s in phases),
            max(s.max_seconds for s in phases),
            sum(s.soft_overruns for s in phases),
            sum(s.queued_seconds for s in phases),
        )

    def far_over_pace(self, shape: tuple[int, int]) -> Fault | None:
        """The early stop of the phase under way: its mean act time over the board's pace times
        the stop factor, once enough acts were timed (grader.common.policy.pace_stop_fault)."""
        return pace_stop_fault(self.current, shape, self.limits, self.phase)

    def over_pace(self, shape: tuple[int, int]) -> Fault | None:
        """At the end of a session: the first phase whose mean act time is over the pace."""
        for phase, stats in self.phase_stats.items():
            fault = pace_fault(stats, shape, self.limits, phase)
            if fault is not None:
                return fault
        return None

    def cpu_due(self) -> bool:
        """Whether the CPU time is to be read again."""
        return time.monotonic() >= self.next_cpu_check

    def record_cpu(self, seconds: float | None) -> Fault | None:
        """The CPU time the sandbox reports now (None: unreadable); a `budget` fault when the
        session is over its share."""
        self.next_cpu_check = time.monotonic() + CPU_CHECK_INTERVAL
        if seconds is not None and seconds > self.cpu_seconds:
            self.cpu_seconds = seconds
        if self.cpu_seconds > self.limits.cpu_seconds_per_env:
            return Fault(
                FaultKind.BUDGET,
                f"used {self.cpu_seconds:.1f} CPU s, over the share of {self.limits.cpu_seconds_per_env:g} s",
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        """The act timing, overall and per phase, and the CPU time."""
        return {
            "act": self.act_stats.to_dict(),
            "phases": {phase: stats.to_dict() for phase, stats in self.phase_stats.items() if stats.count},
            "cpu_seconds": round(self.cpu_seconds, 3),
        }
