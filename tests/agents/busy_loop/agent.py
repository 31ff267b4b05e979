"""Hostile: spins forever in act(). Expected: timeout."""


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        n = 0
        while True:
            n += 1

    def observe_outcome(self, outcome):
        pass
