"""Spec validation: every problem named with its path; ids derived from content."""

from __future__ import annotations

import pytest

from engine import SpecError, parse_spec
from grader.documents.specs import load_spec

GOOD = {"layout": {"rows": 8, "cols": 8, "obstacles": [[0, 0]]}, "rules": {"win": "most", "capture": "standard"}}


def problems(data) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_spec(data)
    return err.value.problems


@pytest.mark.parametrize(
    "layout, rules, needle",
    [
        ({"rows": 3, "cols": 8}, {"win": "most", "capture": "standard"}, "layout.rows: must be 4..12, got 3"),
        ({"rows": 8.5, "cols": 8}, {"win": "most", "capture": "standard"}, "layout.rows: must be an integer"),
        ({"rows": "8", "cols": 8}, {"win": "most", "capture": "standard"}, "layout.rows: must be an integer"),
        ({"rows": True, "cols": 8}, {"win": "most", "capture": "standard"}, "layout.rows: must be an integer"),
        ({"rows": 8, "cols": 13}, {"win": "most", "capture": "standard"}, "layout.cols: must be 4..12, got 13"),
        ({"cols": 8}, {"win": "most", "capture": "standard"}, "layout.rows: missing"),
        (
            {"rows": 8, "cols": 8, "obstacles": [[8, 0]]},
            {"win": "most", "capture": "standard"},
            "layout.obstacles[0]: [8, 0] is off the 8x8 board",
        ),
        (
            {"rows": 8, "cols": 8, "obstacles": [[3, 3]]},
            {"win": "most", "capture": "standard"},
            "layout.obstacles[0]: [3, 3] is an opening cell",
        ),
        (
            {"rows": 8, "cols": 8, "obstacles": [[0, 0], [0, 0]]},
            {"win": "most", "capture": "standard"},
            "layout.obstacles[1]: [0, 0] is listed twice",
        ),
        (
            {"rows": 8, "cols": 8, "obstacles": [[0, 1.5]]},
            {"win": "most", "capture": "standard"},
            "layout.obstacles[0]: must be [row, col] with two integers",
        ),
        ({"rows": 8, "cols": 8}, {"win": "most", "capture": "knight"}, "rules.capture: must be one of"),
        (
            {"rows": 8, "cols": 8},
            {"win": "most", "capture": "standard", "k": 0.8},
            "rules.k: only the band win condition",
        ),
        ({"rows": 8, "cols": 8}, {"win": "band", "capture": "standard"}, "rules.k: the band win condition needs k"),
        ({"rows": 8, "cols": 8}, {"win": "band", "capture": "standard", "k": "0.8"}, "rules.k: must be a number"),
        ({"rows": 8, "cols": 8}, {"win": "most", "capture": "standard", "turn_limit": 0}, "rules.turn_limit"),
        ({"rows": 8, "cols": 8}, {"win": "most", "capture": "standard", "colour": 1}, "rules.colour: unknown field"),
    ],
)
def test_bad_specs_name_the_field(layout, rules, needle):
    found = problems({"layout": layout, "rules": rules})
    assert any(needle in p for p in found), found


def test_every_problem_is_listed_at_once():
    found = problems({"layout": {"rows": 3, "cols": 99}, "rules": {"win": "sometimes", "capture": "x"}})
    assert len(found) == 4


def test_not_a_mapping():
    assert "must be a mapping" in problems([1, 2])[0]


def test_id_is_content_derived():
    a = parse_spec(GOOD)
    b = parse_spec(
        {"rules": {"capture": "standard", "win": "most"}, "layout": {"obstacles": [[0, 0]], "cols": 8, "rows": 8}},
        name="another name",
    )
    assert a.id == b.id and a.id.startswith("env-") and len(a.id) == 16
    c = parse_spec({**GOOD, "rules": {"win": "fewest", "capture": "standard"}})
    assert c.id != a.id


def test_claimed_id_must_match():
    assert "does not match the content" in problems({**GOOD, "id": "env-000000000000"})[0]
    spec = parse_spec(GOOD)
    assert parse_spec({**GOOD, "id": spec.id}) == spec


def test_load_yaml_and_json(tmp_path):
    (tmp_path / "a.yaml").write_text("layout: {rows: 6, cols: 6}\nrules: {win: fewest, capture: short-1}\n")
    (tmp_path / "b.json").write_text(
        '{"layout": {"rows": 6, "cols": 6}, "rules": {"win": "fewest", "capture": "short-1"}}'
    )
    assert load_spec(tmp_path / "a.yaml") == load_spec(tmp_path / "b.json")
    (tmp_path / "bad.yaml").write_text("layout: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(tmp_path / "bad.yaml")
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "missing.yaml")


def test_round_trip():
    spec = parse_spec(
        {
            "layout": {"rows": 10, "cols": 7, "obstacles": [[9, 6], [0, 0]]},
            "rules": {"win": "band", "k": 0.4, "capture": "longest", "turn_limit": 10},
        }
    )
    assert parse_spec(spec.to_dict()) == spec
    assert spec.layout.obstacles == ((0, 0), (9, 6))
