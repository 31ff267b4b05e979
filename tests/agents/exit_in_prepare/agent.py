"""Hostile: leaves with os._exit(0) inside prepare (no exception for the runner to catch).

Expected: eof during prepare.
"""

import os


class Agent:
    def prepare(self, env_info):
        os._exit(0)

    def act(self, obs, action_mask):
        return 0

    def observe_outcome(self, outcome):
        pass
