"""Well-behaved but chatty: 20 KB to stderr per call. Expected: no fault; the log is truncated."""

import sys

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.calls = 0

    def act(self, obs, action_mask):
        self.calls += 1
        sys.stderr.write(f"call {self.calls}: " + "." * 20_000 + "\n")
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        print("outcome", outcome, file=sys.stderr)
