"""Engine speed: random-vs-random games per second per public board shape, on one core.

Prints, in one run: for each public board shape and every capture rule, the kernels'
games/s; the plain-Python reference's games/s on the same shape (standard capture) and the
ratio; perft(9) on the standard board in leaves/s; and the cold (empty numba cache) and warm
(cached) start of a process that plays its first game.

Targets (issue: the engine): at least 60,000 games/s on the standard board and 20,000 on the
12x10 public layout, on one core, for every capture rule. Anchors measured on these machines:
a quick numba flat-array prototype ~20,000 games/s (8x8) and ~9,000 (12x12 with a fifth
obstacles); an 8x8-only bitboard engine ~190,000.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time

from engine import Capture, paper_tier, perft, public_tier
from engine.reference import random_game
from engine.simulate import random_results

TARGETS = {(8, 8): 60_000, (12, 10): 20_000}
ENGINE_GAMES = 30_000
REFERENCE_SECONDS = 2.0
COLD_START = (
    "import time; t = time.perf_counter(); from engine import public_tier, random_stats; "
    "random_stats(public_tier()[0], 1, 1); print(time.perf_counter() - t)"
)


def one_core() -> None:
    """Pin to one core so the figure is per core whatever else the machine does."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


# Rates are per CPU second of this process: "per core" whatever else the machine runs.
def engine_rate(spec, games: int = ENGINE_GAMES) -> float:
    random_results(spec, 10, 1)  # compile or load this kernel's variant outside the timing
    start = time.process_time()
    random_results(spec, games, 2)
    return games / (time.process_time() - start)


def reference_rate(spec) -> float:
    rng, games, start = random.Random(1), 0, time.process_time()
    while time.process_time() - start < REFERENCE_SECONDS:
        random_game(spec.layout, spec.rules, rng)
        games += 1
    return games / (time.process_time() - start)


def start_seconds(cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", COLD_START], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    one_core()
    shapes: dict[tuple[int, int], list] = {}
    for spec in public_tier():
        shapes.setdefault(spec.layout.shape, [])
        if spec.layout.name not in [s.layout.name for s in shapes[spec.layout.shape]]:
            shapes[spec.layout.shape].append(spec)
    rules = [c for c in Capture if c is not Capture.DIAGONAL]  # diagonal has no first move
    print("random-vs-random games per CPU second, one core (kernels by capture rule; reference with standard)")
    print(f"{'board':<26}" + "".join(f"{c.value:>12}" for c in rules) + f"{'reference':>12}{'ratio':>8}{'target':>9}")
    missed = []
    for shape, specs in sorted(shapes.items()):
        spec = specs[0]
        rates = [engine_rate(spec.with_rules(capture=c.value)) for c in rules]
        ref = reference_rate(spec.with_rules(capture="standard"))
        target = TARGETS.get(shape)
        label = f"{shape[0]}x{shape[1]} {spec.layout.name}"
        print(
            f"{label:<26}"
            + "".join(f"{r:>12,.0f}" for r in rates)
            + f"{ref:>12,.1f}{rates[0] / ref:>8,.0f}x{(f'{target:,}' if target else '-'):>9}"
        )
        if target and min(rates) < target:
            missed.append(f"{label}: slowest rule {min(rates):,.0f} < {target:,}")
    standard = public_tier()[0]
    perft(standard, 6)
    start = time.process_time()
    leaves = perft(standard, 9)
    dt = time.process_time() - start
    print(f"\nperft(9) standard 8x8: {leaves:,} leaves in {dt:.2f} s = {leaves / dt:,.0f} leaves/s")
    with tempfile.TemporaryDirectory() as cache:
        cold = start_seconds(cache)
        warm = start_seconds(cache)
    print(f"first game in a new process: cold (empty numba cache) {cold:.2f} s, warm (cached) {warm:.2f} s")
    print(f"paper tier presets: {len(paper_tier())}")
    for line in missed:
        print(f"TARGET MISSED: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
