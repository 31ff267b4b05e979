"""The arena's seccomp filter, installed by the runner in every sandbox before the agent is imported.

A classic BPF program, built with the standard library (`struct`) and installed with
`ctypes`: the runner may import nothing else, and the program is about sixty
instructions of one plain shape (check the architecture, refuse a list of system calls
and the namespace flags of `clone`, allow the rest), easier to audit written out than
behind a binding to libseccomp. It stacks on whatever the backend adds (docker's default
profile), so every backend refuses at least this list. `arena doctor` and the red-team
tests try the refused calls from inside a sandbox.

Refused with EPERM: everything that makes or enters namespaces or mounts (the way to
undo the sandbox's caps), that inspects or writes other processes (and, on another process,
what a fork of it would inherit: its resource limits, priority and scheduling; allowed on the
caller itself), that makes System V IPC objects or POSIX message queues (they would outlive
every process of the sandbox, a store from one pairing to the next that no file system
restore reaches), that reaches kernel
subsystems an agent never needs and attackers use (bpf, keyrings, perf, userfaultfd,
io_uring, modules, kexec), and the calls that splice into pipes (splice, tee, vmsplice,
sendfile): one from a socket into a pipe holds the pipe's lock while it waits for data, and
a host that then reads the agent's output pipe sleeps in the kernel, where not even SIGKILL
ends it (shutil's copies fall back to read and write). `clone3` gets ENOSYS so that the C
library falls back to `clone`, whose flags a classic filter can see. A call from another
architecture's ABI (x32, 32-bit compat) kills the process: its numbers would bypass the list.
"""

from __future__ import annotations

import errno
import platform
import struct

# BPF instruction classes and fields (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
# seccomp return values (linux/seccomp.h).
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL_PROCESS = 0x80000000
# struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low 32 bits, little-endian).
_NR, _ARCH, _ARG0 = 0, 4, 16
X32_SYSCALL_BIT = 0x40000000
# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME
CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

REFUSED = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "name_to_handle_at",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "vhangup",
    "splice",
    "tee",
    "vmsplice",
    "sendfile",
    "shmget",
    "semget",
    "msgget",
    "mq_open",
)
# Allowed on the caller itself only (the argument naming the process is 0): on another process of
# the sandbox (the frozen agent, say) each would leave a value that a fork of it inherits.
# {name: index of the argument naming the process}.
OWN_ONLY = {
    "prlimit64": 0,
    "setpriority": 1,
    "ioprio_set": 1,
    "sched_setparam": 0,
    "sched_setscheduler": 0,
    "sched_setattr": 0,
    "sched_setaffinity": 0,
}

# System call numbers (arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h for arm64).
_NUMBERS = {
    "x86_64": (
        0xC000003E,
        {
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "bpf": 321,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "open_by_handle_at": 304,
            "name_to_handle_at": 303,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "acct": 163,
            "quotactl": 179,
            "syslog": 103,
            "settimeofday": 164,
            "clock_settime": 227,
            "adjtimex": 159,
            "vhangup": 153,
            "splice": 275,
            "tee": 276,
            "vmsplice": 278,
            "sendfile": 40,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            "mq_open": 240,
            "clone": 56,
            "clone3": 435,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "bpf": 280,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "open_by_handle_at": 265,
            "name_to_handle_at": 264,
            "swapon": 224,
            "swapoff": 225,
            "reboot": 142,
            "acct": 89,
            "quotactl": 60,
            "syslog": 116,
            "settimeofday": 170,
            "clock_settime": 112,
            "adjtimex": 171,
            "vhangup": 58,
            "splice": 76,
            "tee": 77,
            "vmsplice": 75,
            "sendfile": 71,
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
            "mq_open": 180,
            "clone": 220,
            "clone3": 435,
        },
    ),
}


_OWN_ONLY_NUMBERS = {
    "x86_64": {
        "prlimit64": 302,
        "setpriority": 141,
        "ioprio_set": 251,
        "sched_setparam": 142,
        "sched_setscheduler": 144,
        "sched_setattr": 314,
        "sched_setaffinity": 203,
    },
    "aarch64": {
        "prlimit64": 261,
        "setpriority": 140,
        "ioprio_set": 30,
        "sched_setparam": 118,
        "sched_setscheduler": 119,
        "sched_setattr": 274,
        "sched_setaffinity": 122,
    },
}


class FilterUnavailable(RuntimeError):
    """No filter is written for this machine's architecture, or the kernel refused it."""


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes:
    """The filter for `machine` (default: this one), as the bytes of a `struct sock_filter` array."""
    machine = machine or platform.machine()
    if machine not in _NUMBERS:
        raise FilterUnavailable(f"no seccomp filter is written for {machine!r} (only {', '.join(_NUMBERS)})")
    arch, numbers = _NUMBERS[machine]
    refused = [numbers[name] for name in REFUSED]
    deny = RET_ERRNO | errno.EPERM
    body = [_insn(_JGE_K, X32_SYSCALL_BIT, jt=0xFF)]  # jt patched below: to the kill
    for nr in refused:
        body.append(_insn(_JEQ_K, nr, jt=0xFE))  # jt patched below: to the refusal
    own = []  # each: not this call -> past the block; else its process argument, 0 allowed, else refused
    for name, index in OWN_ONLY.items():
        own += [
            _insn(_JEQ_K, _OWN_ONLY_NUMBERS[machine][name], jt=0, jf=4),
            _insn(_LD_W_ABS, _ARG0 + 8 * index),
            _insn(_JEQ_K, 0, jt=1, jf=0),
            _insn(_RET_K, deny),
            _insn(_RET_K, RET_ALLOW),
        ]
    body += own
    body.append(_insn(_JEQ_K, numbers["clone3"], jt=0xFD))  # to ENOSYS
    body.append(_insn(_JEQ_K, numbers["clone"], jt=0, jf=2))
    body.append(_insn(_LD_W_ABS, _ARG0))
    body.append(_insn(_JSET_K, CLONE_NAMESPACE_FLAGS, jt=0xFE))
    body.append(_insn(_RET_K, RET_ALLOW))
    tail = [_insn(_RET_K, deny), _insn(_RET_K, RET_ERRNO | errno.ENOSYS), _insn(_RET_K, RET_KILL_PROCESS)]
    # Resolve the placeholder jumps to the three returns after the body.
    resolved = []
    for i, raw in enumerate(body):
        code, jt, jf, k = struct.unpack("=HBBI", raw)
        if jt in (0xFE, 0xFD, 0xFF):
            target = len(body) + {0xFE: 0, 0xFD: 1, 0xFF: 2}[jt]
            jt = target - i - 1
            if jt > 255:
                raise AssertionError("seccomp program too long for a short jump")
        resolved.append(struct.pack("=HBBI", code, jt, jf, k))
    head = [_insn(_LD_W_ABS, _ARCH), _insn(_JEQ_K, arch, jt=1), _insn(_RET_K, RET_KILL_PROCESS), _insn(_LD_W_ABS, _NR)]
    return b"".join(head + resolved + tail)


PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
_SECCOMP_NR = {"x86_64": 317, "aarch64": 277}


def install(machine: str | None = None) -> None:
    """Install the filter on every thread of this process (no_new_privs first, as the kernel
    requires of an unprivileged process); FilterUnavailable when it cannot be."""
    import ctypes

    machine = machine or platform.machine()
    code = program(machine)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(code, len(code))
    prog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise FilterUnavailable(f"prctl(PR_SET_NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}")
    result = libc.syscall(
        ctypes.c_long(_SECCOMP_NR[machine]),
        ctypes.c_long(SECCOMP_SET_MODE_FILTER),
        ctypes.c_long(SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.byref(prog),
    )
    if result != 0:
        raise FilterUnavailable(f"seccomp(SET_MODE_FILTER) failed: {result}, errno {ctypes.get_errno()}")


def numbers(machine: str | None = None) -> dict[str, int]:
    """{system call name: number} of the refused calls (and clone, clone3) on `machine`."""
    machine = machine or platform.machine()
    if machine not in _NUMBERS:
        raise FilterUnavailable(f"no seccomp filter is written for {machine!r} (only {', '.join(_NUMBERS)})")
    return dict(_NUMBERS[machine][1])
