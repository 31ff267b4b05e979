"""Each document's schema in grader/documents/data/ is a valid JSON Schema that says what every field means,
and each identifier has one pattern (grader/common/patterns.py) that the schemas and the code share."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from grader.common import patterns
from grader.documents.schema import problems_of, validate
from grader.documents.yaml_io import DocumentError

DATA = Path(__file__).resolve().parent.parent / "grader" / "documents" / "data"
# Every document's schema, the results schema (results-schema.json) too.
DESCRIBED = sorted(DATA.glob("*.json"))


def undescribed(node, path: str = "") -> list[str]:
    """The fields under `node` that have no description (a `$ref` carries its target's)."""
    out: list[str] = []
    if not isinstance(node, dict):
        return out
    for key, sub in node.get("properties", {}).items():
        if isinstance(sub, dict) and "description" not in sub and "$ref" not in sub:
            out.append(f"{path}.{key}")
        out += undescribed(sub, f"{path}.{key}")
    for key in ("items", "additionalProperties"):
        out += undescribed(node.get(key), f"{path}[]")
    for name, sub in node.get("$defs", {}).items():
        out += undescribed(sub, f"$defs.{name}")
    return out


@pytest.mark.parametrize("path", DESCRIBED, ids=lambda p: p.name)
def test_a_schema_is_valid_and_describes_every_field(path):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema.get("title") and schema.get("description")
    assert undescribed(schema) == []


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_an_identifier_has_the_one_pattern(path):
    schema = json.loads(path.read_text())
    for name, sub in schema.get("$defs", {}).items():
        if name in patterns.BY_NAME:
            assert sub["pattern"] == patterns.BY_NAME[name], name


def test_handles_and_round_ids_agree_everywhere():
    """The history's handle and the site's round id are the accounts' and the results'."""
    from grader.history.owner_history import history_path

    assert problems_of({"schema_version": 1, "handle": "Upper_Case", "entries": []}, "history") == [
        "handle: 'Upper_Case' is not a handle: 1-32 lower-case letters, digits and inner hyphens"
    ]
    with pytest.raises(ValueError, match="is not a handle"):
        history_path(Path("."), "Upper_Case")
    site = {"schema_version": 1, "series": {"rounds": [{"id": "ladder-abc"}]}}
    assert problems_of(site, "site") == ["series.rounds[0].id: 'ladder-abc' is not a round id: <tier>-<10 hex digits>"]
    assert patterns.ROUND_ID_RE.match("final-0123456789") and not patterns.ROUND_ID_RE.match("other-0123456789")


def test_problems_name_the_field_and_the_file():
    from grader.season.quota import parse_log

    with pytest.raises(DocumentError) as err:
        parse_log({"schema_version": 1, "requests": [{"id": "x"}]}, "requests/score.yaml")
    message = str(err.value)
    assert message.startswith("requests/score.yaml: ")
    assert "requests[0].id: 'x' is not a request id: c-<comment id>" in message
    assert "requests[0].commit: missing" in message


def test_an_integer_is_never_a_float_or_a_bool():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert validate({"n": 1}, schema) == []
    assert validate({"n": 1.0}, schema) == ["n: expected integer, got float 1.0"]
    assert validate({"n": True}, schema) == ["n: expected integer, got bool True"]
