"""Hostile: asks for 8 GiB in act(). Expected: agent_error (MemoryError under the address-space limit)."""

import numpy as np


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        block = np.ones(8 * 1024**3, dtype=np.uint8)
        return int(block[0])

    def observe_outcome(self, outcome):
        pass
