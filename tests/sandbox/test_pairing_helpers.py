"""The sandbox's pid 1 is a real init, and nothing of a pairing outlives it: an agent that
starts helper processes in every pairing's fork (one that ends unwaited for, one still running
at the pairing's end) plays 150 pairings without a fault, in both sandboxes, and between two
pairings the sandbox holds its init and the frozen agent alone."""

from __future__ import annotations

import dataclasses

import pytest

from .conftest import ENV_INFO, TEST_LIMITS, board

pytestmark = pytest.mark.timeout(600)
PAIRINGS = 150
# Each pairing's first move forks twice: on a busy host that alone can pass three paces, and the
# pace is not what this test asks about.
LIMITS = dataclasses.replace(TEST_LIMITS, pace_stop_factor=1000.0)


def test_helpers_started_in_every_pairing_never_pile_up(launch):
    handle = launch("pairing_helper", limits=LIMITS)
    assert handle.prepare(ENV_INFO) is None
    assert handle.freeze() is None
    obs, mask = board()
    for pairing in range(PAIRINGS):
        assert handle.begin_pairing() is None, (pairing, handle.fault)
        for _ in range(2):
            action, fault = handle.act(obs, mask)
            assert fault is None, (pairing, fault)
        assert handle.end_pairing() is None, (pairing, handle.fault)
        if pairing % 50 == 0:
            # The init and the frozen agent: the helpers were ended, or reaped once they ended.
            assert len(handle.process.pids()) == 2, (pairing, handle.process.pids())
    assert handle.alive, handle.fault  # (its pace is not the question: each first move forks twice)
