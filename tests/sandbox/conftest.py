"""Fixtures for running the hostile agents of tests/agents through a sandbox."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from grader.common.limits import DEFAULT_LIMITS
from grader.documents.submission import load_submission
from grader.play.agent_handle import AgentHandle

AGENTS = Path(__file__).resolve().parent.parent / "agents"
# Short deadlines so a hostile agent costs the suite seconds, not minutes.
TEST_LIMITS = dataclasses.replace(DEFAULT_LIMITS, act_hard_seconds=2.0, act_soft_seconds=0.5, prepare_seconds=20.0)
ENV_INFO = {"rows": 8, "cols": 8, "obstacles": [], "interaction_budget": 0, "env_index": 0, "env_count": 1}


def board(rows: int = 8, cols: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """An observation and a legal mask shaped like the engine's (the opening's four legal cells)."""
    obs = np.zeros((3, rows, cols), np.float32)
    mask = np.zeros(rows * cols, np.int8)
    mask[[19, 26, 37, 44]] = 1
    return obs, mask


@pytest.fixture(scope="session", params=["local", "docker"])
def sandbox(request):
    """Each test that launches agents runs in both sandboxes: the same faults are expected."""
    return request.getfixturevalue(f"{request.param}_sandbox")


@pytest.fixture
def launch(sandbox, tmp_path):
    """launch(name, target=None, limits=TEST_LIMITS) -> a ready AgentHandle for tests/agents/<name>.

    The agent is copied to a fresh folder; `target` (if given) is written beside
    it as target.json. Every handle is closed at the end of the test.
    """
    handles = []

    def _launch(name: str, target: dict | None = None, limits=TEST_LIMITS) -> AgentHandle:
        folder = tmp_path / "subs" / name
        shutil.copytree(AGENTS / name, folder, dirs_exist_ok=True)  # the same agent may be launched twice
        if target is not None:
            (folder / "target.json").write_text(json.dumps(target))
        handle = AgentHandle.launch(sandbox, load_submission(folder), limits)
        handles.append(handle)
        return handle

    yield _launch
    for handle in handles:
        handle.close()


def _cmdline(pid: str) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


def _ppid(pid: str) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()[1]


def _ours(pid: str, marker: str) -> bool:
    """Whether `pid` descends from this test process, or from a sandbox whose command line
    names this run's temporary folder (an orphaned bwrap is reparented away from us). Other
    arenas running on the machine at the same time are not this test's business."""
    me = str(os.getpid())
    seen = 0
    while pid not in ("0", "1") and seen < 64:
        if pid == me or marker in _cmdline(pid):
            return True
        pid = _ppid(pid)
        seen += 1
    return False


def runner_processes(marker: str) -> list[str]:
    """Command lines of this test run's live processes that belong to some sandbox (runner
    or grandchild); `marker` is the run's temporary folder, which every sandbox binds."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = _cmdline(entry)
            if (
                "/arena/runner/runner.py" in cmd or "ARENA_GRANDCHILD_MARKER" in cmd or "time.sleep(10**6)" in cmd
            ) and _ours(entry, marker):
                found.append(f"{entry}: {cmd[:120]}")
        except (OSError, IndexError):
            continue  # the process ended while we looked
    return found


def play(handle: AgentHandle, moves: int = 20) -> list:
    """prepare + `moves` act calls on the test board; returns the faults met (at most one)."""
    fault = handle.prepare(ENV_INFO)
    if fault:
        return [fault]
    obs, mask = board()
    for _ in range(moves):
        action, fault = handle.act(obs, mask)
        if fault:
            return [fault]
        assert mask[action] == 1
    return []


def docker_leftovers(sandbox) -> list[str]:
    """This process's containers and FIFO folders still on the host."""
    from grader.common import owner
    from grader.sandbox.docker import LABEL_OWNER, fifo_root

    containers = sandbox.engine().containers.list(all=True, filters={"label": f"{LABEL_OWNER}={owner.tag()}"})
    folders = [p.name for p in fifo_root().glob(owner.tag() + "-*")] if fifo_root().is_dir() else []
    return [f"container {c.short_id} ({c.status})" for c in containers] + [f"folder {f}" for f in folders]


@pytest.fixture
def assert_unharmed(launch, sandbox, tmp_path_factory):
    """Call after a hostile agent is closed: no sandbox process (or container) survives,
    and a well-behaved agent starts and plays right after."""

    def _check() -> None:
        marker = str(tmp_path_factory.getbasetemp())
        leftovers = runner_processes(marker) + (docker_leftovers(sandbox) if sandbox.name == "docker" else [])
        assert not leftovers, f"processes left running: {leftovers}"
        good = launch("random_agent")
        assert good.fault is None, f"well-behaved agent failed after a hostile one: {good.fault}"
        assert play(good, 20) == []
        good.close()
        assert not runner_processes(marker)
        if sandbox.name == "docker":
            assert not docker_leftovers(sandbox)

    return _check


def cpu_rises(handle: AgentHandle, seconds: float, within: float = 60.0) -> bool:
    """Whether the sandbox's own CPU time (its cgroup's accounting, which no other process on the
    machine adds to) grows by `seconds`, waiting for it up to `within` seconds of wall time: how
    soon it gets there depends on what else the machine runs, so only that it does is judged."""
    start = handle.transport.cpu_seconds()
    assert start is not None, "the sandbox's CPU time is not readable here: nothing can be tested"
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if handle.transport.cpu_seconds() - start >= seconds:
            return True
        time.sleep(0.02)
    return False
