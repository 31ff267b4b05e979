"""Hostile: returns a cell far off the board. Expected: protocol."""


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return 10**6

    def observe_outcome(self, outcome):
        pass
