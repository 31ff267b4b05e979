"""A pairing starts from each agent's frozen state: renaming a third entrant (`aaa` to `zzz`),
which only moves the pairings into another order, changes no game of any other pairing,
for agents that carry state from game to game (an RNG drawn once, a move count), in process
and in both sandboxes (docs/architecture.md, "A round"). And sessions played at once on two
cores give the bytes of sessions played one after another."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader.play.session import parse_entrant, python_entrant
from grader.rounds.orchestrate import make_plan, run_round
from tests.rounds.conftest import read_games

pytestmark = pytest.mark.timeout(600)
AGENT = Path(__file__).resolve().parent.parent / "agents" / "stateful_counter"
ENVS = "random-2 most/standard,random-2 fewest/short-1"


def _entrants(kind: str, third: str, folder: Path) -> list:
    names = ("p", "q", "r", third)
    if kind == "python":
        return [python_entrant(n, "tests.rounds.agents:Learner") for n in names]
    entrants = []
    for name in names:
        # Every copy the same agent (one digest): the names alone differ.
        target = folder / name
        shutil.copytree(AGENT, target, dirs_exist_ok=True)
        entrants.append(parse_entrant(f"{name}={target}"))
    return entrants


def _play(kind: str, third: str, folder: Path, jobs: int = 1) -> bytes:
    """The round's stored games (JSON lines), with its id taken out."""
    sandbox = "local" if kind == "python" else kind
    plan = make_plan("public", _entrants(kind, third, folder / "agents"), ENVS, 6, [0, 6], 2, 4, "5", None, sandbox)
    outcome = run_round(plan, folder / "out", folder / "private", jobs=jobs)
    assert outcome.status == "published", outcome.message
    return read_games(folder / "out", plan.round_id).replace(plan.round_id.encode(), b"ROUND")


def _pairing_games(kind: str, third: str, tmp_path: Path) -> dict[tuple[str, str], list[str]]:
    """The stored pairing games of each pair, as their JSON lines with the third entrant's
    name taken out."""
    by_pair: dict[tuple[str, str], list[str]] = {}
    for line in _play(kind, third, tmp_path / third).decode().splitlines():
        game = json.loads(line)
        if game.get("phase") != "pairing":  # the header line, checkpoint games
            continue
        assert game["ending"] not in ("fault", "forfeit"), game
        pair = tuple(sorted(("X" if n == third else n) for n in (game["black"], game["white"])))
        by_pair.setdefault(pair, []).append(line.replace(f'"{third}"', '"X"'))
    return by_pair


@pytest.mark.parametrize("kind", ["python", "local", "docker"])
def test_renaming_an_entrant_changes_no_other_pairing(kind, request, tmp_path):
    if kind != "python":
        request.getfixturevalue(f"{kind}_sandbox")  # skipped, saying why, where it cannot run
    first = _pairing_games(kind, "aaa", tmp_path)
    second = _pairing_games(kind, "zzz", tmp_path)
    assert set(first) == set(second) == {("X", "p"), ("X", "q"), ("X", "r"), ("p", "q"), ("p", "r"), ("q", "r")}
    assert all(len(games) == 2 * 4 for games in first.values())  # two environments of 4 games
    # p v q came after p's and q's pairings with aaa, and before those with zzz: the same games.
    # (The third's own pairings differ: their seeds and colours follow its name.)
    for pair in (("p", "q"), ("p", "r"), ("q", "r")):
        assert first[pair] == second[pair], pair


@pytest.mark.parametrize("kind", ["python", "local", "docker"])
def test_sessions_at_once_on_two_cores_give_the_bytes_of_one_at_a_time(kind, request, tmp_path):
    if kind != "python":
        request.getfixturevalue(f"{kind}_sandbox")
    # Four entrants on two cores: two learn at once, the pairings take both cores.
    assert _play(kind, "aaa", tmp_path / "one", jobs=1) == _play(kind, "aaa", tmp_path / "two", jobs=2)
