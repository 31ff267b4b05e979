"""The host's hold on a frozen agent: after freeze() and after every pairing, the sandbox is put
back as it was when freeze() returned, and the frozen process is checked from outside.

The runner hands a frozen session to a copy of itself that holds only the frozen agent
(grader/sandboxed/runner.py, `hand_over`), but the runner's process runs the agent's code, so the
host does not take its word. From the host, through the sandbox's cgroup and /proc:

- **processes**: every process of the sandbox but its init (pid 1 there), the frozen process
  and, locally, the outer bwrap (not in the sandbox's pid namespace) is killed at freeze and
  after each pairing. Processes are told apart by their pid in the sandbox's namespace
  (`NSpid`), which no process can choose.
- **file systems**: the sandbox's writable file systems (/tmp, /dev/shm) are read at freeze
  through `/proc/<frozen>/root`, and after each pairing put back: what the pairing made is
  removed, what it removed is made again, what it changed is rewritten in place (a file the
  frozen process maps or holds stays the same file), with the times it had.
- **the frozen process**: one thread; not dumpable (so no process of the sandbox may write
  its memory through /proc/<pid>/mem, ptrace or process_vm_writev, nor its /proc files); no
  signal handler and no blocked signal (a signal from a pairing runs none of its code); no
  file open but /dev/null and the three channels the host holds the other ends of; no shared
  mapping (another process could write it); and its resource limits, nice value and
  scheduling policy as they were at freeze (other processes of its uid can change them).

A finding is the agent's fault (`agent_error`, naming what was found): state that outlived a
pairing, or a frozen process that is not what the runner makes, is what the rules forbid.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The sandbox's writable file systems, as the sandbox sees them (docs/rules.md, "Limits").
WRITABLE = ("/tmp", "/dev/shm")
KILL_SECONDS = 5.0
# The C library's own handlers (signals 32 and 33, SIGCANCEL and SIGSETXID), which a process
# that ever had threads keeps: they run no code of the agent's.
LIBC_SIGNALS = (1 << 31) | (1 << 32)


class HoldError(RuntimeError):
    """The host cannot hold the frozen agent here (no cgroup, /proc not readable): the arena's."""


@dataclass
class Entry:
    """One file, folder or link of a writable file system at freeze."""

    kind: str  # "dir", "file", "link"
    mode: int
    times: tuple[int, int]  # atime, mtime (ns)
    ident: tuple[int, int, int, int]  # inode, size, mtime, ctime: unchanged when all four are
    data: bytes = b""  # a file's content, a link's target


@dataclass
class Frozen:
    """What the host knows of a frozen sandbox: the processes it keeps and the state to restore."""

    frozen: int  # the frozen process, as the host sees it
    keep: frozenset[int]  # the processes never killed: the init, the frozen one, the outer bwrap
    files: dict[str, dict[str, Entry]] = field(default_factory=dict)  # per writable root, by relative path
    traits: dict[str, str] = field(default_factory=dict)  # limits, nice, policy at freeze
    channels: frozenset[tuple[int, int]] = frozenset()  # (st_dev, st_ino) of the host's channel ends
    devnull: int = 0  # st_rdev of /dev/null


class HeldFrozen:
    """The host's hold on a sandbox's frozen agent, for a sandbox process with a cgroup (or
    None: the unsafe backend, where nothing is held) and its three pipes' host ends."""

    cgroup: Any
    stdin_fd: int
    stdout_fd: int
    stderr_fd: int
    _frozen: Frozen | None = None

    def hold_frozen(self, frozen_pid: int) -> str | None:
        """At freeze: the sandbox held as it is now: what is wrong with it, or None."""
        if self.cgroup is None:
            return None
        self._frozen, found = hold(self.cgroup, frozen_pid, (self.stdin_fd, self.stdout_fd, self.stderr_fd))
        return found

    def back_to_frozen(self) -> str | None:
        """After a pairing: the sandbox put back as it was at freeze; what outlived the pairing, or None."""
        if self.cgroup is None or self._frozen is None:
            return None
        return back_to_frozen(self.cgroup, self._frozen)


def ns_pids(pid: int) -> list[int]:
    """The pid of `pid` in each pid namespace it is in, outermost first (/proc's NSpid)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def _status(pid: int) -> dict[str, str]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def hold(cgroup, frozen_ns_pid: int, channel_fds: tuple[int, ...]) -> tuple[Frozen | None, str | None]:
    """At freeze: find the frozen process (its pid in the sandbox is `frozen_ns_pid`, as the
    runner said), kill every other process of the sandbox, check the frozen one and read the
    writable file systems. (the hold, None), or (None, what is wrong: the agent's fault).
    HoldError when the host cannot do it."""
    if cgroup is None:
        raise HoldError("the sandbox has no cgroup readable here: its processes cannot be listed")
    depth = len(ns_pids(os.getpid()))
    inside: dict[int, int] = {}  # the sandbox's pid -> the host's
    outside = set()
    for pid in cgroup.pids():
        levels = ns_pids(pid)
        if len(levels) == depth + 1:
            inside[levels[-1]] = pid
        elif levels:
            outside.add(pid)  # the outer bwrap: the arena's own launcher
    if 1 not in inside:
        return None, "the sandbox's init (its pid 1) is gone"
    if not isinstance(frozen_ns_pid, int) or frozen_ns_pid == 1 or frozen_ns_pid not in inside:
        return None, f"freeze() was answered for a process that is not in the sandbox ({frozen_ns_pid!r})"
    state = Frozen(frozen=inside[frozen_ns_pid], keep=frozenset(outside | {inside[1], inside[frozen_ns_pid]}))
    state.channels = frozenset((st.st_dev, st.st_ino) for st in (os.fstat(fd) for fd in channel_fds))
    state.devnull = os.stat("/dev/null").st_rdev
    # The runner's process that handed the frozen copy over is ending: once it has, the copy is
    # the init's child (killed before that, it would end the session with it).
    _wait(lambda: _parent(state.frozen) in (inside[1], None))
    found = _sweep(cgroup, state)
    if found:
        return None, found
    found = _check(state)
    if found:
        return None, found
    state.traits = _traits(state.frozen)
    for root in WRITABLE:
        state.files[root] = _read_tree(_root(state, root))
    return state, None


def back_to_frozen(cgroup, state: Frozen) -> str | None:
    """After a pairing: kill what the pairing left running, put the writable file systems back
    as they were at freeze, and check that the frozen process is as it was. None, or what
    outlived the pairing (the agent's fault)."""
    # The pairing's fork is ending after its last reply: the frozen process reaps it (killed,
    # it would take the frozen process with it, as a fork the agent's code ended does).
    _wait(lambda: not any(_parent(pid) == state.frozen for pid in cgroup.pids()))
    found = _sweep(cgroup, state)
    if found:
        return found
    for root, entries in state.files.items():
        _restore_tree(_root(state, root), entries)
    found = _check(state)
    if found:
        return found
    traits = _traits(state.frozen)
    changed = sorted(name for name in traits if traits[name] != state.traits.get(name))
    if changed:
        return f"the frozen process's {', '.join(changed)} changed during a pairing"
    return None


def _parent(pid: int) -> int | None:
    """The parent of `pid` as the host sees it, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _wait(done, seconds: float = 2.0) -> None:
    """Until `done()` or `seconds` have passed (then what follows deals with what is left)."""
    deadline = time.monotonic() + seconds
    pause = 0.0001
    while not done() and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(2 * pause, 0.005)


def _root(state: Frozen, root: str) -> Path:
    return Path(f"/proc/{state.frozen}/root{root}")


def _sweep(cgroup, state: Frozen) -> str | None:
    """Kill every process of the sandbox but the kept ones, until none is left; what is wrong
    when the frozen process or the init went too."""
    deadline = time.monotonic() + KILL_SECONDS
    while True:
        pids = cgroup.pids()
        if state.frozen not in pids:
            return "the frozen process ended"
        extra = [pid for pid in pids if pid not in state.keep]
        if not extra:
            return None
        for pid in extra:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it ended meanwhile
        if time.monotonic() > deadline:
            raise HoldError(f"processes {extra} of the sandbox outlived SIGKILL for {KILL_SECONDS:g} s")
        time.sleep(0.0005)


def _check(state: Frozen) -> str | None:
    """What is wrong with the frozen process, or None."""
    pid = state.frozen
    try:
        status = _status(pid)
        owner = os.stat(f"/proc/{pid}/mem").st_uid  # root's when not dumpable (its folder keeps its uid)
        with open(f"/proc/{pid}/maps") as f:
            shared = [
                line.split(None, 5)[-1].strip() if len(line.split()) > 5 else "anonymous memory"
                for line in f
                if line.split()[1][3] == "s"
            ]
        fds = {}
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                fds[int(fd)] = (os.stat(f"/proc/{pid}/fd/{fd}"), os.readlink(f"/proc/{pid}/fd/{fd}"))
            except FileNotFoundError:
                continue
    except FileNotFoundError:
        return "the frozen process ended"
    problems = []
    if status.get("Threads") != "1":
        problems.append(f"{status.get('Threads')} threads")
    if owner != 0:
        problems.append("it is dumpable (other processes of its uid may write its memory)")
    for key, what in (("SigCgt", "signal handlers"), ("SigBlk", "blocked signals")):
        if int(status.get(key, "0"), 16) & ~LIBC_SIGNALS:
            problems.append(f"{what} (mask {status[key]})")
    if shared:
        problems.append("shared memory: " + ", ".join(sorted(set(shared))[:3]))
    others = []
    for number, (st, target) in sorted(fds.items()):
        if (st.st_dev, st.st_ino) in state.channels:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == state.devnull:
            continue
        others.append(f"{number} ({target[:60]})")
    if others:
        problems.append("open files: " + ", ".join(others[:4]))
    if problems:
        return "the frozen process is not what the runner makes of it: " + "; ".join(problems)
    return None


def _traits(pid: int) -> dict[str, str]:
    """What other processes of its uid may change in the frozen process and a fork of it
    inherits: its resource limits, nice value and scheduling policy."""
    try:
        with open(f"/proc/{pid}/limits") as f:
            limits = f.read()
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return {}
    # After the name: state is field 3, so field n is fields[n - 3] (nice 19, policy 41).
    return {"resource limits": limits, "nice value": fields[16], "scheduling policy": fields[38]}


def _read_tree(root: Path) -> dict[str, Entry]:
    """Every entry under `root` (a writable file system of the sandbox), with its content."""
    entries: dict[str, Entry] = {}
    top = _entry(str(root))
    if top is not None:
        entries["."] = top  # the folder's own times and mode: what is made in it changes them
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            entry = _entry(path)
            if entry is not None:
                entries[os.path.relpath(path, root)] = entry
    return entries


def _entry(path: str) -> Entry | None:
    try:
        st = os.lstat(path)
        ident = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        times = (st.st_atime_ns, st.st_mtime_ns)
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            return Entry("dir", mode, times, ident)
        if stat.S_ISLNK(st.st_mode):
            return Entry("link", mode, times, ident, os.fsencode(os.readlink(path)))
        if stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                return Entry("file", mode, times, ident, f.read())
    except FileNotFoundError:
        return None
    return Entry("other", stat.S_IMODE(st.st_mode), times, ident)  # a FIFO or socket: removed when changed


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _restore_tree(root: Path, entries: dict[str, Entry]) -> None:
    """Put `root` back as `entries` says: remove what is new, make again what is gone,
    rewrite in place what changed, with the times it had."""
    for dirpath, dirnames, filenames in os.walk(root, topdown=True):
        for name in list(dirnames) + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            before = entries.get(rel)
            if before is None or before.kind != _kind(path):
                _remove(path)
                if name in dirnames:
                    dirnames.remove(name)
    touched_dirs = []
    for rel, before in sorted(entries.items()):  # a folder before what it holds
        path = os.path.join(root, rel)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is not None and (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == before.ident:
            continue
        if before.kind == "dir":
            if st is None and rel != ".":
                os.mkdir(path, before.mode)
            os.chmod(path, before.mode)
            touched_dirs.append((path, before))
        elif before.kind == "link":
            _remove(path)
            os.symlink(os.fsdecode(before.data), path)
        elif before.kind == "file":
            # In place: a file the frozen process maps or holds stays the file it holds.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, before.mode)
            try:
                view = memoryview(before.data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, before.mode)
                os.utime(fd, ns=before.times)
            finally:
                os.close(fd)
        else:
            _remove(path)
            continue
        after = os.lstat(path)
        before.ident = (after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns)
    for path, before in reversed(touched_dirs):  # what was made inside a folder changed its times
        os.utime(path, ns=before.times)
        after = os.lstat(path)
        before.ident = (after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns)


def _kind(path: str) -> str:
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "file" if stat.S_ISREG(st.st_mode) else "other"
