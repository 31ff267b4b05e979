"""Banks time: instant in self-play and before, then 30 ms on every move after freeze().

Its mean over a whole session stays under a board's pace when it plays enough self-play;
the pace of the games after freeze (the pairings) is far over. Expected: `timeout` naming
the pairing games, at the end of the session or, over 3x the pace, early."""

import time

import numpy as np


class Agent:
    def __init__(self):
        self.frozen = False

    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        if self.frozen:
            time.sleep(0.03)
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass

    def freeze(self):
        self.frozen = True
