"""Well-behaved, within the rules: starts a child process in prepare (a fork that computes a
table and hands it back through a pipe, then exits) and plays from the table."""

import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        cells = int(env_info["rows"]) * int(env_info["cols"])
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(read)
            order = np.random.default_rng(11).permutation(cells).astype(np.int64)
            os.write(write, order.tobytes())
            os._exit(0)
        os.close(write)
        data = b""
        while len(data) < 8 * cells:
            chunk = os.read(read, 8 * cells - len(data))
            if not chunk:
                break
            data += chunk
        os.close(read)
        os.waitpid(child, 0)
        self.rank = np.argsort(np.frombuffer(data, dtype=np.int64))

    def act(self, obs, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(legal[np.argmin(self.rank[legal])]) if legal.size else 0

    def observe_outcome(self, outcome):
        pass
