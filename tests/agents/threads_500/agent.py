"""Hostile: starts 500 threads in act(). Expected: agent_error (the pids limit stops thread 64 or so)."""

import threading
import time


class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        threads = []
        for _ in range(500):
            t = threading.Thread(target=time.sleep, args=(1000,), daemon=True)
            t.start()
            threads.append(t)
        return 0

    def observe_outcome(self, outcome):
        pass
