"""docs/staff.md, the season's runbook, holds only commands that exist: every `arena` line of
its shell blocks parses with the arena's own parser, every `gh workflow run` names a workflow
and inputs it has (with a value its choices allow), and every secret a round needs is named."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from grader.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
RUNBOOK = (ROOT / "docs" / "staff.md").read_text(encoding="utf-8")
WORKFLOWS = ROOT / ".github" / "workflows"


def shell_lines() -> list[list[str]]:
    """The commands of the page's ```sh blocks, without their trailing comments."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", RUNBOOK, re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            for stop in (">", "&&", "|"):  # the command, without what the shell does with it
                words = words[: words.index(stop)] if stop in words else words
            if words:
                lines.append(words)
    return lines


def arena_lines() -> list[list[str]]:
    return [words[1:] for words in shell_lines() if words[0] == "arena"]


def test_the_runbook_covers_the_season():
    commands = {" ".join(words[:2]) for words in arena_lines()}
    for needed in (
        "competition set",
        "dispatch --tier",
        "appeal --round",
        "accounts approve",
        "competition publish-seeds",
    ):
        assert any(c.startswith(needed) for c in commands), needed
    assert any(w[0] == "grades" for w in arena_lines())


def test_publishing_the_final_by_hand_parses():
    inline = re.findall(r"`arena (competition publish-final [^`]*)`", RUNBOOK)
    forced = [build_parser("competition").parse_args(shlex.split(text)) for text in inline if "--force" in text]
    assert [(args.force, args.actor_id) for args in forced] == [(True, 583231)]


@pytest.mark.parametrize("argv", arena_lines(), ids=lambda argv: " ".join(argv[:2]))
def test_every_arena_line_parses(argv):
    parser = build_parser(argv[0])
    try:
        parser.parse_args(argv)
    except SystemExit as exc:  # argparse's way of refusing: the page names an option that does not exist
        pytest.fail(f"docs/staff.md: `arena {shlex.join(argv)}` does not parse (exit {exc.code})")


def test_every_workflow_dispatch_names_real_inputs():
    runs = [w for w in shell_lines() if w[:3] == ["gh", "workflow", "run"]]
    assert {w[3] for w in runs} == {"round.yml", "competition.yml"}
    for words in runs:
        inputs = yaml.safe_load((WORKFLOWS / words[3]).read_text())[True]["workflow_dispatch"]["inputs"]
        given = dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "-f")
        for name, value in given.items():
            assert name in inputs, f"{words[3]} has no input {name!r}"
            if inputs[name].get("type") == "choice":
                assert value in inputs[name]["options"], f"{words[3]}: {name}={value!r}"
            if inputs[name].get("type") == "boolean":
                assert value in ("true", "false")
        if words[3] == "round.yml":
            assert set(given) == set(inputs), "the round's dispatch line gives every input"


def test_the_secrets_and_environments_a_round_needs_are_named():
    text = (WORKFLOWS / "round.yml").read_text()
    for secret in set(re.findall(r"secrets\.([A-Z_]+)", text)):
        assert f"`{secret}`" in RUNBOOK, secret
    for environment in set(re.findall(r"'(arena-[a-z]+)'|environment: (arena-[a-z]+)", text)):
        name = next(n for n in environment if n)
        assert f"`{name}`" in RUNBOOK, name
    for label in yaml.safe_load(text)["jobs"]["field"]["runs-on"]:
        assert f"`{label}`" in RUNBOOK, label
