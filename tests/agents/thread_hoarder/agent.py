"""Within the rules: holds its whole process allowance (62 idle threads beside the runner's
own) for the session. Expected: no fault, and no other agent running at the same time harmed."""

import threading

import numpy as np

HELD = 62


class Agent:
    def prepare(self, env_info):
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.stop.wait, daemon=True) for _ in range(HELD)]
        for t in self.threads:
            t.start()

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
