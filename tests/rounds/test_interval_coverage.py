"""The standing's interval holds its 95% on simulated fields whose true scores are known.

A field mixes deterministic agents (every game between two of them in one environment, with
the same colours, is a copy of one game) and agents that play at random. Each environment
draws every agent's strength there and the colour's advantage, so which environments a
round draws moves the standing; the true score is the standing's expectation over the
environments and the games. The interval must cover it about 95% of the time; the first
arena's interval (Wilson over every game as if independent) is shown to fall far short, so
the test can tell a narrow interval from an honest one.
"""

from __future__ import annotations

import numpy as np
import pytest

from grader.common.metrics import rnd, standing_interval, t_quantile, wilson

pytestmark = pytest.mark.timeout(120)

GAMES = 20  # per pairing in an environment, 10 with each colour, as a round plays them
DRAW = 0.06


def black_wins(theta: np.ndarray, spread: float, envs: int, rng: np.random.Generator) -> np.ndarray:
    """P(black i beats white j) in each of `envs` drawn environments: [env, i, j]."""
    strength = theta[None, :] + spread * rng.standard_normal((envs, theta.size))
    colour = 0.5 * rng.standard_normal((envs, 1, 1))
    return (1 - DRAW) / (1 + np.exp(-(strength[:, :, None] - strength[:, None, :] + colour)))


def true_scores(theta: np.ndarray, spread: float, rng: np.random.Generator) -> np.ndarray:
    """Each agent's expected standing over environments and games (by 40,000 environments)."""
    p = black_wins(theta, spread, 40_000, rng) + DRAW / 2  # black's expected points
    both = (p + (1 - p.transpose(0, 2, 1))) / 2  # i's expected points against j, colours halved
    k = theta.size
    off = ~np.eye(k, dtype=bool)
    return np.array([both[:, i, off[i]].mean() for i in range(k)])


def env_scores(
    theta: np.ndarray, deterministic: np.ndarray, spread: float, envs: int, rng: np.random.Generator
) -> np.ndarray:
    """One round's scores [env, agent]: match points per pairing game in each environment."""
    k, half = theta.size, GAMES // 2
    p = black_wins(theta, spread, envs, rng)[..., None]
    u = rng.random((envs, k, k, half))
    copies = deterministic[:, None] & deterministic[None, :]
    u[:, copies, :] = u[:, copies, :1]  # two deterministic agents: one game, copied
    points = (u < p) + 0.5 * ((u >= p) & (u < p + DRAW))  # black's points, [env, black, white, game]
    per_pair = points.sum(axis=3)
    off = ~np.eye(k, dtype=bool)
    mine = np.where(off, per_pair, 0).sum(axis=2) + np.where(off, half - per_pair, 0).sum(axis=1)
    return mine / (GAMES * (k - 1))


FIELDS = [  # (agents, deterministic among them, environments, spread of strengths across environments)
    (10, 5, 8, 0.3),
    (10, 8, 8, 1.0),
    (10, 5, 16, 0.6),
    (9, 6, 56, 0.5),
]


def test_the_interval_covers_true_scores_about_95_percent():
    rng = np.random.default_rng(20261201)
    hits, old_hits, total = 0, 0, 0
    by_kind = {True: [0, 0], False: [0, 0]}
    rounds = 300
    for agents, det, envs, spread in FIELDS:
        theta = rng.standard_normal(agents)
        deterministic = np.arange(agents) < det
        truth = true_scores(theta, spread, rng)
        games = envs * GAMES * (agents - 1)
        for _ in range(rounds):
            scores = env_scores(theta, deterministic, spread, envs, rng)
            for i in range(agents):
                column = [rnd(float(s)) for s in scores[:, i]]
                lo, hi = standing_interval(column, games)
                hit = lo <= truth[i] <= hi
                hits += hit
                by_kind[bool(deterministic[i])][0] += hit
                by_kind[bool(deterministic[i])][1] += 1
                old_lo, old_hi = wilson(rnd(float(np.mean(column))), games)
                old_hits += old_lo <= truth[i] <= old_hi
                total += 1
    coverage, old = hits / total, old_hits / total
    print(
        f"coverage {coverage:.3f} over {total} intervals (deterministic {by_kind[True][0] / by_kind[True][1]:.3f}, "
        f"random {by_kind[False][0] / by_kind[False][1]:.3f}); Wilson over games {old:.3f}"
    )
    assert 0.93 <= coverage <= 0.97, coverage
    for kind, (h, n) in by_kind.items():
        assert h / n >= 0.92, (kind, h / n)
    assert old < 0.8, old  # the interval it replaces: far too narrow for this field


def test_student_t_quantiles_match_the_tables():
    # Two-sided 95% points from the standard tables.
    for df, want in ((1, 12.706205), (2, 4.302653), (7, 2.364624), (10, 2.228139), (30, 2.042272)):
        assert t_quantile(df) == pytest.approx(want, abs=1e-6)
    assert t_quantile(10_000) == pytest.approx(1.960201, abs=1e-5)
    with pytest.raises(ValueError, match="at least 1 degree"):
        t_quantile(0)


def test_the_interval_by_hand():
    # Scores 0.5, 0.7, 0.3, 0.5 over 4 environments, 240 games: mean 0.5, variance of the mean
    # (0.04 + 0.04) / 3 / 4 = 0.006667; effective games 0.25 / 0.006667 = 37.5, times
    # (1.959964 / 3.182446)^2 = 0.379285 gives 14.223; Wilson at 14.223: 0.5 +- 0.230569.
    lo, hi = standing_interval([0.5, 0.7, 0.3, 0.5], 240)
    assert (lo, hi) == (pytest.approx(0.269431, abs=2e-6), pytest.approx(0.730569, abs=2e-6))
    # Copies of one game do not narrow it: the same environments' scores, ten times the games.
    assert standing_interval([0.5, 0.7, 0.3, 0.5], 2400) == (lo, hi)
    # Every environment the same: no spread to measure, so the environments are the evidence
    # (Wilson at 8, t-scaled: 5.49 effective games), never the games, never a point.
    lo, hi = standing_interval([1.0] * 8, 1120)
    assert (lo, hi) == (pytest.approx(0.588, abs=1e-3), 1.0)
    assert standing_interval([1.0] * 8, 160) == (lo, hi)
    # The method earlier rounds name falls back to every game there (and is kept to verify them).
    assert standing_interval([1.0] * 8, 1120, floor=False)[0] > 0.99
    assert standing_interval([0.5], 20) == (0.0, 1.0)


def test_the_interval_holds_when_every_drawn_environment_gives_the_same_score():
    # A deterministic agent that wins every game except in a tenth of the pool, where it
    # collapses and loses every game: in 43% of 8-environment rounds it draws no collapse and
    # every score is 1.0. Over 1,120 games Wilson's interval is [0.995, 1.0] then; the truth is
    # 0.9. Each environment is one observation, so the interval must still hold its 95%.
    rng = np.random.default_rng(20261204)
    envs, games, truth, rounds = 8, 1120, 0.9, 4000
    hits = old_hits = fallback_hits = 0
    for _ in range(rounds):
        column = [1.0 if rng.random() < truth else 0.0 for _ in range(envs)]
        lo, hi = standing_interval(column, games)
        hits += lo <= truth <= hi
        lo, hi = standing_interval(column, games, floor=False)
        fallback_hits += lo <= truth <= hi
        lo, hi = wilson(rnd(float(np.mean(column))), games)
        old_hits += lo <= truth <= hi
    coverage = hits / rounds
    print(
        f"coverage {coverage:.3f}; falling back to the games {fallback_hits / rounds:.3f}; "
        f"Wilson over games {old_hits / rounds:.3f}"
    )
    assert 0.93 <= coverage, coverage
    assert fallback_hits / rounds < 0.8  # the earlier method: far short, so the test can tell
