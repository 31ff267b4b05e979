"""A session's wall clock: every call's deadline, within the environment's wall ceiling."""

from __future__ import annotations

import time


class SessionClock:
    """The environment wall ceiling of one session, paused while the round turns to other
    entrants (their time must not use up this agent's ceiling)."""

    __slots__ = ("wall_seconds", "started", "env_deadline", "_paused_at")

    def __init__(self, wall_seconds: float):
        self.wall_seconds = wall_seconds
        self.started = time.monotonic()
        self.env_deadline = self.started + wall_seconds
        self._paused_at: float | None = None

    def deadline(self, start: float, limit: float) -> float:
        """The deadline of a call that starts at `start` (monotonic) with `limit` seconds: the
        call's own, or the ceiling's if that comes first."""
        deadline = start + limit
        return deadline if deadline < self.env_deadline else self.env_deadline

    def at_ceiling(self, deadline: float) -> bool:
        """Whether a call that ran out at `deadline` ran out of the environment's ceiling."""
        return deadline >= self.env_deadline

    def pause(self) -> None:
        """Stop the ceiling's clock (idempotent)."""
        if self._paused_at is None:
            self._paused_at = time.monotonic()

    def resume(self) -> None:
        """Start it again: the pause is added back to the ceiling."""
        if self._paused_at is not None:
            self.env_deadline += time.monotonic() - self._paused_at
            self._paused_at = None

    def elapsed(self) -> float:
        """Wall seconds since the session began, pauses included."""
        return time.monotonic() - self.started
