"""`arena verify` catches one changed move or one changed number, and names it."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest
import yaml

from grader.cli import main
from grader.results import ResultsError, load_results
from grader.rounds.orchestrate import run_round
from grader.rounds.records import gzip_bytes
from grader.verify import Difference, verify
from tests.rounds.conftest import field, small_plan

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify")
    plan = small_plan(field(("alpha", "Learner")), envs="random-2 most/standard")
    outcome = run_round(plan, root / "rounds", root / "private", command="test")
    return outcome.public_path


def copy_round(src, dst):
    """A copy of a published round (results and games) to tamper with."""
    data = yaml.safe_load(src.read_text())
    games = gzip.decompress((src.parent / data["games"]["path"]).read_bytes()).decode().splitlines()
    return data, games


def write(dst_dir, data, lines, fix_hash=True):
    blob = gzip_bytes(("\n".join(lines) + "\n").encode())
    (dst_dir / data["round"]["id"]).mkdir(parents=True, exist_ok=True)
    (dst_dir / data["games"]["path"]).write_bytes(blob)
    if fix_hash:  # a careful forger recomputes the hash the results file carries
        data["games"]["sha256"] = "sha256:" + hashlib.sha256(blob).hexdigest()
    path = dst_dir / f"{data['round']['id']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_an_untouched_round_verifies(published):
    report = verify(published)
    assert report.replayed == report.games > 0 and report.numbers > 100
    assert main(["verify", str(published)]) == 0


def test_one_changed_move_is_caught(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[5])
    cells = [i for i, m in enumerate(game["moves"]) if isinstance(m, int)]
    game["moves"][cells[3]] = (game["moves"][cells[3]] + 1) % 48
    lines[5] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=r"game 5 .*move"):
        verify(path)
    assert main(["verify", str(path)]) == 1


def test_a_changed_games_file_without_its_hash_is_caught(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[1])
    game["winner"] = {"black": "white", "white": "black", None: "black"}[game["winner"]]
    lines[1] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines, fix_hash=False)
    with pytest.raises(Difference, match="sha256"):
        verify(path)


def test_one_changed_number_is_caught_and_named(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    data["agents"][0]["sae"]["value"] = round(data["agents"][0]["sae"]["value"] + 0.01, 6)
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=r"agents\[0\]\.sae\.value"):
        verify(path)


def test_a_changed_outcome_is_caught_by_the_replay(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[2])
    game["winner"] = {"black": "white", "white": "black", None: "black"}[game["winner"]]
    lines[2] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match="winner"):
        verify(path)


def test_the_loader_lists_every_problem_by_path(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    data["round"]["tier"] = "practice"
    data["agents"][0]["curve"][1]["win_rate"] = 1.5
    del data["field"][0]["digest"]
    data["bogus"] = 1
    path = write(tmp_path, data, lines)
    with pytest.raises(ResultsError) as err:
        load_results(path)
    problems = err.value.problems
    assert "round.tier: must be one of ['public', 'paper', 'ladder', 'final'], got 'practice'" in problems
    assert "agents[0].curve[1].win_rate: must be <= 1, got 1.5" in problems
    assert "field[0].digest: missing" in problems
    assert "bogus: unknown field" in problems


@pytest.mark.parametrize("where, change, message", [
    ("budget", lambda d: d["provenance"]["config"].update(budget=d["provenance"]["config"]["budget"] + 1),
     r"self_play\.games"),
    ("a limit", lambda d: d["provenance"]["limits"].update(act_hard_seconds=4.5), r"round\.id"),
    ("the arena's version", lambda d: d["provenance"].update(arena_version="9.9.9"), r"round\.id"),
    ("an entrant's digest", lambda d: d["field"][0].update(digest="sha256:" + "0" * 64), r"round\.id"),
    ("an environment's name", lambda d: d["environments"][0].update(name="renamed"), r"round\.id"),
    ("a self-play count", lambda d: d["environments"][0]["agents"][0]["self_play"].update(
        black_wins=d["environments"][0]["agents"][0]["self_play"]["black_wins"] + 1), "black_wins"),
    ("the notes", lambda d: d["round"]["notes"].append("an extra note"), r"round\.notes"),
    ("a reference's digest", lambda d: d["field"].append({"name": "random", "kind": "reference",
                                                           "account": None, "digest": "reference:greedy"}),
     "a reference entrant"),
    ("the description", lambda d: d["disclosure"].update(description="everything"), "disclosure"),
    ("the environment ids", lambda d: d["provenance"]["config"]["env_ids"].__setitem__(0, "env-000000000000"),
     "env_ids"),
    ("the retries", lambda d: d["provenance"]["execution"]["arena_faults"].extend(
        [{"env": "E01", "entrant": "alpha", "kind": "pipe", "phase": "act"}] * 3), "arena"),
])
def test_what_the_file_says_of_the_round_itself_is_checked(published, tmp_path, where, change, message):
    """The configuration, limits, field and environments are held by the round id (a hash of
    them); the rest of what a file states about itself is held to what it follows from."""
    data, lines = copy_round(published, tmp_path)
    change(data)
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=message):
        verify(path)
