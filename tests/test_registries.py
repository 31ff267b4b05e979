"""Every copy of a registry in a file people read (the results schema's lists, the docs' fault
tables, the kit's sandboxes) is what `python -m grader.cli.registries --write` makes of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader.cli import registries
from grader.common.faults import Payer
from grader.common.json_spans import PointerError, replace_value, value_span

ARENA_KINDS = "/properties/provenance/properties/execution/properties/arena_faults/items/properties/kind/enum"
FAULT_COUNTS = "/properties/agents/items/properties/faults/properties"


def test_every_copy_is_what_the_registries_give():
    stale = registries.stale()
    assert not stale, registries.stale_message(stale)


def copy_of_the_files(root: Path) -> Path:
    for path in registries.generated():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(registries.ROOT / path, root / path)
    return root


def test_a_stale_copy_is_named_with_the_command(tmp_path, capsys):
    root = copy_of_the_files(tmp_path)
    schema = root / registries.SCHEMA
    text = schema.read_text()
    schema.write_text(
        text.replace(
            '"kind": {"enum": ["launch_failed", "pipe", "oom", "infrastructure"]',
            '"kind": {"enum": ["launch_failed", "pipe", "infrastructure"]',
        )
    )
    protocol = root / "docs" / "protocol.md"
    protocol.write_text(protocol.read_text().replace("| `pipe` | arena |", "| `pipe` | agent |"))
    assert registries.stale(root) == [registries.SCHEMA, "docs/protocol.md"]
    assert registries.main(["--check", "--root", str(root)]) == 1
    assert capsys.readouterr().err.strip() == (
        "copies of the registries are stale in grader/documents/data/results-schema.json, "
        "docs/protocol.md: run `python -m grader.cli.registries --write`"
    )
    assert registries.main(["--write", "--root", str(root)]) == 0
    assert schema.read_text() == text and registries.stale(root) == []


def test_a_new_kind_lands_in_every_list(monkeypatch):
    from grader.common.faults import kinds

    monkeypatch.setattr(registries, "kinds", lambda payer=None: kinds(payer) + (f"new_{payer.value}",))
    files = registries.generated()
    schema = json.loads(files[registries.SCHEMA][1])
    properties = schema["properties"]
    agents = properties["agents"]["items"]["properties"]
    assert agents["faults"]["required"][-1] == "new_agent" and list(agents["faults"]["properties"])[-1] == "new_agent"
    status = properties["environments"]["items"]["properties"]["agents"]["items"]["properties"]["status"]["enum"]
    assert status[-1] == "new_agent"
    assert (
        "| agent | `timeout`, `eof`, `agent_error`, `protocol`, `budget`, `forfeit`, `new_agent` |"
        in files["docs/results.md"][1]
    )
    assert "`infrastructure`, `new_arena` |" in files["docs/results.md"][1]
    # The wrapped object stays wrapped, under its first item, within the schema's width.
    old, new = files[registries.SCHEMA]
    start, end = value_span(new, FAULT_COUNTS)
    lines = new[start:end].splitlines()
    assert len(lines) == 4 and lines[-1].strip() == '"new_agent": {"$ref": "#/$defs/count"}}'
    assert lines[-1].startswith(" " * 34 + '"') and max(len(line) for line in new.splitlines()) == max(
        len(line) for line in old.splitlines()
    )


def test_only_the_value_changes():
    text = '{\n  "a": {"b": [1, 2],   "c": {"enum": ["x"]}},\n  "d": "~/"\n}\n'
    assert (
        replace_value(text, "/a/c/enum", ["x", "y"])
        == '{\n  "a": {"b": [1, 2],   "c": {"enum": ["x", "y"]}},\n  "d": "~/"\n}\n'
    )
    assert replace_value(text, "/a/b", [1, 2]) == text
    with pytest.raises(PointerError, match="no key 'e' on the way to /a/e"):
        value_span(text, "/a/e")


def test_a_missing_block_is_named():
    with pytest.raises(registries.RegistryCopyError, match=r"docs/x\.md: 0 blocks `generated: fault-kinds`"):
        registries.replace_block("no markers here\n", "fault-kinds", "", "docs/x.md")
    text = "a\n<!-- generated: t -->\nold\n<!-- end generated -->\nb\n"
    assert registries.replace_block(text, "t", "new\n") == "a\n<!-- generated: t -->\nnew\n<!-- end generated -->\nb\n"


def test_the_payers_are_the_consequences():
    assert set(registries.CONSEQUENCE) == set(Payer)


def test_the_rules_table_names_every_fault_kind_with_its_payer():
    # docs/rules.md says it in the participants' words (the arena's kinds in one row), so it is
    # not generated; a kind missing from it, or under the wrong payer, fails here.
    from grader.common.faults import FaultKind

    text = (registries.ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    section = text[text.index("### 5.1 Faults, and who pays") :]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    whose = {kind.strip(" `"): cells[2].strip() for cells in rows for kind in cells[1].split(",")}
    want = {kind.value: "yours" if kind.payer is Payer.AGENT else "the arena's" for kind in FaultKind}
    assert whose == want, "docs/rules.md section 5.1: give every fault kind a row under its payer"
