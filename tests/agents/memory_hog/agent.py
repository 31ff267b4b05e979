"""Hostile: touches memory 64 MiB at a time until something stops it.

Each block is under the address-space limit, so the sandbox's memory cgroup
is what stops it. Expected: agent_error, "over its memory limit" (its own cap
reached is the agent's fault), where a memory cgroup exists.
"""

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.hoard = []

    def act(self, obs, action_mask):
        while True:
            self.hoard.append(np.ones(64 * 1024**2, dtype=np.uint8))

    def observe_outcome(self, outcome):
        pass
