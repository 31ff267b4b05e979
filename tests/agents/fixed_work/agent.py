"""Within the rules: spends 10 ms of its own CPU time on every act(), whatever else the host
runs, and plays a legal move. Expected: no fault, and the pace charged about 10 ms an act even
where the host's contention makes each act take far longer on the wall clock."""

import time

import numpy as np

WORK_SECONDS = 0.010


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        end = time.thread_time() + WORK_SECONDS
        while time.thread_time() < end:
            pass
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
