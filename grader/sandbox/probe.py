"""What a sandbox really does on this host, found by running a probe inside it.

The probe runs exactly as agents are run (the local sandbox's bwrap command line, the
docker sandbox's container options and channel; only the command differs), so a
protection reported active is one an agent meets. It tries what an attacker would
(a nested user namespace, a mount) and reports what happened.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from grader.common.limits import DEFAULT_LIMITS, Limits
from grader.documents.submission import Submission, sweep_extractions
from grader.sandbox.base import LAUNCHER_PROCESSES, RUNNER_DIR, LaunchError, runner_rlimits
from grader.sandbox.cgroup import probe as probe_cgroups
from grader.sandbox.cgroup import sweep_leftovers as sweep_cgroups

NAMESPACES = ("user", "pid", "net", "ipc", "mnt", "uts")
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000

PROBE = r"""
import ctypes, json, os, resource, socket, sys
sys.path[:0] = ["/arena/runner", "/arena/site"]
import numpy, runner
if os.path.exists("/arena/io/in"):
    runner.attach_fifos("/arena/io")  # the docker sandbox's channel, as the runner takes it
out = {"uid": os.getuid(), "gid": os.getgid(), "numpy": numpy.__version__,
       "python": sys.version.split()[0], "ns": {}, "rlimits": {}, "status": {}}
for ns in %(namespaces)r:
    out["ns"][ns] = os.readlink("/proc/self/ns/" + ns)
runner.confine(json.loads(%(rlimits)r))
for name, which in runner.RLIMITS.items():
    out["rlimits"][name] = resource.getrlimit(which)[0]
for line in open("/proc/self/status"):
    key, _, value = line.partition(":")
    if key in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp"):
        out["status"][key] = value.strip()
st = os.statvfs("/tmp")
out["tmp_bytes"] = st.f_blocks * st.f_frsize
out["tmp_inodes"] = st.f_files
st = os.statvfs("/dev/shm")
out["shm_bytes"] = st.f_blocks * st.f_frsize
try:
    open("/dev/arena-probe-write", "w").close()
    out["dev_writable"] = True
except OSError:
    out["dev_writable"] = False
out["interfaces"] = [name for _, name in socket.if_nameindex()]
try:
    open("/arena-probe-write", "w").close()
    out["root_writable"] = True
except OSError:
    out["root_writable"] = False
out["host_etc_visible"] = os.path.exists("/etc/passwd")
out["host_checkout_visible"] = os.path.exists(%(host_path)r)
# What an attacker tries first: a user namespace of its own (root there), then a mount.
pid = os.fork()
if pid == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    code = 0
    if libc.unshare(%(newuser)d) == 0:
        code |= 1
    if libc.unshare(%(newns)d) == 0 and libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        code |= 2
    os._exit(code)
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
out["nested_userns"], out["nested_mount"] = bool(code & 1), bool(code & 2)
# Then each call the filter refuses, by number, in a child of its own: {name: errno, 0 if it worked}.
import syscall_filter
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out["syscalls"] = {}
for name, nr in syscall_filter.numbers().items():
    if name == "clone":
        continue
    pid = os.fork()
    if pid == 0:
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(0)] * 5)
        os._exit(0 if result >= 0 else min(ctypes.get_errno(), 255))
    out["syscalls"][name] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
# The frozen agent's memory: this process made not dumpable as the runner makes the frozen
# agent, a child of it tries to write it through /proc/<pid>/mem and process_vm_writev.
libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
target = ctypes.create_string_buffer(b"frozen")
pid = os.fork()
if pid == 0:
    code = 0
    try:
        with open("/proc/%%d/mem" %% os.getppid(), "r+b", buffering=0) as mem:
            mem.seek(ctypes.addressof(target))
            mem.write(b"CHANGE")
        code |= 1
    except OSError:
        pass
    data = ctypes.create_string_buffer(b"CHANGE")
    local = (ctypes.c_void_p * 2)(ctypes.addressof(data), 6)
    remote = (ctypes.c_void_p * 2)(ctypes.addressof(target), 6)
    if libc.syscall(ctypes.c_long(syscall_filter.numbers()["process_vm_writev"]), os.getppid(), local, 1, remote, 1, 0) == 6:
        code |= 2
    os._exit(code)
os.waitpid(pid, 0)
out["frozen_written"] = target.value != b"frozen"
sys.stdout.write(json.dumps(out) + "\n")
sys.stdout.flush()
sys.stdin.read()  # held until the host has looked at the sandbox from outside
"""


@dataclass(frozen=True)
class Check:
    """One protection: is it active, what was seen, and may a scored round run without it."""

    name: str
    ok: bool
    detail: str
    required: bool = True


def probe_code(limits: Limits, per_user_nproc: bool = True) -> str:
    """The probe's Python source, confined with the runner's rlimits as the backend sets them."""
    return PROBE % {
        "namespaces": NAMESPACES,
        "rlimits": runner_rlimits(limits, per_user_nproc),
        "host_path": str(RUNNER_DIR),
        "newuser": CLONE_NEWUSER,
        "newns": CLONE_NEWNS,
    }


def probe_local(sandbox, limits: Limits = DEFAULT_LIMITS) -> dict[str, bool]:
    """{protection name: active} for a LocalSandbox."""
    return {c.name: c.ok for c in local_checks(sandbox, limits)}


INSIDE = (
    "sandbox starts",
    "unprivileged",
    "no nested namespaces",
    "seccomp filter",
    "rlimits inside",
    "own process count",
    "private /tmp",
    "capped /dev/shm, read-only /dev",
    "read-only root, host hidden",
    "frozen agent not writable",
    "frozen agent held from the host",
    "no network",
)


def _inside_checks(
    inside: dict | str, limits: Limits, namespaces: tuple[str, ...], per_user_nproc: bool = True, launchers: int = 0
) -> list[Check]:
    """The checks read from the probe's report (the same for every backend; `per_user_nproc`
    says whether the backend sets RLIMIT_NPROC, as `runner_rlimits` does; `launchers` counts
    the arena's processes in the sandbox's cgroup beside the agent's allowance)."""
    if isinstance(inside, str):
        return [
            Check(name, False, "sandbox did not start" if name != "sandbox starts" else inside) for name in INSIDE
        ] + [Check(f"{ns} namespace", False, "sandbox did not start") for ns in namespaces]
    checks = [Check("sandbox starts", True, f"python {inside['python']}, numpy {inside['numpy']}")]
    for ns in namespaces:
        ok = inside["ns"][ns] != os.readlink(f"/proc/self/ns/{ns}")
        checks.append(Check(f"{ns} namespace", ok, "own" if ok else "SHARED with the host", required=ns != "uts"))
    status = inside["status"]
    caps = int(status.get("CapEff", "f"), 16)
    host = inside["host_uids"]  # who its processes are on the host, seen from outside
    unprivileged = inside["uid"] != 0 and bool(host) and 0 not in host and caps == 0 and status.get("NoNewPrivs") == "1"
    checks.append(
        Check(
            "unprivileged",
            unprivileged,
            f"uid/gid {inside['uid']}/{inside['gid']} inside, uid {', '.join(map(str, host)) or '?'} on the "
            f"host{' (the host’s ROOT)' if 0 in host else ''}, effective capabilities "
            f"{status.get('CapEff')}, no_new_privs {status.get('NoNewPrivs')}",
        )
    )
    nested = not inside["nested_userns"] and not inside["nested_mount"]
    checks.append(
        Check(
            "no nested namespaces",
            nested,
            "unshare(CLONE_NEWUSER) and mount refused"
            if nested
            else f"a nested user namespace {'WAS' if inside['nested_userns'] else 'was not'} created, "
            f"a mount {'SUCCEEDED' if inside['nested_mount'] else 'failed'}",
        )
    )
    calls = inside["syscalls"]
    allowed = sorted(name for name, err in calls.items() if err != (38 if name == "clone3" else 1))
    checks.append(
        Check(
            "seccomp filter",
            status.get("Seccomp") == "2" and not allowed,
            f"{len(calls) - len(allowed)} of {len(calls)} refused calls refused"
            if not allowed
            else f"seccomp mode {status.get('Seccomp')}; NOT refused: {', '.join(allowed)}",
        )
    )
    wanted = json.loads(runner_rlimits(limits, per_user_nproc))
    wrong = [n for n, v in wanted.items() if inside["rlimits"].get(n) != v]
    checks.append(
        Check("rlimits inside", not wrong, "not applied: " + ", ".join(wrong) if wrong else ", ".join(sorted(wanted)))
    )
    checks.append(own_processes_check(inside, limits, own_userns="user" in namespaces, launchers=launchers))
    checks.append(
        Check(
            "private /tmp",
            inside["tmp_bytes"] <= limits.tmpfs_bytes,
            f"tmpfs of {inside['tmp_bytes']} bytes (limit {limits.tmpfs_bytes}), {inside['tmp_inodes']} inodes",
        )
    )
    # Files in a tmpfs are memory: uncapped, they are a way to the memory limit's OOM kill.
    shm_ok = inside["shm_bytes"] <= limits.tmpfs_bytes and not inside["dev_writable"]
    checks.append(
        Check(
            "capped /dev/shm, read-only /dev",
            shm_ok,
            f"/dev/shm tmpfs of {inside['shm_bytes']} bytes (limit {limits.tmpfs_bytes}), "
            f"/dev {'WRITABLE' if inside['dev_writable'] else 'not writable'}",
        )
    )
    hidden = not inside["root_writable"] and not inside["host_checkout_visible"]
    checks.append(
        Check(
            "read-only root, host hidden",
            hidden,
            "root read-only, the arena's checkout absent"
            if hidden
            else f"root writable: {inside['root_writable']}, checkout visible: {inside['host_checkout_visible']}",
        )
    )
    written = inside.get("frozen_written", True)
    checks.append(
        Check(
            "frozen agent not writable",
            not written,
            "a process of the sandbox cannot write the memory of one that is not dumpable (/proc/<pid>/mem, "
            "process_vm_writev)"
            if not written
            else "a child WROTE the memory of a process that is not dumpable",
        )
    )
    unread = inside.get("host_reads_frozen", "not tried")
    checks.append(
        Check(
            "frozen agent held from the host",
            unread is None,
            "the host reads the frozen process's maps, files and /tmp, and ends the others"
            if unread is None
            else f"the host cannot read {unread}: run the arena as root or as the sandbox's own user",
        )
    )
    interfaces = [name for name in inside["interfaces"] if name != "lo"]
    checks.append(Check("no network", not interfaces, "interfaces: " + (", ".join(inside["interfaces"]) or "none")))
    return checks


def own_processes_check(inside: dict, limits: Limits, own_userns: bool, launchers: int = 0) -> Check:
    """Whether the sandbox's process count is its own: its own pids cgroup holds it at the
    limit (read from the host), and no limit inside counts the processes of others. The
    kernel counts RLIMIT_NPROC per uid of a user namespace: in a sandbox with a user namespace
    of its own that is the sandbox's alone; without one (a container) its uid is shared with
    every other container and the host, so the arena sets none there and an inherited one is
    reported (the engine's own, per uid on the host)."""
    pids_max = inside.get("pids_max")
    nproc = inside["rlimits"].get("nproc")
    own_cgroup = pids_max == limits.pids + launchers
    where = (
        f"pids cgroup of its own at {pids_max}"
        if own_cgroup
        else (
            f"its pids cgroup is at {pids_max}, not {limits.pids + launchers}"
            if pids_max is not None
            else "NO pids cgroup of its own read from the host"
        )
    )
    if own_userns:
        ok = own_cgroup or nproc == limits.pids
        counted = f"RLIMIT_NPROC {nproc}, counted in its own user namespace"
    else:
        ok = own_cgroup and nproc != limits.pids
        counted = (
            "RLIMIT_NPROC "
            + ("unlimited" if nproc in (None, -1) else f"{nproc}, the engine's, per host uid")
            + (" - SET BY THE ARENA on a uid it shares" if nproc == limits.pids else ", not set by the arena")
        )
    return Check("own process count", ok, f"{where}; {counted}")


def leftovers_check(removed: list[str]) -> Check:
    """What killed arenas had left on this host (cgroups, containers, folders), now removed."""
    if not removed:
        return Check("leftovers of killed arenas", True, "none", required=False)
    shown = ", ".join(removed[:6]) + (f" and {len(removed) - 6} more" if len(removed) > 6 else "")
    return Check("leftovers of killed arenas", True, f"removed {len(removed)}: {shown}", required=False)


def local_checks(sandbox, limits: Limits = DEFAULT_LIMITS) -> list[Check]:
    """Every protection of the local sandbox, checked on this host."""
    checks = []
    if sandbox.bwrap is None:
        checks.append(Check("bubblewrap", False, "bwrap not found; install it with scripts/system-deps.sh"))
    else:
        version = subprocess.run([sandbox.bwrap, "--version"], capture_output=True, text=True).stdout.strip()
        checks.append(Check("bubblewrap", True, f"{sandbox.bwrap} ({version})"))
    inside, process = _run_local_probe(sandbox, limits) if sandbox.bwrap else ("no bwrap", None)
    if process is not None:
        process.close()
    checks += _inside_checks(inside, limits, NAMESPACES, launchers=LAUNCHER_PROCESSES if sandbox.use_cgroup else 0)
    if isinstance(inside, dict):
        checks.append(
            Check(
                "host /etc hidden",
                not inside["host_etc_visible"],
                "absent" if not inside["host_etc_visible"] else "VISIBLE inside",
            )
        )
    cgroups = probe_cgroups() if sandbox.use_cgroup else {"memory": False, "pids": False, "cpu": False}
    for controller in ("memory", "pids", "cpu"):
        ok = cgroups[controller]
        checks.append(
            Check(
                f"cgroup {controller}",
                ok,
                "per-sandbox cgroup" if ok else "cannot create one here",
                required=controller != "cpu",
            )
        )
    checks.append(yama_check())
    checks.append(
        Check(
            "egress",
            False,
            "no user-space network stack is driven: the egress tier runs "
            "with no network (its own namespace, host loopback unreachable)",
            required=False,
        )
    )
    checks.append(leftovers_check(sweep_cgroups() + sweep_extractions()))
    return checks


def _run_local_probe(sandbox, limits: Limits):
    """(the probe's findings or the error text, the still-running process or None)."""
    exe = os.path.realpath(sys.executable)
    try:
        process = sandbox.run(
            os.path.dirname(os.path.abspath(__file__)), limits, command=[exe, "-I", "-S", "-c", probe_code(limits)]
        )
    except Exception as exc:  # any failure to start is a finding, not a crash of doctor
        return f"{type(exc).__name__}: {exc}", None
    return _read_probe(process)


def _read_probe(process):
    """The probe's JSON line from a started sandbox, with the host's view of who its processes
    are (`host_uids`: from outside, as no nested user namespace can tell); the process stays
    up (the probe waits for its input to close) unless the probe failed."""
    deadline = time.monotonic() + 30
    data = b""
    while not data.endswith(b"\n") and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout_fd], [], [], 0.5)
        if ready:
            chunk = os.read(process.stdout_fd, 65536)
            if not chunk:
                break
            data += chunk
    try:
        found = json.loads(data)
    except ValueError:
        err = b""
        try:
            os.set_blocking(process.stderr_fd, False)
            err = os.read(process.stderr_fd, 65536)
        except OSError:
            pass  # nothing was written there
        process.close()
        return (err.decode(errors="replace").strip() or "no output from the probe")[-300:], None
    pids = process.cgroup.pids() if process.cgroup is not None else [process.pid]
    found["host_uids"] = sorted({_host_uid(pid) for pid in pids} - {None})
    found["host_reads_frozen"] = _host_reads(pids)
    found["pids_max"] = process.cgroup.pids_max() if process.cgroup is not None else None
    return found, process


def _host_reads(pids: list[int]) -> str | None:
    """Whether the host can read what it checks of a frozen agent (grader/sandbox/frozen.py) in
    the probe's processes, not dumpable as the frozen agent is: None, or what it cannot read."""
    for pid in pids:
        for what in ("maps", "fd", "status", "root/tmp"):
            try:
                path = Path(f"/proc/{pid}/{what}")
                if path.is_dir():
                    os.listdir(path)
                else:
                    path.read_bytes()
            except FileNotFoundError:
                continue  # that process ended (the launcher's shell)
            except OSError as exc:
                return f"/proc/<pid>/{what}: {exc.strerror}"
    return None


def yama_check() -> Check:
    """The kernel's ptrace restrictions (Yama), which the arena does not need: the frozen agent is
    not dumpable and the seccomp filter refuses ptrace and process_vm_writev."""
    try:
        scope = Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip()
        detail = f"ptrace_scope {scope}"
    except OSError:
        detail = "absent: a process may write the memory of another of its uid, but for one not dumpable"
    return Check("ptrace restrictions (Yama)", True, detail + " (not relied on)", required=False)


def _host_uid(pid: int) -> int | None:
    """The real uid of `pid` as the host sees it."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def docker_checks(sandbox, limits: Limits = DEFAULT_LIMITS) -> list[Check]:
    """Every protection of the docker sandbox, checked on this host from inside a container."""
    try:
        engine = sandbox.engine()
    except LaunchError as exc:
        return [Check("docker engine", False, str(exc))]
    removed = sandbox.swept + sweep_extractions()
    version = engine.version()
    checks = [
        Check(
            "docker engine",
            True,
            f"{version.get('Version')} (API {version.get('ApiVersion')}), "
            f"cgroup v{engine.info().get('CgroupVersion', '?')}",
        )
    ]
    try:
        record = sandbox.image_record()
    except LaunchError as exc:
        return checks + [Check("agent image", False, str(exc))]
    checks.append(Check("agent image", True, record.describe()))
    checks.append(Check("base python:3.11-slim", not record.stand_in, record.base, required=False))
    inside, process = _run_docker_probe(sandbox, limits)
    checks += _inside_checks(inside, limits, tuple(ns for ns in NAMESPACES if ns != "user"), per_user_nproc=False)
    if process is not None:
        cpu = process.cpu_seconds()
        checks.append(
            Check(
                "cgroup accounting",
                cpu is not None and process.cgroup is not None and "memory" in process.cgroup.dirs,
                f"the container's cgroup read from the host: {cpu:.3f} s of CPU"
                if cpu is not None
                else "the container's cgroup is not readable from here: the engine must run on this host",
            )
        )
        process.close()
    checks.append(yama_check())
    checks.append(leftovers_check(removed))
    return checks


def _run_docker_probe(sandbox, limits: Limits):
    """(the probe's findings or the error text, the still-running DockerProcess or None)."""
    probe_dir = Submission(path=Path(__file__).resolve().parent, digest="probe", files=())
    try:
        process = sandbox.start(
            probe_dir, limits, command=["python3", "-I", "-S", "-c", probe_code(limits, per_user_nproc=False)]
        )
    except LaunchError as exc:
        return str(exc), None
    return _read_probe(process)
