"""Inline SVG drawings for the site: curves on a log budget axis, distributions, intervals, boards.

Every function returns markup as a `markupsafe.Markup`; text that comes from data (agent names)
is escaped here. Drawings carry `<title>` elements, so a reader without JavaScript still gets
the exact number under the pointer, and every figure has a table of the same numbers beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from markupsafe import Markup, escape

# Eight colours that stay apart for most readers, colour-blind ones too (Okabe and Ito's set,
# its yellow, unreadable on white, replaced by brown). Each agent also takes one of three line
# styles and one of three marks, cycled at a different period from the colours, so two
# neighbours in a table never share colour and style, and 72 agents are 72 distinct lines.
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#8c564b")
DASHES = ("", "7 3", "2 2.5")
MARKS = ("circle", "square", "diamond")


def style_of(index: int) -> tuple[str, str]:
    """(colour, dash pattern) of the index-th agent of a figure."""
    return PALETTE[index % len(PALETTE)], DASHES[index % len(DASHES)]


def mark_of(index: int) -> str:
    """The point mark of the index-th agent: it changes once the colours have gone round."""
    return MARKS[(index // len(PALETTE)) % len(MARKS)]


def _mark(kind: str, x: str, y: str, title: str) -> str:
    if kind == "square":
        return f'<rect x="{x}" y="{y}" width="6" height="6" transform="translate(-3 -3)"><title>{title}</title></rect>'
    if kind == "diamond":
        return (
            f'<rect x="{x}" y="{y}" width="6" height="6" transform="rotate(45 {x} {y}) translate(-3 -3)">'
            f"<title>{title}</title></rect>"
        )
    return f'<circle cx="{x}" cy="{y}" r="3.2"><title>{title}</title></circle>'


def _n(x: float) -> str:
    """A coordinate with one decimal and no trailing zeros: small, stable output."""
    text = _N_SEEN.get(x)
    if text is None:  # memoised: a site's figures reuse the same few thousand coordinates
        text = f"{x:.1f}"
        text = text[:-2] if text.endswith(".0") else text
        if x and len(_N_SEEN) < 1 << 16:  # not 0: 0.0 and -0.0 are one key but print apart
            _N_SEEN[x] = text
    return text


_N_SEEN: dict[float, str] = {}


@dataclass(frozen=True)
class Series:
    """One line of a curve figure: `points` are (games used, rate) at the round's checkpoints;
    `intervals`, when given, the 95% interval of each point (same order)."""

    name: str
    index: int
    points: list[tuple[int, float]]
    intervals: list[tuple[float, float]] | None = None


class BudgetAxis:
    """x positions for checkpoints: 0 gets its own slot (log 0 is undefined), the rest log scale."""

    def __init__(self, checkpoints: list[int], left: float, right: float):
        self.zero = 0 in checkpoints
        positive = sorted(c for c in checkpoints if c > 0)
        self.lo, self.hi = (positive[0], positive[-1]) if positive else (1, 1)
        self.zero_x = left
        start = left + 46 if self.zero else left
        self.start, self.end = start, right

    def x(self, games: int) -> float:
        if games <= 0:
            return self.zero_x
        if self.hi == self.lo:
            return (self.start + self.end) / 2
        frac = (math.log(games) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return self.start + frac * (self.end - self.start)


def curve_figure(
    title: str, checkpoints: list[int], series: list[Series], ylabel: str, highlight: str | None = None
) -> Markup:
    """A rate-vs-budget plot: one line per agent, log budget axis, 0 in its own slot, each
    point with its 95% interval where the series has one. With `highlight`, that agent is
    drawn in its colour, with its intervals, over the rest of the field in grey."""
    width, height = 640, 320
    left, right, top, bottom = 76, width - 16, 16, height - 56
    axis = BudgetAxis(checkpoints, left, right)

    def y(rate: float) -> float:
        return bottom - rate * (bottom - top)

    # Every series has its points at the round's few checkpoints: place each once, not per point.
    xs = {games: _n(axis.x(games)) for s in series for games, _ in s.points}
    out = [
        f'<svg class="plot curves" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        yy = _n(y(tick))
        out.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{yy}" y2="{yy}"/>'
            f'<text class="tick" x="{left - 8}" y="{yy}" text-anchor="end" dy="5">{tick:g}</text>'
        )
    for games in checkpoints:
        xx = _n(axis.x(games))
        out.append(
            f'<line class="grid" x1="{xx}" x2="{xx}" y1="{top}" y2="{bottom}"/>'
            f'<text class="tick" x="{xx}" y="{bottom + 20}" text-anchor="middle">{games}</text>'
        )
    if axis.zero and axis.hi > 0:
        bx = _n((axis.zero_x + axis.start) / 2)
        out.append(f'<text class="tick" x="{bx}" y="{bottom + 5}" text-anchor="middle">//</text>')
    out.append(
        f'<text class="label" x="{_n((left + right) / 2)}" y="{height - 8}" text-anchor="middle">'
        "games used (log scale; 0 = before any game)</text>"
        f'<text class="label" x="16" y="{_n((top + bottom) / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 16 {_n((top + bottom) / 2)})">{escape(ylabel)}</text>'
    )
    ordered = sorted(series, key=lambda s: s.name == highlight)  # the highlighted agent on top
    for s in ordered:
        faded = highlight is not None and s.name != highlight
        colour, dash = ("#b8c2cc", "") if faded else style_of(s.index)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        name = escape(s.name)
        logged = [(g, r) for g, r in s.points if g > 0]
        zero = [(g, r) for g, r in s.points if g <= 0]
        out.append(
            f'<g class="series{" faded" if faded else ""}" stroke="{colour}" fill="{colour}"><title>{name}</title>'
        )
        if s.intervals is not None and not faded:  # each point's 95% interval, a thin bar with caps
            for (g, _), (lo, hi) in zip(s.points, s.intervals):
                x = xs[g]
                out.append(
                    f'<path class="ci" stroke-width="1.2" d="M{x} {_n(y(lo))}V{_n(y(hi))}'
                    f'M{_n(float(x) - 3)} {_n(y(lo))}h6M{_n(float(x) - 3)} {_n(y(hi))}h6"/>'
                )
        if logged:
            pts = " ".join(f"{xs[g]},{_n(y(r))}" for g, r in logged)
            out.append(f'<polyline fill="none" stroke-width="{1.2 if faded else 2.2}"{dash_attr} points="{pts}"/>')
        if zero and logged:  # zero-shot point joined to the curve by a thin dotted line
            (g0, r0), (g1, r1) = zero[0], logged[0]
            out.append(
                f'<line stroke-width="1" stroke-dasharray="1 3" x1="{xs[g0]}" y1="{_n(y(r0))}" '
                f'x2="{xs[g1]}" y2="{_n(y(r1))}"/>'
            )
        mark = "circle" if faded else mark_of(s.index)
        for i, (g, r) in enumerate(s.points):
            text = f"{name}: {r:.3f} at {g} games"
            if s.intervals is not None:
                lo, hi = s.intervals[i]
                text += f" (95% interval {lo:.3f}–{hi:.3f})"
            out.append(_mark(mark, xs[g], _n(y(r)), text))
        out.append("</g>")
    out.append("</svg>")
    return Markup("".join(out))


@cache  # a few dozen indexes, each drawn on every table row of every page
def swatch(index: int) -> Markup:
    """A short line in the index-th agent's colour and dash, with its mark, for legends and tables."""
    colour, dash = style_of(index)
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return Markup(
        f'<svg class="swatch" viewBox="0 0 28 8" aria-hidden="true"><g stroke="{colour}" fill="{colour}">'
        f'<line x1="1" x2="27" y1="4" y2="4" stroke-width="2.5"{dash_attr}/>'
        f"{_mark(mark_of(index), '14', '4', '').replace('<title></title>', '')}</g></svg>"
    )


@dataclass(frozen=True)
class Distribution:
    """One row of a distribution figure: the agent's values per environment (None: faulted)."""

    name: str
    values: list[float]
    faulted: int


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(lower quartile, median, upper quartile) by linear interpolation between order statistics."""
    xs = sorted(values)

    def at(q: float) -> float:
        pos = q * (len(xs) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    return at(0.25), at(0.5), at(0.75)


def distribution_figure(title: str, rows: list[Distribution], axis_label: str) -> Markup:
    """A strip plot: one row per agent, a dot per environment, the quartile box and median."""
    row_h, label_w, width = 18, 190, 640
    left, right = label_w, width - 16
    height = 30 + row_h * len(rows) + 30

    span = right - left

    def x(v: float) -> float:
        return left + v * span

    out = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    bottom = 20 + row_h * len(rows)
    for tick in (0, 0.25, 0.5, 0.75, 1):
        xx = _n(x(tick))
        out.append(
            f'<line class="grid" x1="{xx}" x2="{xx}" y1="12" y2="{bottom}"/>'
            f'<text class="tick" x="{xx}" y="{bottom + 14}" text-anchor="middle">{tick:g}</text>'
        )
    out.append(
        f'<text class="label" x="{_n((left + right) / 2)}" y="{height - 4}" text-anchor="middle">'
        f"{escape(axis_label)}</text>"
    )
    for i, row in enumerate(rows):
        cy = 20 + row_h * i + row_h / 2
        name = escape(row.name)
        label = name if len(row.name) <= 24 else escape(row.name[:23]) + Markup("&#8230;")
        out.append(f'<text class="rowlabel" x="{label_w - 34}" y="{_n(cy + 4)}" text-anchor="end">{label}</text>')
        if row.values:
            q1, med, q3 = quartiles(row.values)
            out.append(
                f'<rect class="iqr" x="{_n(x(q1))}" y="{_n(cy - 5)}" width="{_n(max(x(q3) - x(q1), 1))}" '
                f'height="10"><title>{name}: quartiles {q1:.3f} to {q3:.3f}</title></rect>'
                f'<line class="median" x1="{_n(x(med))}" x2="{_n(x(med))}" y1="{_n(cy - 7)}" '
                f'y2="{_n(cy + 7)}"><title>{name}: median {med:.3f}</title></line>'
            )
        dot_y = _n(cy)  # a site draws a dot per agent per environment per round: y once per row
        for v in row.values:
            out.append(f'<circle class="dot" cx="{_n(x(v))}" cy="{dot_y}" r="2.5"/>')
        if row.faulted:
            out.append(
                f'<text class="fault" x="{label_w - 6}" y="{_n(cy + 4)}" text-anchor="end">'
                f"&#215;{row.faulted}<title>{name}: {row.faulted} faulted environment(s), counted as 0"
                "</title></text>"
            )
    out.append("</svg>")
    return Markup("".join(out))


def interval_bar(value: float, lo: float, hi: float) -> Markup:
    """The standing and its 95% interval on a 0..1 scale, small enough for a table cell."""
    w = 120

    def x(v: float) -> str:
        return _n(2 + v * (w - 4))

    return Markup(
        f'<svg class="ci" viewBox="0 0 {w} 12" aria-hidden="true">'
        f'<line class="axis" x1="2" x2="{w - 2}" y1="6" y2="6"/>'
        f'<line class="mid" x1="{x(0.5)}" x2="{x(0.5)}" y1="2" y2="10"/>'
        f'<rect class="band" x="{x(lo)}" y="3" width="{_n(max((hi - lo) * (w - 4), 1))}" height="6"/>'
        f'<circle class="point" cx="{x(value)}" cy="6" r="2.5"/></svg>'
    )


CELL = 10


def board_defs() -> Markup:
    """Disc symbols that every board of a page refers to (one copy, however many frames)."""
    return Markup(
        '<svg class="defs" width="0" height="0" aria-hidden="true"><defs>'
        # Colours as attributes: a page's stylesheet does not reach into <use> copies.
        '<symbol id="disc-b" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="#111"/></symbol>'
        '<symbol id="disc-w" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="#f7f7f7" '
        'stroke="#333" stroke-width="0.6"/></symbol>'
        "</defs></svg>"
    )


COORD = 7  # the margin a board's coordinates take, in the units of a cell (CELL)


def board(
    rows: int,
    cols: int,
    obstacles: list[list[int]],
    cells: list[int] | None = None,
    mark: int | None = None,
    label: str = "",
    css: str = "board",
    coords: bool = False,
) -> Markup:
    """A board: grid, obstacles, and optionally discs (`cells` flat row-major: 0 empty, 1 black,
    2 white, 3 obstacle) and a marked cell (the last move). Discs use the page's `board_defs`.
    With `coords`, column letters (a, b, ...) above and row numbers (1 at the top) on the left,
    the names `engine.layout.cell_name` gives a move."""
    w, h = cols * CELL, rows * CELL
    m = COORD if coords else 1
    out = [f'<svg class="{css}" viewBox="-{m} -{m} {w + m + 1} {h + m + 1}" role="img" aria-label="{escape(label)}">']
    if coords:
        out.append(
            '<g class="coord" font-size="5" text-anchor="middle">'
            + "".join(f'<text x="{c * CELL + CELL // 2}" y="-2">{chr(ord("a") + c)}</text>' for c in range(cols))
            + "".join(f'<text x="-3.5" y="{r * CELL + CELL // 2 + 2}">{r + 1}</text>' for r in range(rows))
            + "</g>"
        )
    if label:
        out.append(f"<title>{escape(label)}</title>")
    out.append(f'<rect class="felt" x="0" y="0" width="{w}" height="{h}"/>')
    grid = "".join(f"M{c * CELL} 0V{h}" for c in range(1, cols)) + "".join(f"M0 {r * CELL}H{w}" for r in range(1, rows))
    out.append(f'<path class="gridline" d="{grid}"/>')
    if obstacles:
        out.append(
            '<path class="obstacle" d="'
            + "".join(f"M{c * CELL} {r * CELL}h{CELL}v{CELL}h-{CELL}z" for r, c in obstacles)
            + '"/>'
        )
    if cells is not None:
        for index, v in enumerate(cells):
            if v in (1, 2):
                r, c = divmod(index, cols)
                out.append(
                    f'<use href="#disc-{"b" if v == 1 else "w"}" x="{c * CELL}" y="{r * CELL}" '
                    f'width="{CELL}" height="{CELL}"/>'
                )
    if mark is not None:
        r, c = divmod(mark, cols)
        out.append(f'<rect class="mark" x="{c * CELL + 3.5}" y="{r * CELL + 3.5}" width="3" height="3"/>')
    out.append("</svg>")
    return Markup("".join(out))
