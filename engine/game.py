"""A game in progress: the Python face of the kernels, as the grader and tools use it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import bitboard as bb
from .layout import Layout
from .rules import Rules
from .scoring import DRAW, winner_code
from .spec import EnvSpec

PASS = "pass"
LOST = "lost"  # the side to move submitted an illegal move and lost its turn


class Color(enum.IntEnum):
    BLACK = 0
    WHITE = 1

    @property
    def other(self) -> "Color":
        return Color(1 - self)

    @property
    def label(self) -> str:
        return self.name.lower()


class Termination(enum.Enum):
    """Why a game ended (game end is data, never an exception)."""

    NO_MOVES = "no_moves"
    TURN_LIMIT = "turn_limit"
    FORFEIT = "forfeit"


@dataclass(frozen=True)
class Outcome:
    termination: Termination
    winner: Color | None
    black_discs: int
    white_discs: int

    @property
    def winner_label(self) -> str:
        return "draw" if self.winner is None else self.winner.label


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the current position."""


class ReplayError(ValueError):
    """A move list that does not replay (an illegal move, or a wrong length)."""


@dataclass(frozen=True)
class Geometry:
    """Per-layout kernel tables, built once per layout."""

    masks: np.ndarray
    shifts: np.ndarray
    nxt: np.ndarray
    words: int
    cells: int
    obstacle_plane: np.ndarray  # float32 (rows, cols)
    black0: tuple
    white0: tuple


@lru_cache(maxsize=256)
def geometry(layout: Layout) -> Geometry:
    """The kernel tables of a layout (cached: layouts are immutable)."""
    masks, shifts, nxt = bb.geometry(layout.rows, layout.cols, layout.obstacles)
    words = bb.words_for(layout.cells)
    plane = np.zeros((layout.rows, layout.cols), dtype=np.float32)
    for r, c in layout.obstacles:
        plane[r, c] = 1.0
    black, white = layout.opening
    return Geometry(
        masks, shifts, nxt, words, layout.cells, plane,
        bb.to_words([r * layout.cols + c for r, c in black], words),
        bb.to_words([r * layout.cols + c for r, c in white], words),
    )


def turn_limit_arg(rules: Rules) -> int:
    return -1 if rules.turn_limit is None else rules.turn_limit


class Game:
    """One game from the opening, black to move.

    After every action the engine checks for the end (neither side can move, or the turn
    limit). When the side to move has no legal move and the game is not over, the caller
    passes with `pass_turn()`.
    """

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.layout, self.rules = spec.layout, spec.rules
        self.geo = geometry(spec.layout)
        self.cap = spec.rules.capture.code
        self.black, self.white = self.geo.black0, self.geo.white0
        self.to_move = Color.BLACK
        self.moves: list[int | str] = []
        self.placements = 0
        self._termination: Termination | None = None
        self._forfeit_winner: Color | None = None
        self._legal = self._compute_legal()
        self._check_end()

    # -- position ---------------------------------------------------------------------
    def _own_opp(self) -> tuple[tuple, tuple]:
        return (self.black, self.white) if self.to_move is Color.BLACK else (self.white, self.black)

    def _compute_legal(self) -> tuple:
        own, opp = self._own_opp()
        return bb.words(bb.legal_moves(own, opp, self.geo.masks, self.geo.shifts, self.cap))

    def legal_cells(self) -> list[int]:
        """Legal cells for the side to move, ascending."""
        return [] if self.done else bb.from_words(self._legal)

    def legal_mask(self) -> np.ndarray:
        """int8 (rows * cols,): 1 where the side to move may place."""
        out = np.zeros(self.geo.cells, dtype=np.int8)
        if not self.done:
            bb.bits_to_int8(self._legal, self.geo.cells, out)
        return out

    def has_legal_move(self) -> bool:
        return not self.done and any(self._legal)

    def observation(self) -> np.ndarray:
        """float32 (3, rows, cols) = [own discs, opponent discs, obstacles] from the side to move."""
        own, opp = self._own_opp()
        obs = np.zeros((3, self.geo.cells), dtype=np.float32)
        tmp = np.zeros(self.geo.cells, dtype=np.int8)
        bb.bits_to_int8(own, self.geo.cells, tmp)
        obs[0] = tmp
        bb.bits_to_int8(opp, self.geo.cells, tmp)
        obs[1] = tmp
        obs = obs.reshape(3, self.layout.rows, self.layout.cols)
        obs[2] = self.geo.obstacle_plane
        return obs

    def counts(self) -> tuple[int, int]:
        """(black discs, white discs)."""
        return sum(int(w).bit_count() for w in self.black), sum(int(w).bit_count() for w in self.white)

    def board(self) -> np.ndarray:
        """int8 (rows, cols): 0 empty, 1 black, 2 white, 3 obstacle."""
        out = np.zeros(self.geo.cells, dtype=np.int8)
        tmp = np.zeros(self.geo.cells, dtype=np.int8)
        bb.bits_to_int8(self.black, self.geo.cells, tmp)
        out[tmp == 1] = 1
        bb.bits_to_int8(self.white, self.geo.cells, tmp)
        out[tmp == 1] = 2
        out = out.reshape(self.layout.rows, self.layout.cols)
        out[self.geo.obstacle_plane == 1] = 3
        return out

    @property
    def plies(self) -> int:
        return len(self.moves)

    # -- actions ----------------------------------------------------------------------
    def _require_running(self) -> None:
        if self.done:
            raise IllegalMoveError("the game is over")

    def is_legal(self, cell: object) -> bool:
        """Whether `cell` is an int index of a legal placement for the side to move."""
        if self.done or isinstance(cell, bool) or not isinstance(cell, (int, np.integer)):
            return False
        return 0 <= int(cell) < self.geo.cells and bool((int(self._legal[int(cell) >> 6]) >> (int(cell) & 63)) & 1)

    def play(self, cell: int) -> None:
        """Place a disc for the side to move; raises IllegalMoveError if the rules forbid it."""
        self._require_running()
        if not self.is_legal(cell):
            raise IllegalMoveError(f"cell {cell!r} is not a legal move for {self.to_move.label}")
        own, opp = self._own_opp()
        own, opp = (bb.words(t) for t in bb.apply_move(own, opp, int(cell), self.geo.nxt, self.cap))
        if self.to_move is Color.BLACK:
            self.black, self.white = own, opp
        else:
            self.white, self.black = own, opp
        self.placements += 1
        self.moves.append(int(cell))
        self._next_turn()

    def pass_turn(self) -> None:
        """A forced pass: allowed only when the side to move has no legal move."""
        self._require_running()
        if any(self._legal):
            raise IllegalMoveError(f"{self.to_move.label} has a legal move and may not pass")
        self.moves.append(PASS)
        self._next_turn()

    def lose_turn(self) -> None:
        """The side to move loses its turn (its move was illegal); recorded as "lost"."""
        self._require_running()
        self.moves.append(LOST)
        self._next_turn()

    def forfeit(self, color: Color) -> None:
        """`color` forfeits: the game ends and the other colour wins."""
        self._require_running()
        self._termination = Termination.FORFEIT
        self._forfeit_winner = Color(color).other

    def _next_turn(self) -> None:
        self.to_move = self.to_move.other
        self._legal = self._compute_legal()
        self._check_end()

    def _check_end(self) -> None:
        limit = self.rules.turn_limit
        if limit is not None and self.placements >= limit:
            self._termination = Termination.TURN_LIMIT
        elif not any(self._legal):
            own, opp = self._own_opp()
            if not any(bb.legal_moves(opp, own, self.geo.masks, self.geo.shifts, self.cap)):
                self._termination = Termination.NO_MOVES

    # -- result -----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._termination is not None

    def outcome(self) -> Outcome:
        """The result; only for a finished game."""
        if not self.done:
            raise ValueError("the game is not over")
        black, white = self.counts()
        if self._termination is Termination.FORFEIT:
            winner = self._forfeit_winner
        else:
            code = winner_code(self.rules, black, white)
            winner = None if code == DRAW else Color(code)
        return Outcome(self._termination, winner, black, white)


def replay(spec: EnvSpec, moves: list, forfeit: Color | None = None) -> Game:
    """Replay a move list (cells, "pass", "lost") to its end; raises ReplayError on any mismatch.

    A recorded game must finish exactly at its last move, or at a forfeit by `forfeit`.
    """
    game = Game(spec)
    for i, move in enumerate(moves):
        if game.done:
            raise ReplayError(f"move {i} ({move!r}): the game was already over")
        try:
            if move == PASS:
                game.pass_turn()
            elif move == LOST:
                game.lose_turn()
            else:
                game.play(move)
        except IllegalMoveError as exc:
            raise ReplayError(f"move {i} ({move!r}): {exc}") from None
    if forfeit is not None:
        if game.done:
            raise ReplayError("a forfeit is recorded but the game was already over")
        game.forfeit(forfeit)
    if not game.done:
        raise ReplayError(f"the game is not over after {len(moves)} moves")
    return game
