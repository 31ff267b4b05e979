"""Hostile: closes stdin (fd 0 and sys.stdin) and reads from it. Expected: no fault."""

import os
import sys

import numpy as np


class Agent:
    def prepare(self, env_info):
        try:
            print("stdin read:", sys.stdin.read(10))
        except Exception as exc:
            print("stdin read failed:", exc)
        sys.stdin.close()
        os.close(0)

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
