"""The example agents, driven in-process with the engine as the environment.

The adaptive agent must (1) model every capture rule exactly as the engine plays it,
(2) pick out the real rule from what the wire shows it, (3) pin down the win condition from
budget outcomes, and (4) beat the random opponent clearly once it has. Longer curves are
marked slow. The README's numbers come from `arena round`; this harness is the quick in-process
version of the same protocol.
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import adaptive_harness as harness
import numpy as np
import pytest

from engine import Capture, Color, EnvSpec, Game, paper_tier, public_tier
from engine.reference import BLACK, WHITE, RefBoard

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAPTURES = ("standard", "orthogonal", "short-1", "short-2", "longest")
ALLOWED_IMPORTS = set(sys.stdlib_module_names) | {"numpy", "__future__"}


def public(layout: str, win: str, capture: str) -> EnvSpec:
    """The public-tier spec of `layout` with the rules `win/capture` (any capture, for tests)."""
    base = next(s for s in public_tier() if (s.name or "").split()[0] == layout)
    return base.with_rules(win=win, capture=capture)


def paper(layout: str, k: float) -> EnvSpec:
    """The paper-tier preset of `layout` with band threshold `k` and no turn limit."""
    return next(
        s for s in paper_tier() if (s.name or "").split()[1] == layout and s.rules.k == k and s.rules.turn_limit is None
    )


def random_positions(spec: EnvSpec, count: int, seed: int) -> list[tuple[np.ndarray, int]]:
    """(board, side to move) snapshots along random playouts: board as Game.board(), side 1 or 2."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        game = Game(spec)
        while not game.done and len(out) < count:
            cells = game.legal_cells()
            if not cells:
                game.pass_turn()
                continue
            out.append((game.board().ravel().copy(), BLACK if game.to_move is Color.BLACK else WHITE))
            game.play(rng.choice(cells))
    return out


def reference_board(spec: EnvSpec, board: np.ndarray, side: int) -> RefBoard:
    """The engine's plain-Python rules at an arbitrary position."""
    ref = RefBoard(spec.layout, spec.rules)
    ref.cells = [int(v) for v in board]
    ref.to_move = side
    return ref


EXAMPLE_NAMES = ["random", "greedy", "positional", "learner", "adaptive"]


def test_every_example_is_tested():
    """A new examples/<name>/ is added to the lists these tests run over."""
    assert sorted(d.name for d in EXAMPLES.iterdir() if (d / "agent.py").is_file()) == sorted(EXAMPLE_NAMES)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples_import_only_stdlib_and_numpy(name):
    """They run in python:3.11-slim with numpy and nothing else, and ship a README."""
    tree = ast.parse((EXAMPLES / name / "agent.py").read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots.add((node.module or "").split(".")[0])
    assert roots <= ALLOWED_IMPORTS, roots - ALLOWED_IMPORTS
    assert (EXAMPLES / name / "README.md").is_file()


@pytest.mark.parametrize("capture", [c.value for c in Capture])
@pytest.mark.parametrize("layout", ["standard", "random-1"])
def test_adaptive_rule_kernels_match_the_engine(layout, capture):
    """The agent's own model of each rule: the engine's legal cells and flips, everywhere.

    Positions come from standard-capture playouts (diagonal has no move from the opening)
    and are judged under each rule by the engine's reference implementation.
    """
    module = harness.load_agent_module("adaptive")
    rule = next(r for r in module.RULES if r[0] == capture)
    spec = public(layout, "most", capture)
    rows, cols = spec.layout.rows, spec.layout.cols
    b = module.Board(rows, cols, [list(c) for c in spec.layout.obstacles])
    to_pos = {r * cols + c: r * b.stride + c for r in range(rows) for c in range(cols)}
    checked = 0
    for board, side in random_positions(public(layout, "most", "standard"), 150, seed=len(capture)):
        ref = reference_board(spec, board, side)
        own = b.plane_bits((board == side).reshape(rows, cols))
        opp = b.plane_bits((board == 3 - side).reshape(rows, cols))
        legal = ref.legal()
        assert b.legal(own, opp, rule) == sum(1 << to_pos[c] for c in legal)
        for cell in legal:
            expected = sum(1 << to_pos[c] for c in ref.flips(cell, side))
            assert b.flips(own, opp, to_pos[cell], rule) == expected, (capture, cell, board.tolist())
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("capture", CAPTURES)
def test_adaptive_identifies_capture_rule_in_one_game(capture):
    """One zero-shot game against random is enough to single out the rule on 8x8."""
    spec = public("standard", "most", capture)
    session = harness.run_session("adaptive", spec, budget=0, checkpoints=(0,), games_per_checkpoint=1)
    assert session.inferred_capture == capture
    assert session.illegal == 0


@pytest.mark.parametrize(
    "layout,capture",
    [("random-1", "longest"), ("random-2", "short-2"), ("random-3", "orthogonal"), ("x-squares", "short-1")],
)
def test_adaptive_identifies_capture_rule_from_self_play(layout, capture):
    """From self-play alone (consecutive positions one placement apart) within 3 games."""
    spec = public(layout, "fewest", capture)
    module = harness.load_agent_module("adaptive")
    agent = module.Agent()
    agent.prepare(harness.env_info(spec, 3))
    session = harness.Session(env="", rules="")
    for _ in range(3):
        harness.play_self(agent, spec, session)
    assert agent.rules.best()[0] == capture
    assert agent.self_play is True


@pytest.mark.parametrize("win,expect", [("most", (0.5, 2.0)), ("fewest", (-1.0, 0.5))])
@pytest.mark.parametrize("layout", ["standard", "random-2"])
def test_adaptive_identifies_most_and_fewest(layout, win, expect):
    spec = public(layout, win, "standard")
    agent = harness.load_agent_class("adaptive")()
    agent.prepare(harness.env_info(spec, 20))
    session = harness.Session(env="", rules="")
    for _ in range(20):
        harness.play_self(agent, spec, session)
    assert agent.wins.objective() == expect


def test_adaptive_brackets_the_band_threshold():
    """Paper band k = 0.8: the planning interval's upper end lands near k within 150 games."""
    spec = paper("standard", 0.8)
    agent = harness.load_agent_class("adaptive")()
    agent.prepare(harness.env_info(spec, 150))
    session = harness.Session(env="", rules="")
    for _ in range(150):
        harness.play_self(agent, spec, session)
    lo, hi = agent.wins.objective()
    assert lo == 0.5 and 0.75 < hi < 0.85
    # Everything outcomes allowed: a majority win just under k and a draw at or above it.
    assert agent.wins.major_win_max < 0.8 <= agent.wins.draw_major_min


@pytest.mark.parametrize("win", ["most", "fewest"])
def test_adaptive_beats_random_after_a_short_budget(win):
    spec = public("standard", win, "standard")
    session = harness.run_session("adaptive", spec, budget=30, checkpoints=(30,), games_per_checkpoint=10)
    w, d, l = session.curve[30]
    assert w >= 9, session.curve
    assert session.illegal == 0


def test_adaptive_mean_act_time_under_pace_in_self_play():
    """Self-play acts (most of an environment's calls) stay far under the 12x10 pace."""
    spec = public("random-1", "most", "standard")
    agent = harness.load_agent_class("adaptive")()
    agent.prepare(harness.env_info(spec, 10))
    session = harness.Session(env="", rules="")
    for _ in range(10):
        harness.play_self(agent, spec, session)
    pace_ms = 0.1 * 12 * 10
    assert session.clock_all.mean_ms < 0.5 * pace_ms, session.clock_all.mean_ms


def test_greedy_counts_standard_flips_like_the_engine():
    module = harness.load_agent_module("greedy")
    spec = public("random-3", "most", "standard")
    rows, cols = spec.layout.rows, spec.layout.cols
    agent = module.Agent()
    agent.prepare(harness.env_info(spec, 0))
    for board, side in random_positions(spec, 80, seed=3):
        ref = reference_board(spec, board, side)
        own = (board == side).reshape(rows, cols)
        opp = (board == 3 - side).reshape(rows, cols)
        for cell in ref.legal():
            assert agent.flips(own, opp, *divmod(cell, cols)) == len(ref.flips(cell, side))


@pytest.mark.parametrize("name", ["random", "greedy", "positional", "learner"])
def test_simple_agents_are_legal_and_deterministic(name):
    spec = public("random-2", "most", "short-1")
    first = harness.run_session(name, spec, budget=5, checkpoints=(0, 5), games_per_checkpoint=6)
    second = harness.run_session(name, spec, budget=5, checkpoints=(0, 5), games_per_checkpoint=6)
    assert first.illegal == 0
    assert first.curve == second.curve


def test_greedy_beats_random_on_most_standard():
    spec = public("standard", "most", "standard")
    session = harness.run_session("greedy", spec, budget=0, checkpoints=(0,), games_per_checkpoint=40)
    w, d, l = session.curve[0]
    assert w > l


def test_positional_values_cells_by_the_lines_the_layout_closes():
    """Corners (all four lines closed) top the table, edges next, the centre least; a cell
    boxed in by obstacles counts as a corner, and its neighbours are guarded while it is empty."""
    agent = harness.load_agent_class("positional")()
    agent.prepare(
        {
            "rows": 6,
            "cols": 6,
            "obstacles": [[1, 1], [1, 2], [1, 3], [2, 1]],
            "interaction_budget": 0,
            "env_index": 0,
            "env_count": 1,
        }
    )
    value = agent.value.reshape(6, 6)
    assert value[0, 0] == value[5, 5] == max(agent.value)
    assert value[0, 0] > value[0, 3] > value[4, 4]
    assert 2 * 6 + 2 in agent.corners  # (2, 2): each of its four lines ends at an obstacle above or left
    assert 3 * 6 + 3 in agent.guards[2 * 6 + 2] and 1 * 6 + 1 not in agent.guards[2 * 6 + 2]


@pytest.mark.parametrize("layout", ["standard", "random-1"])
def test_positional_beats_random_on_most_standard(layout):
    spec = public(layout, "most", "standard")
    session = harness.run_session("positional", spec, budget=0, checkpoints=(0,), games_per_checkpoint=20)
    w, d, l = session.curve[0]
    assert w >= 15, session.curve


def test_positional_avoids_the_cell_next_to_an_empty_corner():
    """Of two legal cells of equal value, the one beside an empty corner is not played."""
    agent = harness.load_agent_class("positional")()
    agent.prepare({"rows": 8, "cols": 8, "obstacles": [], "interaction_budget": 0, "env_index": 0, "env_count": 1})
    obs = np.zeros((3, 8, 8), dtype=np.float32)
    mask = np.zeros(64, dtype=np.int8)
    mask[[0 * 8 + 1, 0 * 8 + 4]] = 1  # b1 (beside the empty a1) and e1: both edge cells
    assert agent.act(obs, mask) == 4
    obs[1, 0, 0] = 1.0  # the corner taken: b1 is an ordinary edge cell again, the lowest index
    assert agent.act(obs, mask) == 1


@pytest.mark.parametrize("win,expect", [("most", "most"), ("fewest", "fewest")])
@pytest.mark.parametrize("layout", ["standard", "random-2"])
def test_learner_infers_the_objective_from_self_play(layout, win, expect):
    spec = public(layout, win, "standard")
    agent = harness.load_agent_class("learner")()
    agent.prepare(harness.env_info(spec, 10))
    assert agent.objective() == "most"  # before any outcome
    session = harness.Session(env="", rules="")
    for _ in range(10):
        harness.play_self(agent, spec, session)
    assert agent.objective() == expect, agent.votes


def test_learner_votes_only_on_decisive_outcomes():
    agent = harness.load_agent_class("learner")()
    agent.prepare({"rows": 8, "cols": 8, "obstacles": [], "interaction_budget": 4, "env_index": 0, "env_count": 1})
    agent.observe_outcome({"winner": "draw", "black_discs": 40, "white_discs": 24, "your_color": "both"})
    agent.observe_outcome({"winner": "white", "black_discs": 32, "white_discs": 32, "your_color": "both"})
    assert agent.votes == {"most": 0, "fewest": 0}
    agent.observe_outcome({"winner": "white", "black_discs": 40, "white_discs": 24, "your_color": "both"})
    assert agent.objective() == "fewest"


def test_learner_beats_random_under_fewest_once_it_has_learnt():
    """Under `fewest` it loses while it plays for `most` (zero-shot) and wins after 20 games."""
    spec = public("standard", "fewest", "standard")
    session = harness.run_session("learner", spec, budget=20, checkpoints=(0, 20), games_per_checkpoint=20)
    assert session.curve[0][0] < 10 and session.curve[20][0] >= 15, session.curve
    assert session.illegal == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "layout,win,capture,bar",
    [
        ("standard", "most", "orthogonal", 0.6),
        ("standard", "fewest", "short-1", 0.6),
        ("random-2", "fewest", "short-2", 0.4),
        ("random-1", "fewest", "longest", 0.6),
    ],
)
def test_adaptive_curve_to_500(layout, win, capture, bar):
    """The agent has learnt by 500 games: well over what the zero-shot games give.

    The README's target is the paper's majority / minority level (about 0.95). Since the pace
    is judged per phase the agent no longer spends self-play's savings on the measured games
    (at most about 0.7 of the pace a move), and it falls short of that target on some pairs:
    quiet, 20/20, 16-19/20, 18-19/20 and 9-17/20 (random-2 fewest short-2) here, less on a
    loaded machine, since its searches follow the clock. The bars hold that level; the
    README's figures are to be measured again under the per-phase pace.
    """
    spec = public(layout, win, capture)
    session = harness.run_session("adaptive", spec, budget=500, checkpoints=(500,), games_per_checkpoint=20)
    assert session.win_rate(500) >= bar, session.curve
    assert session.illegal == 0


@pytest.mark.parametrize("objective,expect", [((0.5, 2.0), 1.0), ((-1.0, 0.5), 0.0), ((0.5, 0.55), 0.5)])
def test_adaptive_playout_scores_for_the_root_player(objective, expect):
    """A finished position: the playout returns the result for the player who just moved."""
    module = harness.load_agent_module("adaptive")
    b = module.Board(6, 6, [])
    s = module.Searcher(b)
    s.set_objective(*objective)
    # The root player owns the top three rows, its opponent one cell: nobody can move.
    root = sum(1 << (r * b.stride + c) for r in range(3) for c in range(6))
    other = 1 << (5 * b.stride + 5)
    assert b.legal(other, root, s.rule) == 0 and b.legal(root, other, s.rule) == 0
    assert s.playout(other, root, random.Random(0)) == expect


def test_adaptive_gives_the_time_around_each_call_back_from_its_share():
    """The host's pace counts the time between a reply and the next call as well: the agent
    measures it within a game before freeze (after it, the other agent thinks in that gap) and
    shrinks each move's share of the pace as it grows."""
    spec = next(s for s in public_tier() if s.layout.rows == 8 and s.name.startswith("standard"))
    agent = harness.load_agent_class("adaptive")()
    agent.prepare(harness.env_info(spec, 2000))
    pace = agent.board_pace
    assert agent._share() == pytest.approx(0.6 * pace)  # no gap measured: 60% of the pace, as before
    game = Game(spec)

    def turn(host_seconds: float) -> None:
        """The agent moves, the host takes `host_seconds` more to come back (random replies)."""
        game.play(agent.act(game.observation(), game.legal_mask()))
        agent.returned -= host_seconds
        game.play(int(np.flatnonzero(game.legal_mask())[0]))

    turn(0.5 * pace)
    turn(0.0)
    # 0.02 of the gap joins the mean: at least the host's half pace, at most the clip.
    assert 0.02 * 0.5 * pace <= agent.gap <= 0.02 * 10 * pace
    agent.gap = 0.5 * pace
    assert agent._share() == pytest.approx(0.2 * pace)  # 70% of the pace less the gap
    agent.gap = pace
    assert agent._share() == pytest.approx(0.06 * pace)  # never below a tenth of the 60%
    agent.freeze()
    gap = agent.gap
    turn(10 * pace)
    turn(0.0)
    assert agent.gap == gap  # after freeze the gap holds the opponent's thinking: not measured
