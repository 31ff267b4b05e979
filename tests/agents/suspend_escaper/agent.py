"""Hostile: keeps forking children that send SIGCONT to every process it can reach.

A suspend made of SIGSTOPs, one per process the host has seen, misses a child forked after
the host listed the group; that child's SIGCONT wakes the stopped ones, and the agent goes on
computing on other entrants' time. Expected: while the round has it suspended, none of its
processes runs (the host stops them again until two looks in a row find every one stopped),
and it plays on when resumed.
"""

import os
import signal

WORKERS = 4


def wake_all_forever():
    while True:
        try:
            pid = os.fork()
        except OSError:
            continue  # at the pids limit: try again
        if pid == 0:
            try:
                for _ in range(200):
                    os.kill(-1, signal.SIGCONT)
            finally:
                os._exit(0)
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass


class Agent:
    def prepare(self, env_info):
        for _ in range(WORKERS):
            if os.fork() == 0:
                wake_all_forever()

    def act(self, obs, action_mask):
        return int(action_mask.nonzero()[0][0])

    def observe_outcome(self, outcome):
        pass
