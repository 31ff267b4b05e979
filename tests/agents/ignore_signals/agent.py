"""Hostile: ignores every signal it can, then never answers act.

Expected: timeout at the hard limit; the sandbox is killed anyway (SIGKILL cannot be
ignored) and nothing of it is left.
"""

import signal
import time


class Agent:
    def prepare(self, env_info):
        for sig in (
            signal.SIGTERM,
            signal.SIGINT,
            signal.SIGHUP,
            signal.SIGPIPE,
            signal.SIGXCPU,
            signal.SIGUSR1,
            signal.SIGUSR2,
            signal.SIGALRM,
        ):
            signal.signal(sig, signal.SIG_IGN)

    def act(self, obs, action_mask):
        time.sleep(10**6)

    def observe_outcome(self, outcome):
        pass
