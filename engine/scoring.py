"""Who wins a finished board: the paper's equations, computed exactly."""

from __future__ import annotations

import numpy as np

from .rules import Rules, Win, band_bounds

BLACK_WINS, WHITE_WINS, DRAW = 0, 1, -1


def winner_code(rules: Rules, black: int, white: int) -> int:
    """0 black wins, 1 white wins, -1 draw, for the final disc counts."""
    return int(winner_codes(rules, np.array([black]), np.array([white]))[0])


def winner_codes(rules: Rules, black: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Vectorised winner_code over arrays of final counts (int64 arithmetic, no floats)."""
    black = np.asarray(black, dtype=np.int64)
    white = np.asarray(white, dtype=np.int64)
    out = np.full(black.shape, DRAW, dtype=np.int64)
    if rules.win is Win.MOST:
        out[black > white] = BLACK_WINS
        out[white > black] = WHITE_WINS
    elif rules.win is Win.FEWEST:
        out[black < white] = BLACK_WINS
        out[white < black] = WHITE_WINS
    else:
        # share = mine / total lies in (lo, hi) with lo = a/b, hi = c/d, compared by cross-multiplying.
        lo, hi = band_bounds(rules.k_fraction)
        total = black + white
        for code, mine in ((BLACK_WINS, black), (WHITE_WINS, white)):
            inside = (mine * lo.denominator > lo.numerator * total) & (mine * hi.denominator < hi.numerator * total)
            out[inside & (total > 0)] = code
    return out
