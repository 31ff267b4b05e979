"""Hostile: looks for a process in its sandbox that runs without the runner's seccomp filter.

bubblewrap's own init, as the pid namespace's first process, would be one: the agent's user,
no filter, no rlimits, its memory writable through /proc/1/mem, so that code written there
runs unfiltered. Printed as `PROC pid seccomp-mode name` for every process it can see.
Expected: every one in filter mode (2), pid 1 the runner's init, its child the runner itself.
"""

import os
import sys


def status(pid: str) -> dict:
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


class Agent:
    def prepare(self, env_info):
        for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
            try:
                fields = status(pid)
            except OSError:
                continue  # gone meanwhile
            print(f"PROC {pid} {fields.get('Seccomp', '?')} {fields.get('Name', '?')}", file=sys.stderr, flush=True)
        print(f"SELF {os.getpid()}", file=sys.stderr, flush=True)

    def act(self, obs, action_mask):
        return int(action_mask.nonzero()[0][0])

    def observe_outcome(self, outcome):
        pass
