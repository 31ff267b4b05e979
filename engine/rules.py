"""The rules axis of an environment: win condition and capture rule, as data."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from fractions import Fraction


class Capture(enum.Enum):
    """Which runs a placement flips (design §2)."""

    STANDARD = "standard"      # all 8 directions
    ORTHOGONAL = "orthogonal"  # N, S, W, E
    DIAGONAL = "diagonal"      # the 4 diagonals
    SHORT_1 = "short-1"        # a run flips only if it has at most 1 opponent disc
    SHORT_2 = "short-2"        # ... at most 2
    LONGEST = "longest"        # legal where standard is; only the single longest run flips

    @property
    def code(self) -> int:
        """The integer the kernels dispatch on."""
        return _CAPTURE_CODES[self]


_CAPTURE_CODES = {c: i for i, c in enumerate(Capture)}


class Win(enum.Enum):
    """How the final disc counts decide the game."""

    MOST = "most"      # more discs wins
    FEWEST = "fewest"  # fewer discs wins
    BAND = "band"      # the paper's threshold condition with k

    @property
    def code(self) -> int:
        return _WIN_CODES[self]


_WIN_CODES = {w: i for i, w in enumerate(Win)}


@dataclass(frozen=True)
class Rules:
    """A rule set: win condition, capture rule, optional band threshold and turn limit.

    `k` is kept as the decimal the spec wrote (a float) and compared exactly through
    `k_fraction`, following the paper's equation rather than a float32 share.
    `turn_limit` counts placements only; passes do not count.
    """

    win: Win
    capture: Capture
    k: float | None = None
    turn_limit: int | None = None

    @property
    def k_fraction(self) -> Fraction | None:
        """k as the exact decimal it was written as (0.4 is 2/5, not the nearest double)."""
        return None if self.k is None else Fraction(repr(self.k))

    def to_dict(self) -> dict:
        out: dict = {"win": self.win.value, "capture": self.capture.value}
        if self.k is not None:
            out["k"] = self.k
        if self.turn_limit is not None:
            out["turn_limit"] = self.turn_limit
        return out

    @property
    def label(self) -> str:
        """A short human name, e.g. `most/standard` or `band k=0.8/standard, 10 placements`."""
        win = f"band k={self.k}" if self.win is Win.BAND else self.win.value
        text = f"{win}/{self.capture.value}"
        if self.turn_limit is not None:
            text += f", {self.turn_limit} placements"
        return text


def band_bounds(k: Fraction) -> tuple[Fraction, Fraction]:
    """The open interval of winning shares for threshold k: (min(k, 1/2), max(k, 1/2))."""
    half = Fraction(1, 2)
    return min(k, half), max(k, half)
