"""The learner example agent: it works out from outcomes whether most or fewest discs win.

Standard library and numpy only. The agent is never told the win condition, but every
budget game ends with an outcome: the winner and both disc counts. When the winner is the
side with more discs, that is a vote for `most`; when it is the side with fewer, a vote for
`fewest` (a draw, or equal counts, says nothing). The agent plays for whichever has more
votes (`most` before it has any), so after a few self-play games it knows what to play for.
Its play is deterministic, so self-play would repeat one game (one vote, or none if it is a
draw): until one objective leads by LEAD votes it plays a random legal move a quarter of the
time, from a constant seed, so that the budget games differ.

Its play is one step deep, and one evaluation serves both objectives with a sign:
- the discs the move flips, counted under the standard capture rule (its own model; the mask
  is still what it obeys), and
- how hard the cell is to take back: the square of the number of its four lines (row, column,
  two diagonals) closed on one side by the edge or an obstacle (a corner has all four).
It takes the move with the highest value when more discs win and the lowest when fewer win:
under `fewest` it gives discs away and keeps off the cells that stay its own.
Ties go to the lowest cell index.
"""

from __future__ import annotations

import random

import numpy as np

# Votes one objective must lead by before the agent stops exploring; how often it explores.
LEAD = 3
EXPLORE = 0.25
SEED = 4242
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
LINES = ((0, 1), (1, 0), (1, 1), (1, -1))


class Agent:
    """One-ply flips and cell safety, with the sign learnt from the budget games' outcomes."""

    def prepare(self, env_info: dict) -> None:
        """A new environment: its rules may differ, so the votes start over."""
        self.rows = int(env_info["rows"])
        self.cols = int(env_info["cols"])
        self.blocked = {(int(r), int(c)) for r, c in env_info.get("obstacles", [])}
        self.safety = [
            sum(1 for dr, dc in LINES if not self.open(r + dr, c + dc) or not self.open(r - dr, c - dc)) ** 2
            for r in range(self.rows)
            for c in range(self.cols)
        ]
        self.votes = {"most": 0, "fewest": 0}
        self.rng = random.Random(SEED)  # re-seeded per environment: the same stream in each

    def open(self, r: int, c: int) -> bool:
        """Whether (r, c) is a playable cell: on the board and not an obstacle."""
        return 0 <= r < self.rows and 0 <= c < self.cols and (r, c) not in self.blocked

    def objective(self) -> str:
        """What the outcomes so far say wins: `most` unless `fewest` has more votes."""
        return "fewest" if self.votes["fewest"] > self.votes["most"] else "most"

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
        if abs(self.votes["most"] - self.votes["fewest"]) < LEAD and self.rng.random() < EXPLORE:
            return int(legal[self.rng.randrange(legal.size)])  # vary the games until the votes agree
        sign = 1 if self.objective() == "most" else -1
        values = [sign * (self.flips(own, opp, *divmod(int(cell), self.cols)) + self.safety[cell]) for cell in legal]
        return int(legal[int(np.argmax(values))])  # the first best: the lowest cell index

    def observe_outcome(self, outcome: dict) -> None:
        """One vote from a finished budget game: did the side with more discs win?"""
        black, white = int(outcome["black_discs"]), int(outcome["white_discs"])
        winner = outcome["winner"]
        if winner == "draw" or black == white:
            return
        majority = "black" if black > white else "white"
        self.votes["most" if winner == majority else "fewest"] += 1
