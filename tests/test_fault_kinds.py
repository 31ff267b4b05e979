"""Fault kinds have one source, grader.common.faults: the site and the bench read it at run time; the
results schema's lists and the docs' tables are written from it (tests/test_registries.py)."""

from __future__ import annotations

import pytest

from grader.common.faults import FAULT_ROWS, FaultKind, FaultKindError, Payer, kinds


def test_every_kind_has_a_payer_and_a_description():
    assert set(FAULT_ROWS) == set(FaultKind)
    assert all(k.description and isinstance(k.payer, Payer) for k in FaultKind)
    assert kinds(Payer.AGENT) == ("timeout", "eof", "agent_error", "protocol", "budget", "forfeit")
    assert kinds(Payer.ARENA) == ("launch_failed", "pipe", "oom", "infrastructure")
    assert kinds() == kinds(Payer.AGENT) + kinds(Payer.ARENA)
    assert FaultKind.OOM.is_agents_fault is False and FaultKind.BUDGET.is_agents_fault is True


def test_the_site_and_the_bench_take_the_kinds_from_the_enum():
    from benchmarks import bench_site
    from grader.site import model

    assert model.FAULT_KINDS == kinds(Payer.AGENT) == bench_site.FAULTS


def test_an_unknown_kind_is_named():
    with pytest.raises(FaultKindError, match="unknown fault kind 'meltdown'") as info:
        FaultKind.parse("meltdown")
    assert info.value.name == "meltdown" and isinstance(info.value, ValueError)
