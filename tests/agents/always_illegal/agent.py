"""Broken: always plays a cell the mask says is illegal. Expected: lost turns, then forfeits."""

import numpy as np


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask == 0)[0])

    def observe_outcome(self, outcome):
        pass
