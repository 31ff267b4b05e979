"""Red team, hostile documents: the arena's one YAML/JSON loader (grader.documents.yaml_io),
and the spec loader on top of it, refuse alias bombs, deep nesting and bytes that are not UTF-8
by name, before expanding them: a loader that expanded a bomb would run for hours or exhaust
memory, so the module's timeout is the bound (no test here times the loader)."""

from __future__ import annotations

import pytest
import yaml

from engine import SpecError
from grader.cli.main import main
from grader.documents.specs import load_spec
from grader.documents.yaml_io import DocumentError, load_yaml

pytestmark = pytest.mark.timeout(60)

# Nine levels of ten aliases each: a billion leaves from a few hundred bytes.
BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8))
    + "layout: *i\nrules: {win: most, capture: standard}\n"
)
GOOD_SPEC = "layout: {rows: 8, cols: 8, obstacles: []}\nrules: {win: most, capture: standard}\n"


@pytest.mark.parametrize(
    "text, message",
    [
        (BOMB, "alias bomb"),
        ("[" * 70 + "]" * 70, "nested"),
        ("".join(" " * i + "-\n" for i in range(0, 1400, 2)), "nested"),
        ("[" * 5000 + "]" * 5000, "nested|not valid YAML"),
        ('{"a": ' * 3000 + "1" + "}" * 3000, "nested|not valid YAML"),
        ("&a [*a]", "alias of itself"),
        ("a: [", "not valid YAML"),
    ],
)
def test_unbounded_documents_are_refused(text, message):
    with pytest.raises(DocumentError, match=message):
        load_yaml(text, "doc.yaml")


def test_ordinary_documents_load_as_pyyaml_loads_them():
    shared = "base: &b {rows: 8, cols: 8}\nmine: *b\nlist: [1, 2.5, null, true, 'x']\n"
    for text in (shared, GOOD_SPEC, "", "[" * 60 + "]" * 60):
        assert load_yaml(text, "doc.yaml") == yaml.safe_load(text)


def test_aliases_may_share_a_little(tmp_path):
    """A registry that reuses a block a few times is not a bomb."""
    text = "x: &x [" + ", ".join(["1"] * 1000) + "]\n" + "".join(f"k{i}: *x\n" for i in range(50))
    assert len(load_yaml(text, "doc.yaml")) == 51


@pytest.mark.parametrize(
    "content, message",
    [
        (BOMB.encode(), "alias bomb"),
        (("layout: " + "[" * 20000 + "]" * 20000 + "\n").encode(), "not a YAML/JSON spec"),
        (('{"layout": ' + "[" * 20000 + "]" * 20000 + "}").encode(), "not a YAML/JSON spec"),
        (b"layout: \xff\xfe\n", "not UTF-8 text: byte 8 is 0xff"),
        (b"layout: [1, 2\n", "not valid YAML"),
    ],
)
def test_a_hostile_spec_file_is_a_spec_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "spec.yaml"
    path.write_bytes(content)
    with pytest.raises(SpecError, match=message) as err:
        load_spec(path)
    assert str(path) in str(err.value)


def test_a_large_value_in_a_spec_is_shown_short(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("layout: [" + ", ".join(["123456789"] * 100_000) + "]\nrules: {win: most, capture: standard}\n")
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert "layout: must be a mapping" in str(err.value) and len(str(err.value)) < 500


def test_arena_perft_refuses_an_alias_bomb_at_once(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    assert main(["perft", str(path), "--depth", "1"]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "alias bomb" in err and "Traceback" not in err


def test_the_arenas_own_documents_are_bounded_too(tmp_path):
    """Accounts, competition settings, site settings: grader.documents.yaml_io reads them boundedly."""
    from grader.documents.yaml_io import read_yaml

    with pytest.raises(DocumentError, match="accounts.yaml: .*alias bomb"):
        load_yaml(BOMB, "accounts.yaml")
    with pytest.raises(DocumentError, match="nested"):
        load_yaml("[" * 500 + "]" * 500, "accounts.yaml")
    path = tmp_path / "site.yaml"
    path.write_bytes(b"schema_version: 1\ntitle: \xc3\x28\n")
    with pytest.raises(DocumentError, match="site.yaml: not UTF-8 text: byte 25 is 0xc3"):
        read_yaml(path)
    with pytest.raises(DocumentError, match="twice"):  # still strict
        load_yaml("a: 1\na: 2\n", "x")
