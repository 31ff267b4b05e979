"""Whose fault a memory kill is: the sandbox's own limit reached (the agent's) or the host short of memory (the arena's)."""

from __future__ import annotations

import pytest

from grader.sandbox.cgroup import Cgroup


def _v1(tmp_path, oom_kill: int, max_usage: int, failcnt: int = 0, limit: int = 1 << 30):
    (tmp_path / "memory.oom_control").write_text(f"oom_kill_disable 0\nunder_oom 0\noom_kill {oom_kill}\n")
    (tmp_path / "memory.limit_in_bytes").write_text(f"{limit}\n")
    (tmp_path / "memory.max_usage_in_bytes").write_text(f"{max_usage}\n")
    (tmp_path / "memory.failcnt").write_text(f"{failcnt}\n")
    return Cgroup({"memory": tmp_path}, 1)


def _v2(tmp_path, oom_kill: int, at_max: int):
    (tmp_path / "memory.events").write_text(f"low 0\nhigh 0\nmax {at_max}\noom {at_max}\noom_kill {oom_kill}\n")
    return Cgroup({"memory": tmp_path}, 2)


@pytest.mark.parametrize(
    "make, args, verdict",
    [
        (_v1, (0, 100), None),
        (_v1, (1, 1 << 30), "limit"),  # the high-water mark at the limit
        (_v1, (1, 100, 3), "limit"),  # or the limit's fail counter
        (_v1, (1, 100), "host"),  # killed far below its limit: the host's memory
        (_v2, (0, 0), None),
        (_v2, (2, 5), "limit"),
        (_v2, (1, 0), "host"),
    ],
)
def test_a_memory_kill_is_judged_by_whether_the_limit_was_reached(tmp_path, make, args, verdict):
    assert make(tmp_path, *args).memory_kill() == verdict


def test_an_unreadable_or_missing_memory_group_is_no_verdict(tmp_path):
    assert Cgroup({}, 1).memory_kill() is None
    assert Cgroup({"memory": tmp_path / "gone"}, 1).memory_kill() is None
