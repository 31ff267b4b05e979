"""A random legal mover that tries to leave its core for every core of the machine, then prints
the cores it may run on to stderr (the pinning tests: it must still be its one core)."""

import os
import sys

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.rng = np.random.default_rng(0)
        try:
            os.sched_setaffinity(0, range(os.cpu_count() or 1))
        except OSError as exc:
            print(f"sched_setaffinity refused: {exc}", file=sys.stderr)
        print(f"affinity: {sorted(os.sched_getaffinity(0))}", file=sys.stderr, flush=True)

    def act(self, obs, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(self.rng.choice(legal)) if legal.size else 0

    def observe_outcome(self, outcome):
        pass
