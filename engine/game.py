"""A game in progress: the Python face of the kernels, as the grader and tools use it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import bitboard as bb
from . import state
from .layout import Layout
from .rules import Rules
from .scoring import DRAW, winner_by_args
from .spec import EnvSpec

PASS = "pass"
LOST = "lost"  # the side to move submitted an illegal move and lost its turn


class Color(enum.IntEnum):
    BLACK = 0
    WHITE = 1

    @property
    def other(self) -> Color:
        return Color(1 - self)

    @property
    def label(self) -> str:
        return _COLOR_LABELS[self]


_COLOR_LABELS = ("black", "white")  # each colour's name in lower case, read on every game's record
COLORS = (Color.BLACK, Color.WHITE)  # indexed by value: a winner code of engine.scoring is one


class Termination(enum.Enum):
    """Why a game ended (game end is data, never an exception)."""

    NO_MOVES = "no_moves"
    TURN_LIMIT = "turn_limit"
    FORFEIT = "forfeit"


# How a game's kernels record its end (the state's meta[2]): -1 still running.
ENDINGS = {-1: None, 0: Termination.NO_MOVES, 1: Termination.TURN_LIMIT}


def recorded_moves(cells: np.ndarray) -> list:
    """Cells a kernel played (-1 a pass) as a game records its moves."""
    return [PASS if m < 0 else m for m in cells.tolist()]


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
    obstacle_flat: np.ndarray  # float32 (rows * cols,)
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
        masks,
        shifts,
        nxt,
        words,
        layout.cells,
        plane,
        plane.reshape(-1).copy(),
        bb.to_words([r * layout.cols + c for r, c in black], words),
        bb.to_words([r * layout.cols + c for r, c in white], words),
    )


def turn_limit_arg(rules: Rules) -> int:
    return -1 if rules.turn_limit is None else rules.turn_limit


@lru_cache(maxsize=1024)
def _opening(layout: Layout, cap: int, turn_limit: int) -> np.ndarray:
    """The record (engine.state) of a game at its opening (cached, read-only; every Game
    copies it)."""
    g = geometry(layout)
    st = np.zeros((3, g.words), dtype=np.uint64)
    st[0] = g.black0
    st[1] = g.white0
    # side to move, placements, termination, has a legal move (see bitboard.refresh)
    meta = np.array([0, 0, -1, 0], dtype=np.int64)
    bb.refresh(st, meta, g.black0, g.masks, g.shifts, g.nxt, cap, turn_limit)
    record = state.layout_record(cap, turn_limit, g.masks, g.shifts, g.nxt, g.obstacle_flat, st, meta)
    record.flags.writeable = False
    return record


class Game:
    """One game from the opening, black to move.

    After every action the engine checks for the end (neither side can move, or the turn
    limit). When the side to move has no legal move and the game is not over, the caller
    passes with `pass_turn()`. The position lives in two small arrays so that each action
    is one kernel call.
    """

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.layout, self.rules = spec.layout, spec.rules
        self.geo = geometry(spec.layout)
        self.cap = spec.rules.capture.code
        self._limit = turn_limit_arg(spec.rules)
        self._opening = _opening(spec.layout, self.cap, self._limit)
        self._record = self._opening.copy()
        views = state.views_of(self._record)
        self._st = views.st  # black, white, legal cells of the side to move
        self._meta = views.meta  # side to move, placements, termination, has a legal move
        self._turns = views.turns  # the moves of the last kernel call
        rows, cols = spec.layout.rows, spec.layout.cols
        # Where `play_to_agent` writes the view of the agent to move (see `view`).
        self.view = (views.obs.reshape(3, rows, cols), views.mask)
        self._views = views
        self._seats = None  # the EngineSeats whose arrays live in the record (see `_seat`)
        self._kernel = state.turns_kernel(self._record)
        self._cells = self.geo.cells
        self.moves: list[int | str] = []
        self._forfeit_winner: Color | None = None
        self._forfeited = False

    def restart(self) -> None:
        """Back to the opening, black to move, in the same memory: `view` and the kernel stay
        valid, so a table that plays game after game of one environment lays nothing out again.
        The seats are to be given again (`play_to_agent`); the move list is a new one (a
        finished game's record keeps the old). The last game's players draw from streams in
        this memory: they take theirs with them first, so that one kept for a later game goes
        on where it was."""
        if self._seats is not None:
            self._seats.take_out()
        np.copyto(self._record, self._opening)
        self._seats = None
        self.moves = []
        self._forfeit_winner = None
        self._forfeited = False

    # -- position ---------------------------------------------------------------------
    @property
    def to_move(self) -> Color:
        return Color(int(self._meta[0]))

    @property
    def side_to_move(self) -> int:
        """0 when black is to move, 1 for white (`to_move` as a plain int, for hot loops)."""
        return int(self._meta[0])

    @property
    def placements(self) -> int:
        return int(self._meta[1])

    @property
    def black(self) -> tuple:
        return tuple(self._st[0])

    @property
    def white(self) -> tuple:
        return tuple(self._st[1])

    @property
    def legal_words(self) -> tuple:
        """The side to move's legal cells as bitboard words."""
        return tuple(self._st[2])

    def sides(self) -> tuple[tuple, tuple]:
        """(own, opponent) bitboards of the side to move."""
        own = int(self._meta[0])
        return tuple(self._st[own]), tuple(self._st[1 - own])

    def legal_cells(self) -> list[int]:
        """Legal cells for the side to move, ascending."""
        return [] if self.done else bb.from_words(self.legal_words)

    def legal_mask(self) -> np.ndarray:
        """int8 (rows * cols,): 1 where the side to move may place."""
        out = np.zeros(self.geo.cells, dtype=np.int8)
        if not self.done:
            bb.fill_mask(self._st, out)
        return out

    def has_legal_move(self) -> bool:
        return not self.done and self._meta[3] == 1

    def observation(self) -> np.ndarray:
        """float32 (3, rows, cols) = [own discs, opponent discs, obstacles] from the side to move."""
        out = np.empty((3, self.geo.cells), dtype=np.float32)
        bb.fill_observation(self._st, self._meta[0], self.geo.obstacle_flat, out)
        return out.reshape(3, self.layout.rows, self.layout.cols)

    def agent_view(self) -> tuple[np.ndarray, np.ndarray]:
        """(observation(), legal_mask()) in one kernel call, for a side that has a legal move."""
        obs = np.empty((3, self.geo.cells), dtype=np.float32)
        mask = np.empty(self.geo.cells, dtype=np.int8)
        bb.fill_view(self._st, self._meta[0], self.geo.obstacle_flat, obs, mask)
        return obs.reshape(3, self.layout.rows, self.layout.cols), mask

    def counts(self) -> tuple[int, int]:
        """(black discs, white discs)."""
        black, white = self._st[:2].tolist()
        return sum(map(int.bit_count, black)), sum(map(int.bit_count, white))

    def board(self) -> np.ndarray:
        """int8 (rows, cols): 0 empty, 1 black, 2 white, 3 obstacle."""
        out = np.zeros(self.geo.cells, dtype=np.int8)
        out[bb.from_words(self.black)] = 1
        out[bb.from_words(self.white)] = 2
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
        if self.done or type(cell) is not int and (isinstance(cell, bool) or not isinstance(cell, (int, np.integer))):
            return False
        cell = int(cell)
        return 0 <= cell < self.geo.cells and bool((int(self._st[2, cell >> 6]) >> (cell & 63)) & 1)

    def _advance(self, cell: int) -> None:
        g = self.geo
        bb.advance(self._st, self._meta, cell, g.black0, g.masks, g.shifts, g.nxt, self.cap, self._limit)

    def play(self, cell: int, seats=None) -> None:
        """Place a disc for the side to move; raises IllegalMoveError if the rules forbid it.
        With `seats`, then play on as `play_engine_turns(seats)` does, in the same kernel call
        (which also checks the move)."""
        if seats is not None:
            if isinstance(cell, np.integer):
                cell = int(cell)
            if type(cell) is int and cell >= 0 and self.play_to_agent(seats, cell) != -2:
                return
        elif self.is_legal(cell):
            cell = int(cell)
            self.moves.append(cell)
            self._advance(cell)
            return
        self._require_running()
        raise IllegalMoveError(f"cell {cell!r} is not a legal move for {self.to_move.label}")

    def play_engine_turns(self, seats) -> None:
        """Play on inside one kernel call while the engine holds the move: forced passes and
        the moves of the reference players in `seats` (an `opponents.EngineSeats`), until the
        game ends or a seat the engine does not hold must place a disc.

        The moves are the ones the players' `act` would make. The time each player spent
        choosing them (and not the stepping) is charged to its meter when the game ends, or
        at `seats.settle()`.
        """
        if not self.done:
            self.play_to_agent(seats)

    def play_to_agent(self, seats, cell: int = -1) -> int:
        """Place `cell` for the side to move (when it is >= 0), play on as
        `play_engine_turns(seats)` does, and write the view of the agent that must move next
        into `view`, all in one kernel call: an agent's whole turn on the engine's side.

        `cell` must be an int. Returns the side to move (0 black, 1 white) when an agent must
        move, -1 when the game is over, and -2 when `cell` is not a legal move (nothing
        changed).
        """
        if self._forfeited or cell >= self._cells:
            return -2 if cell >= 0 else -1
        if seats is not self._seats:
            self._seat(seats)
        result = self._kernel(self._record, cell)
        if result < 0:
            return -2
        if cell >= 0:
            self.moves.append(cell)
        if result >= 4:
            self.moves.extend(recorded_moves(self._turns[: result >> 2]))
        turn = result & 3
        if turn == state.OVER:
            seats.settle()
            return -1
        return turn

    def kernel_args(self) -> tuple:
        """(st, meta, like, masks, shifts, nxt, cap, turn_limit, obstacles) of this game, as the
        engine's batch kernels (search.reference_records) take them."""
        g = self.geo
        return (self._st, self._meta, g.black0, g.masks, g.shifts, g.nxt, self.cap, self._limit, g.obstacle_flat)

    def _seat(self, seats) -> None:
        """Move `seats`' arrays (an opponents.EngineSeats) into this game's record, so that the
        kernel call passes the record alone; the players keep drawing from the same streams."""
        views = self._views
        views.seats[:] = seats.packed
        views.states[:] = seats.states
        seats.rehome(views.seats, views.states)
        self._seats = seats

    def pass_turn(self) -> None:
        """A forced pass: allowed only when the side to move has no legal move."""
        self._require_running()
        if self._meta[3] == 1:
            raise IllegalMoveError(f"{self.to_move.label} has a legal move and may not pass")
        self.moves.append(PASS)
        self._advance(-1)

    def lose_turn(self) -> None:
        """The side to move loses its turn (its move was illegal); recorded as "lost"."""
        self._require_running()
        self.moves.append(LOST)
        self._advance(-1)

    def apply(self, move: object) -> None:
        """Apply one recorded move: a cell, PASS or LOST (what `moves` holds), as play,
        pass_turn or lose_turn would; IllegalMoveError when it does not follow the rules."""
        if move == PASS:
            self.pass_turn()
        elif move == LOST:
            self.lose_turn()
        else:
            self.play(move)  # type: ignore[arg-type]  # play refuses what is not a legal cell

    def forfeit(self, color: Color) -> None:
        """`color` forfeits: the game ends and the other colour wins."""
        self._require_running()
        self._forfeited = True
        self._forfeit_winner = Color(color).other

    # -- result -----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._forfeited or self._meta[2] >= 0

    @property
    def termination(self) -> Termination | None:
        if self._forfeited:
            return Termination.FORFEIT
        return ENDINGS[int(self._meta[2])]

    def outcome(self) -> Outcome:
        """The result; only for a finished game."""
        if not self.done:  # a caller's bug (every caller checks `done`; replay ends the game): no input reaches it
            raise ValueError("the game is not over")
        black, white = self.counts()
        if self._forfeited:
            winner = self._forfeit_winner
        else:
            code = winner_by_args(self.spec.win_args, black, white)
            winner = None if code == DRAW else COLORS[code]
        return Outcome(self.termination, winner, black, white)


def replay(spec: EnvSpec, moves: list, forfeit: Color | None = None) -> Game:
    """Replay a move list (cells, "pass", "lost") to its end; raises ReplayError on any mismatch.

    A recorded game must finish exactly at its last move, or at a forfeit by `forfeit`.
    """
    game = Game(spec)
    for i, move in enumerate(moves):
        if game.done:
            raise ReplayError(f"move {i} ({move!r}): the game was already over")
        try:
            game.apply(move)
        except IllegalMoveError as exc:
            raise ReplayError(f"move {i} ({move!r}): {exc}") from None
    if forfeit is not None:
        if game.done:
            raise ReplayError("a forfeit is recorded but the game was already over")
        game.forfeit(forfeit)
    if not game.done:
        raise ReplayError(f"the game is not over after {len(moves)} moves")
    return game
