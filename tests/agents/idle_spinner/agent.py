"""Hostile: from prepare, leaves two processes spinning, one in a session of its own, to take
the CPU of whichever agent the round turns to while this one waits its turn.

Expected: while its session is paused (the round plays others), none of its processes runs:
its sandbox's CPU time stands still; resumed, they run again and it plays on. A pairing's fork
starts two more at its first move (those of prepare ended at freeze), which end with the pairing.
"""

import os

import numpy as np


def _spin(new_session: bool) -> None:
    if os.fork() == 0:
        if new_session:
            os.setsid()
        x = 0
        while True:
            x += 1


class Agent:
    def prepare(self, env_info):
        self.spinning = os.getpid()
        _spin(False)
        _spin(True)

    def act(self, obs, action_mask):
        if self.spinning != os.getpid():  # a pairing's fork: it spins too
            self.spinning = os.getpid()
            _spin(False)
            _spin(True)
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
