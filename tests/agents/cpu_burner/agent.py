"""Hostile: spins the CPU for 0.4 s in every act(), within the hard limit.

With a small CPU share the host's accounting stops it. Expected: budget, "over the share"."""

import time

import numpy as np


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        end = time.process_time() + 0.4
        while time.process_time() < end:
            pass
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
