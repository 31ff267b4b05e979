"""Reference opponents, all seeded and deterministic: random, greedy, minimax, mcts.

`random` is the fixed opponent of the win-rate curve; `minimax` searches 3 plies with a
disc-count evaluation under the environment's win condition (the paper's baseline depth);
`mcts` is an oracle that knows the rules, used in no score (the authors' is unseeded; ours
replays from its seed).
"""

from __future__ import annotations

import abc

import numpy as np

from . import bitboard as bb
from . import search
from .game import Game, turn_limit_arg
from .rules import Win, band_bounds
from .spec import EnvSpec

OPPONENT_NAMES = ("random", "greedy", "minimax", "mcts")
MINIMAX_DEPTH = 3
MCTS_ITERATIONS = 400


def win_args(spec: EnvSpec) -> tuple[int, int, int, int, int]:
    """(win code, lo_num, lo_den, hi_num, hi_den) for the search kernels."""
    code = {Win.MOST: 0, Win.FEWEST: 1, Win.BAND: 2}[spec.rules.win]
    if spec.rules.win is not Win.BAND:
        return code, 0, 1, 1, 1
    lo, hi = band_bounds(spec.rules.k_fraction)
    return code, lo.numerator, lo.denominator, hi.numerator, hi.denominator


class Opponent(abc.ABC):
    """A reference player: `act(game)` returns a legal cell for the side to move."""

    name = "opponent"

    def __init__(self, spec: EnvSpec, seed: int):
        self.spec = spec
        self.state = np.array([seed or 0x9E3779B97F4A7C15], dtype=np.uint64)
        self.win = win_args(spec)

    @abc.abstractmethod
    def act(self, game: Game) -> int:
        """A legal cell for the side to move (called only when it has one)."""



class RandomOpponent(Opponent):
    name = "random"

    def act(self, game: Game) -> int:
        return int(bb.random_cell(game.legal_words, self.state))


class GreedyOpponent(Opponent):
    name = "greedy"

    def act(self, game: Game) -> int:
        own, opp = game.sides()
        g = game.geo
        return int(search.greedy_move(own, opp, g.masks, g.shifts, g.nxt, game.cap, self.state))


class MinimaxOpponent(Opponent):
    name = "minimax"
    depth = MINIMAX_DEPTH

    def act(self, game: Game) -> int:
        own, opp = game.sides()
        g = game.geo
        return int(search.minimax_move(own, opp, game.placements, self.depth, g.masks, g.shifts, g.nxt,
                                       game.cap, turn_limit_arg(game.rules), *self.win, self.state))


class MctsOpponent(Opponent):
    name = "mcts"
    iterations = MCTS_ITERATIONS

    def act(self, game: Game) -> int:
        g = game.geo
        return int(search.mcts_move(game.black, game.white, int(game.to_move), game.placements,
                                    self.iterations, g.masks, g.shifts, g.nxt, game.cap, turn_limit_arg(game.rules),
                                    *self.win, self.state))


_CLASSES = {c.name: c for c in (RandomOpponent, GreedyOpponent, MinimaxOpponent, MctsOpponent)}


def make_opponent(name: str, spec: EnvSpec, seed: int) -> Opponent:
    """A reference opponent by name, seeded."""
    try:
        return _CLASSES[name](spec, seed)
    except KeyError:
        raise ValueError(f"unknown opponent {name!r} (one of {', '.join(OPPONENT_NAMES)})") from None
