"""The sandbox interface: start an agent's runner, hand back a process with pipes.

Every backend (local bubblewrap, docker, unsafe) starts the same runner with
the same policy and returns a `SandboxProcess`: raw pipe fds for the protocol
(stdin/stdout) and the agent's captured output (stderr), plus kill and the
accounting the agent handle needs (CPU time, OOM kill).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol

from grader.common import owner
from grader.common.limits import Limits
from grader.documents.submission import IGNORED_DIRS, Submission
from grader.sandbox import frozen

Network = Literal["none", "egress"]
NETWORKS = ("none", "egress")
RUNNER_DIR = Path(__file__).resolve().parent.parent / "sandboxed"
# The processes of a local sandbox's cgroup that are the arena's, not the agent's: the outer bwrap.
LAUNCHER_PROCESSES = 1
RUNNER_SCRIPT = "runner.py"
# Where every backend mounts the runner's folder and the agent's folder (read-only).
RUNNER_MOUNT = "/arena/runner"
AGENT_MOUNT = "/agent"


class LaunchError(RuntimeError):
    """The sandbox could not be started (the arena's fault, `launch_failed`)."""


class SandboxProcess(Protocol):
    """A running sandbox: the runner's pipes and the means to stop and account for it."""

    stdin_fd: int  # host writes protocol frames here
    stdout_fd: int  # host reads protocol frames here
    stderr_fd: int  # the agent's stdout and stderr, captured

    def exit_status(self) -> int | None:
        """The exit status once the sandbox has ended, else None (does not block)."""

    def kill(self) -> None:
        """Kill every process of the sandbox and wait for them; idempotent."""

    def cpu_seconds(self) -> float | None:
        """CPU time used by the sandbox's processes so far, if measurable."""

    def pids(self) -> list[int]:
        """The processes that run the agent's side of the sandbox as the host sees them (its
        cgroup's, else its first's; not a launcher of the sandbox's that only waits, such as the
        outer bwrap), to read their run-queue delay (grader.sandbox.schedstat)."""

    def lost(self) -> str | None:
        """Why the sandbox's own machinery failed under the agent (its engine stopped, or it
        was stopped from outside), or None: then an end of the runner is the agent's."""

    def memory_peak(self) -> int | None:
        """The sandbox's peak memory use in bytes (its cgroup's high-water mark), None where
        it cannot be read."""

    def memory_kill(self) -> str | None:
        """Whether the sandbox lost a process to the kernel's out-of-memory killer: "limit"
        (it had reached its own memory limit: the agent's fault), "host" (killed below its
        limit: the host ran short, the arena's), or None."""

    def suspend(self) -> None:
        """Stop every process of the sandbox until `resume`: while the round turns to other
        entrants, none of this agent's processes may take their CPU."""

    def resume(self) -> None:
        """Let the processes `suspend` stopped run again."""

    def turn(self, running: bool) -> None:
        """A pairing's turns: stop every process of the sandbox when its agent's move is in
        (False), continue them when it is to move again (True); not waited for. It comes at
        every move, so it costs what one write to the cgroup's freezer costs (microseconds),
        and it is what lets both agents of a game share one core."""

    def pin(self, core: int) -> None:
        """Move every process of the sandbox to `core` and hold it there (a session that
        changes core between phases of a round)."""

    def hold_frozen(self, frozen_pid: int) -> str | None:
        """After freeze(): every process but the frozen one (`frozen_pid` in the sandbox) and
        the sandbox's own ends, the writable file systems are read, the frozen process is
        checked; what is wrong (the agent's fault), or None (grader/sandbox/frozen.py)."""

    def back_to_frozen(self) -> str | None:
        """After a pairing: the sandbox as `hold_frozen` found it; what outlived the pairing, or None."""

    def close(self) -> None:
        """Kill, then release pipes and any per-sandbox resources."""


class Sandbox(Protocol):
    """A way to run untrusted agents: one policy, several backends."""

    name: str

    def start(self, submission: Submission, limits: Limits, network: Network = "none") -> SandboxProcess:
        """Start the runner for `submission` under `limits`; raise LaunchError if it cannot start."""

    def capabilities(self) -> dict[str, bool]:
        """Which protections this backend really has on this host, by name."""

    def image(self) -> dict | None:
        """The image agents run in (tag, id, base), for smoke reports and round provenance;
        None where they run on the host's own interpreter. LaunchError when it is missing."""


class NetworkError(ValueError):
    """A network tier that is not one of NETWORKS; `network` is what was given."""

    def __init__(self, network: object, message: str):
        super().__init__(message)
        self.network = network


def check_network(network: str) -> None:
    """Refuse a network tier that is not one of NETWORKS, naming it."""
    if network not in NETWORKS:
        raise NetworkError(network, f"network must be one of {NETWORKS}, got {network!r}")


def runner_rlimits(limits: Limits, per_user_nproc: bool) -> str:
    """The runner's --rlimits JSON. RLIMIT_NPROC counts every process of the user in the
    user namespace, so it is only set where the sandbox has a user namespace of its own (the
    local sandbox: then it is that sandbox's alone); `per_user_nproc=False` leaves it out
    where the uid is shared with other sandboxes or the host (a docker container, whose
    uid is the host's: there the container's own pids cgroup alone counts its processes,
    since a per-uid limit would be one pool for every container at once)."""
    values = {
        "as": limits.address_space_bytes,
        "data": limits.address_space_bytes,
        "fsize": limits.tmpfs_bytes,
        "core": 0,
        # A backstop behind the host's own CPU accounting, per process.
        "cpu": math.ceil(limits.cpu_seconds_per_env) + 10,
        "nofile": limits.open_files,
    }
    if per_user_nproc:
        values["nproc"] = limits.pids
    return json.dumps(values, separators=(",", ":"))


def stage_folder(source: Path, target: Path, ignore=None) -> Path:
    """A copy of `source` that any user can read: what a sandbox binds as the agent's folder
    or the runner, so that the agent sees only its own paths (never the checkout's, or where
    the submission was unpacked) and, in a container, can read it as its own unprivileged
    user. Links are copied as links (a submission has none: `load_submission` refuses them),
    never followed, so nothing of the host outside `source` is copied in."""
    # copy2 keeps modification times: a staged standard library keeps its bytecode valid.
    shutil.copytree(source, target, symlinks=True, ignore=ignore)
    for dirpath, _, filenames in os.walk(target):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644)
    return target


def staged_copy(path: Path, key: str, ignore=None) -> Path:
    """A copy of the file or folder `path` that anyone can read, as `staged_build` makes
    `<name>-<key>` (once, in `runtime_root()`)."""

    def fill(copy: Path) -> None:
        if path.is_dir():
            stage_folder(path, copy, ignore=ignore)
        else:
            shutil.copy2(path, copy)
            _readable(copy, path)

    return staged_build(f"{path.name}-{key}", fill)


def staged_files(files: dict[str, str], name: str, key: str) -> Path:
    """A folder holding a copy of each host file of `files` (its name in the folder -> the
    file), readable by anyone, as `staged_build` makes `<name>-<key>`."""

    def fill(copy: Path) -> None:
        copy.mkdir(mode=0o755)
        for file_name, source in files.items():
            shutil.copy2(source, copy / file_name)
            _readable(copy / file_name, Path(source))

    return staged_build(f"{name}-{key}", fill)


def _readable(copy: Path, source: Path) -> None:
    """Anyone may read `copy`, and run it if `source` may be run (the dynamic loader, which
    execve runs, must stay executable)."""
    os.chmod(copy, 0o755 if source.stat().st_mode & stat.S_IXUSR else 0o644)


def user_temp_folder(name: str) -> Path:
    """`<the host's temporary folder>/<name>-<this user's uid>`: the arena's folders there are
    each user's own (see `own_folder`)."""
    return Path(tempfile.gettempdir()) / f"{name}-{os.geteuid()}"


def own_folder(path: Path, mode: int) -> Path:
    """`path`, a folder of this user's that no other user may write, made when missing and
    given `mode`. Sandboxes bind what is staged there: in a folder another user made, or may
    write, their copy of the runtime could stand in for ours, so it is refused (OSError,
    naming it; the arena's callers turn it into a launch failure)."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(
            f"{path} is not a folder of this user's that only it may write (another user's, a link, "
            "or open to others): remove it, or point TMPDIR elsewhere"
        )
    os.chmod(path, mode)  # as the sandbox's user must reach it, whatever the umask made it
    return path


def runtime_root() -> Path:
    """Where the staged runtime copies are kept, once per machine and user."""
    return user_temp_folder("arena-runtime")


def staged_build(name: str, fill: Callable[[Path], None]) -> Path:
    """`runtime_root()/<name>`, made once by `fill(path)` (which creates `path`): built
    beside it and renamed into place, so that processes racing to make it agree on one."""
    root = own_folder(runtime_root(), 0o755)
    target = root / name
    if target.exists():
        return target
    building = Path(tempfile.mkdtemp(prefix=name + ".", dir=root))
    try:
        os.chmod(building, 0o755)
        copy = building / "copy"
        fill(copy)  # a full disk raises here: what was copied goes with `building`
        try:
            os.rename(copy, target)
        except OSError:
            pass  # another process made it meanwhile: use that one
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target


@functools.cache
def staged_runner() -> Path:
    """The runner, staged once per content (its files' hash), for every sandbox to bind."""
    digest = hashlib.sha256()
    for name in sorted(p.name for p in RUNNER_DIR.glob("*.py")):
        digest.update(name.encode() + b"\0" + (RUNNER_DIR / name).read_bytes())
    return staged_copy(RUNNER_DIR, digest.hexdigest()[:16], ignore=shutil.ignore_patterns("__pycache__"))


def session_folder(root: Path) -> Path:
    """A new folder for one sandbox's staged copies, named with this process's owner tag (a
    killed arena's are swept by the next one: `sweep_sessions`)."""
    folder = Path(tempfile.mkdtemp(prefix=owner.tag() + "-", dir=own_folder(root, 0o711)))
    os.chmod(folder, 0o711)
    return folder


def stage_session(folder: Path, agent_dir: Path) -> tuple[Path, Path]:
    """(the agent's folder copied into a session folder, the staged runner). What
    `load_submission` does not read (IGNORED_DIRS: bytecode caches, git's folder) is not
    copied either: a `__pycache__` would let Python run bytecode in place of the agent.py that
    was digested and reviewed."""
    agent = stage_folder(agent_dir, folder / "agent", ignore=shutil.ignore_patterns(*IGNORED_DIRS))
    return agent, staged_runner()


def sweep_sessions(root: Path) -> list[str]:
    """Remove the session folders of arenas that no longer run."""
    return [f"folder {name}" for name in owner.sweep(root, "", lambda p: shutil.rmtree(p))]


class PopenProcess(frozen.HeldFrozen):
    """A SandboxProcess over subprocess.Popen, optionally with a cgroup holding it."""

    def __init__(self, popen: subprocess.Popen, cgroup=None, folder: Path | None = None):
        self.popen = popen
        self.cgroup = cgroup
        self.folder = folder  # the session's staged copies, removed at close
        assert popen.stdin and popen.stdout and popen.stderr  # every backend starts it with three pipes
        self.stdin_fd = popen.stdin.fileno()
        self.stdout_fd = popen.stdout.fileno()
        self.stderr_fd = popen.stderr.fileno()
        self._closed = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def exit_status(self) -> int | None:
        return self.popen.poll()

    def kill(self) -> None:
        # The whole process group first (the outer bwrap; its death takes the
        # sandbox's pid namespace down through --die-with-parent), then anything
        # left in the cgroup, whatever session it escaped into.
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup is not None:
            self.cgroup.kill_all()
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass  # stuck in the kernel after SIGKILL: nothing more can be done, close() goes on

    def cpu_seconds(self) -> float | None:
        if self.cgroup is not None:
            seconds = self.cgroup.cpu_seconds()
            if seconds is not None:
                return seconds
        return proc_cpu_seconds(self.popen.pid)

    def memory_kill(self) -> str | None:
        return None if self.cgroup is None else self.cgroup.memory_kill()

    def memory_peak(self) -> int | None:
        return None if self.cgroup is None else self.cgroup.memory_peak()

    def pids(self) -> list[int]:
        if self.cgroup is None:
            return [self.popen.pid]
        # The first process is the outer bwrap (or the runner itself, without a namespace):
        # the runner is its child, so a cgroup of more than one leaves the waiting bwrap out.
        pids = self.cgroup.pids()
        return [pid for pid in pids if pid != self.popen.pid] if len(pids) > 1 else pids

    def suspend(self) -> None:
        # The cgroup holds every process, whatever session it moved to; without one, the
        # process group is what can be reached.
        if self.cgroup is not None:
            self.cgroup.suspend()
        else:
            self._signal_group(signal.SIGSTOP)

    def resume(self) -> None:
        if self.cgroup is not None:
            self.cgroup.resume()
        else:
            self._signal_group(signal.SIGCONT)

    def turn(self, running: bool) -> None:
        if self.cgroup is not None:
            self.cgroup.turn(running)
        else:
            self._signal_group(signal.SIGCONT if running else signal.SIGSTOP)

    def pin(self, core: int) -> None:
        # The cpuset holds every process of the sandbox to the core; without one, each process
        # the arena can see is moved (advice only: an agent may move itself back).
        if self.cgroup is not None and self.cgroup.pin(core):
            return
        pids = self.cgroup.pids() if self.cgroup is not None else [self.popen.pid]
        for pid in pids:
            try:
                os.sched_setaffinity(pid, {core})
            except OSError:
                pass  # it ended meanwhile, or is not ours to move

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass  # gone: nothing to stop

    def lost(self) -> None:
        return None  # the host's own process: nothing stands between it and the arena

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.kill()
        for f in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass  # the peer is dead; a failed flush on close loses nothing we need
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def proc_cpu_seconds(pid: int) -> float | None:
    """utime + stime of `pid` and its reaped children, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")
