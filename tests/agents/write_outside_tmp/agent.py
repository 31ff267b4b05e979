"""Hostile: tries to write outside /tmp (its own folder, /, /etc, the runner, a host path).

The host path comes from target.json. Expected: no fault; every write outside
/tmp fails and the host sees no new file; the write to /tmp works.
"""

import json
import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "target.json")) as f:
            host_path = json.load(f)["path"]
        for path in (
            os.path.join(here, "pwned.txt"),
            "/pwned.txt",
            "/etc/pwned.txt",
            "/arena/runner/pwned.py",
            host_path,
            "/tmp/ok.txt",
        ):
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write("pwned")
                print(f"WROTE {path}")
            except OSError as exc:
                print(f"write {path} failed: {exc!r}")

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
