"""The results schema (grader/documents/data/results-schema.json) is the one source of the round
document's shape; the dataclasses that write it must agree with it field for field."""

from __future__ import annotations

import dataclasses
import types
import typing

from grader.rounds import results
from grader.rounds.results import RoundResults, schema

JSON_TYPES = {
    int: {"integer", "number"},
    float: {"number"},
    str: {"string"},
    bool: {"boolean"},
    dict: {"object"},
    list: {"array"},
    type(None): {"null"},
}


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = schema()["$defs"][node["$ref"].rpartition("/")[2]]
    return node


def _types(node: dict) -> set[str]:
    t = node.get("type")
    if t is None:  # an enum or const: the types of its values
        values = node.get("enum", [node.get("const")])
        return {n for v in values for n in JSON_TYPES[type(v)]}
    return {t} if isinstance(t, str) else set(t)


def _check(hint, node: dict, where: str, problems: list[str]) -> None:
    node = _resolve(node)
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        allowed = set().union(*(JSON_TYPES.get(typing.get_origin(a) or a, {"object"}) for a in args))
        if not _types(node) <= allowed | {"integer"} or ("null" in _types(node)) != (type(None) in args):
            problems.append(f"{where}: {hint} against {sorted(_types(node))}")
        for a in args:
            if dataclasses.is_dataclass(a):
                _check(a, node, where, problems)
        return
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        names = [f.name for f in dataclasses.fields(hint)]
        if "object" not in _types(node):
            problems.append(f"{where}: {hint.__name__} against {sorted(_types(node))}")
        if names != list(node.get("properties", {})):
            problems.append(f"{where}: {hint.__name__} fields {names}, the schema {list(node.get('properties', {}))}")
        # A field that defaults to None is left out of the document when None (it came after
        # the first rounds were written): not required, and its schema need not allow null.
        omitted = {f.name for f in dataclasses.fields(hint) if f.default is None}
        if sorted(node.get("required", [])) not in (sorted(names), sorted(set(names) - omitted)):
            problems.append(f"{where}: required {node.get('required')}, fields {names}")
        for name in names:
            if name in node.get("properties", {}):
                field_hint = hints[name]
                if (
                    name in omitted
                    and name not in node.get("required", [])
                    and "null" not in _types(_resolve(node["properties"][name]))
                ):
                    field_hint = typing.Union[tuple(a for a in typing.get_args(field_hint) if a is not type(None))]  # noqa: UP007 - built from a runtime tuple
                _check(field_hint, node["properties"][name], f"{where}.{name}", problems)
        return
    if origin is list:
        if _types(node) != {"array"}:
            problems.append(f"{where}: a list against {sorted(_types(node))}")
        elif args and "items" in node:
            _check(args[0], node["items"], f"{where}[]", problems)
        return
    expected = JSON_TYPES[origin or hint]
    if not _types(node) <= expected:
        problems.append(f"{where}: {hint} against {sorted(_types(node))}")


def test_the_dataclasses_agree_with_the_schema():
    problems: list[str] = []
    _check(RoundResults, schema(), "(top)", problems)
    assert problems == []


def test_the_check_can_fail():
    """A field the schema does not have is found (the comparison is not vacuous)."""

    @dataclasses.dataclass
    class Wrong:
        games: int
        win_rate: float
        draw_rate: str
        extra: int = 0

    problems: list[str] = []
    _check(Wrong, schema()["$defs"]["curve_point"], "curve_point", problems)
    assert len(problems) >= 2 and any("extra" in p for p in problems) and any("draw_rate" in p for p in problems)
    assert results.CurvePoint is not Wrong
