"""Batches of random-vs-random games in the kernels, and their summary statistics."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from . import bitboard as bb
from .game import geometry, turn_limit_arg
from .scoring import BLACK_WINS, DRAW, WHITE_WINS, winner_codes
from .seeding import seed_sequence
from .spec import EnvSpec


@dataclass(frozen=True)
class PlayStats:
    """What a batch of games says about an environment."""

    games: int
    black_wins: int
    white_wins: int
    draws: int
    mean_plies: float
    mean_fill: float  # final discs / playable cells
    first_move_exists: bool

    @property
    def draw_rate(self) -> float:
        return self.draws / self.games if self.games else 0.0

    @property
    def colour_skew(self) -> float:
        """The larger colour's share of decisive games (0.5 when none were decisive)."""
        decisive = self.black_wins + self.white_wins
        return max(self.black_wins, self.white_wins) / decisive if decisive else 0.5

    def to_dict(self) -> dict:
        return asdict(self)


def random_results(spec: EnvSpec, games: int, seed: int) -> np.ndarray:
    """int64 (games, 5): black discs, white discs, plies, placements, ended by turn limit."""
    geo = geometry(spec.layout)
    out = np.zeros((games, 5), dtype=np.int64)
    bb.random_games(
        geo.black0,
        geo.white0,
        geo.masks,
        geo.shifts,
        geo.nxt,
        spec.rules.capture.code,
        turn_limit_arg(spec.rules),
        seed_sequence(seed, games),
        out,
    )
    return out


def summarize(spec: EnvSpec, results: np.ndarray) -> PlayStats:
    """PlayStats from rows of (black, white, plies, ...)."""
    winners = winner_codes(spec.rules, results[:, 0], results[:, 1])
    geo = geometry(spec.layout)
    first = any(bb.legal_moves(geo.black0, geo.white0, geo.masks, geo.shifts, spec.rules.capture.code))
    n = len(results)
    return PlayStats(
        games=n,
        black_wins=int((winners == BLACK_WINS).sum()),
        white_wins=int((winners == WHITE_WINS).sum()),
        draws=int((winners == DRAW).sum()),
        mean_plies=float(results[:, 2].mean()) if n else 0.0,
        mean_fill=float((results[:, 0] + results[:, 1]).mean() / spec.layout.playable_cells) if n else 0.0,
        first_move_exists=bool(first),
    )


def random_stats(spec: EnvSpec, games: int, seed: int) -> PlayStats:
    """Play `games` random-vs-random games and summarise them."""
    return summarize(spec, random_results(spec, games, seed))
