"""Hostile: tries to undo the sandbox's caps from a namespace of its own.

In prepare it tries what a red team did: a nested user namespace (root there), a mount
namespace, a cgroupfs mount (to rewrite its own pids.max and memory limit), a private
tmpfs past the /tmp cap, setns into PID 1's namespaces. Each attempt is printed as
REFUSED or DONE. Expected: every attempt REFUSED, and the agent plays on.
"""

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000


def attempt(name, call):
    result = call()
    errno = ctypes.get_errno()
    print(f"{'DONE' if result == 0 else 'REFUSED'} {name} errno={errno}", file=sys.stderr, flush=True)


class Agent:
    def prepare(self, env_info):
        pid = os.fork()
        if pid == 0:  # in a child, so that a success does not change the agent's own process
            libc = ctypes.CDLL(None, use_errno=True)
            attempt("unshare-user", lambda: libc.unshare(CLONE_NEWUSER))
            attempt("unshare-mount", lambda: libc.unshare(CLONE_NEWNS))
            attempt("unshare-pid", lambda: libc.unshare(CLONE_NEWPID))
            attempt("mount-cgroup", lambda: libc.mount(b"cgroup", b"/tmp", b"cgroup", 0, b"pids"))
            attempt("mount-cgroup2", lambda: libc.mount(b"cgroup2", b"/tmp", b"cgroup2", 0, None))
            attempt("mount-tmpfs", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=1g"))
            try:
                fd = os.open("/proc/1/ns/mnt", os.O_RDONLY)
                attempt("setns-mnt", lambda: libc.setns(fd, 0))
            except PermissionError:  # the sandbox's init is not dumpable: its /proc files are root's
                print("REFUSED open-pid1-ns errno=13", file=sys.stderr, flush=True)
            sys.stderr.flush()
            os._exit(0)
        os.waitpid(pid, 0)

    def act(self, obs, action_mask):
        return int(action_mask.nonzero()[0][0])

    def observe_outcome(self, outcome):
        pass
