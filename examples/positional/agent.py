"""The positional example agent: it plays the cells that can never be taken back.

Standard library and numpy only. The agent is told the board and nothing else, but the
board's shape alone says a lot: a disc is flipped only when it is flanked along a line
(a row, a column or a diagonal), and the edge of the board and obstacles end every line.
So in `prepare` it scores each cell once by how many of its four lines are closed on at
least one side (a neighbour off the board or an obstacle): a cell closed on all four lines
(a corner, or a cell boxed in by obstacles) can never be flipped by any line capture, and
an edge cell is closed on three. Each move is then the legal cell with the best score,
after a penalty for cells next to an empty corner (they hand that corner to the opponent).
Ties go to the lowest cell index, so it is deterministic.
"""

from __future__ import annotations

import numpy as np

# The four lines through a cell, each as one of its two directions.
LINES = ((0, 1), (1, 0), (1, 1), (1, -1))
NEIGHBOURS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
# A cell's value by the number of its lines closed on one side: 4 is a cell nothing can flip.
VALUE_BY_CLOSED_LINES = (1.0, 2.0, 3.0, 5.0, 100.0)
# Played while the corner next to it is empty, a cell gives the opponent a way into it.
NEXT_TO_EMPTY_CORNER = -50.0


class Agent:
    """The legal cell with the best positional value, read from the layout alone."""

    def prepare(self, env_info: dict) -> None:
        self.rows = int(env_info["rows"])
        self.cols = int(env_info["cols"])
        self.blocked = {(int(r), int(c)) for r, c in env_info.get("obstacles", [])}
        self.value = np.zeros(self.rows * self.cols)
        self.corners: list[int] = []
        for r in range(self.rows):
            for c in range(self.cols):
                closed = sum(1 for dr, dc in LINES if not self.open(r + dr, c + dc) or not self.open(r - dr, c - dc))
                self.value[r * self.cols + c] = VALUE_BY_CLOSED_LINES[closed]
                if closed == 4 and self.open(r, c):
                    self.corners.append(r * self.cols + c)
        # For each corner, the playable cells around it.
        self.guards = {
            k: [(r + dr) * self.cols + c + dc for dr, dc in NEIGHBOURS if self.open(r + dr, c + dc)]
            for k in self.corners
            for r, c in [divmod(k, self.cols)]
        }

    def open(self, r: int, c: int) -> bool:
        """Whether (r, c) is a playable cell: on the board and not an obstacle."""
        return 0 <= r < self.rows and 0 <= c < self.cols and (r, c) not in self.blocked

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:  # the arena only asks when there is a legal move; stay total anyway
            return 0
        score = self.value.copy()
        empty = (obs[0] < 0.5).ravel() & (obs[1] < 0.5).ravel()
        for corner in self.corners:
            if empty[corner]:
                score[self.guards[corner]] += NEXT_TO_EMPTY_CORNER
        # argmax returns the first of equal scores: ties go to the lowest cell index.
        return int(legal[np.argmax(score[legal])])

    def observe_outcome(self, outcome: dict) -> None:
        """A fixed positional policy: the result is ignored."""
