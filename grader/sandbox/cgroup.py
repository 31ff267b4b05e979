"""Per-sandbox control groups (v1 or v2, whichever the host lets us create).

One `Cgroup` holds one sandbox: memory (no swap), processes, CPU quota, the core it may
run on (cpuset: an agent's `sched_setaffinity` cannot leave it; `pin` moves it), the freezer
that stops every process of it in one write (`freeze`: a pairing's turns, a paused entrant),
and the accounting the host reads back (CPU time, OOM kills). It is created beside this
process's own cgroup in each controller, joined by the sandbox's first process
before it execs bwrap (see `attaching`), and removed after every process in it is
killed. A controller the host does not let us create is simply absent;
`arena doctor` reports which are active.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
import uuid
import weakref
from pathlib import Path

from grader.common import owner
from grader.sandbox import thaw

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "arena-"
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "cpuset", "freezer")
# /proc/<pid>/stat states of a process that runs no more code until it is continued (or never).
STOPPED_STATES = frozenset({"T", "t", "Z", "X", None})
CFS_PERIOD_US = 100_000
# What the freeze file takes, by cgroup version, to freeze (True) or thaw (False).
FREEZE_VALUES = {1: {True: b"FROZEN", False: b"THAWED"}, 2: {True: b"1", False: b"0"}}


def _own_paths(pid: int | str = "self") -> dict[str, str]:
    """{controller (or "" for v2): path of the process's cgroup in it}."""
    paths = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            paths[c] = path
    return paths


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _state(pid: int) -> str | None:
    """The state letter of `pid` (R, S, D, T, Z, ...), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return None


class Cgroup:
    """A set of per-controller cgroup folders for one sandbox."""

    def __init__(self, dirs: dict[str, Path], version: int):
        self.dirs = dirs
        self.version = version
        self.oom_events: int | None = None  # v1: an eventfd the kernel counts this group's OOMs on
        self._own_count = 0  # what it counted so far
        self._above_at = 0  # the ancestors' OOMs counted when the watch began
        self._freezer: int | None = None  # the freeze file, open for writing once it was first used
        self._guarded: bytes | None = None  # its path, once this process's thaw guard knows it
        self._no_freezer = False  # the group has none, or it could not be used: signals instead
        self._signalled = False  # stopped by signals (no freezer): continued by signals

    def watch_oom(self) -> bool:
        """On cgroup v1, have the kernel count on an eventfd each time this group reaches a
        memory limit with nothing left to reclaim (memory.oom_control's notification), and
        watch its ancestors the same way, so that `memory_kill` can tell the group's own limit
        from a shortage above it: a global shortage signals no group, and an ancestor's limit
        signals the ancestor too. False where it cannot (v2 counts this itself, in
        memory.events' `oom`)."""
        path = self.dirs.get("memory")
        if self.version != 1 or path is None or self.oom_events is not None:
            return False
        events = _oom_eventfd(path)
        if events is None:
            return False
        self.oom_events = events
        weakref.finalize(self, os.close, events)
        self._above_at = _ancestor_ooms(path)
        return True

    def _own_oom(self) -> bool | None:
        """Whether the v1 notification counted an OOM at this group's own limit (None: not
        watched): the group was signalled and no ancestor was since the watch began."""
        if self.oom_events is None:
            return None
        try:
            self._own_count += os.eventfd_read(self.oom_events)
        except BlockingIOError:
            pass  # nothing new counted
        except OSError:
            return None
        if not self._own_count:
            return False
        return _ancestor_ooms(self.dirs["memory"]) == self._above_at

    # -- creation ---------------------------------------------------------
    @classmethod
    def of_process(cls, pid: int) -> Cgroup | None:
        """The cgroup another process is in (a container's, made by its engine), to read its
        accounting and kill its processes; None where the host does not show it to us."""
        try:
            own = _own_paths(pid)
        except (OSError, ValueError):
            return None
        if (CGROUP_ROOT / "cgroup.controllers").exists():
            path = CGROUP_ROOT / own.get("", "/").lstrip("/")
            return cls({c: path for c in ("memory", "pids", "cpu", "cpuacct")}, 2) if path.is_dir() else None
        dirs = {c: CGROUP_ROOT / c / own[c].lstrip("/") for c in V1_CONTROLLERS if c in own}
        dirs = {c: path for c, path in dirs.items() if path.is_dir()}
        if not dirs:
            return None
        group = cls(dirs, 1)
        group.watch_oom()
        return group

    @classmethod
    def create(cls, memory_bytes: int, pids: int, cpu_cores: float, core: int | None = None) -> Cgroup | None:
        """A new cgroup with the limits applied (and its processes held to `core`, where the
        host has the cpuset controller), or None when the host lets us create none.
        Its name carries this process's owner tag; the first one a process makes sweeps
        the empty groups of arenas that were killed (`sweep_leftovers`)."""
        _swept_once()
        name = f"{PREFIX}{owner.tag()}-{uuid.uuid4().hex[:8]}"
        if (CGROUP_ROOT / "cgroup.controllers").exists():
            group = cls._create_v2(name)
        else:
            group = cls._create_v1(name)
        if group is None:
            return None
        try:
            group._apply(memory_bytes, pids, cpu_cores)
            group._apply_cpuset(core)
        except OSError:
            group.remove()
            raise
        group.watch_oom()
        return group

    @classmethod
    def _create_v1(cls, name: str) -> Cgroup | None:
        own = _own_paths()
        dirs = {}
        for controller in V1_CONTROLLERS:
            base = CGROUP_ROOT / controller
            if controller not in own or not base.is_dir():
                continue
            path = base / own[controller].lstrip("/") / name
            try:
                path.mkdir()
            except OSError:
                continue
            dirs[controller] = path
        return cls(dirs, 1) if dirs else None

    @classmethod
    def _create_v2(cls, name: str) -> Cgroup | None:
        parent = CGROUP_ROOT / _own_paths().get("", "/").lstrip("/")
        try:
            enabled = set(_read(parent / "cgroup.subtree_control").split())
            offered = set(_read(parent / "cgroup.controllers").split())
            wanted = ({"memory", "pids", "cpu"} | ({"cpuset"} & offered)) - enabled
            if wanted:
                # Fails when our own cgroup holds processes ("no internal processes" rule).
                _write(parent / "cgroup.subtree_control", " ".join("+" + c for c in sorted(wanted)))
            path = parent / name
            path.mkdir()
        except OSError:
            return None
        controllers = set(_read(path / "cgroup.controllers").split())
        dirs: dict[str, Path] = {c: path for c in ("memory", "pids", "cpu", "cpuset") if c in controllers}
        dirs["cpuacct"] = path  # cpu.stat is always there on v2
        return cls(dirs, 2)

    def _apply(self, memory_bytes: int, pids: int, cpu_cores: float) -> None:
        quota = int(CFS_PERIOD_US * cpu_cores)
        if self.version == 1:
            if "memory" in self.dirs:
                m = self.dirs["memory"]
                _write(m / "memory.limit_in_bytes", str(memory_bytes))
                if (m / "memory.memsw.limit_in_bytes").exists():  # no swap: memsw = mem
                    _write(m / "memory.memsw.limit_in_bytes", str(memory_bytes))
                _write(m / "memory.swappiness", "0")
            if "pids" in self.dirs:
                _write(self.dirs["pids"] / "pids.max", str(pids))
            if "cpu" in self.dirs:
                _write(self.dirs["cpu"] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
                _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(quota))
        else:
            path = next(iter(self.dirs.values()))
            if "memory" in self.dirs:
                _write(path / "memory.max", str(memory_bytes))
                if (path / "memory.swap.max").exists():
                    _write(path / "memory.swap.max", "0")
            if "pids" in self.dirs:
                _write(path / "pids.max", str(pids))
            if "cpu" in self.dirs:
                _write(path / "cpu.max", f"{quota} {CFS_PERIOD_US}")

    def _apply_cpuset(self, core: int | None) -> None:
        """Hold the group to `core` (None: the parent's cores). A v1 cpuset starts empty and
        takes no process until its cores and memory nodes are written; a v2 one inherits."""
        path = self.dirs.get("cpuset")
        if path is None:
            return
        if self.version == 1:
            _write(path / "cpuset.mems", _read(path.parent / "cpuset.mems").strip())
            if core is None:
                _write(path / "cpuset.cpus", _read(path.parent / "cpuset.cpus").strip())
        if core is not None:
            self.pin(core)

    def pin(self, core: int) -> bool:
        """Move every process of the group to `core` (and hold them there); False where the
        host gave the group no cpuset."""
        path = self.dirs.get("cpuset")
        if path is None:
            return False
        _write(path / "cpuset.cpus", str(core))
        return True

    # -- use --------------------------------------------------------------
    def attaching(self, argv: list[str]) -> list[str]:
        """`argv` started inside the group: a shell moves itself into every controller and
        then becomes `argv` (exec), so nothing of it runs outside the group, and it exits 125
        without running it if a write fails. (A preexec_fn would do the same, but makes
        Python fork the whole host process instead of vfork: milliseconds per sandbox.)

        On cgroup v1 the shell writes 0 (itself) to each `tasks` file: moving the calling
        thread skips the kernel's global threadgroup lock, whose RCU grace period a write to
        `cgroup.procs` waits for (13-17 ms a sandbox on the v1 host measured); the shell has
        one thread, so the whole process moves. cgroup v2 has only `cgroup.procs`."""
        name = "tasks" if self.version == 1 else "cgroup.procs"
        files = [str(path / name) for path in sorted(set(self.dirs.values()))]
        script = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "arena-cgroup", *files, "--", *argv]

    def pids(self) -> list[int]:
        """Every process in the group (any controller's list is complete)."""
        found: set[int] = set()
        for path in set(self.dirs.values()):
            try:
                found.update(int(p) for p in _read(path / "cgroup.procs").split())
            except OSError:
                pass  # that folder is already gone: no process can be left in it
        return sorted(found)

    def pids_max(self) -> int | None:
        """The group's own limit on its processes and threads (pids.max), None where it has
        no pids controller or sets none ("max")."""
        path = self.dirs.get("pids")
        if path is None:
            return None
        try:
            text = _read(path / "pids.max").strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None

    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of the group so far."""
        path = self.dirs.get("cpuacct")
        if path is None:
            return None
        try:
            if self.version == 1:
                return int(_read(path / "cpuacct.usage")) / 1e9
            for line in _read(path / "cpu.stat").splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        except OSError:
            return None
        return None

    def memory_peak(self) -> int | None:
        """The group's peak memory use in bytes since it was made (v1 memory.max_usage_in_bytes,
        v2 memory.peak), None where the host keeps no such mark."""
        path = self.dirs.get("memory")
        if path is None:
            return None
        try:
            return int(_read(path / ("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak")))
        except (OSError, ValueError):
            return None

    def memory_kill(self) -> str | None:
        """Whether the kernel killed a process of the group for memory, and why: "limit" when
        the group had reached its own memory limit (the agent's doing), "host" when it was
        killed below it (the host ran short of memory), None when nothing was killed."""
        path = self.dirs.get("memory")
        if path is None:
            return None
        try:
            if self.version == 1:
                counters = _counters(_read(path / "memory.oom_control"))
                # The group's own OOM notification says it reached its limit with nothing left
                # to reclaim. Without one, the high-water mark and the fail count are all there
                # is; both count the page cache, which an agent near its limit also reaches
                # (reclaimed, not killed for), so they can charge a host's shortage to it.
                own = self._own_oom()
                if own is None:
                    limit = int(_read(path / "memory.limit_in_bytes"))
                    own = (
                        int(_read(path / "memory.max_usage_in_bytes")) >= limit
                        or int(_read(path / "memory.failcnt")) > 0
                    )
                limit_hit = own
            else:
                counters = _counters(_read(path / "memory.events"))
                # `oom`: the group's own limit left an allocation failing; `max` only says the
                # limit was reached, which reclaiming the cache answers.
                limit_hit = counters.get("oom", 0) > 0
        except (OSError, ValueError):
            return None
        if counters.get("oom_kill", 0) <= 0:
            return None
        return "limit" if limit_hit else "host"

    def signal_all(self, sig: int, passes: int = 50) -> None:
        """Send `sig` to every process in the group, then to any that appeared meanwhile, until
        a pass finds none new (a process stopped by SIGSTOP forks no more, so stopping ends)."""
        sent: set[int] = set()
        for _ in range(passes):
            new = [pid for pid in self.pids() if pid not in sent]
            if not new:
                return
            for pid in new:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass  # it ended meanwhile
                sent.add(pid)

    # -- stopping and continuing -----------------------------------------------
    def _freeze_file(self) -> Path | None:
        """The file that freezes the group (v1 freezer.state, v2 cgroup.freeze), None without one."""
        if self.version == 1:
            path = self.dirs.get("freezer")
            return None if path is None else path / "freezer.state"
        path = next(iter(self.dirs.values()), None)
        return path / "cgroup.freeze" if path is not None and (path / "cgroup.freeze").exists() else None

    def freeze(self, frozen: bool) -> bool:
        """Freeze (True) or thaw (False) every process of the group with the kernel's cgroup
        freezer; False where the group has none (the caller signals instead).

        One write stops the whole group, takes in every process forked into it later, and no
        signal undoes it (a round of SIGSTOPs is undone by a child forked as they went out,
        with a SIGCONT to all). The write does not wait: every process of the group is kicked
        out of user space at once and runs no instruction of its own until thawed. The file is
        kept open, so a freeze costs one write of a few microseconds (a pairing freezes at
        every move). On cgroup v1 a frozen process does not die of SIGKILL until thawed: so
        this process's thaw guard learns of the group before its first freeze (the group is
        thawed when the arena ends, however it ends: grader.sandbox.thaw), and `kill_all`
        thaws what it kills."""
        fd = self._freezer
        if fd is None:
            path = None if self._no_freezer else self._freeze_file()
            if path is None:
                return False
            try:
                fd = self._freezer = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                self._no_freezer = True
                return False
        if frozen and self.version == 1 and self._guarded is None:
            guarded = os.fsencode(self._freeze_file())  # type: ignore[arg-type]  # open: it is there
            try:
                thaw.GUARD.watch(guarded)
            except OSError:
                # No guard: signals, which SIGKILL ends whatever becomes of the arena.
                self.release()
                self._no_freezer = True
                return False
            self._guarded = guarded
        try:
            os.pwrite(fd, FREEZE_VALUES[self.version][frozen], 0)
        except OSError:
            return False  # the group is gone (nothing of it runs), or will not freeze: signals
        return True

    def release(self) -> None:
        """Close the freeze file: the group is removed, or is another's to remove (a container's)."""
        if self._freezer is not None:
            os.close(self._freezer)
            self._freezer = None
        if self._guarded is not None:
            thaw.GUARD.unwatch(self._guarded)
            self._guarded = None

    def suspend(self, passes: int = 200) -> None:
        """Stop every process of the group until `resume`: frozen (`freeze`), or where the
        group has no freezer, with SIGSTOPs until one look finds none running.

        Signals are not one instant: a child forked as a round of them went out can wake the
        stopped ones with a SIGCONT to all before it is stopped itself, so each pass stops
        again whatever runs, and a process seen stopped can be woken by one checked after it
        (which the SIGSTOP it still had pending then stops), and a child forked after the
        list was read is not on it. So it ends on two quiet looks in a row over the same
        processes: whatever a look missed is running, or listed, at the next (a SIGCONT takes
        effect as it is sent, so the second look needs no wait)."""
        if self.freeze(True):
            return
        self._signalled = True
        quiet: list[int] | None = None
        for _ in range(passes):
            pids = self.pids()
            running = [pid for pid in pids if _state(pid) not in STOPPED_STATES]
            if not running:
                if quiet == pids:
                    return
                quiet = pids
                continue
            quiet = None
            for pid in running:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    pass  # it ended meanwhile
            time.sleep(0.0005)  # a signal takes effect when its process next runs

    def resume(self) -> None:
        """Let them run again."""
        if self.freeze(False) and not self._signalled:
            return
        self._signalled = False
        self.signal_all(signal.SIGCONT)

    def turn(self, running: bool) -> None:
        """A pairing's turns: freeze the group when its agent's move is in (False), thaw it
        when the agent is to move again (True). Where the group has no freezer, one signal
        to each of its processes instead, which a child forked meanwhile can undo (the pace
        still charges the mover only its own time: grader.common.policy.own_act_seconds)."""
        if self.freeze(not running) and not self._signalled:
            return
        self._signalled = not running
        self.signal_once(signal.SIGCONT if running else signal.SIGSTOP)

    def signal_once(self, sig: int) -> None:
        """Send `sig` once to every process the group holds now, read from one controller's
        list (each is complete)."""
        path = self.dirs.get("pids") or next(iter(self.dirs.values()))
        try:
            pids = _read(path / "cgroup.procs").split()
        except OSError:
            return  # the group is gone: nothing in it to signal
        for pid in pids:
            try:
                os.kill(int(pid), sig)
            except ProcessLookupError:
                pass  # it ended meanwhile

    # -- the end ------------------------------------------------------------
    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every process in the group until it is empty, thawing it after each round of
        signals (on cgroup v1 a frozen process dies only once thawed, and runs no code of its
        own before it does); False if some survive."""
        if self.version == 2:
            path = next(iter(self.dirs.values()))
            if (path / "cgroup.kill").exists():
                try:
                    _write(path / "cgroup.kill", "1")
                except OSError:
                    pass  # the loop below kills them one by one instead
        deadline = time.monotonic() + timeout
        pause = 0.0002  # killed processes leave the group within a millisecond or so: look again soon
        while True:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._thaw_killed(pids)
            if time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(2 * pause, 0.005)

    def _thaw_killed(self, pids: list[int]) -> None:
        """Thaw the group's freezer, and the freezer group of each of `pids` (a group that
        knows one folder only, as a sweep's, freezes in another hierarchy's), so that what
        was just killed dies."""
        files = [
            path / name
            for path in sorted(set(self.dirs.values()))
            for name in ("freezer.state", "cgroup.freeze")
            if (path / name).exists()
        ]
        if self.version == 1 and "freezer" not in self.dirs:
            for pid in pids:
                try:
                    group = _own_paths(pid).get("freezer")
                except (OSError, ValueError):
                    continue  # it ended meanwhile
                if group is not None:
                    files.append(CGROUP_ROOT / "freezer" / group.lstrip("/") / "freezer.state")
        for path in dict.fromkeys(files):
            try:
                _write(path, FREEZE_VALUES[1 if path.name == "freezer.state" else 2][False].decode())
            except OSError:
                pass  # the group is gone: nothing in it to thaw

    def remove(self, timeout: float = 3.0) -> bool:
        """Delete the cgroup folders; a busy one (a process still exiting) is
        killed again and retried until `timeout`. False if one could not go."""
        deadline = time.monotonic() + timeout
        removed = True
        for path in sorted(set(self.dirs.values()), reverse=True):
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        removed = False
                        break
                    self.kill_all(timeout=0.5)
                    time.sleep(0.01)
        self.release()
        return removed


def _parents() -> list[Path]:
    """The folders our groups are made in: beside this process's own group, per controller."""
    own = _own_paths()
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return [CGROUP_ROOT / own.get("", "/").lstrip("/")]
    return [CGROUP_ROOT / c / own[c].lstrip("/") for c in V1_CONTROLLERS if c in own]


def sweep_leftovers() -> list[str]:
    """Remove the groups of arenas that no longer run (a `kill -9` leaves them), killing
    anything still in them first; only groups named with an arena's owner tag are touched."""

    def remove(path: Path) -> None:
        # A killed sandbox's processes may still be exiting (or waiting to be reaped): patience.
        Cgroup({"": path}, 2 if (CGROUP_ROOT / "cgroup.controllers").exists() else 1).remove(timeout=5.0)
        if path.exists():
            raise OSError(f"{path} is still busy")

    removed = []
    for parent in _parents():
        removed += [f"cgroup {parent.name}/{name}" for name in owner.sweep(parent, PREFIX, remove)]
    return removed


@functools.cache
def _swept_once() -> list[str]:
    """`sweep_leftovers`, once per process (before its first group)."""
    return sweep_leftovers()


def _oom_eventfd(path: Path) -> int | None:
    """An eventfd the kernel signals when the v1 memory group at `path` (or an ancestor of it)
    is out of memory at its limit; None where it cannot be registered."""
    try:
        events = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
    except (OSError, AttributeError):
        return None
    try:
        control = os.open(path / "memory.oom_control", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _write(path / "cgroup.event_control", f"{events} {control}")
        finally:
            os.close(control)  # the kernel keeps the registration, not this file
    except OSError:
        os.close(events)
        return None
    return events


# The ancestors of the sandboxes' v1 memory groups, each watched once per process: path ->
# [eventfd or None, OOMs counted]. Read under the lock (the lanes' threads share them).
_ANCESTORS: dict[Path, list[int | None]] = {}
_ANCESTORS_LOCK = threading.Lock()


def _ancestor_ooms(path: Path) -> int:
    """The OOMs counted so far at the limits of the ancestors of the v1 memory group at
    `path` (the hierarchy's root has no limit of its own, and a global shortage signals no group)."""
    root = CGROUP_ROOT / "memory"
    total = 0
    with _ANCESTORS_LOCK:
        for folder in path.parents:
            if folder == root or root not in folder.parents:
                break
            entry = _ANCESTORS.get(folder)
            if entry is None:
                entry = _ANCESTORS[folder] = [_oom_eventfd(folder), 0]
            if entry[0] is not None:
                try:
                    entry[1] = (entry[1] or 0) + os.eventfd_read(entry[0])
                except OSError:
                    pass  # nothing new counted
            total += entry[1] or 0
    return total


def _counters(text: str) -> dict[str, int]:
    """The `key value` lines of memory.oom_control or memory.events."""
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            out[key] = int(value)
    return out


def probe() -> dict[str, bool]:
    """Which controllers this host lets us create and limit: {"memory": True, ...}."""
    try:
        group = Cgroup.create(64 * 1024 * 1024, 16, 1.0)
    except OSError:
        group = None
    if group is None:
        return {"memory": False, "pids": False, "cpu": False}
    try:
        return {c: c in group.dirs for c in ("memory", "pids", "cpu")}
    finally:
        group.remove()
