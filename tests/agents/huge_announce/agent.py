"""Hostile: announces a reply body of 4 GiB on the protocol channel.

Expected: protocol (the announced size is over the limit), with no allocation of it.
"""

import os
import struct
import time


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        header = b'{"op":"action","action":1}'
        for fd in range(3, 256):
            try:
                os.write(fd, struct.pack("<II", len(header), 0xFFFFFFF0) + header)
            except OSError:
                pass
        time.sleep(10**6)

    def observe_outcome(self, outcome):
        pass
