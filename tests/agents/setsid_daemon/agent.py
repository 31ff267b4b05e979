"""Hostile: starts a daemon the classic way (fork, setsid, fork, exec) to outlive its session.

Expected: no fault while it plays; when the sandbox is closed the daemon dies with it (its
own session does not take it out of the sandbox's pid namespace).
"""

import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/proc/self/exe", ["python", "-c", "import time; time.sleep(10**6)"])
            os._exit(0)
        os.wait()

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
