"""Reference opponents: deterministic for a seed, legal, and ordered in strength."""

from __future__ import annotations

import pytest

from engine import OPPONENT_NAMES, Color, Game, make_opponent, public_tier
from engine import bitboard as bb

from tests.conftest import NO_JIT

ENV = public_tier()[0]


def play(spec, black, white, seed, max_plies=10_000):
    game = Game(spec)
    players = {Color.BLACK: make_opponent(black, spec, seed), Color.WHITE: make_opponent(white, spec, seed + 1)}
    for p in players.values():
        if p.name == "mcts":
            p.iterations = 40
    while not game.done and game.plies < max_plies:
        if game.has_legal_move():
            move = players[game.to_move].act(game)
            assert game.is_legal(move)
            game.play(move)
        else:
            game.pass_turn()
    return game


@pytest.mark.parametrize("name", OPPONENT_NAMES)
def test_deterministic_for_a_seed(name):
    plies = 12 if NO_JIT else 10_000  # the searchers are slow in pure Python
    a, b = play(ENV, name, "random", 5, plies), play(ENV, name, "random", 5, plies)
    assert a.moves == b.moves


def test_unknown_opponent():
    with pytest.raises(ValueError, match="unknown opponent"):
        make_opponent("alphazero", ENV, 1)


def test_greedy_takes_the_most_flips():
    game = Game(ENV)
    for _ in range(3):
        game.play(game.legal_cells()[-1])
    move = make_opponent("greedy", ENV, 1).act(game)
    own, opp = game.white, game.black
    counts = {c: bb.popcount(bb.words(bb.flips(own, opp, c, game.geo.nxt, 0))) for c in game.legal_cells()}
    assert counts[move] == max(counts.values())


@pytest.mark.skipif(NO_JIT, reason="strength needs many games")
def test_minimax_beats_random_under_both_win_conditions():
    for spec in (ENV, ENV.with_rules(win="fewest")):
        wins = 0
        for i in range(40):
            colour = Color(i % 2)
            game = play(spec, "minimax" if colour is Color.BLACK else "random",
                        "random" if colour is Color.BLACK else "minimax", 100 + i)
            wins += game.outcome().winner is colour
        assert wins >= 26, f"{spec.rules.label}: minimax won {wins}/40"  # ~80% measured over 200
