"""Hostile: its act returns an object (not an int) whose repr is lone surrogates.

Expected: protocol (act() returned an object, not an int), with a detail any UTF-8 writer takes.
"""


class Cell:
    def __repr__(self):
        return "\udcff" * 1000


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return Cell()

    def observe_outcome(self, outcome):
        pass
