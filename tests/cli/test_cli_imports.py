"""The command line imports only what the command given needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from grader.cli.main import COMMAND_MODULES, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_a_light_command_does_not_import_the_heavy_ones():
    code = (
        "import sys; from grader.cli.main import main; rc = main(['envs', '--tier', 'public']); "
        "heavy = [m for m in ('numba', 'jinja2', 'docker', 'markdown') if m in sys.modules]; "
        "print(rc, heavy, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "0 []", out.stderr


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    for name in COMMAND_MODULES:
        assert name.rpartition(".")[2].replace("_", "-") in listed


def test_each_command_module_registers_the_command_it_is_named_for():
    for name in COMMAND_MODULES:
        command = name.rpartition(".")[2].replace("_", "-")
        subparsers = next(a for a in build_parser(command)._actions if a.dest == "command")
        assert list(subparsers.choices) == [command]
