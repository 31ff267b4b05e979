"""One agent, its own accounting: no limit is a pool that sandboxes share.

A docker container's uid is the host's (the same for every container), so a per-uid limit
there (RLIMIT_NPROC) was one pool for every agent at once; each sandbox's process count is
now held by its own pids cgroup (docker) or counted in its own user namespace (local)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .conftest import board, play

OWN_PROCESS_COUNT = "own process count"

pytestmark = pytest.mark.timeout(300)
# A uid no arena uses, standing in for the sandbox's uid: crowding the real one would harm
# the other arenas that run on this machine while the test does.
CROWDED_UID = 10077


def test_an_agent_holding_its_whole_allowance_harms_no_other(launch):
    hoarder = launch("thread_hoarder")
    assert hoarder.fault is None, hoarder.fault
    assert play(hoarder, 5) == []  # its 62 threads are up and held
    starters = [launch("thread_starter") for _ in range(2)]
    for starter in starters:
        assert starter.fault is None, starter.fault
        assert play(starter, 20) == [], starter.stderr_text()[-500:]
    obs, mask = board()
    assert hoarder.act(obs, mask)[1] is None  # and the hoarder plays on, unharmed
    assert hoarder.end_session(8, 8) is None


@pytest.fixture
def crowded_uid():
    """CROWDED_UID with 70 idle processes on the host, more than one sandbox's allowance."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to start processes of another uid")
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    idle = [
        subprocess.Popen(
            [setpriv, f"--reuid={CROWDED_UID}", f"--regid={CROWDED_UID}", "--clear-groups", "sleep", "600"]
        )
        for _ in range(70)
    ]
    try:
        yield CROWDED_UID
    finally:
        for process in idle:
            process.kill()
            process.wait()


def test_idle_processes_of_the_containers_uid_do_not_fail_doctor(docker_sandbox, crowded_uid, monkeypatch):
    from grader.cli.commands.doctor import missing_required
    from grader.sandbox import docker, probe

    monkeypatch.setattr(docker, "AGENT_UID", crowded_uid)
    checks = {c.name: c for c in probe.docker_checks(docker_sandbox)}
    assert not missing_required(list(checks.values())), [c for c in checks.values() if c.required and not c.ok]
    assert str(crowded_uid) in checks["unprivileged"].detail  # the probe did run as the crowded uid
    assert checks[OWN_PROCESS_COUNT].ok and "pids cgroup of its own at 64" in checks[OWN_PROCESS_COUNT].detail


def test_idle_processes_of_the_sandboxs_host_uid_do_not_fail_doctor(local_sandbox, crowded_uid, monkeypatch):
    from grader.cli.commands.doctor import missing_required
    from grader.sandbox import local, probe

    monkeypatch.setattr(local, "HOST_UID", crowded_uid)
    checks = {c.name: c for c in probe.local_checks(local_sandbox)}
    assert not missing_required(list(checks.values())), [c for c in checks.values() if c.required and not c.ok]
    assert str(crowded_uid) in checks["unprivileged"].detail
    assert checks[OWN_PROCESS_COUNT].ok


def test_a_limit_on_a_shared_uid_fails_the_check():
    from grader.common.limits import DEFAULT_LIMITS
    from grader.sandbox.probe import own_processes_check

    inside = {"pids_max": DEFAULT_LIMITS.pids, "rlimits": {"nproc": DEFAULT_LIMITS.pids}}
    assert not own_processes_check(inside, DEFAULT_LIMITS, own_userns=False).ok
    assert own_processes_check(inside, DEFAULT_LIMITS, own_userns=True).ok
    assert own_processes_check({"pids_max": 64, "rlimits": {"nproc": 96369}}, DEFAULT_LIMITS, own_userns=False).ok
    assert not own_processes_check({"pids_max": None, "rlimits": {"nproc": -1}}, DEFAULT_LIMITS, own_userns=False).ok
