"""Fault kinds have one source, grader.faults: the results schema's lists, the site's tables,
the bench and the protocol's table are held to it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grader.faults import FAULT_ROWS, FaultKind, FaultKindError, Payer, kinds

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "grader" / "data" / "results-schema.json"


def at(document: dict, pointer: str):
    for part in pointer.strip("/").split("/"):
        document = document[part]
    return document


def test_every_kind_has_a_payer_and_a_description():
    assert set(FAULT_ROWS) == set(FaultKind)
    assert all(k.description and isinstance(k.payer, Payer) for k in FaultKind)
    assert kinds(Payer.AGENT) == ("timeout", "eof", "agent_error", "protocol", "budget", "forfeit")
    assert kinds(Payer.ARENA) == ("launch_failed", "pipe", "oom", "infrastructure")
    assert kinds() == kinds(Payer.AGENT) + kinds(Payer.ARENA)
    assert FaultKind.OOM.is_agents_fault is False and FaultKind.BUDGET.is_agents_fault is True


def test_the_schema_lists_the_kinds_of_the_enum():
    schema = json.loads(SCHEMA.read_text())
    agent = list(kinds(Payer.AGENT))
    faults = at(schema, "/properties/agents/items/properties/faults")
    assert faults["required"] == agent, "agents[].faults.required: regenerate from grader.faults.kinds"
    assert list(faults["properties"]) == agent, "agents[].faults.properties: regenerate from grader.faults.kinds"
    status = at(schema, "/properties/environments/items/properties/agents/items/properties/status/enum")
    assert status == ["ok", *agent]
    arena = at(schema, "/properties/provenance/properties/execution/properties/arena_faults/items/properties/kind/enum")
    assert arena == list(kinds(Payer.ARENA))


def test_the_site_and_the_bench_take_the_kinds_from_the_enum():
    from benchmarks import bench_site
    from grader.site import model

    assert model.FAULT_KINDS == kinds(Payer.AGENT) == bench_site.FAULTS


def test_the_protocol_table_names_each_kind_and_its_payer():
    text = (ROOT / "docs" / "protocol.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| (agent|arena)\b", text, re.M))
    assert rows == {k.value: k.payer.value for k in FaultKind}


def test_an_unknown_kind_is_named():
    with pytest.raises(FaultKindError, match="unknown fault kind 'meltdown'") as info:
        FaultKind.parse("meltdown")
    assert info.value.name == "meltdown" and isinstance(info.value, ValueError)


def test_the_results_doc_lists_each_payers_kinds():
    text = (ROOT / "docs" / "results.md").read_text()

    def listed(lead: str) -> tuple[str, ...]:
        inside = re.search(re.escape(lead) + r" \(([^)]*)\)", text)
        assert inside, f"docs/results.md: no line starting {lead!r}"
        return tuple(re.findall(r"`(\w+)`", inside.group(1)))

    assert listed("An agent's fault") == kinds(Payer.AGENT)
    assert listed("An arena fault") == kinds(Payer.ARENA)
