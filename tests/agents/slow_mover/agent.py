"""Hostile: answers every act() after 0.3 s of sleep, within the hard limit.

With a soft limit under 0.3 s each reply is an overrun (counted, not a fault); with a short
environment ceiling the session runs into it. Expected: overruns counted; then timeout,
"environment wall ceiling"."""

import time

import numpy as np


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        time.sleep(0.3)
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
