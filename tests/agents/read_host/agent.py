"""Hostile: hunts for a host secret - a file and an environment variable the test set.

It prints whatever it finds to its log. Expected: no fault, and the secret
appears nowhere in its log (the file does not exist in the sandbox, the
variable is not in any environment it can read).
"""

import glob
import json
import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "target.json")) as f:
            target = json.load(f)
        print("ENV", dict(os.environ))
        print("VAR", os.environ.get(target["env_var"]))
        for path in [
            target["path"],
            "/etc/passwd",
            "/etc/shadow",
            "/proc/1/environ",
            "/proc/self/environ",
            "/proc/1/cmdline",
            *glob.glob("/proc/*/environ"),
        ]:
            try:
                with open(path, "rb") as f:
                    print("READ", path, f.read(4096))
            except OSError as exc:
                print(f"read {path} failed: {exc!r}")

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
