"""Well-behaved, with state across games: one RNG seeded in prepare and a count of its moves,
both carried from game to game (and so, without a fresh start per pairing, from one pairing
into the next). Prints its move count to stdout after each pairing's first move, so that a
test can see the fork's output reach the log once."""

import os

import numpy as np


class Agent:
    def prepare(self, env_info):
        self.rng = np.random.default_rng(env_info["rows"] * 1000 + env_info["cols"])
        self.moves = 0
        self.frozen_pid = None

    def act(self, obs, action_mask):
        self.moves += 1
        if self.frozen_pid is not None and os.getpid() != self.frozen_pid:
            print(f"moves {self.moves} in a pairing", flush=False)
            self.frozen_pid = None  # once per pairing
        legal = np.flatnonzero(action_mask)
        return int(self.rng.choice(legal)) if legal.size else 0

    def observe_outcome(self, outcome):
        self.moves += 1000

    def freeze(self):
        self.frozen_pid = os.getpid()
