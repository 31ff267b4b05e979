"""The embedded sandbox: bubblewrap, a cgroup, and rlimits set by the runner.

The sandbox sees only what the runner needs, bound read-only at the host's own
paths: the interpreter, its standard library (its site-packages hidden under an
empty tmpfs), the shared libraries they link, numpy (at /arena/site), the
runner (/arena/runner) and the agent's folder (/agent). Everything else of the
host - /etc, /home, /proc of the host, other submissions - does not exist in
it. It gets new user, pid, net, ipc, uts, mount and cgroup namespaces (and may make no
user namespace of its own), the runner's seccomp filter (grader.sandboxed.syscall_filter), a nobody uid/gid,
no capabilities, no environment, a private size-capped /tmp and /dev/shm (and a
read-only /dev), and dies with its parent.

Network: every tier gets its own network namespace, so the host's loopback is
never reachable. An egress tier would need a user-space network stack
(pasta/slirp4netns) that this backend does not drive: "egress" therefore runs
with no network, like "none", and `capabilities()["egress"]` says so.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

from grader.common.limits import Limits
from grader.documents.submission import Submission
from grader.sandbox import pagecache, pinning
from grader.sandbox.base import (
    AGENT_MOUNT,
    LAUNCHER_PROCESSES,
    RUNNER_DIR,
    RUNNER_MOUNT,
    RUNNER_SCRIPT,
    LaunchError,
    Network,
    PopenProcess,
    check_network,
    runner_rlimits,
    session_folder,
    stage_session,
    staged_copy,
    staged_files,
    sweep_sessions,
    user_temp_folder,
)
from grader.sandbox.cgroup import Cgroup

SANDBOX_UID = 65534  # nobody, inside
SANDBOX_GID = 65534
# Who the sandbox is on the host when the arena runs as root: bwrap itself is started as this
# unprivileged user (setpriv), so the sandbox's uid maps to it and never to the host's root.
# The same uid as the docker backend's agent.
HOST_UID = 10001
SITE = "/arena/site"
# bwrap itself needs nothing of the host's environment, so it gets none of it
# either: its own /proc/<pid>/environ is visible from inside the sandbox.
BWRAP_ENV = {"PATH": "/usr/bin:/bin"}
SANDBOX_ENV = {
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    # One CPU each: BLAS thread pools would only fight over the CPU quota and the pids limit.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def session_root() -> Path:
    """Where the sandboxes' session folders (staged copies) are made."""
    return user_temp_folder("arena-sessions")


def unprivileged(argv: list[str]) -> list[str]:
    """`argv` run as HOST_UID when the arena is root (setpriv from util-linux): bwrap then
    makes its user namespace as that user, so the sandbox's uid is never the host's root."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [setpriv, f"--reuid={HOST_UID}", f"--regid={HOST_UID}", "--clear-groups", *argv]


@functools.cache
def _sessions_swept() -> list[str]:
    """The session folders of dead arenas, removed once per process (before its first sandbox)."""
    return sweep_sessions(session_root())


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def bwrap_problem() -> str | None:
    """Why the local sandbox (bubblewrap) cannot run here, or None when it can."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap is Linux only and this is {sys.platform}"
    bwrap = find_bwrap()
    if bwrap is None:
        return (
            "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt install bubblewrap; here: scripts/system-deps.sh)"
        )
    try:
        proc = subprocess.run(
            unprivileged([bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "true"]),
            capture_output=True,
            timeout=20,
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot run here: {exc}"
    if proc.returncode != 0:
        return "bwrap cannot create its namespaces here: " + proc.stderr.decode(errors="replace").strip()[:200]
    return None


@functools.cache
def runtime_binds() -> tuple[tuple[str, str], ...]:
    """(host source, sandbox destination) read-only binds of the Python runtime.

    The interpreter, its standard library and the shared libraries that they
    and numpy link (found with ldd), at their host paths; numpy at SITE.
    """
    import numpy

    exe = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    numpy_dir = os.path.dirname(os.path.realpath(numpy.__file__))
    numpy_libs = numpy_dir + ".libs"  # manylinux wheels keep openblas beside the package
    # The standard library without what the sandbox hides or never needs.
    skip = shutil.ignore_patterns("site-packages", "test", "idlelib", "tkinter", "turtledemo")
    pycache = shutil.ignore_patterns("tests")
    binds = [(_source(exe), exe), (_source(stdlib, skip), stdlib), (staged(numpy_dir, pycache), f"{SITE}/numpy")]
    if os.path.isdir(numpy_libs):
        binds.append((staged(numpy_libs), f"{SITE}/numpy.libs"))
    objects = [exe]
    for root in (os.path.join(stdlib, "lib-dynload"), numpy_dir):
        for dirpath, _, names in os.walk(root):
            objects += [os.path.join(dirpath, n) for n in names if ".so" in n]
    folders: dict[str, dict[str, str]] = {}  # a library's folder -> its name there -> the host file
    for lib in _shared_libraries(objects):
        if not lib.startswith((numpy_dir, numpy_libs)):  # those are inside a folder bound already
            folder = os.path.realpath(os.path.dirname(lib))
            folders.setdefault(folder, {})[os.path.basename(lib)] = os.path.realpath(lib)
    return tuple(binds + library_binds(folders, [dest for _, dest in binds]))


def library_binds(folders: dict[str, dict[str, str]], other: list[str]) -> list[tuple[str, str]]:
    """The binds that put each library of `folders` (a folder -> a library's name there -> its
    host file) at its path: one bind per folder, of a staged folder holding just its libraries,
    since every mount costs bwrap about a quarter of a millisecond a start and a runtime links
    some fifty libraries (12-15 ms a start, measured). A folder that holds the mount point of
    another bind (`other`, or another folder's) is read-only once bound, so its libraries are
    bound one by one instead."""
    binds = []
    below = other + list(folders)
    for folder, names in sorted(folders.items()):
        if any(dest.startswith(folder + "/") for dest in below):
            binds += [(_source(source), os.path.join(folder, name)) for name, source in sorted(names.items())]
            continue
        key = hashlib.sha256()
        for name, source in sorted(names.items()):
            st = os.stat(source)
            key.update(f"{name}\0{source}\0{st.st_mtime_ns}\0{st.st_size}\0".encode())
        staged_folder = staged_files(names, "libraries-" + os.path.basename(folder), key.hexdigest()[:16])
        binds.append((str(staged_folder), folder))
    return binds


def readable_by_anyone(path: str) -> bool:
    """Whether a user of no group of the file's can reach and read `path` (the sandbox's host
    uid must, since bwrap opens what it binds as that user)."""
    current = Path(path)
    try:
        if not current.stat().st_mode & stat.S_IROTH:
            return False
        for parent in current.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
    except OSError:
        return False
    return True


def staged(path: str, ignore=None) -> str:
    """A copy of the file or folder `path` that anyone can read, made once per machine and
    version of it (keyed by its path and modification time); the sandbox binds the copy at the
    original path. Used for what the sandbox's unprivileged host uid could not read where it
    is (a Python under /root), and for numpy, whose own path would tell the agent where the
    arena's checkout is."""
    key = hashlib.sha256(f"{path}\0{os.stat(path).st_mtime_ns}".encode()).hexdigest()[:16]
    return str(staged_copy(Path(path), key, ignore))


def _source(path: str, ignore=None) -> str:
    """What to bind for `path`: itself where anyone can read it, else a staged copy."""
    return path if readable_by_anyone(path) else staged(path, ignore)


def _shared_libraries(objects: list[str]) -> list[str]:
    """Every shared library (and the dynamic loader) the ELF `objects` load, by ldd."""
    ldd = shutil.which("ldd")
    if ldd is None:
        raise LaunchError("ldd not found: cannot work out which shared libraries to bind")
    out = subprocess.run([ldd, *objects], capture_output=True, text=True, env=BWRAP_ENV).stdout
    libs = set()
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            target = line.split("=>", 1)[1].split("(")[0].strip()
        elif line.startswith("/") and "(" in line:
            target = line.split("(")[0].strip()  # the loader: /lib64/ld-linux-x86-64.so.2 (0x...)
        else:
            continue
        if target.startswith("/") and os.path.exists(target):
            libs.add(target)
    return sorted(libs)


def _root_symlinks() -> list[str]:
    """Recreate merged-/usr links (/lib -> usr/lib ...) so the loader's paths resolve."""
    args = []
    for name in ("lib", "lib64", "lib32", "libx32", "bin", "sbin"):
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
    return args


_SPAWNERS: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def _spawner() -> concurrent.futures.ThreadPoolExecutor:
    """The one thread that starts this process's sandboxes. bwrap's --die-with-parent is the
    parent-death signal, which the kernel sends when the *thread* that started it ends: a
    round's threads come and go (grader.rounds.lanes), this one lives as long as the process
    (one per process id: a forked child has not its parent's threads)."""
    pid = os.getpid()
    with _SPAWNER_LOCK:
        if pid not in _SPAWNERS:
            _SPAWNERS[pid] = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-spawner")
        return _SPAWNERS[pid]


_SPAWNER_LOCK = threading.Lock()


class LocalSandbox:
    """bubblewrap + cgroup + runner rlimits; see the module docstring for the policy."""

    name = "local"

    def __init__(self, bwrap: str | None = None, use_cgroup: bool = True):
        self.bwrap = bwrap or find_bwrap()
        self.use_cgroup = use_cgroup

    def argv(
        self,
        agent_dir: str | os.PathLike,
        limits: Limits,
        network: Network = "none",
        command: list[str] | None = None,
        runner_dir: str | os.PathLike = RUNNER_DIR,
    ) -> list[str]:
        """The bwrap command line that runs `command` (default: the runner) for `agent_dir`
        (`run` passes the session's staged copies of the agent's folder and the runner)."""
        check_network(network)
        if self.bwrap is None:
            raise LaunchError("bubblewrap (bwrap) is not installed; run scripts/system-deps.sh")
        exe = os.path.realpath(sys.executable)
        stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
        args = [
            self.bwrap,
            "--unshare-all",
            "--unshare-user",  # --unshare-all only *tries* the user namespace
            # No user namespace of its own inside: in one, an agent is root and can mount a
            # cgroupfs or a tmpfs of its own, undoing every cap (the seccomp filter refuses it too).
            "--disable-userns",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_GID),
            "--hostname",
            "arena",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--cap-drop",
            "ALL",
            # The runner is the pid namespace's first process: bwrap's own init there would run
            # without the runner's seccomp filter and rlimits, as the agent's user, so that the
            # agent could write its code into it through /proc/1/mem and run from it unfiltered.
            "--as-pid-1",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(limits.tmpfs_bytes),
            "--tmpfs",
            "/tmp",
            # /dev/shm is where POSIX shared memory lives: as capped as /tmp, and /dev itself
            # (a tmpfs of device nodes) read-only, so no file system of the sandbox can grow
            # past its caps into the memory limit.
            "--size",
            str(limits.tmpfs_bytes),
            "--tmpfs",
            "/dev/shm",
            "--remount-ro",
            "/dev",
        ]
        binds = runtime_binds()
        for src, dest in binds:
            args += ["--ro-bind", src, dest]
        if os.path.isdir(os.path.join(dict((d, s) for s, d in binds)[stdlib], "site-packages")):
            site_packages = os.path.join(stdlib, "site-packages")  # hidden: only numpy is the agent's
            args += ["--tmpfs", site_packages, "--remount-ro", site_packages]
        args += _root_symlinks()
        args += [
            "--ro-bind",
            str(runner_dir),
            RUNNER_MOUNT,
            "--ro-bind",
            str(Path(agent_dir).resolve()),
            AGENT_MOUNT,
            "--remount-ro",
            "/",
            "--chdir",
            AGENT_MOUNT,
        ]
        for key, value in SANDBOX_ENV.items():
            args += ["--setenv", key, value]
        if command is None:
            command = [
                exe,
                "-I",
                "-S",
                "-B",
                f"{RUNNER_MOUNT}/{RUNNER_SCRIPT}",
                "--agent",
                AGENT_MOUNT,
                "--path",
                SITE,
                "--rlimits",
                runner_rlimits(limits, per_user_nproc=True),
            ]
        return args + ["--", *command]

    def start(self, submission: Submission, limits: Limits, network: Network = "none") -> PopenProcess:
        """Start the runner for `submission` in a fresh sandbox."""
        return self.run(submission.path, limits, network)

    def run(
        self, agent_dir: str | os.PathLike, limits: Limits, network: Network = "none", command: list[str] | None = None
    ) -> PopenProcess:
        """Start `command` (default: the runner) for `agent_dir` in a fresh sandbox, on staged
        copies of the agent's folder and the runner (removed when the sandbox is closed)."""
        _sessions_swept()
        try:
            folder = session_folder(session_root())
        except OSError as exc:
            raise LaunchError(f"cannot make the sandbox's session folder: {exc}") from exc
        try:
            agent, runner = stage_session(folder, Path(agent_dir))
            # Whatever earlier sessions read of the shared runtime is read from the disk again.
            pagecache.evict(pagecache.files_under(tuple(src for src, _ in runtime_binds()) + (str(runner),)))
            return self.spawn(self.argv(agent, limits, network, command, runner_dir=runner), limits, folder)
        except OSError as exc:  # the host's side (a full disk, say): the arena's failure
            shutil.rmtree(folder, ignore_errors=True)
            raise LaunchError(f"cannot prepare the sandbox's session: {exc}") from exc
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    def spawn(self, argv: list[str], limits: Limits, folder: Path | None = None) -> PopenProcess:
        """Run a bwrap command line inside a new cgroup with piped stdio. bwrap reads its
        options (the host paths it binds) from a descriptor (`--args`), so that the sandbox's
        first process, whose command line the agent can read, shows only the command."""
        split = argv.index("--")
        args_fd = os.memfd_create("arena-bwrap-args", 0)
        os.write(args_fd, b"".join(a.encode() + b"\0" for a in argv[1:split]))
        os.lseek(args_fd, 0, os.SEEK_SET)
        argv = unprivileged([argv[0], "--args", str(args_fd), *argv[split:]])
        cgroup = None
        if self.use_cgroup:
            try:
                # One process more than the agent's allowance: the outer bwrap, which waits outside the
                # sandbox's namespaces but in its cgroup (the init inside is counted by RLIMIT_NPROC too).
                cgroup = Cgroup.create(
                    limits.memory_bytes, limits.pids + LAUNCHER_PROCESSES, limits.cpu_cores, pinning.core()
                )
            except OSError as exc:
                raise LaunchError(f"cannot set up the sandbox's cgroup: {exc}") from exc
        if cgroup is not None:
            argv = cgroup.attaching(argv)
        core = pinning.core()

        def start() -> subprocess.Popen:
            with pinning.spawning_pinned(core):  # the sandbox starts on its core; its cpuset holds it there
                return subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    bufsize=0,
                    env=BWRAP_ENV,
                    cwd="/",
                    close_fds=True,
                    pass_fds=(args_fd,),
                    start_new_session=True,
                )

        try:
            popen = _spawner().submit(start).result()
        except (OSError, subprocess.SubprocessError) as exc:
            if cgroup is not None:
                cgroup.remove()
            raise LaunchError(f"cannot start bwrap: {exc}") from exc
        finally:
            os.close(args_fd)
        return PopenProcess(popen, cgroup, folder)

    def image(self) -> None:
        """Agents run on the host's own interpreter (its version is in every report): no image."""
        return None

    def capabilities(self) -> dict[str, bool]:
        """Protections of this backend on this host (see grader.cli.commands.doctor for the probe)."""
        from grader.sandbox.probe import probe_local

        return probe_local(self)
