"""The thaw guard: frozen cgroups are thawed when the arena that froze them dies.

On cgroup v1 a frozen process does not die of SIGKILL until it is thawed, so a sandbox the
arena froze (grader.sandbox.cgroup.Cgroup.freeze) would outlive an arena killed meanwhile:
the kernel's end of a local sandbox (bwrap's --die-with-parent, the pid namespace's end)
would wait for ever. So before its first freeze, each arena process starts one small guard
process, in a session of its own (a signal to the arena's process group does not reach it),
that holds the read end of a pipe whose write end only the arena holds, and is told each
group's freeze file as the group is first frozen and as it goes. When the arena ends,
however it ends, the pipe reads end of file, and the guard thaws every group it was told of
that is still there, then exits: whatever the kernel killed meanwhile then dies.

A guard killed with the arena (a whole process tree killed at once) leaves its groups frozen;
the next arena's sweep thaws and removes them (`grader.sandbox.cgroup.sweep_leftovers`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

# The guard itself: read "+path" and "-path" lines until end of file, then thaw what is left.
# Standard library only, no site (-I -S): it starts in a few milliseconds.
GUARD_SCRIPT = r"""
import os
watched, rest = set(), b""
while True:
    try:
        chunk = os.read(0, 65536)
    except InterruptedError:
        continue
    if not chunk:
        break
    *lines, rest = (rest + chunk).split(b"\n")
    for line in lines:
        (watched.add if line[:1] == b"+" else watched.discard)(line[1:])
for path in watched:
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, b"THAWED" if path.endswith(b"freezer.state") else b"0")
        finally:
            os.close(fd)
    except OSError:
        pass
"""


class _Guard:
    """This process's guard, started at its first `watch`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid: int | None = None  # the arena process the guard watches (a fork needs its own)
        self.fd: int | None = None  # the pipe's write end
        self.process: subprocess.Popen | None = None
        self.watched: set[bytes] = set()

    def _start(self) -> None:
        read, write = os.pipe()  # close-on-exec both: no sandbox started later inherits them
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", GUARD_SCRIPT],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        self.fd, self.pid = write, os.getpid()
        for path in self.watched:
            self._send(b"+" + path)

    def _send(self, line: bytes) -> None:
        assert self.fd is not None
        os.write(self.fd, line + b"\n")  # a line under PIPE_BUF: written whole, never interleaved

    def watch(self, path: bytes) -> None:
        """Thaw `path` (a freezer.state or cgroup.freeze file) when this process ends. Raises
        OSError when no guard can be started: the caller then does not freeze."""
        with self.lock:
            if self.pid != os.getpid() or self.process is None or self.process.poll() is not None:
                self._close()
                self._start()
            self._send(b"+" + path)
            self.watched.add(path)

    def unwatch(self, path: bytes) -> None:
        """The group of `path` is thawed for good or gone: nothing to do for it at the end."""
        with self.lock:
            if path in self.watched:
                self.watched.discard(path)
                if self.pid == os.getpid() and self.fd is not None:
                    try:
                        self._send(b"-" + path)
                    except OSError:
                        pass  # the guard is gone: the next `watch` starts another

    def _close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
        self.fd = self.pid = self.process = None

    def after_fork(self) -> None:
        """In a forked child: the parent's guard is the parent's (its pipe's end is closed
        here so that the guard still sees the parent end), and the child's groups are none yet."""
        self.lock = threading.Lock()
        self._close()
        self.watched = set()


GUARD = _Guard()
os.register_at_fork(after_in_child=GUARD.after_fork)


def guard_pid() -> int | None:
    """The pid of this process's guard, if one runs (for tests)."""
    process = GUARD.process
    return None if process is None or GUARD.pid != os.getpid() else process.pid
