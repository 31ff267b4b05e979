"""grader.documents.schema's fast predicate, which only says "valid", agrees with the jsonschema library,
which decides and lists the problems."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from grader.documents.schema import validate
from grader.rounds.results import read_document, schema

ROUNDS = Path(__file__).parent / "site" / "fixtures" / "rounds"
VALUES = [None, True, False, 0, -1, 1.5, 2, "x", "", "sha256:" + "a" * 64, [], {}, [1], {"a": 1}, 10**9, -0.5]


def _paths(value, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


def _mutate(doc: dict, rng: random.Random, paths: list[tuple]) -> dict:
    """`doc` with one value replaced, removed, or one added beside it."""
    out = copy.deepcopy(doc)
    path = rng.choice(paths[1:])
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    roll = rng.random()
    if roll < 0.6:
        parent[path[-1]] = rng.choice(VALUES)
    elif roll < 0.8:
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent["unknown_field"] = rng.choice(VALUES)
    else:
        parent.append(rng.choice(VALUES))
    return out


@pytest.mark.slow
def test_the_predicate_and_the_library_agree_on_mutated_rounds():
    from grader.documents.schema import _compiled

    root = schema()
    valid, validator = _compiled(root, root)
    rng = random.Random(7)
    invalid = 0
    for path in sorted(ROUNDS.glob("*.yaml")):
        doc, _ = read_document(path)
        assert valid(doc) and validate(doc, root) == []
        paths = _paths(doc)
        for _ in range(24):
            mutated = _mutate(doc, rng, paths)
            verdict = validator.is_valid(mutated)
            assert valid(mutated) == verdict, (path.name, validate(mutated, root)[:3])
            invalid += not verdict
    assert invalid > 20  # the mutations do break documents: the agreement is not all "valid"


def test_true_is_not_one():
    """JSON Schema's equality, which the predicate keeps too: true is not the schema_version 1."""
    from grader.documents.schema import _compiled

    root = schema()
    valid, _ = _compiled(root, root)
    doc, _ = read_document(sorted(ROUNDS.glob("*.yaml"))[0])
    doc["schema_version"] = True
    assert not valid(doc) and validate(doc, root) == ["schema_version: must be 1, got True"]
