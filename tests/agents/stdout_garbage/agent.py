"""Hostile: writes garbage to stdout (print and raw fd 1) on every call, and plays legally.

Expected: no fault; the garbage lands in the captured log, never on the wire.
"""

import os
import sys

import numpy as np

GARBAGE = b'\x00\x00\x00\x10\x00\x00\x00\x00{"op":"action","action":0}\xff\xfe garbage'


class Agent:
    def prepare(self, env_info):
        print("hello from prepare")
        os.write(1, GARBAGE)

    def act(self, obs, action_mask):
        print("thinking...", flush=True)
        os.write(1, GARBAGE)
        sys.stdout.buffer.write(GARBAGE)
        return int(np.flatnonzero(action_mask)[-1])

    def observe_outcome(self, outcome):
        os.write(1, GARBAGE)
