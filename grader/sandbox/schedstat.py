"""How long a sandbox's threads ran and waited for a CPU, read on the host (Linux schedstat).

`/proc/<pid>/task/<tid>/schedstat` holds a thread's time on a CPU and its time runnable but
waiting on a run queue (the run-queue delay), in nanoseconds. The delay is what the host's
contention took from the thread: the pace charges an agent its wall time less that delay
(grader.common.policy.own_act_seconds). A sample is read after each act (and before the first of a
run of acts), so it must cost microseconds: each thread's file is held open and read again
with pread (a microsecond or a few), and the list of threads is read again only every
REFRESH_SECONDS or when a thread it holds has ended. A thread started since the last refresh is not counted until the
next one: its delay is then not credited, which can only charge the agent more, never less.

The thread that waits for the agent's reply (this process's, the caller's) is sampled too, at
the start and the end of the call: its own delay, after the reply came and before it was read,
is the host's as well (between calls it works for others: its delay then is no act's).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

REFRESH_SECONDS = 0.5
# The calling thread's own schedstat file, opened once per thread for the process's life.
_OWN = threading.local()
# (the thread list's generation, each counted thread's (ns on a CPU, ns waiting) or None when it
# has ended, the calling thread's pair).
Sample = tuple[int, list, tuple[int, int]]


def _read(fd: int) -> tuple[int, int] | None:
    try:
        fields = os.pread(fd, 96, 0).split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None  # the thread has ended (ESRCH)


def available() -> bool:
    """Whether this kernel keeps per-thread schedstat (CONFIG_SCHED_INFO)."""
    return os.path.exists("/proc/thread-self/schedstat")


class SchedClock:
    """The run time and run-queue delay of a sandbox's threads (`pids` lists its processes as
    the host sees them) and of the calling thread."""

    def __init__(self, pids: Callable[[], list[int]]):
        self._pids = pids
        self._tids: list[int] = []
        self._fds: list[int] = []
        # Bumped when a thread leaves the list: samples of two generations are not compared
        # thread by thread (new threads are appended, so a sample stays a prefix of the next).
        self._generation = 0
        self._next_refresh = 0.0

    def _refresh(self) -> None:
        self._next_refresh = time.monotonic() + REFRESH_SECONDS
        wanted: dict[int, int] = {}  # tid -> pid
        for pid in self._pids():
            try:
                wanted.update((int(tid), pid) for tid in os.listdir(f"/proc/{pid}/task"))
            except OSError:
                continue  # the process ended meanwhile
        if any(tid not in wanted for tid in self._tids):
            self.close()
            self._generation += 1
        for tid, pid in wanted.items():
            if tid not in self._tids:
                try:
                    fd = os.open(f"/proc/{pid}/task/{tid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue  # ended meanwhile
                self._tids.append(tid)
                self._fds.append(fd)

    @staticmethod
    def _own_fd() -> int | None:
        fd = getattr(_OWN, "fd", None)
        if fd is None:
            try:
                fd = _OWN.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        return fd

    def own(self) -> tuple[int, int]:
        """The calling thread's (run ns, wait ns) now."""
        fd = self._own_fd()
        return (_read(fd) if fd is not None else None) or (0, 0)

    def sample(self) -> Sample:
        """Every counted thread's (run ns, wait ns) now, and the calling thread's."""
        if time.monotonic() >= self._next_refresh:
            self._refresh()
        pairs = [_read(fd) for fd in self._fds]
        if None in pairs:
            self._next_refresh = 0.0  # a thread ended: the next sample reads the list again
        return self._generation, pairs, self.own()

    @staticmethod
    def delta(before: Sample, after: Sample, own_before: tuple[int, int] | None = None) -> tuple[float, float]:
        """(seconds the sandbox's threads ran, seconds they and the calling thread waited on a
        run queue) from `before` to `after`, over the threads counted in both samples (none
        when a thread left the list in between: then only the calling thread's delay counts);
        the calling thread's from `own_before` when given (its delay is the host's only while
        it waits for the reply)."""
        generation, then, own_then = before
        now_generation, now, own_now = after
        if own_before is not None:
            own_then = own_before
        ran = waited = 0
        if generation == now_generation:
            for old, new in zip(then, now):
                if old is not None and new is not None:
                    ran += new[0] - old[0]
                    waited += new[1] - old[1]
        waited += own_now[1] - own_then[1]
        return ran / 1e9, waited / 1e9

    def close(self) -> None:
        """Release the held files."""
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        self._tids.clear()
