"""Hostile: opens files until the open-files limit stops it, and lets the error escape act().

Expected: agent_error naming "Too many open files" (the limit, per process)."""

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.files = []

    def act(self, obs, action_mask):
        while True:
            self.files.append(open("/dev/null"))
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
