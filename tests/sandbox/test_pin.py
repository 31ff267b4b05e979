"""A sandbox is held to its core, and a live one moves to another (a round gives a session
other cores between its phases): its every process runs there, stopped or running, and the
agent cannot leave it; in both sandboxes."""

from __future__ import annotations

import os

import pytest

from grader.sandbox import pinning

from .conftest import play

pytestmark = pytest.mark.timeout(120)


def _affinities(handle) -> set[frozenset]:
    """The affinity of every process of the sandbox, as the host sees it."""
    found = set()
    for pid in handle.process.cgroup.pids():
        try:
            found.add(frozenset(os.sched_getaffinity(pid)))
        except OSError:
            pass  # it ended meanwhile
    return found


def test_a_live_sandbox_moves_to_another_core_and_stays_there(launch, sandbox):
    cores = pinning.available_cores()
    if len(cores) < 2:
        pytest.skip("one core: nowhere to move to")
    pinning.set_core(cores[0])
    try:
        handle = launch("affinity_reporter")  # it tries every core in prepare, then says where it may run
    finally:
        pinning.set_core(None)
    assert play(handle, 2) == []
    assert f"affinity: [{cores[0]}]" in handle.stderr_text()
    assert _affinities(handle) == {frozenset({cores[0]})}
    handle.pause()
    handle.pin(cores[1])
    handle.resume()
    assert _affinities(handle) == {frozenset({cores[1]})}
    assert play(handle, 2) == []
    if sandbox.name == "docker":
        handle.process.container.reload()
        assert handle.process.container.attrs["HostConfig"]["CpusetCpus"] == str(cores[1])
