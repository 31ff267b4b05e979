"""Sandbox names have one table, grader.sandbox.SANDBOXES: the commands' --sandbox choices,
the doctor and the kit take them from it (the kit's own copy in kit/kitenv.py and the results
schema's list are written from it: tests/test_registries.py)."""

from __future__ import annotations

import argparse

import pytest

from grader.cli.main import COMMANDS, build_parser
from grader.sandbox import BACKENDS, ISOLATING, SANDBOXES, SandboxNameError, backend, get_sandbox


def sandbox_choices() -> dict[str, tuple]:
    """Each command's sandbox option and its choices, read from the parser users get."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name in COMMANDS:
        for action in sub.choices[name]._actions:
            if action.dest in ("sandbox", "smoke") and action.choices:
                out[f"{name} {action.option_strings[0]}"] = tuple(action.choices)
    return out


def test_the_table_names_every_backend():
    assert BACKENDS == ("local", "docker", "unsafe") and ISOLATING == ("local", "docker")
    assert all(row.name == name for name, row in SANDBOXES.items())
    assert [n for n, row in SANDBOXES.items() if row.checks is None] == ["unsafe"]


def test_commands_take_their_choices_from_the_table():
    choices = sandbox_choices()
    assert set(choices) == {
        "smoke --sandbox",
        "field --smoke",
        "demo --sandbox",
        "round --sandbox",
        "doctor --sandbox",
        "play --sandbox",
        "capacity --sandbox",
    }
    assert choices.pop("play --sandbox") == BACKENDS  # play may be asked for unsafe by name
    assert set(choices.values()) == {ISOLATING}


def test_the_kit_offers_the_isolating_sandboxes():
    from grader.kit.build import KIT_SANDBOXES

    assert KIT_SANDBOXES == ("auto", "local", "docker", "none")


def test_unknown_names_are_named():
    with pytest.raises(
        SandboxNameError, match=r"unknown sandbox 'vm'; choose one of \('local', 'docker', 'unsafe'\)"
    ) as info:
        get_sandbox("vm")
    assert info.value.name == "vm"
    from grader.kit.build import KitError, choose_sandbox

    with pytest.raises(KitError, match="unknown sandbox 'vm': choose auto, local, docker or none"):
        choose_sandbox("vm")


def test_the_doctor_checks_what_the_row_owns():
    from grader.cli.commands.doctor import checks_for

    with pytest.raises(SandboxNameError, match="the unsafe backend has no protections to check"):
        checks_for("unsafe")
    assert backend("local").checks == "grader.sandbox.probe:local_checks"
    assert backend("docker").checks == "grader.sandbox.probe:docker_checks"
