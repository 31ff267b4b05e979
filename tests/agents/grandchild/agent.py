"""Hostile: leaves a daemonised grandchild running (a sleeping python with a marker).

Expected: no fault while it plays; after the sandbox closes, no process with
the marker exists on the host.
"""

import os
import sys

import numpy as np

MARKER = "ARENA_GRANDCHILD_MARKER"


class Agent:
    def prepare(self, env_info):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", f"import time; time.sleep(10**6)  # {MARKER}"])
            os._exit(0)
        os.wait()

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
