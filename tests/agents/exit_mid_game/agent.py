"""Hostile: plays three legal moves, then calls sys.exit(0). Expected: eof."""

import sys

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.calls = 0

    def act(self, obs, action_mask):
        self.calls += 1
        if self.calls > 3:
            sys.exit(0)
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
