"""Whole rounds with in-process agents: the round of docs/architecture.md, its metrics and its files."""

from __future__ import annotations

import gzip
import json

import pytest
import yaml

from engine import Win, public_tier
from engine.opponents import Meter, seated_opponent
from grader.play.match import play_engine_games, play_game
from grader.rounds.orchestrate import run_round
from grader.rounds.records import read_record, record_path
from grader.rounds.results import load_results
from grader.verification.verify import verify
from tests.rounds.conftest import EIGHT, field, small_plan, without_execution

pytestmark = pytest.mark.timeout(180)


def test_a_round_of_eight_publishes_standing_elo_and_verifies(dirs):
    out, private = dirs
    plan = small_plan(field(*EIGHT))
    outcome = run_round(plan, out, private, jobs=1, command="test")
    assert outcome.status == "published"
    data = load_results(outcome.public_path)
    assert list(data)[0] == "schema_version"
    assert data["round"]["standing_published"] and data["round"]["private"]  # 2 environments: private
    assert not data["round"]["leaderboard"]
    names = [a["name"] for a in data["agents"]]
    assert names == sorted(names) and len(names) == 8
    by_name = {a["name"]: a for a in data["agents"]}
    assert by_name["random"]["elo"] == 1000.0 and data["elo"]["anchor"] == "random = 1000"
    for agent in data["agents"]:
        assert [p["games"] for p in agent["curve"]] == [0, 5, 10]
        assert agent["sae"]["b0"] == 5 and agent["sae"]["b_max"] == 10
        # 7 opponents x 2 games x 2 environments, nobody faulted.
        assert agent["record"]["games"] == 28 and agent["standing"]["faulted_games"] == 0
        lo, hi = agent["standing"]["interval"]
        assert lo <= agent["standing"]["value"] <= hi
        assert agent["standing"]["method"] == "environments-floor"  # a round names how its interval was made
    assert sorted(a["standing"]["rank"] for a in data["agents"])[0] == 1
    # Scored games: 8 agents x 3 checkpoints x 2, plus 28 pairs x 2, per environment.
    assert data["games"]["count"] == 2 * (8 * 3 * 2 + 28 * 2)
    for env in data["environments"]:
        for row in env["agents"]:
            assert row["self_play"]["games"] == 10 and row["status"] == "ok"
    report = verify(outcome.public_path, private)
    assert report.replayed == 2 * data["games"]["count"]  # the public games and the staff copy


def test_in_process_agents_get_the_wire_s_protocol(dirs):
    # tests.rounds.agents.Learner asserts env_info has no rules, your_color is "both", exactly
    # `budget` outcomes arrive and none after freeze: any violation is an agent_error fault.
    out, private = dirs
    plan = small_plan(field(("alpha", "Learner"), references=("random",)), budget=12, checkpoints=(0, 4, 12))
    outcome = run_round(plan, out, private, command="test")
    data = load_results(outcome.public_path)
    assert all(row["status"] == "ok" for env in data["environments"] for row in env["agents"])
    record = read_record(record_path(private / plan.round_id, 0))
    assert record.entrants["alpha"].fault is None
    assert record.entrants["alpha"].self_play.games == 12


def test_agent_fault_scores_zero_and_voids_its_pairings(dirs):
    out, private = dirs
    plan = small_plan(
        field(("alpha", "Learner"), ("crash", "CrashLate"), ("prep", "CrashOnPrepare"), ("never", "NeverLegal"))
    )
    outcome = run_round(plan, out, private, command="test")
    data = load_results(outcome.public_path)
    agents = {a["name"]: a for a in data["agents"]}
    assert agents["crash"]["faults"]["agent_error"] == 2 and agents["crash"]["faulted_envs"] == 2
    assert agents["prep"]["faults"]["agent_error"] == 2
    assert agents["never"]["faults"]["forfeit"] == 2
    for name in ("crash", "prep", "never"):
        assert all(p["win_rate"] == 0 and p["draw_rate"] == 0 for p in agents[name]["curve"])
        assert agents[name]["sae"]["value"] == 0.0 and agents[name]["record"]["games"] == 0
    # The survivors' pairings with the dead are void: 3 live opponents... only 3 of the 7 others are alive.
    live = ("alpha", "greedy", "minimax", "random")
    for name in live:
        assert agents[name]["record"]["games"] == 2 * 3 * 2 and agents[name]["faulted_envs"] == 0
    assert {p["a"] for p in data["pairwise"]} | {p["b"] for p in data["pairwise"]} == set(live)
    # Every scored game alpha played has one ending: 2 envs x (3 checkpoints x 2 + 3 live opponents x 2).
    assert sum(agents["alpha"]["endings"].values()) == 24
    assert data["round"]["standing_published"] is False  # a field of 7
    # Fault details and the agents' output stay in the staff record.
    record = read_record(record_path(private / plan.round_id, 0))
    assert "ZeroDivisionError" in record.entrants["crash"].fault["detail"]
    assert record.entrants["never"].fault_phase.startswith("self-play")
    assert "ZeroDivisionError" not in outcome.public_path.read_text()
    verify(outcome.public_path, private)


def test_paper_round_is_research_and_never_on_the_leaderboard(dirs):
    out, private = dirs
    plan = small_plan(field(references=("random", "greedy")), envs="1", tier="paper")
    data = load_results(run_round(plan, out, private, command="test").public_path)
    assert data["round"]["research"] and not data["round"]["leaderboard"]
    assert any("research" in note for note in data["round"]["notes"])


def test_games_file_is_deterministic_gzip(dirs):
    out, private = dirs
    plan = small_plan(field(references=("random", "greedy")), envs="1")
    outcome = run_round(plan, out, private, command="test")
    blob = (out / plan.round_id / "games.jsonl.gz").read_bytes()
    header, *games = gzip.decompress(blob).decode().splitlines()
    assert (
        json.loads(header)["kind"] == "games"
        and len(games) == yaml.safe_load(outcome.public_path.read_text())["games"]["count"]
    )
    assert blob[4:8] == b"\0\0\0\0"  # gzip mtime zero
    assert (
        (out / plan.round_id / "games.jsonl.gz")
        .read_bytes()
        .endswith((private / plan.round_id / "games.jsonl.gz").read_bytes()[-200:])
    )  # one body, two headers
    with gzip.open(out / plan.round_id / "games.jsonl.gz", "rt") as f:  # one stream to any gzip reader
        assert f.read().splitlines() == [header, *games]


def test_reference_self_play_in_one_call_is_the_self_play_game_by_game(tmp_path, monkeypatch):
    """A reference entrant's budget self-play is played in one kernel call; the round's
    results are those of playing it game by game."""
    from grader.play.session import ReferenceSession, Session

    plan = small_plan(field(("alpha", "Learner")), budget=12, checkpoints=(0, 5, 12))
    batched = run_round(plan, tmp_path / "a" / "rounds", tmp_path / "a" / "private", command="test")
    monkeypatch.setattr(ReferenceSession, "self_play", Session.self_play)
    one_by_one = run_round(plan, tmp_path / "b" / "rounds", tmp_path / "b" / "private", command="test")
    assert without_execution(batched.full_path) == without_execution(one_by_one.full_path)
    sp = yaml.safe_load(batched.full_path.read_text())["environments"][0]["agents"]
    assert all(a["self_play"]["games"] == 12 for a in sp) and any(a["self_play"]["black_wins"] for a in sp)


@pytest.mark.parametrize(
    "spec",
    [
        public_tier()[0],
        public_tier()[13],
        public_tier()[22],
        public_tier()[6].with_rules(win=Win.BAND, k=0.4, turn_limit=30),
    ],
    ids=["standard", "obstacles-short", "obstacles-longest", "band-turn-limit"],
)
def test_reference_games_in_kernel_calls_are_the_games_play_game_plays(spec):
    """Checkpoint and pairing games between reference players are played a seating at a
    time in one kernel call: each record is the one `play_game` gives, in order, and each
    player's thinking goes to its meter."""
    meters = {"greedy": Meter(), "minimax": Meter(), "random": Meter()}
    seats = [("greedy", "random"), ("random", "greedy"), ("minimax", "greedy"), ("greedy", "minimax")]
    seeds = [0, 17, 2**63 + 5, 99]

    def seat(name, color, seed):
        return name if name == "random" else seated_opponent(name, spec, seed, color, meters[name])

    games = [(seat(black, "black", seed), seat(white, "white", seed), seed) for black, white in seats for seed in seeds]
    fresh = [(seat(black, "black", seed), seat(white, "white", seed), seed) for black, white in seats for seed in seeds]
    expected = [play_game(spec, *game).to_dict() for game in fresh]
    charged = {name: meter.seconds for name, meter in meters.items()}
    assert [r.to_dict() for r in play_engine_games(spec, games)] == expected
    assert all(meters[n].seconds > charged[n] > 0 for n in ("greedy", "minimax"))
    assert any(r["termination"] == "turn_limit" for r in expected) == (spec.rules.turn_limit is not None)
    assert any("pass" in r["moves"] for r in expected) or spec is public_tier()[0]


def test_reference_scored_games_in_kernel_calls_are_the_round_played_game_by_game(tmp_path, monkeypatch):
    """A round's checkpoint and pairing games between reference players, played a seating at
    a time in one kernel call, are the round played game by game."""
    import grader.rounds.play as play

    plan = small_plan(field(("alpha", "Learner")), budget=6, checkpoints=(0, 6))
    batched = run_round(plan, tmp_path / "a" / "rounds", tmp_path / "a" / "private", command="test")
    monkeypatch.setattr(play, "play_games", lambda spec, games: [play_game(spec, *game) for game in games])
    one_by_one = run_round(plan, tmp_path / "b" / "rounds", tmp_path / "b" / "private", command="test")
    assert without_execution(batched.full_path) == without_execution(one_by_one.full_path)


def test_a_requested_run_is_private_whatever_its_size_and_verifies(dirs):
    """A requested run (/score, a round of one) is a private round (docs/rules.md §5): it says so, and
    verify recomputes the flag; an ordinary plan's key (and round id) is unchanged by it."""
    out, private = dirs
    one = field(references=("random",))
    plan = small_plan(one, envs="8", requested=True)
    assert plan.round_id != small_plan(one, envs="8").round_id
    assert "requested" not in small_plan(one, envs="8").to_dict()
    outcome = run_round(plan, out, private, jobs=1, command="test")
    data = load_results(outcome.public_path)
    assert data["round"]["private"] is True and not data["round"]["leaderboard"]
    assert data["provenance"]["config"]["requested"] is True
    assert data["round"]["notes"][0].startswith("a requested run: a private round")
    assert verify(outcome.public_path, private).replayed > 0  # verify raises on any difference
