"""The rules axis of an environment: win condition and capture rule, as data."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


class Capture(enum.Enum):
    """Which runs a placement flips (docs/rules.md §2.2); each rule's parameters are its row in CAPTURE_RULES."""

    STANDARD = "standard"
    ORTHOGONAL = "orthogonal"
    DIAGONAL = "diagonal"
    SHORT_1 = "short-1"
    SHORT_2 = "short-2"
    LONGEST = "longest"

    @property
    def code(self) -> int:
        """The integer the kernels dispatch on (explicit in CAPTURE_RULES, never the enum's order)."""
        return CAPTURE_RULES[self].code

    @property
    def params(self) -> CaptureRule:
        """This rule's row: code, directions, run limit, longest-only, description."""
        return CAPTURE_RULES[self]


# Direction order (also the tie order of `longest`): NW, N, NE, W, E, SW, S, SE; bit d of a
# direction mask is direction d.
ALL_DIRECTIONS = 0xFF
ORTHOGONAL_DIRECTIONS = 0x5A  # bits 1, 3, 4, 6: N, W, E, S
DIAGONAL_DIRECTIONS = 0xA5  # bits 0, 2, 5, 7


@dataclass(frozen=True)
class CaptureRule:
    """One capture rule's parameters: what the kernels, the reference and the site read.

    `code` is fixed once published (stored kernels and the kernels' own table in
    engine/bitboard.py are keyed by it); `max_run` None is no limit; `longest` flips only the
    single longest bracketed run, ties to the first direction."""

    code: int
    directions: int
    max_run: int | None
    longest: bool
    description: str


CAPTURE_RULES: dict[Capture, CaptureRule] = {
    Capture.STANDARD: CaptureRule(0, ALL_DIRECTIONS, None, False, "a run flips in any of the 8 directions"),
    Capture.ORTHOGONAL: CaptureRule(
        1, ORTHOGONAL_DIRECTIONS, None, False, "a run flips only along rows and columns (N, S, W, E)"
    ),
    Capture.DIAGONAL: CaptureRule(2, DIAGONAL_DIRECTIONS, None, False, "a run flips only along the 4 diagonals"),
    Capture.SHORT_1: CaptureRule(3, ALL_DIRECTIONS, 1, False, "a run flips only if it has at most 1 opponent disc"),
    Capture.SHORT_2: CaptureRule(4, ALL_DIRECTIONS, 2, False, "a run flips only if it has at most 2 opponent discs"),
    Capture.LONGEST: CaptureRule(
        5, ALL_DIRECTIONS, None, True, "only the single longest run flips (ties: first of NW, N, NE, W, E, SW, S, SE)"
    ),
}


def capture_descriptions() -> dict[str, str]:
    """Each capture rule's name and the sentence that describes it (for the site and docs)."""
    return {c.value: row.description for c, row in CAPTURE_RULES.items()}


class Win(enum.Enum):
    """How the final disc counts decide the game."""

    MOST = "most"  # more discs wins
    FEWEST = "fewest"  # fewer discs wins
    BAND = "band"  # the paper's threshold condition with k

    @property
    def code(self) -> int:
        """The integer the scoring kernel dispatches on."""
        return _WIN_CODES[self]


# Explicit, like the capture codes: the kernels' dispatch must not follow the enum's order.
_WIN_CODES = {Win.MOST: 0, Win.FEWEST: 1, Win.BAND: 2}


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

    def to_dict(self) -> dict[str, Any]:
        """The rules as a spec writes them (k and turn_limit only when set)."""
        out: dict[str, Any] = {"win": self.win.value, "capture": self.capture.value}
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
