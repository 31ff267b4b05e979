"""A well-behaved agent: a uniformly random legal move (stdlib + numpy only)."""

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.rng = np.random.default_rng(0)
        self.env_info = env_info

    def act(self, obs, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(self.rng.choice(legal)) if legal.size else 0

    def observe_outcome(self, outcome):
        self.last_outcome = outcome
