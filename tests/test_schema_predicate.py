"""grader.schema checks a document twice over: a generated predicate says whether it is valid,
and only when it is not do the compiled checks list the problems. The two must agree."""

from __future__ import annotations

import copy
import random
from pathlib import Path

from grader.results import read_document, schema
from grader.schema import validate

ROUNDS = Path(__file__).parent / "site" / "fixtures" / "rounds"
VALUES = [None, True, False, 0, -1, 1.5, 2, "x", "", "sha256:" + "a" * 64, [], {}, [1], {"a": 1}, 10 ** 9, -0.5]


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


def test_the_predicate_and_the_messages_agree_on_mutated_rounds():
    from grader.schema import _compiled

    root = schema()
    valid, check = _compiled(root, root)
    rng = random.Random(7)
    invalid = 0
    for path in sorted(ROUNDS.glob("*.yaml")):
        doc, _ = read_document(path)
        assert valid(doc) and validate(doc, root) == []
        paths = _paths(doc)
        for _ in range(60):
            mutated = _mutate(doc, rng, paths)
            problems: list[str] = []
            check(mutated, "", problems)
            assert valid(mutated) == (not problems), (path.name, problems[:3])
            invalid += bool(problems)
    assert invalid > 50  # the mutations do break documents: the agreement is not all "valid"
