"""Hostile: writes 100 MB to stdout in act(). Expected: agent_error (output cap), host unharmed."""

import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        chunk = b"x" * (1024 * 1024)
        for _ in range(100):
            os.write(1, chunk)
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
