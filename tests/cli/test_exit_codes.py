"""`arena`'s exit codes, one rule for every command: 0 ok, 1 the input failed, 2 the arena failed."""

from __future__ import annotations

import errno

import pytest

from grader.cli import main as cli
from grader.cli.commands import envs as envs_command
from grader.cli.main import ARENA_FAILED, INPUT_FAILED, main


def test_help_is_ok():
    assert main(["--help"]) == 0
    assert main(["envs", "--help"]) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["no-such-command"],
        ["envs", "--no-such-option"],
        ["perft", "standard-8x8", "--depth", "two"],
        [],
    ],
)
def test_a_usage_error_is_bad_input(argv, capsys):
    assert main(argv) == INPUT_FAILED
    assert "usage: arena" in capsys.readouterr().err


def test_a_missing_file_is_bad_input(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "nowhere.yaml")]) == INPUT_FAILED
    assert "nowhere.yaml" in capsys.readouterr().err


def test_a_malformed_spec_is_bad_input(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text("layout: [unclosed\n")
    assert main(["perft", str(spec), "--depth", "1"]) == INPUT_FAILED
    assert "spec.yaml" in capsys.readouterr().err


def test_a_full_disk_is_the_arenas_failure(monkeypatch, capsys):
    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device", "tier.yaml")

    monkeypatch.setattr(envs_command, "run", full)
    monkeypatch.setattr(cli, "build_parser", _parser_running(full))
    assert main(["envs", "--tier", "public"]) == ARENA_FAILED
    assert "envs: the arena failed: No space left on device: tier.yaml" in capsys.readouterr().err


def test_a_bug_in_a_command_is_the_arenas_failure_said_in_one_line(monkeypatch, capsys):
    def broken(args):
        return {}["missing"]

    monkeypatch.setattr(cli, "build_parser", _parser_running(broken))
    assert main(["envs", "--tier", "public"]) == ARENA_FAILED
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "arena envs: the arena failed: KeyError: 'missing'"
    assert "Traceback" in err


def test_an_interrupt_is_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", _parser_running(interrupted))
    assert main(["envs", "--tier", "public"]) == 130


def _parser_running(func):
    """build_parser, with the command's function replaced by `func`."""
    real = cli.build_parser

    def build(command=None):
        parser = real(command)
        parser.set_defaults(func=func)
        for action in parser._subparsers._group_actions:  # each subcommand's own default wins
            for sub in action.choices.values():
                sub.set_defaults(func=func)
        return parser

    return build
