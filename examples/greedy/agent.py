"""The greedy example agent: the legal move that flips the most discs, by its own model.

Standard library and numpy only. The agent is never told the capture rule, so it assumes
the standard one (a run of opponent discs in any of the eight directions, closed by one of
its own, flips) and counts flips itself from the observation. Where its model disagrees
with the real rule it still plays only cells the mask allows, so a wrong model costs
strength, never legality. Ties go to the lowest cell index, so it is deterministic.
"""

from __future__ import annotations

import numpy as np

DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


class Agent:
    """Maximises the discs flipped by the move, under the standard capture rule."""

    def prepare(self, env_info: dict) -> None:
        self.rows = int(env_info["rows"])
        self.cols = int(env_info["cols"])

    def flips(self, own: np.ndarray, opp: np.ndarray, r0: int, c0: int) -> int:
        """Discs a placement at (r0, c0) would flip under standard capture."""
        total = 0
        for dr, dc in DIRECTIONS:
            r, c, run = r0 + dr, c0 + dc, 0
            # Walk over opponent discs; obstacles and empty cells are neither, so they end it.
            while 0 <= r < self.rows and 0 <= c < self.cols and opp[r, c]:
                r, c, run = r + dr, c + dc, run + 1
            if run and 0 <= r < self.rows and 0 <= c < self.cols and own[r, c]:
                total += run
        return total

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        own, opp = obs[0] > 0.5, obs[1] > 0.5
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:  # the arena only asks when there is a legal move; stay total anyway
            return 0
        best, best_flips = int(legal[0]), -1
        for cell in legal:
            n = self.flips(own, opp, *divmod(int(cell), self.cols))
            if n > best_flips:
                best, best_flips = int(cell), n
        return best

    def observe_outcome(self, outcome: dict) -> None:
        """Greedy play does not adapt; the result is ignored."""
