"""Reference opponents: deterministic for a seed, legal, and ordered in strength."""

from __future__ import annotations

import numpy as np
import pytest

from engine import OPPONENT_NAMES, Color, Game, IllegalMoveError, make_opponent, public_tier
from engine import bitboard as bb
from engine.opponents import EngineSeats, Meter, play_reference_games, seated_opponent
from tests.conftest import NO_JIT

ENV = public_tier()[0]


def play(spec, black, white, seed, max_plies=10_000):
    game = Game(spec)
    players = {Color.BLACK: make_opponent(black, spec, seed), Color.WHITE: make_opponent(white, spec, seed + 1)}
    for p in players.values():
        if p.name == "mcts":
            p.param = 40
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
            game = play(
                spec,
                "minimax" if colour is Color.BLACK else "random",
                "random" if colour is Color.BLACK else "minimax",
                100 + i,
            )
            wins += game.outcome().winner is colour
        assert wins >= 26, f"{spec.rules.label}: minimax won {wins}/40"  # ~80% measured over 200


def _pair(spec, black, white, seed):
    players = [make_opponent(black, spec, seed), make_opponent(white, spec, seed + 1)]
    for p in players:
        if p.name == "mcts":
            p.param = 40
    return players


@pytest.mark.parametrize("black,white", [("random", "random"), ("greedy", "minimax"), ("mcts", "random")])
@pytest.mark.parametrize("index", [0, 1, 12, 33, 42])
def test_engine_turns_play_as_act_does(black, white, index):
    """A whole game inside the kernel is move for move the game `act` plays, with the
    same random draws, and each player's meter is charged its thinking time."""
    if NO_JIT and "random" not in (black, white) or NO_JIT and index:
        pytest.skip("the searchers are slow in pure Python")
    spec = public_tier()[index]
    by_act = play(spec, black, white, 11)
    players = _pair(spec, black, white, 11)
    game = Game(spec)
    game.play_engine_turns(EngineSeats(spec, *players))
    assert game.done and game.moves == by_act.moves
    assert game.outcome() == by_act.outcome()
    assert all(p.meter.seconds > 0 for p in players)  # charged when the game ended


def test_engine_turns_stop_for_an_agent_seat():
    """With one seat left to the caller, the kernel plays passes and the reference's moves
    and hands back each time the caller's side must place a disc."""
    spec = public_tier()[5]
    seats = EngineSeats(spec, None, make_opponent("greedy", spec, 3))
    game = Game(spec)
    agent_moves = 0
    while True:
        game.play_engine_turns(seats)
        if game.done:
            break
        assert game.to_move is Color.BLACK and game.has_legal_move()
        game.play(game.legal_cells()[0])
        agent_moves += 1
    assert agent_moves > 5
    replayed = Game(spec)
    greedy = make_opponent("greedy", spec, 3)
    for move in game.moves:
        if move == "pass":
            replayed.pass_turn()
        elif replayed.to_move is Color.WHITE:
            assert greedy.act(replayed) == move
            replayed.play(move)
        else:
            replayed.play(move)
    assert replayed.done


def test_an_illegal_move_with_engine_seats_changes_nothing():
    spec = public_tier()[0]
    seats = EngineSeats(spec, None, make_opponent("random", spec, 3))
    game = Game(spec)
    illegal = next(c for c in range(64) if not game.is_legal(c))
    for bad in (illegal, -1, 64, True, "19", 19.0):
        with pytest.raises(IllegalMoveError):
            game.play(bad, seats)
    assert game.moves == [] and game.to_move is Color.BLACK
    game.play(np.int64(game.legal_cells()[0]), seats)  # then the engine's reply, in the same call
    assert len(game.moves) >= 2 and type(game.moves[0]) is int


def test_play_to_agent_hands_back_each_agent_turn_with_its_view():
    """An agent's whole turn on the engine's side: its move, the reference's reply and any
    forced passes, and the view of the side that must move next, written in place into the
    game's own view arrays."""
    spec = public_tier()[7]
    seats = EngineSeats(spec, make_opponent("greedy", spec, 3), None)
    game = Game(spec)
    view_obs, view_mask = game.view
    assert view_obs.shape == (3, spec.layout.rows, spec.layout.cols) and view_mask.shape == (spec.layout.cells,)
    turn = game.play_to_agent(seats)
    agent_moves = 0
    while turn >= 0:
        assert turn == 1 and game.to_move is Color.WHITE and game.has_legal_move()
        obs, mask = game.agent_view()
        assert np.array_equal(view_obs, obs) and np.array_equal(view_mask, mask)
        illegal = int(np.flatnonzero(mask == 0)[0])
        moves = list(game.moves)
        assert game.play_to_agent(seats, illegal) == -2 and game.moves == moves  # nothing changed
        assert game.play_to_agent(seats, spec.layout.cells) == -2
        turn = game.play_to_agent(seats, int(np.flatnonzero(mask)[-1]))
        agent_moves += 1
    assert game.done and agent_moves > 5
    assert game.play_to_agent(seats) == -1 and game.play_to_agent(seats, 0) == -2


def test_a_games_record_is_its_own():
    """Two games of one layout share no state: each copies the opening record."""
    spec = public_tier()[0]
    seats = EngineSeats(spec, None, None)
    first, second = Game(spec), Game(spec)
    first.play_to_agent(seats, int(np.flatnonzero(first.legal_mask())[0]))
    assert second.plies == 0 and second.placements == 0 and first.placements == 1
    assert np.array_equal(Game(spec).board(), second.board())


@pytest.mark.parametrize("name", ["random", "greedy", "minimax"])
@pytest.mark.parametrize("index", [0, 5, 12, 40])
def test_reference_games_in_one_call_are_the_games_played_one_by_one(name, index):
    """A reference player's self-play in one kernel call: the winners and lengths of the games
    that seating it on both sides (`seated_opponent`) plays, and its time charged."""
    if NO_JIT and (name != "random" or index):
        pytest.skip("the searchers are slow in pure Python")
    spec = public_tier()[index]
    seeds = [17, 4242, 2**63 + 5]
    meter = Meter()
    out = play_reference_games(name, spec, seeds, meter)
    for seed, (winner, plies) in zip(seeds, out.tolist()):
        seats = EngineSeats(
            spec, seated_opponent(name, spec, seed, "black"), seated_opponent(name, spec, seed, "white")
        )
        game = Game(spec)
        game.play_engine_turns(seats)
        code = game.outcome().winner
        assert (winner, plies) == ({None: 0, Color.BLACK: 1, Color.WHITE: -1}[code], len(game.moves))
    assert meter.seconds > 0
    with pytest.raises(ValueError, match="unknown opponent"):
        play_reference_games("oracle", spec, seeds)


def test_seats_packed_once_are_never_shared():
    """The packed seats of a seating are built once: every EngineSeats gets its own copy, so
    what the kernel charges one game's seats never reaches another's, and a fresh pack is
    all zero charges."""
    spec = public_tier()[0]
    for seed in (3, 4):
        greedy = seated_opponent("greedy", spec, seed, "black")
        seats = EngineSeats(spec, greedy, None)
        assert seats.packed.flags.writeable and seats.packed[4] == 0
        seats.packed[4] = 12345  # as the kernel charges a seat
        assert EngineSeats(spec, greedy, None).packed[4] == 0
        game = Game(spec)
        turn = game.play_to_agent(seats)
        while turn >= 0:
            turn = game.play_to_agent(seats, int(np.flatnonzero(game.view[1])[0]))
        assert game.done and greedy.meter.seconds >= 12345e-9  # settled onto the player's meter
