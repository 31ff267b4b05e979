"""Board layouts: a rows x cols grid with obstacle cells and the four-disc opening.

A cell's public index is `row * cols + col`, row 0 at the top. For an 8x8 board:

     0  1  2  3  4  5  6  7
     8  9 10 11 12 13 14 15
    ...
    56 57 58 59 60 61 62 63
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

MIN_SIDE = 4
MAX_SIDE = 12


@dataclass(frozen=True)
class Layout:
    """A board geometry. `obstacles` is a sorted tuple of (row, col)."""

    rows: int
    cols: int
    obstacles: tuple[tuple[int, int], ...] = ()
    name: str | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @cached_property
    def opening(self) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
        """(black cells, white cells) of the opening, as in the authors' engine."""
        return opening_cells(self.rows, self.cols)

    @cached_property
    def obstacle_indices(self) -> tuple[int, ...]:
        return tuple(r * self.cols + c for r, c in self.obstacles)

    @property
    def playable_cells(self) -> int:
        return self.cells - len(self.obstacles)

    def to_dict(self) -> dict:
        """The spec form: obstacles as [row, col] lists (the name is not part of the content)."""
        return {"rows": self.rows, "cols": self.cols, "obstacles": [[r, c] for r, c in self.obstacles]}


def cell_name(index: int, cols: int) -> str:
    """`c4`-style name of a flat cell index: column letter from a, row number from 1 at the top
    (the site's replays and an owner's replays both name cells so)."""
    r, c = divmod(index, cols)
    return f"{chr(ord('a') + c)}{r + 1}"


def opening_cells(rows: int, cols: int) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """Black on (cx, cy) and (cx+1, cy+1), white on (cx, cy+1) and (cx+1, cy)."""
    cx, cy = rows // 2 - 1, cols // 2 - 1
    return ((cx, cy), (cx + 1, cy + 1)), ((cx, cy + 1), (cx + 1, cy))


def make_layout(rows: int, cols: int, obstacles=(), name: str | None = None) -> Layout:
    """A Layout with obstacles normalised to a sorted tuple of (row, col) pairs (not validated)."""
    return Layout(rows, cols, tuple(sorted((int(r), int(c)) for r, c in obstacles)), name)
