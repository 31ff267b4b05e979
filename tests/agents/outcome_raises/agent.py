"""Hostile: plays, then raises in observe_outcome.

Expected: agent_error naming observe_outcome.
"""

import numpy as np


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        raise RuntimeError("no outcomes, thanks")
