"""A random legal mover that prints the cores it may run on to stderr (the pinning test)."""

import os
import sys

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.rng = np.random.default_rng(0)
        print(f"affinity: {sorted(os.sched_getaffinity(0))}", file=sys.stderr, flush=True)

    def act(self, obs, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(self.rng.choice(legal)) if legal.size else 0

    def observe_outcome(self, outcome):
        pass
