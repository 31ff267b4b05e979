"""The random example agent: a uniformly random legal move, from a fixed seed.

Standard library and numpy only. The seed is a constant, not derived from `env_info`, so the
agent's choices depend only on the masks it is shown and two runs of the same games agree.
It learns nothing: `observe_outcome` is accepted and ignored.
"""

from __future__ import annotations

import random

import numpy as np

SEED = 12345


class Agent:
    """Uniform over the legal-move mask."""

    def prepare(self, env_info: dict) -> None:
        # Re-seeded per environment so every environment starts from the same stream.
        self.rng = random.Random(SEED)
        self.cells = int(env_info["rows"]) * int(env_info["cols"])

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:  # the arena only asks when there is a legal move; stay total anyway
            return 0
        return int(legal[self.rng.randrange(legal.size)])

    def observe_outcome(self, outcome: dict) -> None:
        """Random play has nothing to learn from a result."""
