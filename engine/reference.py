"""A plain-Python implementation of the rules, slow and obvious, kept to check the kernels.

Nothing in a round uses it; the tests diff the numba kernels against it (perft, random
playouts) and the benchmark times it beside them.
"""

from __future__ import annotations

import functools
import random

from .game import IllegalMoveError
from .layout import Layout
from .rules import Capture, Rules, Win, band_bounds

EMPTY, BLACK, WHITE, WALL = 0, 1, 2, 3

# NW, N, NE, W, E, SW, S, SE: the order in which `longest` breaks ties.
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


@functools.cache  # per rule: the row is fixed, and runs() asks for every cell
def capture_directions(capture: Capture) -> tuple[tuple[int, int], ...]:
    """The directions a rule's runs may follow, in tie order (its row's direction mask)."""
    return tuple(d for i, d in enumerate(DIRECTIONS) if capture.params.directions >> i & 1)


@functools.cache
def max_run(capture: Capture) -> int:
    """The longest run a rule flips (its row's limit; a large number when it has none)."""
    limit = capture.params.max_run
    return 10**6 if limit is None else limit


class RefBoard:
    """A board as a list of cells (EMPTY/BLACK/WHITE/WALL) with the side to move."""

    def __init__(self, layout: Layout, rules: Rules):
        self.layout, self.rules = layout, rules
        self.rows, self.cols = layout.rows, layout.cols
        self.cells = [EMPTY] * (self.rows * self.cols)
        for r, c in layout.obstacles:
            self.cells[r * self.cols + c] = WALL
        black, white = layout.opening
        for r, c in black:
            self.cells[r * self.cols + c] = BLACK
        for r, c in white:
            self.cells[r * self.cols + c] = WHITE
        self.to_move = BLACK
        self.placements = 0
        self.passes_in_row = 0

    def copy(self) -> RefBoard:
        other = object.__new__(RefBoard)
        other.__dict__.update(self.__dict__)
        other.cells = list(self.cells)
        return other

    def runs(self, cell: int, player: int) -> list[list[int]]:
        """The flippable runs (as cell lists, in direction order) for `player` placing at `cell`."""
        if self.cells[cell] != EMPTY:
            return []
        opp = WHITE if player == BLACK else BLACK
        r0, c0 = divmod(cell, self.cols)
        out = []
        for dr, dc in capture_directions(self.rules.capture):
            run, r, c = [], r0 + dr, c0 + dc
            while 0 <= r < self.rows and 0 <= c < self.cols and self.cells[r * self.cols + c] == opp:
                run.append(r * self.cols + c)
                r, c = r + dr, c + dc
            if run and 0 <= r < self.rows and 0 <= c < self.cols and self.cells[r * self.cols + c] == player:
                if len(run) <= max_run(self.rules.capture):
                    out.append(run)
        return out

    def flips(self, cell: int, player: int) -> list[int]:
        runs = self.runs(cell, player)
        if self.rules.capture.params.longest and runs:
            best = max(len(r) for r in runs)
            return next(r for r in runs if len(r) == best)  # first in NW..SE order
        return [c for run in runs for c in run]

    def legal(self, player: int | None = None) -> list[int]:
        player = self.to_move if player is None else player
        return [i for i in range(len(self.cells)) if self.runs(i, player)]

    def play(self, cell: int) -> None:
        flips = self.flips(cell, self.to_move)
        if not flips:
            raise IllegalMoveError(f"illegal move {cell}")
        self.cells[cell] = self.to_move
        for f in flips:
            self.cells[f] = self.to_move
        self.placements += 1
        self.to_move = WHITE if self.to_move == BLACK else BLACK

    def pass_turn(self) -> None:
        self.to_move = WHITE if self.to_move == BLACK else BLACK

    def done(self) -> bool:
        limit = self.rules.turn_limit
        if limit is not None and self.placements >= limit:
            return True
        return not self.legal(BLACK) and not self.legal(WHITE)

    def counts(self) -> tuple[int, int]:
        return self.cells.count(BLACK), self.cells.count(WHITE)

    def winner(self) -> int | None:
        """BLACK, WHITE or None (draw), by the rules' win condition on the current counts."""
        return decide_winner(self.rules, *self.counts())


def decide_winner(rules: Rules, black: int, white: int) -> int | None:
    """The paper's equations, computed exactly (see engine.rules.band_bounds)."""
    if rules.win is Win.MOST:
        return BLACK if black > white else WHITE if white > black else None
    if rules.win is Win.FEWEST:
        return BLACK if black < white else WHITE if white < black else None
    total = black + white
    if total == 0:
        return None
    from fractions import Fraction

    k = rules.k_fraction
    assert k is not None  # a band rule always has k (the spec validator requires it)
    lo, hi = band_bounds(k)
    for player, mine in ((BLACK, black), (WHITE, white)):
        if lo < Fraction(mine, total) < hi:
            return player
    return None


def perft(board: RefBoard, depth: int) -> int:
    """Leaves at `depth` plies: a forced pass is a ply, a finished game counts 1 at any depth."""
    if depth == 0 or board.done():
        return 1
    moves = board.legal()
    if not moves:
        child = board.copy()
        child.pass_turn()
        return perft(child, depth - 1)
    total = 0
    for m in moves:
        child = board.copy()
        child.play(m)
        total += perft(child, depth - 1)
    return total


def random_game(layout: Layout, rules: Rules, rng: random.Random) -> tuple[list[int | str], RefBoard]:
    """Play uniformly random moves to the end; returns (moves with "pass", final board)."""
    board, moves = RefBoard(layout, rules), list[int | str]()
    while not board.done():
        legal = board.legal()
        if legal:
            m = rng.choice(legal)
            board.play(m)
            moves.append(m)
        else:
            board.pass_turn()
            moves.append("pass")
    return moves, board
