"""Hostile: sleeps forever in act(). Expected: timeout."""

import time


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        time.sleep(10**6)

    def observe_outcome(self, outcome):
        pass
