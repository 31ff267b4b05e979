"""Hostile: at its first act, writes its own `error` frame to every descriptor, with a lone
surrogate as `where` and a nested object holding surrogates as `error`, then waits.

Expected: agent_error, with a detail any UTF-8 writer takes.
"""

import os
import struct
import time

HEADER = b'{"op":"error","where":"\\udcff","error":{"nested":["\\ud800","\\udbff\\udbff"]}}'


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        for fd in range(3, 256):
            try:
                os.write(fd, struct.pack("<II", len(HEADER), 0) + HEADER)
            except OSError:
                pass
        time.sleep(10**6)

    def observe_outcome(self, outcome):
        pass
