"""Well-behaved, and every move it makes depends on every outcome it has heard, so two runs
that play the same games heard the same outcomes. It refuses an outcome of any other shape.

It also paces itself so that a host whose CPU check falls due every 25 ms meets it in each
place: it takes 30 ms over every outcome, writes to stderr on every third, and takes 30 ms
over its first move after the second outcome.
"""

import sys
import time

import numpy as np

KEYS = {"winner", "black_discs", "white_discs", "your_color"}
WINNERS = {"black": 1, "white": 2, "draw": 3}
PAUSE = 0.03


class Agent:
    def prepare(self, env_info):
        self.heard = 0
        self.memory = 0
        self.paused = False

    def act(self, obs, action_mask):
        if self.heard == 2 and not self.paused:
            self.paused = True
            time.sleep(PAUSE)
        legal = np.flatnonzero(action_mask)
        return int(legal[(self.memory + int(obs[0].sum())) % legal.size])

    def observe_outcome(self, outcome):
        if set(outcome) != KEYS or outcome["winner"] not in WINNERS or outcome["your_color"] != "both":
            raise ValueError(f"an outcome of an unexpected shape: {outcome!r}")
        self.heard += 1
        self.memory = (
            self.memory * 31 + WINNERS[outcome["winner"]] + 7 * outcome["black_discs"] + 3 * outcome["white_discs"]
        ) % 65521
        time.sleep(PAUSE)
        if self.heard % 3 == 0:
            print(f"heard {self.heard} outcomes", file=sys.stderr)
