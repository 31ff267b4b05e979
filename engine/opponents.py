"""Reference opponents, all seeded and deterministic: random, greedy, minimax, mcts.

`random` is the fixed opponent of the win-rate curve; `minimax` searches 3 plies with a
disc-count evaluation under the environment's win condition (the paper's baseline depth);
`mcts` is an oracle that knows the rules, used in no score (the authors' is unseeded; ours
replays from its seed).
"""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import bitboard as bb
from . import search
from .game import Game, turn_limit_arg
from .seeding import derive_seed
from .spec import EnvSpec

OPPONENT_NAMES = ("random", "greedy", "minimax", "mcts")
MINIMAX_DEPTH = 3
MCTS_ITERATIONS = 400


@dataclass
class Meter:
    """Time spent choosing moves, summed over the players that share it (e.g. a session's)."""

    seconds: float = 0.0


class Opponent(abc.ABC):
    """A reference player: `act(game)` returns a legal cell for the side to move.

    `code` names its move kernel in `search.engine_turns`, which plays whole stretches of a
    game without coming back to Python (`EngineSeats`); `act` is the same choice one move
    at a time. Either way the time spent choosing goes to `meter`.
    """

    name = "opponent"
    code = search.AGENT
    param = 0  # the kernel's depth or iteration count

    def __init__(self, spec: EnvSpec, seed: int, meter: Meter | None = None):
        self.spec = spec
        self.state = np.array([seed or 0x9E3779B97F4A7C15], dtype=np.uint64)
        self.win = spec.win_args
        self.meter = meter if meter is not None else Meter()

    def act(self, game: Game) -> int:
        """A legal cell for the side to move (called only when it has one)."""
        start = time.perf_counter()
        try:
            return self._choose(game)
        finally:
            self.meter.seconds += time.perf_counter() - start

    @abc.abstractmethod
    def _choose(self, game: Game) -> int: ...


class RandomOpponent(Opponent):
    name = "random"
    code = search.RANDOM

    def _choose(self, game: Game) -> int:
        return int(bb.random_cell(game.legal_words, self.state))


class GreedyOpponent(Opponent):
    name = "greedy"
    code = search.GREEDY

    def _choose(self, game: Game) -> int:
        own, opp = game.sides()
        g = game.geo
        return int(search.greedy_move(own, opp, g.masks, g.shifts, g.nxt, game.cap, self.state))


class MinimaxOpponent(Opponent):
    name = "minimax"
    code = search.MINIMAX
    param = MINIMAX_DEPTH

    def _choose(self, game: Game) -> int:
        own, opp = game.sides()
        g = game.geo
        return int(
            search.minimax_move(
                own,
                opp,
                game.placements,
                self.param,
                g.masks,
                g.shifts,
                g.nxt,
                game.cap,
                turn_limit_arg(game.rules),
                *self.win,
                self.state,
            )
        )


class MctsOpponent(Opponent):
    name = "mcts"
    code = search.MCTS
    param = MCTS_ITERATIONS

    def _choose(self, game: Game) -> int:
        g = game.geo
        return int(
            search.mcts_move(
                game.black,
                game.white,
                int(game.to_move),
                game.placements,
                self.param,
                g.masks,
                g.shifts,
                g.nxt,
                game.cap,
                turn_limit_arg(game.rules),
                *self.win,
                self.state,
            )
        )


class EngineSeats:
    """The seats of one game that reference players hold, packed once for `Game.play_engine_turns`.

    A seat given None is the caller's (an agent). The players' xorshift states become views
    into the packed array, so `act` and the kernel draw from one stream.
    """

    def __init__(self, spec: EnvSpec, black: Opponent | None, white: Opponent | None):
        self.players = (black, white)
        self.held = black is not None or white is not None  # whether any seat is a reference player's
        self.packed = pack_seats(
            spec,
            [search.AGENT if p is None else p.code for p in self.players],
            [0 if p is None else p.param for p in self.players],
        )
        self.states = np.zeros((2, 1), dtype=np.uint64)
        for i, p in enumerate(self.players):
            if p is not None:
                self.states[i] = p.state
                p.state = self.states[i]

    def rehome(self, packed: np.ndarray, states: np.ndarray) -> None:
        """Keep the seats in `packed` and `states` from now on (copies of the current ones, in
        a game's record): the players' xorshift states become views of the new `states`."""
        self.packed, self.states = packed, states
        for i, p in enumerate(self.players):
            if p is not None:
                p.state = states[i]

    def settle(self) -> None:
        """Move the time the kernel charged each seat onto its player's meter."""
        if not self.held:
            return  # agents' seats: the kernel charges nothing to them
        for i, p in enumerate(self.players):
            if p is not None:
                charged = int(self.packed[4 + i])
                if charged:
                    p.meter.seconds += charged * 1e-9
                    self.packed[4 + i] = 0

    def take_out(self) -> None:
        """Before the memory the seats live in is reused (`Game.restart`): the players go on
        drawing from copies of their streams, so that one kept for a later game goes on where
        it was. Seats without a reference player have nothing to keep."""
        if self.held:
            self.rehome(self.packed.copy(), self.states.copy())


def pack_seats(spec: EnvSpec, kinds: list[int], params: list[int]) -> np.ndarray:
    """The seats as search.engine_turns reads them: kinds, params, the ns charged to each
    (zero), the win condition; a fresh copy of the seating's array, built once."""
    return _packed_seats(spec.win_args, tuple(kinds), tuple(params)).copy()


@lru_cache(maxsize=256)
def _packed_seats(win_args: tuple, kinds: tuple, params: tuple) -> np.ndarray:
    """`pack_seats`'s array, built once per seating and win condition (read-only: every game
    copies it, since the kernel adds the time it charges)."""
    packed = np.array(list(kinds) + list(params) + [0, 0] + list(win_args), dtype=np.int64)
    packed.flags.writeable = False
    return packed


_CLASSES = {c.name: c for c in (RandomOpponent, GreedyOpponent, MinimaxOpponent, MctsOpponent)}


def play_reference_games(name: str, spec: EnvSpec, game_seeds: list[int], meter: Meter | None = None) -> np.ndarray:
    """The games of the reference player `name` against itself, one per seed of `game_seeds`,
    each seat seeded as `seated_opponent` seeds it, all in one kernel call: int64 (n, 2) of
    (1 black won, -1 white won, 0 a draw; the plies). Each game is move for move the one
    `grader.play.match.play_game(spec, name, name, seed)` plays. The time spent choosing moves
    goes to `meter`."""
    cls = _opponent_class(name)
    states = [[derive_seed(seed, color) for color in ("black", "white")] for seed in game_seeds]
    out, _, (black_ns, white_ns) = _play_seated(spec, (cls, cls), states)
    if meter is not None:
        meter.seconds += (black_ns + white_ns) * 1e-9
    return out[:, :2]


def play_seated_games(spec: EnvSpec, black: list[Opponent], white: list[Opponent]) -> tuple[np.ndarray, np.ndarray]:
    """The games of black[i] against white[i], all in one kernel call, each move for move the
    game `grader.play.match.play_game(spec, black[i], white[i], seed)` plays (the players are
    seated and seeded already, e.g. by `seated_opponent`). Every black player is of one
    class, every white one too, and each side's players share one meter, to which the time
    spent choosing moves goes. Returns int64 (n, 5) of (1 black won, -1 white won, 0 a draw;
    the plies; black's discs; white's discs; 0 no moves left, 1 the turn limit) and the moves,
    int64 (n, max plies), game i's in its first plies entries (-1 a pass)."""
    # Guards against a caller's bug (grader.play.match groups the seats), not bad input: plain ValueErrors.
    for side in (black, white):
        if len({(type(p), id(p.meter)) for p in side}) > 1:
            raise ValueError("play_seated_games: one side's players must share a class and a meter")
    if len(black) != len(white):
        raise ValueError("play_seated_games: as many black players as white ones")
    classes = (type(black[0]), type(white[0])) if black else ()  # no game: nobody plays
    out, moves, charged = _play_seated(spec, classes, [[b.state[0], w.state[0]] for b, w in zip(black, white)])
    for side, ns in zip((black, white), charged):
        if side:
            side[0].meter.seconds += ns * 1e-9
    return out, moves


def _play_seated(spec: EnvSpec, classes: tuple, states: list) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Games between a player of classes[0] (black) and one of classes[1] (white), game i's
    xorshift states states[i] = (black's, white's), in one `search.reference_records` call:
    its (out, moves) and the ns of thinking charged to each side (no call for no game)."""
    n = len(states)
    game = Game(spec)
    out = np.zeros((n, 5), dtype=np.int64)
    moves = np.empty((n, 2 * game.geo.cells + 2), dtype=np.int64)
    if not n:
        return out, moves, (0, 0)
    seats = pack_seats(spec, [c.code for c in classes], [c.param for c in classes])
    search.reference_records(  # type: ignore[call-arg]  # a numba dispatcher: mypy sees no signature
        *game.kernel_args(), seats, np.array(states, dtype=np.uint64).reshape(n, 2, 1), out, moves
    )
    return out, moves, (int(seats[4]), int(seats[5]))


def seated_opponent(name: str, spec: EnvSpec, game_seed: int, color: str, meter: Meter | None = None) -> Opponent:
    """The reference opponent `name` holding `color` ("black" or "white") in the game seeded
    `game_seed`: its own seed is derive_seed(game_seed, color), wherever the game is played
    or replayed."""
    return make_opponent(name, spec, derive_seed(game_seed, color), meter)


def make_opponent(name: str, spec: EnvSpec, seed: int, meter: Meter | None = None) -> Opponent:
    """A reference opponent by name, seeded; its thinking time goes to `meter` when given."""
    return _opponent_class(name)(spec, seed, meter)


class UnknownOpponentError(ValueError):
    """A reference opponent's name that is not one of OPPONENT_NAMES; `name` is what was given."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


def _opponent_class(name: str) -> type[Opponent]:
    try:
        return _CLASSES[name]
    except KeyError:
        raise UnknownOpponentError(name, f"unknown opponent {name!r} (one of {', '.join(OPPONENT_NAMES)})") from None
