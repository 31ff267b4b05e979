"""Hostile: writes half of a reply frame straight onto the protocol channel, then hangs.

The runner keeps its channel on a high file descriptor; the agent finds it by trying them.
Expected: timeout at the hard limit (half a frame is not a reply).
"""

import os
import struct
import time


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        for fd in range(3, 256):
            try:
                os.write(fd, struct.pack("<II", 40, 0) + b'{"op":')
            except OSError:
                pass
        time.sleep(10**6)

    def observe_outcome(self, outcome):
        pass
