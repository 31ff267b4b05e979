"""Hostile: returns an int past 64 bits (2**70), which the wire cannot carry as an action.
Expected: protocol, said as a cell off the board (it is an int), not "not an int"."""


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return 1 << 70

    def observe_outcome(self, outcome):
        pass
