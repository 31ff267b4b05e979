"""Hostile: act returns True (a bool is an int subclass in Python, not a cell).

Expected: protocol (not an int).
"""


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return True

    def observe_outcome(self, outcome):
        pass
