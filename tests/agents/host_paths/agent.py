"""Hostile: looks for the host's paths where a sandbox might show them.

It prints the command lines and environments of every process it can see, its mount table
and its working folder. Expected: no fault, and none of the host's own paths (the arena's
checkout, the folder the submission came from) anywhere in what it printed.
"""

import glob
import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        print("CWD", os.getcwd())
        for path in [
            "/proc/self/mountinfo",
            "/proc/1/mountinfo",
            *glob.glob("/proc/*/cmdline"),
            *glob.glob("/proc/*/environ"),
        ]:
            try:
                with open(path, "rb") as f:
                    print("READ", path, f.read(65536))
            except OSError as exc:
                print(f"read {path} failed: {exc!r}")

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
