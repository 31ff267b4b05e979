"""Hostile: calls each system call the sandbox must refuse, by number, through libc's syscall().

Printed as `SYSCALL name -> errno` (0 when it succeeded). Expected: each refused with
EPERM (bpf, keyctl, perf_event_open, userfaultfd, ptrace, io_uring_setup, splice, ...), clone3
with ENOSYS, and the agent plays on. Numbers for x86_64 and aarch64.
"""

import ctypes
import os
import platform
import sys

NUMBERS = {
    "x86_64": {
        "unshare": 272,
        "setns": 308,
        "mount": 165,
        "ptrace": 101,
        "bpf": 321,
        "keyctl": 250,
        "add_key": 248,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "io_uring_setup": 425,
        "process_vm_readv": 310,
        "open_by_handle_at": 304,
        "fsopen": 430,
        "splice": 275,
        "tee": 276,
        "vmsplice": 278,
        "sendfile": 40,
        "clone3": 435,
    },
    "aarch64": {
        "unshare": 97,
        "setns": 268,
        "mount": 40,
        "ptrace": 117,
        "bpf": 280,
        "keyctl": 219,
        "add_key": 217,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "io_uring_setup": 425,
        "process_vm_readv": 270,
        "open_by_handle_at": 265,
        "fsopen": 430,
        "splice": 76,
        "tee": 77,
        "vmsplice": 75,
        "sendfile": 71,
        "clone3": 435,
    },
}


class Agent:
    def prepare(self, env_info):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        for name, nr in NUMBERS[platform.machine()].items():
            pid = os.fork()
            if pid == 0:  # a child each: a call that works must not change the agent
                ctypes.set_errno(0)
                result = libc.syscall(
                    ctypes.c_long(nr),
                    ctypes.c_long(0),
                    ctypes.c_long(0),
                    ctypes.c_long(0),
                    ctypes.c_long(0),
                    ctypes.c_long(0),
                )
                os._exit(0 if result >= 0 else min(ctypes.get_errno(), 255))
            _, status = os.waitpid(pid, 0)
            print(f"SYSCALL {name} -> {os.waitstatus_to_exitcode(status)}", file=sys.stderr, flush=True)

    def act(self, obs, action_mask):
        return int(action_mask.nonzero()[0][0])

    def observe_outcome(self, outcome):
        pass
