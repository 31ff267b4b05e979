"""A stopped sandbox is frozen by its cgroup (grader.sandbox.cgroup.Cgroup.freeze), and nothing
frozen outlives its end: on cgroup v1 a frozen process does not die of SIGKILL until it is
thawed, so every way a sandbox ends thaws it (its close, the arena's own death: the thaw guard
of grader/sandbox/thaw.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grader.sandbox.cgroup import Cgroup, _own_paths

from .conftest import AGENTS, ENV_INFO, play, runner_processes

pytestmark = pytest.mark.timeout(300)
ROOT = AGENTS.parent.parent


def _freezer_state(pid: int) -> str | None:
    """The state of the v1 freezer group `pid` is in (FROZEN, FREEZING, THAWED); None off v1,
    or when `pid` has ended (an ended process, a zombie too, is in the root group, which has
    no freezer.state)."""
    try:
        group = _own_paths(pid).get("freezer")
        if group is None or group == "/":
            return None
        return (Path("/sys/fs/cgroup/freezer") / group.lstrip("/") / "freezer.state").read_text().strip()
    except OSError:
        return None  # it ended meanwhile, and its group with it


def _thawed_or_ended(pid: int) -> bool:
    """Whether `pid` runs thawed or has ended: on cgroup v1 a frozen process can do neither
    (it reads no end of file, and SIGKILL waits for its thaw)."""
    return _state_of(pid) in ("gone", "Z") or _freezer_state(pid) == "THAWED"


def _frozen(handle) -> bool:
    """Whether the handle's sandbox is stopped by its freezer (else nothing here is tested)."""
    group = handle.process.cgroup
    return group is not None and group.freeze(True)


def test_a_frozen_sandbox_is_killed_whole_by_its_close(launch, assert_unharmed, tmp_path_factory):
    """Closed while paused (frozen), a sandbox with processes of its own still ends at once,
    every process of it, and the next agent plays."""
    handle = launch("idle_spinner")
    assert play(handle, 2) == []
    handle.pause()
    if not _frozen(handle):
        pytest.skip("this host gives the sandbox no freezer: its pause is signals, which SIGKILL ends")
    pids = handle.process.pids()
    assert len(pids) >= 2 and {_freezer_state(pid) for pid in pids} <= {"FROZEN", "FREEZING", None}
    handle.close()
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists() and _state_of(pid) != "Z"]
    assert_unharmed()


def _state_of(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "gone"
    return stat[stat.rindex(")") + 2]


ARENA = """
import sys, time
sys.path.insert(0, {root!r})
from grader.play.agent_handle import AgentHandle
from grader.sandbox.{module} import {cls}
from grader.documents.submission import load_submission
handle = AgentHandle.launch({cls}(), load_submission({agent!r}))
fault = handle.prepare({env_info!r})
handle.pause()
print(" ".join(map(str, handle.process.pids())) if fault is None else fault, flush=True)
time.sleep(600)
"""


def test_an_arena_killed_while_its_agent_is_frozen_leaves_it_thawed(sandbox, tmp_path):
    """kill -9 of an arena whose agent is frozen: its thaw guard thaws the agent's group, so
    the kernel's end of the sandbox (local: the pid namespace's, with bwrap's parent gone)
    kills it; a container, which outlives its arena, runs on thawed until its runner reads
    the end of its input and it ends, or the next arena sweeps it (the engine's kill would
    not end it frozen)."""
    module, cls = ("local", "LocalSandbox") if sandbox.name == "local" else ("docker", "DockerSandbox")
    script = textwrap.dedent(
        ARENA.format(root=str(ROOT), module=module, cls=cls, agent=str(AGENTS / "idle_spinner"), env_info=ENV_INFO)
    )
    arena = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        line = arena.stdout.readline().strip()
        pids = [int(p) for p in line.split()]
        assert pids, line
        if {_freezer_state(pid) for pid in pids} - {"FROZEN", "FREEZING"}:
            pytest.skip("this host gives the sandbox no v1 freezer: nothing outlives SIGKILL here")
        os.kill(arena.pid, signal.SIGKILL)
        arena.wait(10)
    finally:
        if arena.poll() is None:
            arena.kill()
    deadline = time.monotonic() + 30
    if sandbox.name == "local":
        while [p for p in pids if _state_of(p) not in ("gone", "Z")] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _state_of(p) not in ("gone", "Z")], "the frozen sandbox outlived its arena"
        assert not runner_processes(str(tmp_path))
    else:
        while not all(map(_thawed_or_ended, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(map(_thawed_or_ended, pids)), "the dead arena's container is still frozen"
        from grader.sandbox.docker import sweep_leftovers

        sweep_leftovers(sandbox.engine())  # what the next arena does first: the container goes


def test_a_container_left_frozen_is_thawed_and_removed_by_the_next_arena(docker_sandbox, tmp_path):
    """A dead arena's container still frozen (its guard killed with it) is thawed by the next
    arena's sweep, so the engine's kill ends it and the container goes."""
    from grader.common import owner
    from grader.sandbox.docker import LABEL_OWNER, sweep_leftovers

    # Before the arena dies: the engine's first use sweeps the leftovers of dead arenas, which
    # would thaw and remove this one's container before it is seen frozen.
    engine = docker_sandbox.engine()
    script = textwrap.dedent(
        ARENA.format(
            root=str(ROOT), module="docker", cls="DockerSandbox", agent=str(AGENTS / "idle_spinner"), env_info=ENV_INFO
        )
    )
    arena = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        pids = [int(p) for p in arena.stdout.readline().split()]
        assert pids
        tag = owner.tag(arena.pid)
        if {_freezer_state(pid) for pid in pids} - {"FROZEN", "FREEZING"}:
            pytest.skip("this host gives the container no v1 freezer")
        guards = [p for p in _children(arena.pid) if p not in pids]
        for pid in [*guards, arena.pid]:  # the guard first: else it would thaw the container
            os.kill(pid, signal.SIGKILL)
        arena.wait(10)
    finally:
        if arena.poll() is None:
            arena.kill()
    assert {_freezer_state(p) for p in pids} <= {"FROZEN", "FREEZING"}, "nothing was left frozen: nothing is tested"
    sweep_leftovers(engine)
    assert not engine.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={tag}"})


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                found.append(int(entry))
    return found


def test_a_group_frozen_then_killed_dies(tmp_path):
    """Below the sandboxes: a process in a frozen v1 group of ours dies of kill_all."""
    group = Cgroup.create(64 << 20, 16, 1.0)
    if group is None or "freezer" not in group.dirs:
        if group is not None:
            group.remove()
        pytest.skip("this host lets us create no freezer group")
    try:
        child = subprocess.Popen(group.attaching(["sleep", "60"]))
        deadline = time.monotonic() + 10
        while child.pid not in group.pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert group.freeze(True)
        assert group.kill_all()
        assert child.wait(10) == -signal.SIGKILL
    finally:
        assert group.remove()
