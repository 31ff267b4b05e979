"""Hostile: answers freeze() itself, before the runner does: a forged `ok` naming the sandbox's
init (pid 1) as the frozen process, written to every descriptor, so that the host would spare
another process than the frozen agent when it cleans up after each pairing.

Expected: the host checks the process named and charges the agent (agent_error).
"""

import os
import struct

import numpy as np

HEADER = b'{"op":"ok","pid":1}'


class Agent:
    def prepare(self, env_info):
        pass

    def freeze(self):
        for fd in range(3, 256):
            try:
                os.write(fd, struct.pack("<II", len(HEADER), 0) + HEADER)
            except OSError:
                pass

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
