"""Within the rules: each pairing's fork starts two helper processes at its first move (the
pattern docs/rules.md suggests for threads, with processes): one that ends at once and is never
waited for, one that is still running when the pairing ends.

Expected: no fault over any number of pairings; the sandbox's init reaps the first kind, the
host ends the second kind after each pairing, so none counts against the next pairing's processes.
"""

import os
import time

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.started = os.getpid()

    def act(self, obs, action_mask):
        if self.started != os.getpid():  # the first move of a pairing's fork (or of the session)
            self.started = os.getpid()
            for lifetime in (0, 3600):
                if os.fork() == 0:
                    time.sleep(lifetime)
                    os._exit(0)
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
