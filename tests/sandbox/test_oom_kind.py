"""A kill for memory is the agent's only when its own cgroup reached its own limit: a kill
because memory ran short above it (the host, here a parent group with less memory than the
sandbox's limit) is the host's, even for an agent whose use, page cache and all, came near
its limit (grader.sandbox.cgroup.Cgroup.memory_kill)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader.common.limits import MIB
from grader.sandbox.cgroup import CGROUP_ROOT, Cgroup

pytestmark = pytest.mark.timeout(60)
ALLOCATE = "import sys; blocks = [bytearray(32 << 20) for _ in range(int(sys.argv[1]) // 32)]"


def nested(parent_bytes: int, child_bytes: int) -> tuple[Cgroup, Cgroup]:
    """A group of `parent_bytes` holding one of `child_bytes`, as the sandbox's group is made."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        pytest.skip("cgroup v2: its memory.events `oom` count is the kernel's own; this nests v1 groups")
    parent = Cgroup.create(parent_bytes, 64, 1.0)
    if parent is None or "memory" not in parent.dirs:
        pytest.skip("this host lets us create no memory cgroup")
    path = parent.dirs["memory"] / "sandbox"
    path.mkdir()
    for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"):
        if (path / name).exists():
            (path / name).write_text(str(child_bytes))
    (path / "memory.swappiness").write_text("0")
    child = Cgroup({"memory": path}, 1)
    assert child.watch_oom()
    return parent, child


def run_in(child: Cgroup, mib: int) -> int:
    argv = child.attaching([sys.executable, "-c", ALLOCATE, str(mib)])
    return subprocess.run(argv, capture_output=True, timeout=50).returncode


def test_a_kill_above_the_sandboxs_own_limit_is_the_hosts():
    parent, child = nested(128 * MIB, 1024 * MIB)
    try:
        assert run_in(child, 256) != 0  # killed: the memory above it ran out
        assert child.memory_kill() == "host"
    finally:
        child.remove()
        parent.remove()


def test_a_kill_at_the_sandboxs_own_limit_is_the_agents():
    parent, child = nested(1024 * MIB, 128 * MIB)
    try:
        assert run_in(child, 256) != 0
        assert child.memory_kill() == "limit"
        assert child.memory_peak() >= 120 * MIB
    finally:
        child.remove()
        parent.remove()
