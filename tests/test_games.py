"""A game's stored forms (grader.play.games) are the bytes the stored rounds hold: the fields are the
documents' keys in their order, and reading a stored game back and writing it again changes
no byte, so no digest (`games.sha256`, `self_play.games_sha256`) moves."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from engine import public_tier
from grader.common.files import dumps_json
from grader.play.games import KEPT_FIELDS, SCORED_FIELDS, KeptGame, ScoredGame
from grader.play.match import outcome_for, play_game
from grader.play.self_play import SELF_PLAY_COLOR
from grader.rounds.results import schema
from grader.season.disclosure import RULE_BEARING_GAME_KEYS

FIXTURES = Path(__file__).resolve().parent / "site" / "fixtures"
GAMES_FILES = sorted(FIXTURES.glob("*/*/games.jsonl.gz"))


def test_the_scored_fields_are_the_schemas_game_in_its_order():
    assert list(SCORED_FIELDS) == list(schema()["$defs"]["game"]["properties"])
    assert set(RULE_BEARING_GAME_KEYS) <= set(SCORED_FIELDS)


@pytest.mark.parametrize("path", GAMES_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_a_stored_game_read_back_writes_the_same_bytes(path):
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()[1:]
    assert lines
    for line in lines:
        doc = json.loads(line)
        again = ScoredGame.from_doc(doc).to_doc()
        # A public projection lacks what its tier withholds: the rest is the full form's, in order.
        assert dumps_json({k: v for k, v in again.items() if k in doc}) == line


def test_a_kept_self_play_game_is_its_seed_moves_forfeit_and_the_outcome_sent():
    spec = public_tier()[0]
    record = play_game(spec, "random", "random", 7)
    sent = outcome_for(record, SELF_PLAY_COLOR)
    doc = KeptGame.of(record, sent).to_doc()
    assert list(doc) == list(KEPT_FIELDS) == ["seed", "moves", "forfeit", "outcome"]
    assert doc == {
        "seed": 7,
        "moves": record.moves,
        "forfeit": record.forfeit,
        "outcome": [sent["winner"], sent["black_discs"], sent["white_discs"]],
    }
    assert dumps_json(KeptGame.from_doc(json.loads(dumps_json(doc))).to_doc()) == dumps_json(doc)
