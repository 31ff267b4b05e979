"""Hostile: plays two moves, then raises an exception whose message holds lone surrogates
(which the runner's JSON carries as \\ud800 escapes and no UTF-8 writer can encode).

Expected: agent_error naming the exception, its message with U+FFFD where the surrogates were;
the round or smoke report that meets it is still written.
"""

import numpy as np


class Agent:
    def __init__(self):
        self.moves = 0

    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        self.moves += 1
        if self.moves > 2:
            raise RuntimeError("bad \ud800 text \udfff here")
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
