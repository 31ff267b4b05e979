"""Hostile: a fork bomb in act(). Expected: timeout; nothing left running."""

import os


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        while True:
            try:
                os.fork()
            except OSError:
                pass

    def observe_outcome(self, outcome):
        pass
