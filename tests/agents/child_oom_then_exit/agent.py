"""Hostile: lets a child of its own be killed for memory, then exits in act().

The way one student could hold every round if a memory kill were always the arena's
fault (`oom`, re-run until the round is held). Expected: agent_error, "over its memory
limit": the sandbox reached its own cap, the agent's doing.
"""

import os
import sys


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        pid = os.fork()
        if pid == 0:
            hoard = []
            while True:
                hoard.append(bytearray(64 * 1024**2))  # touched: bytearray zero-fills
        _, status = os.waitpid(pid, 0)
        print(f"child ended with {status}", file=sys.stderr, flush=True)
        os._exit(0)

    def observe_outcome(self, outcome):
        pass
