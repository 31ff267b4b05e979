"""Hostile: never answers prepare() (sleeps). Expected: timeout, "no reply to prepare"."""

import time


class Agent:
    def prepare(self, env_info):
        time.sleep(10**6)

    def act(self, obs, action_mask):
        return 0

    def observe_outcome(self, outcome):
        pass
