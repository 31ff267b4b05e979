"""The Game API: passes, lost turns, forfeits, turn limits and the exact band comparison."""

from __future__ import annotations

import numpy as np
import pytest

from engine import LOST, PASS, Color, Game, IllegalMoveError, ReplayError, Termination, parse_spec, public_tier, replay
from engine.rules import Rules, Win
from engine.scoring import winner_code


def spec(win="most", capture="standard", rows=8, cols=8, obstacles=(), **extra):
    rules = {"win": win, "capture": capture, **extra}
    return parse_spec(
        {"layout": {"rows": rows, "cols": cols, "obstacles": [list(o) for o in obstacles]}, "rules": rules}
    )


def test_opening_and_first_observation():
    game = Game(spec())
    assert game.to_move is Color.BLACK
    board = game.board()
    assert board[3, 3] == 1 and board[4, 4] == 1 and board[3, 4] == 2 and board[4, 3] == 2
    assert game.legal_cells() == [20, 29, 34, 43]
    obs = game.observation()
    assert obs.dtype == np.float32 and obs.shape == (3, 8, 8)
    assert obs[0, 3, 3] == 1 and obs[1, 3, 4] == 1 and obs[2].sum() == 0
    mask = game.legal_mask()
    assert mask.dtype == np.int8 and mask.shape == (64,) and mask.sum() == 4


def test_observation_is_from_the_movers_side_with_obstacles():
    game = Game(spec(obstacles=[(0, 0), (7, 7)]))
    game.play(20)  # (2, 4) flips (3, 4)
    obs = game.observation()  # white to move
    assert obs[0].sum() == 1 and obs[0, 4, 3] == 1
    assert obs[1, 2, 4] == 1 and obs[1, 3, 4] == 1 and obs[1].sum() == 4
    assert obs[2, 0, 0] == 1 and obs[2, 7, 7] == 1 and obs[2].sum() == 2


@pytest.mark.parametrize("bad", [0, 63, -1, 64, 19.0, "19", True, None])
def test_illegal_moves_raise(bad):
    game = Game(spec())
    with pytest.raises(IllegalMoveError):
        game.play(bad)
    assert game.moves == [] and game.to_move is Color.BLACK


def test_pass_only_when_forced_and_lost_turns():
    game = Game(spec())
    with pytest.raises(IllegalMoveError, match="may not pass"):
        game.pass_turn()
    game.lose_turn()
    assert game.to_move is Color.WHITE and game.moves == [LOST] and game.placements == 0
    game.play(game.legal_cells()[0])
    assert game.moves[-1] != LOST


def test_a_recorded_move_is_applied_as_the_call_it_records():
    """`apply` is the one way from a recorded move back to the game (replays, verify)."""
    played, applied = Game(spec()), Game(spec())
    played.lose_turn()
    played.play(played.legal_cells()[0])
    for move in played.moves:
        applied.apply(move)
    assert applied.moves == played.moves and (applied.board() == played.board()).all()
    for bad in ("x", None, 2.5, -1, applied.legal_cells()[0] + 100):
        with pytest.raises(IllegalMoveError):
            applied.apply(bad)
    with pytest.raises(IllegalMoveError, match="may not pass"):
        applied.apply(PASS)
    assert applied.moves == played.moves


def test_forfeit_ends_the_game_for_the_other_colour():
    game = Game(spec())
    game.forfeit(Color.BLACK)
    out = game.outcome()
    assert game.done and out.termination is Termination.FORFEIT and out.winner is Color.WHITE
    with pytest.raises(IllegalMoveError):
        game.play(19)


def test_turn_limit_counts_placements_not_passes():
    game = Game(spec(win="band", k=1.01, turn_limit=3))
    for _ in range(3):
        game.play(game.legal_cells()[0])
    assert game.done and game.outcome().termination is Termination.TURN_LIMIT


def test_diagonal_has_no_first_move_and_ends_at_once():
    game = Game(spec(capture="diagonal"))
    assert game.done and game.outcome().termination is Termination.NO_MOVES
    assert game.outcome().winner is None  # 2-2


def test_band_share_compared_exactly():
    rules = Rules(Win.BAND, __import__("engine").Capture.STANDARD, k=0.4)
    assert winner_code(rules, 24, 36) == -1  # share exactly 0.4: the open interval excludes it
    assert winner_code(rules, 25, 35) == 0  # 0.4167 lies in (0.4, 0.5)
    assert winner_code(rules, 30, 30) == -1
    wide = Rules(Win.BAND, rules.capture, k=1.01)
    assert winner_code(wide, 64, 0) == 0  # a wipe-out wins at k = 1.01
    assert winner_code(Rules(Win.BAND, rules.capture, k=-0.01), 0, 64) == 0
    assert winner_code(Rules(Win.FEWEST, rules.capture), 10, 20) == 0
    assert winner_code(Rules(Win.MOST, rules.capture), 10, 20) == 1
    assert winner_code(Rules(Win.MOST, rules.capture), 20, 20) == -1


def test_replay_catches_bad_lists():
    s = spec()
    with pytest.raises(ReplayError, match="move 0"):
        replay(s, [0])
    with pytest.raises(ReplayError, match="not over"):
        replay(s, [20])
    with pytest.raises(ReplayError, match="may not pass"):
        replay(s, [PASS])
    game = replay(s, [20], forfeit=Color.WHITE)
    assert game.outcome().winner is Color.BLACK


def test_game_reaches_a_forced_pass():
    # A board where white runs out of moves early: play until a pass is needed somewhere.
    for env in public_tier():
        game = Game(env)
        from engine import make_opponent

        player = make_opponent("random", env, 3)
        while not game.done:
            if game.has_legal_move():
                game.play(player.act(game))
            else:
                assert game.legal_mask().sum() == 0
                game.pass_turn()
        if PASS in game.moves:
            return
    pytest.fail("no public environment produced a pass in one random game each")
