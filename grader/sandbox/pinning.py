"""Each live sandbox on a core of its own, and the host's load while they ran.

A worker of a round is given a group of cores (`set_group`), and its environment's sessions
play at once on them, one core each: a thread of the round's host process takes a core
(`set_core`, per thread) and every sandbox it starts is pinned to that core; a live sandbox
is moved to another core with its process's `pin`. The local sandbox pins by starting bwrap
from a thread whose affinity is the core for that instant (a child inherits its parent
thread's affinity, and the spawning thread gets its mask back at once), and enforces it with
the sandbox's cpuset cgroup, which the agent cannot leave (`sched_setaffinity` can only
choose among its cpuset's cores); the docker sandbox passes `cpuset_cpus`, updated live.
What the host did besides is not the arena's to stop, so it is measured: the 1-minute load
average and the busy fraction of every CPU (from /proc/stat) over each environment, which
the round's provenance records.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

_thread = threading.local()  # `core`: this thread's core for its sandboxes
_default: int | None = None  # the core of threads that took none (a worker's own thread)
_group: list[int] | None = None  # this worker's cores; None: every available core


def available_cores() -> list[int]:
    """The cores this process may run on (its affinity mask), in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform: every CPU, unpinned
        return list(range(os.cpu_count() or 1))


def current_cpu(cores: list[int]) -> int:
    """The core this process runs on now (/proc/self/stat), if it is one of `cores`, else the
    first of them. A round of one worker takes it, so that several such rounds on one host
    spread over the cores the scheduler gave them instead of all taking the first."""
    try:
        with open("/proc/self/stat") as fh:
            text = fh.read()
        cpu = int(text[text.rindex(")") + 2 :].split()[36])  # field 39, `processor`
    except (OSError, ValueError, IndexError):
        return cores[0]
    return cpu if cpu in cores else cores[0]


def set_core(core: int | None) -> None:
    """Pin the sandboxes this thread starts from now on to `core` (None: do not pin); in a
    process's first thread it is also the core of threads that take none."""
    global _default
    _thread.core = core
    if threading.current_thread() is threading.main_thread():
        _default = core


def core() -> int | None:
    """The core this thread's sandboxes are pinned to, or None."""
    return getattr(_thread, "core", _default)


def set_group(cores: list[int] | None) -> None:
    """The cores this worker's environments may use (None: every available core)."""
    global _group
    _group = None if cores is None else list(cores)


def group() -> list[int]:
    """The cores this worker's environments may use, in order."""
    return list(_group) if _group is not None else available_cores()


@contextlib.contextmanager
def spawning_pinned(on: int | None = -1) -> Iterator[None]:
    """While inside, the calling thread runs on `on` (default: its own core), so a process it
    starts inherits that one core; its own affinity is restored on the way out."""
    pinned = core() if on == -1 else on
    if pinned is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {pinned})  # pid 0: the calling thread only
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot (/proc/stat), or None where unreadable."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    total = sum(values[:8])  # user .. steal; guest time is already inside user
    return total - idle, total


def load_average() -> float | None:
    """The host's 1-minute load average, or None where unreadable."""
    try:
        with open("/proc/loadavg") as fh:
            return float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def sample() -> dict:
    """The host's state now, for `load_over`."""
    return {"loadavg": load_average(), "cpu": cpu_times()}


def load_over(start: dict, end: dict, cores: int) -> dict:
    """What the host did between two samples: the load average at each end, and the busy
    fraction of all CPUs between them (the round's own work included), with its core count."""
    busy = None
    if start["cpu"] and end["cpu"] and end["cpu"][1] > start["cpu"][1]:
        busy = round((end["cpu"][0] - start["cpu"][0]) / (end["cpu"][1] - start["cpu"][1]), 3)
    return {
        "cores": cores,
        "core": core() if _group is None else list(_group),
        "loadavg_start": start["loadavg"],
        "loadavg_end": end["loadavg"],
        "busy": busy,
    }
