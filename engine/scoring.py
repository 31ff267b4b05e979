"""Who wins a finished board: the paper's equations, computed exactly."""

from __future__ import annotations

import functools

import numpy as np

from .rules import Rules, Win, band_bounds

BLACK_WINS, WHITE_WINS, DRAW = 0, 1, -1


@functools.lru_cache(maxsize=1024)
def win_args(rules: Rules) -> tuple[int, int, int, int, int]:
    """(win code, lo_num, lo_den, hi_num, hi_den): the win condition as the kernels take it,
    the band's bounds as exact fractions. Cached: exact fractions cost more than a game."""
    code = rules.win.code
    if rules.win is not Win.BAND:
        return code, 0, 1, 1, 1
    k = rules.k_fraction
    assert k is not None  # a band rule always has k (the spec validator requires it)
    lo, hi = band_bounds(k)
    return code, lo.numerator, lo.denominator, hi.numerator, hi.denominator


def winner_code(rules: Rules, black: int, white: int) -> int:
    """0 black wins, 1 white wins, -1 draw, for the final disc counts."""
    return winner_by_args(win_args(rules), black, white)


def winner_by_args(args: tuple[int, int, int, int, int], black: int, white: int) -> int:
    """winner_code from the rules' `win_args` (integer arithmetic)."""
    code, lo_num, lo_den, hi_num, hi_den = args
    if code == 0:
        return BLACK_WINS if black > white else WHITE_WINS if white > black else DRAW
    if code == 1:
        return BLACK_WINS if black < white else WHITE_WINS if white < black else DRAW
    total = black + white
    if total > 0:
        for result, mine in ((BLACK_WINS, black), (WHITE_WINS, white)):
            if mine * lo_den > lo_num * total and mine * hi_den < hi_num * total:
                return result
    return DRAW


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
        _, lo_num, lo_den, hi_num, hi_den = win_args(rules)
        total = black + white
        for code, mine in ((BLACK_WINS, black), (WHITE_WINS, white)):
            inside = (mine * lo_den > lo_num * total) & (mine * hi_den < hi_num * total)
            out[inside & (total > 0)] = code
    return out
