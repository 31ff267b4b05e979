"""What the local sandbox really does on this host, found by running a probe inside it.

The probe runs under the exact bwrap command line the agents get (only the
command differs), so a protection reported active is one an agent meets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from grader.limits import DEFAULT_LIMITS, Limits
from grader.sandbox.base import runner_rlimits
from grader.sandbox.cgroup import probe as probe_cgroups

NAMESPACES = ("user", "pid", "net", "ipc", "mnt", "uts")

PROBE = r"""
import json, os, resource, socket, sys
sys.path[:0] = ["/arena/runner", "/arena/site"]
import numpy, runner
out = {"uid": os.getuid(), "gid": os.getgid(), "numpy": numpy.__version__,
       "python": sys.version.split()[0], "ns": {}, "rlimits": {}}
for ns in %(namespaces)r:
    out["ns"][ns] = os.readlink("/proc/self/ns/" + ns)
runner.set_rlimits(json.loads(%(rlimits)r))
for name, which in runner.RLIMITS.items():
    out["rlimits"][name] = resource.getrlimit(which)[0]
st = os.statvfs("/tmp")
out["tmp_bytes"] = st.f_blocks * st.f_frsize
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
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Check:
    """One protection: is it active, what was seen, and may a scored round run without it."""

    name: str
    ok: bool
    detail: str
    required: bool = True


def probe_local(sandbox, limits: Limits = DEFAULT_LIMITS) -> dict[str, bool]:
    """{protection name: active} for a LocalSandbox."""
    return {c.name: c.ok for c in local_checks(sandbox, limits)}


def local_checks(sandbox, limits: Limits = DEFAULT_LIMITS) -> list[Check]:
    """Every protection of the local sandbox, checked on this host."""
    checks = []
    if sandbox.bwrap is None:
        checks.append(Check("bubblewrap", False, "bwrap not found; install it with scripts/system-deps.sh"))
    else:
        version = subprocess.run([sandbox.bwrap, "--version"], capture_output=True, text=True).stdout.strip()
        checks.append(Check("bubblewrap", True, f"{sandbox.bwrap} ({version})"))
    inside = _run_probe(sandbox, limits) if sandbox.bwrap else None
    if isinstance(inside, str) or inside is None:
        checks.append(Check("sandbox starts", False, inside or "no bwrap"))
        for ns in NAMESPACES:
            checks.append(Check(f"{ns} namespace", False, "sandbox did not start"))
        checks += [Check("rlimits inside", False, "sandbox did not start"),
                   Check("private /tmp", False, "sandbox did not start"),
                   Check("capped /dev/shm, read-only /dev", False, "sandbox did not start"),
                   Check("read-only root, host hidden", False, "sandbox did not start")]
    else:
        checks.append(Check("sandbox starts", True, f"python {inside['python']}, numpy {inside['numpy']}"))
        for ns in NAMESPACES:
            host = os.readlink(f"/proc/self/ns/{ns}")
            ok = inside["ns"][ns] != host
            extra = ""
            if ns == "user":
                extra = f", uid/gid {inside['uid']}/{inside['gid']} inside"
            if ns == "net":
                extra = f", interfaces: {', '.join(inside['interfaces']) or 'none'}"
            checks.append(Check(f"{ns} namespace", ok, ("own" if ok else "SHARED with the host") + extra,
                                required=ns != "uts"))
        wanted = json.loads(runner_rlimits(limits, per_user_nproc=True))
        got = inside["rlimits"]
        wrong = [n for n, v in wanted.items() if got.get(n) != v]
        checks.append(Check("rlimits inside", not wrong,
                            "not applied: " + ", ".join(wrong) if wrong else ", ".join(sorted(wanted))))
        checks.append(Check("private /tmp", inside["tmp_bytes"] <= limits.tmpfs_bytes,
                            f"tmpfs of {inside['tmp_bytes']} bytes (limit {limits.tmpfs_bytes})"))
        # Files in a tmpfs are memory: uncapped, they are a way to the memory limit's OOM kill.
        shm_ok = inside["shm_bytes"] <= limits.tmpfs_bytes and not inside["dev_writable"]
        checks.append(Check("capped /dev/shm, read-only /dev", shm_ok,
                            f"/dev/shm tmpfs of {inside['shm_bytes']} bytes (limit {limits.tmpfs_bytes}), "
                            f"/dev {'WRITABLE' if inside['dev_writable'] else 'read-only'}"))
        hidden = not inside["root_writable"] and not inside["host_etc_visible"]
        checks.append(Check("read-only root, host hidden", hidden,
                            "root read-only, host /etc absent" if hidden else
                            f"root writable: {inside['root_writable']}, host /etc visible: {inside['host_etc_visible']}"))
    cgroups = probe_cgroups() if sandbox.use_cgroup else {"memory": False, "pids": False, "cpu": False}
    for controller in ("memory", "pids", "cpu"):
        ok = cgroups[controller]
        checks.append(Check(f"cgroup {controller}", ok, "per-sandbox cgroup" if ok else "cannot create one here",
                            required=controller != "cpu"))
    checks.append(Check("egress", False, "no user-space network stack is driven: the egress tier runs "
                        "with no network (its own namespace, host loopback unreachable)", required=False))
    return checks


def _run_probe(sandbox, limits: Limits) -> dict | str:
    """The probe's findings, or the error text when the sandbox does not start."""
    exe = os.path.realpath(sys.executable)
    code = PROBE % {"namespaces": NAMESPACES, "rlimits": runner_rlimits(limits, per_user_nproc=True)}
    try:
        argv = sandbox.argv(os.path.dirname(os.path.abspath(__file__)), limits, command=[exe, "-I", "-S", "-c", code])
        proc = sandbox.spawn(argv, limits)
    except Exception as exc:  # any failure to start is a finding, not a crash of doctor
        return f"{type(exc).__name__}: {exc}"
    try:
        proc.popen.stdin.close()
        out = proc.popen.stdout.read()
        err = proc.popen.stderr.read()
        proc.popen.wait(timeout=30)
    finally:
        proc.close()
    try:
        return json.loads(out)
    except ValueError:
        return (err.decode(errors="replace").strip() or "no output")[:300]
