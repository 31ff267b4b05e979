"""The metrics against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from grader.common.metrics import (
    Tally,
    endings_histogram,
    fit_elo,
    generalisation_gap,
    sae,
    sae_window,
    spread,
    standing,
    wilson,
    win_draw_rates,
)

pytestmark = pytest.mark.timeout(30)


def test_win_and_draw_rates_stay_apart():
    # 5 wins, 3 draws, 12 losses: win rate 5/20, draw rate 3/20; the draws are not half-wins.
    assert win_draw_rates(Tally(5, 3, 12)) == (0.25, 0.15)
    assert win_draw_rates(Tally()) == (0.0, 0.0)
    assert Tally(5, 3, 12).points == 6.5


def test_sae_canonical_window_by_hand():
    # Window [100, 2000]; trapezoids on ln b:
    #   ln(500/100) * (0.2 + 0.4) / 2 = 1.609438 * 0.30 = 0.482831
    #   ln(1000/500) * (0.4 + 0.5) / 2 = 0.693147 * 0.45 = 0.311916
    #   ln(2000/1000) * (0.5 + 0.7) / 2 = 0.693147 * 0.60 = 0.415888
    #   sum 1.210636 / ln(20) = 1.210636 / 2.995732 = 0.404120
    # The zero-shot 0.1 lies outside the window (ln 0 is not defined).
    result = sae([0, 100, 500, 1000, 2000], [0.1, 0.2, 0.4, 0.5, 0.7])
    assert (result.b0, result.b_max) == (100, 2000)
    assert result.value == pytest.approx(0.404120, abs=1e-6)


def test_sae_of_a_flat_curve_is_its_level_and_window_is_stored():
    assert sae([0, 20, 60], [0.9, 0.6, 0.6]).value == 0.6
    assert sae_window([0, 20, 60]) == (20, 60)
    # Two points: one trapezoid, the mean of its ends.
    assert sae([0, 20, 60], [0.0, 0.2, 0.6]).value == 0.4


def test_sae_needs_two_nonzero_checkpoints():
    assert sae([0, 100], [0.5, 0.5]).value is None
    with pytest.raises(ValueError):
        sae([0, 100, 50], [0.1, 0.2, 0.3])


def test_wilson_by_hand():
    # 10 of 20: centre (0.5 + z^2/40) / (1 + z^2/20) = 0.5; half-width
    # z * sqrt(0.25/20 + z^2/1600) / (1 + z^2/20) = 1.959964 * 0.122070 / 1.192073 = 0.200702
    lo, hi = wilson(0.5, 20)
    assert lo == pytest.approx(0.299298, abs=1e-6) and hi == pytest.approx(0.700702, abs=1e-6)
    # 0 of 10: [0, z^2 / (n + z^2)] = [0, 3.841459 / 13.841459] = [0, 0.277533]
    assert wilson(0.0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson(0.5, 0) is None


def test_standing_averages_environments_with_equal_weight():
    # Environment scores 1, 1/2, 0 and one with every opponent void (no weight).
    assert standing([1.0, 0.5, None, 0.0]) == 0.5
    assert standing([None]) is None


def test_elo_two_players_by_hand():
    # A beats B 3 of 4; with one virtual draw A has 3.5 of 5 = 0.7 -> 400 log10(0.7 / 0.3) = 147.2 apart.
    ratings = fit_elo(["a", "b"], {("a", "b"): Tally(3, 0, 1)}, anchor="b")
    assert ratings == {"a": pytest.approx(1147.2, abs=0.05), "b": 1000.0}
    mean_anchored = fit_elo(["a", "b"], {("a", "b"): Tally(3, 0, 1)})
    assert mean_anchored["a"] == pytest.approx(1073.6, abs=0.05) and mean_anchored["b"] == pytest.approx(
        926.4, abs=0.05
    )


def test_elo_symmetric_field_and_unrated_player():
    pairs = {("a", "b"): Tally(1, 0, 1), ("a", "c"): Tally(1, 0, 1), ("b", "c"): Tally(1, 0, 1)}
    assert fit_elo(["a", "b", "c", "d"], pairs, anchor="a") == {"a": 1000.0, "b": 1000.0, "c": 1000.0, "d": None}


def test_elo_orders_a_chain_even_with_perfect_records():
    pairs = {("a", "b"): Tally(4, 0, 0), ("b", "c"): Tally(4, 0, 0), ("a", "c"): Tally(4, 0, 0)}
    r = fit_elo(["a", "b", "c"], pairs, anchor="c")
    assert r["a"] > r["b"] > r["c"] == 1000.0 and all(math.isfinite(v) for v in r.values())


def test_spread_endings_and_gap():
    assert spread([0.2, 0.4]) == 0.1
    assert spread([]) is None
    assert endings_histogram(["no_moves", "fault", "no_moves"]) == {
        "no_moves": 2,
        "turn_limit": 0,
        "forfeit": 0,
        "fault": 1,
    }
    with pytest.raises(ValueError):
        endings_histogram(["resigned"])
    assert generalisation_gap(0.7, 0.45) == 0.25
    assert generalisation_gap(None, 0.45) is None
