"""Hostile: at its first act, writes a reply whose JSON header is nested 8,000 levels deep
(16,000 bytes, under the 16 KiB reply header limit) to every descriptor, then waits.

Expected: protocol (the header is nested too deeply to be a message), never a RecursionError
out of the host's parser.
"""

import os
import struct
import time


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        header = b"[" * 8000 + b"]" * 8000
        for fd in range(3, 256):
            try:
                os.write(fd, struct.pack("<II", len(header), 0) + header)
            except OSError:
                pass
        time.sleep(10**6)

    def observe_outcome(self, outcome):
        pass
