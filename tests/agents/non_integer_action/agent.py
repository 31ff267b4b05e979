"""Hostile: returns a float. Expected: protocol."""


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return 1.5

    def observe_outcome(self, outcome):
        pass
