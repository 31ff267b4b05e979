"""Within the rules: starts two threads in prepare() and one in every act(), and plays a legal
move. Expected: no fault, whatever other agents hold at the same time."""

import threading

import numpy as np


class Agent:
    def prepare(self, env_info):
        workers = [threading.Thread(target=sum, args=(range(1000),)) for _ in range(2)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()

    def act(self, obs, action_mask):
        found = []
        t = threading.Thread(target=lambda: found.append(int(np.flatnonzero(action_mask)[-1])))
        t.start()
        t.join()
        return found[0]

    def observe_outcome(self, outcome):
        pass
