"""Hostile: while it is imported (before the runner says `ready`), writes a forged `ready`
frame to every descriptor: versions that are lone surrogates, 2,000 characters long, and an
object instead of a string, plus an extra field.

Expected: the host keeps only `python` and `numpy`, cut short and encodable; the runner's own
`ready` then arrives where the reply to prepare should: protocol.
"""

import os
import struct

HEADER = b'{"op":"ready","python":"' + b"\\ud800" * 2000 + b'","numpy":{"a":[1,2]},"\\udcff":"x"}'
for fd in range(3, 256):
    try:
        os.write(fd, struct.pack("<II", len(HEADER), 0) + HEADER)
    except OSError:
        pass


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return 0

    def observe_outcome(self, outcome):
        pass
