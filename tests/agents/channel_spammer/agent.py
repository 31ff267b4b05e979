"""Hostile: a thread writes bytes that are no frame onto every file descriptor it can,
the protocol channel included, from its first move on (started in prepare, it could break
the reply to prepare itself, and the tests expect the fault during play; its first reply
waits until junk was written everywhere once).

Expected: protocol (a bad frame from the agent); nothing forged is ever taken as a move.
"""

import os
import threading

import numpy as np


def spam(started):
    junk = b"\xff" * 64
    while True:
        for fd in range(3, 256):
            try:
                os.write(fd, junk)
            except OSError:
                pass
        started.set()


class Agent:
    def prepare(self, env_info):
        self.spamming = False

    def act(self, obs, action_mask):
        if not self.spamming:  # junk is on every descriptor before the first reply
            self.spamming = True
            started = threading.Event()
            threading.Thread(target=spam, args=(started,), daemon=True).start()
            started.wait()
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
