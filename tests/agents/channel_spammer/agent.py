"""Hostile: a thread writes bytes that are no frame onto every file descriptor it can,
the protocol channel included, from its first move on (started in prepare, it could break
the reply to prepare itself, and the tests expect the fault during play).

Expected: protocol (a bad frame from the agent); nothing forged is ever taken as a move.
"""

import os
import threading

import numpy as np


def spam():
    junk = b"\xff" * 64
    while True:
        for fd in range(3, 256):
            try:
                os.write(fd, junk)
            except OSError:
                pass


class Agent:
    def prepare(self, env_info):
        self.spamming = False

    def act(self, obs, action_mask):
        if not self.spamming:
            self.spamming = True
            threading.Thread(target=spam, daemon=True).start()
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
