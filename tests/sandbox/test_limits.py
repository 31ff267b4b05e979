"""Limits: one frozen dataclass, validated, rendered as rows for the rules page."""

from __future__ import annotations

import dataclasses

import pytest

from grader.common.faults import Fault, FaultKind
from grader.common.limits import DEFAULT_LIMITS, Limits

pytestmark = pytest.mark.timeout(30)


def test_defaults_are_frozen_and_serialisable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_LIMITS.act_hard_seconds = 99
    data = DEFAULT_LIMITS.to_dict()
    assert Limits(**data) == DEFAULT_LIMITS
    assert data["illegal_moves_per_game"] == 3


def test_pace_scales_with_cells():
    assert DEFAULT_LIMITS.pace_seconds(12, 12) == pytest.approx(DEFAULT_LIMITS.pace_seconds(6, 6) * 4)
    table = DEFAULT_LIMITS.pace_table()
    assert list(table) == ["6x8", "8x8", "10x10", "12x10", "12x12"]
    assert table["6x8"] < table["8x8"] < table["12x12"]


def test_rows_cover_every_limit():
    rows = DEFAULT_LIMITS.rows()
    assert all(len(r) == 3 and all(isinstance(x, str) and x for x in r) for r in rows)
    text = " ".join(v for row in rows for v in row)
    for needle in (
        "act() soft limit",
        "act() hard limit",
        "environment ceiling",
        "CPU share",
        "memory",
        "processes and threads",
        "/tmp",
        "output",
        "illegal moves",
        "12x12",
    ):
        assert needle in text


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"act_hard_seconds": 0.5, "act_soft_seconds": 1.0}, "act_hard_seconds"),
        ({"pids": 0}, "pids must be > 0"),
        ({"address_space_bytes": 1}, "address_space_bytes"),
    ],
)
def test_bad_limits_are_named(changes, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(DEFAULT_LIMITS, **changes)


def test_fault_kinds_and_who_pays():
    agents = {k.value for k in FaultKind if k.is_agents_fault}
    assert agents == {"timeout", "eof", "agent_error", "protocol", "budget", "forfeit"}
    assert {k.value for k in FaultKind} - agents == {"launch_failed", "pipe", "oom", "infrastructure"}
    fault = Fault(FaultKind.OOM, "x" * 1000)
    assert len(fault.detail) == 300 and not fault.is_agents_fault
    assert Fault.from_dict(fault.to_dict()) == fault
    with pytest.raises(ValueError, match="unknown fault kind"):
        FaultKind.parse("segfault")


def test_pace_early_stop_and_end_of_session():
    from grader.common.policy import pace_fault, pace_stop_fault
    from grader.play.seat.ledger import ActStats

    pace = DEFAULT_LIMITS.pace_seconds(8, 8)
    few = ActStats(count=DEFAULT_LIMITS.pace_min_acts - 1, total_seconds=1e6)
    assert pace_stop_fault(few, (8, 8), DEFAULT_LIMITS) is None and pace_fault(few, (8, 8), DEFAULT_LIMITS) is None
    n = DEFAULT_LIMITS.pace_min_acts
    slow = ActStats(count=n, total_seconds=n * pace * 2)
    assert pace_stop_fault(slow, (8, 8), DEFAULT_LIMITS) is None  # over the pace, not 3x over
    assert pace_fault(slow, (8, 8), DEFAULT_LIMITS).kind is FaultKind.TIMEOUT
    far = ActStats(count=n, total_seconds=n * pace * 4)
    assert "8x8 pace" in pace_stop_fault(far, (8, 8), DEFAULT_LIMITS).detail
