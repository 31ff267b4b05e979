"""Regenerate perft_rules.yaml: perft of every capture rule on layouts with obstacles,
counted by the plain-Python reference (engine/reference.py), never by the kernels.

    python tests/data/make_perft_rules.py > tests/data/perft_rules.yaml
"""

from __future__ import annotations

import sys

import yaml

from engine.layout import make_layout
from engine.reference import RefBoard, perft
from engine.rules import Capture, Rules, Win

LAYOUTS = [
    make_layout(8, 8, [], "standard"),
    make_layout(8, 8, [(1, 1), (1, 6), (6, 1), (6, 6)], "x-squares"),
    make_layout(6, 8, [(1, 2), (1, 5), (2, 1), (2, 6), (3, 1), (3, 6), (4, 2), (4, 5)], "random-2"),
    make_layout(7, 9, [(0, 0), (2, 5), (4, 2), (5, 6), (6, 8), (1, 3)], "odd-7x9"),
    make_layout(12, 12, [(0, 5), (3, 3), (8, 8), (11, 0), (5, 9), (9, 2)], "wide-12x12"),
]
DEPTH = 5


def main() -> int:
    out = {}
    for layout in LAYOUTS:
        for capture in Capture:
            board = RefBoard(layout, Rules(Win.MOST, capture))
            counts = [perft(board, d) for d in range(1, DEPTH + 1)]
            out[f"{layout.name}/{capture.value}"] = {
                "capture": capture.value,
                "rows": layout.rows,
                "cols": layout.cols,
                "obstacles": [list(c) for c in layout.obstacles],
                "counts": counts,
            }
            print(f"{layout.name}/{capture.value}: {counts}", file=sys.stderr)
    print("# Perft per capture rule, counted by engine/reference.py; regenerate with")
    print("# python tests/data/make_perft_rules.py > tests/data/perft_rules.yaml")
    print(yaml.safe_dump(out, sort_keys=False, default_flow_style=None, width=100), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
