"""Helpers for whole-round tests: small in-process fields on small public environments."""

from __future__ import annotations

import copy
import gzip
from pathlib import Path

import pytest
import yaml

from grader.play.session import parse_entrant, python_entrant
from grader.rounds.orchestrate import make_plan

# Two 6x8 public environments (the smallest layout) with different rules.
SMALL_ENVS = "random-2 most/standard,random-2 fewest/standard"


def field(*python: tuple[str, str], references=("random", "greedy", "minimax")) -> list:
    """Reference players by name plus in-process agents (name, Class of tests.rounds.agents)."""
    return [parse_entrant(r) for r in references] + [python_entrant(n, f"tests.rounds.agents:{c}") for n, c in python]


EIGHT = [
    ("alpha", "Learner"),
    ("bravo", "FirstLegal"),
    ("charlie", "LastLegal"),
    ("delta", "Learner"),
    ("echo", "Chatty"),
]


def small_plan(
    entrants,
    envs=SMALL_ENVS,
    tier="public",
    budget=10,
    checkpoints=(0, 5, 10),
    games=2,
    pairing=2,
    seed="7",
    tier_seed=None,
    **kw,
):
    return make_plan(tier, entrants, envs, budget, list(checkpoints), games, pairing, seed, tier_seed, "local", **kw)


def without_execution(path: Path) -> dict:
    """A results file minus how it was run (command, shards, arena faults): what must be identical."""
    data = yaml.safe_load(path.read_text())
    data = copy.deepcopy(data)
    data["provenance"].pop("execution")
    return data


def read_games(folder: Path, round_id: str) -> bytes:
    return gzip.decompress((folder / round_id / "games.jsonl.gz").read_bytes())


@pytest.fixture
def dirs(tmp_path):
    out, private = tmp_path / "rounds", tmp_path / "private"
    return out, private
