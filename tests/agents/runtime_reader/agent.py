"""A sender of the page-cache channel: reads a rarely used file of the shared runtime (the
standard library's this.py) in prepare(), leaving it in the host's page cache. Expected: no
fault, and the next session starts with that file's pages dropped."""

import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        with open(os.path.join(os.path.dirname(os.__file__), "this.py"), "rb") as f:
            self.size = len(f.read())

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
