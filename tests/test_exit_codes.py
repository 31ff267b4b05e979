"""`arena`'s exit codes are one table: the CLI returns its codes, `arena --help` and the README show it."""

from __future__ import annotations

from grader.cli import registries
from grader.cli.main import ARENA_FAILED, EXIT_CODES, INPUT_FAILED, OK, build_parser, exit_codes_markdown, main


def test_the_readme_shows_the_table():
    readme = (registries.ROOT / "README.md").read_text()
    assert exit_codes_markdown() in readme
    assert "README.md" not in registries.stale()


def test_help_shows_every_code():
    text = build_parser("perft").format_help()
    for exit_code in EXIT_CODES:
        assert f"  {exit_code.code} " in text and exit_code.meaning.split()[0] in text


def test_the_cli_returns_the_table_s_codes(tmp_path, capsys):
    assert (OK, INPUT_FAILED, ARENA_FAILED) == (0, 1, 2)
    assert main(["perft", "env-5b5c2fe3e8ef", "--depth", "1"]) == OK
    assert main(["perft"]) == INPUT_FAILED  # a usage error
    assert main(["verify", str(tmp_path / "missing.yaml")]) == INPUT_FAILED
