"""Hostile: tries to fill every writable file system with many files under the file-size
limit: /dev/shm, /dev, /tmp (the memory behind a tmpfs would count against its memory limit).

Expected: no fault and no OOM: every one stops at its cap (no space, or read-only), and the
agent plays on. It prints what it managed, for the test to read.
"""

import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        chunk = b"x" * (1 << 20)
        for folder in ("/dev/shm", "/dev", "/tmp"):
            written = 0
            try:
                for i in range(64):
                    with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                        for _ in range(32):
                            f.write(chunk)
                            written += len(chunk)
            except OSError as exc:
                print(f"FILL {folder} stopped after {written >> 20} MiB: {exc.strerror}")
            else:
                print(f"FILL {folder} took {written >> 20} MiB")

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
