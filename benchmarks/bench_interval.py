"""The standing's interval: its coverage of known true scores on simulated fields.

    python -m benchmarks interval

Plays the simulated rounds of tests/rounds/test_interval_coverage.py (deterministic and
random agents mixed, 8 to 56 environments) and prints the interval's coverage beside its
target, 95%, and beside the coverage of the interval it replaced (Wilson over every game).
Not a speed figure: a statistical one, printed where the arena's figures are printed.
"""

from __future__ import annotations

import time

import numpy as np

from grader.common.metrics import rnd, standing_interval, wilson
from tests.rounds.test_interval_coverage import FIELDS, GAMES, env_scores, true_scores

TARGET = 0.95
ROUNDS = 300


def main() -> int:
    start = time.perf_counter()
    rng = np.random.default_rng(20261201)
    total = {"new": 0, "old": 0, "n": 0}
    for agents, det, envs, spread in FIELDS:
        theta = rng.standard_normal(agents)
        deterministic = np.arange(agents) < det
        truth = true_scores(theta, spread, rng)
        games = envs * GAMES * (agents - 1)
        hits = old = n = 0
        widths = []
        for _ in range(ROUNDS):
            scores = env_scores(theta, deterministic, spread, envs, rng)
            for i in range(agents):
                column = [rnd(float(s)) for s in scores[:, i]]
                lo, hi = standing_interval(column, games)
                widths.append(hi - lo)
                hits += lo <= truth[i] <= hi
                wlo, whi = wilson(rnd(float(np.mean(column))), games)
                old += wlo <= truth[i] <= whi
                n += 1
        print(
            f"{agents} agents ({det} deterministic), {envs} environments, spread {spread}: coverage "
            f"{hits / n:.3f} (Wilson over games {old / n:.3f}), mean width {np.mean(widths):.3f}"
        )
        total["new"] += hits
        total["old"] += old
        total["n"] += n
    print(
        f"interval coverage: {total['new'] / total['n']:.3f} over {total['n']} intervals (target {TARGET:.2f}); "
        f"Wilson over games: {total['old'] / total['n']:.3f}; {time.perf_counter() - start:.1f} s"
    )
    return 0
