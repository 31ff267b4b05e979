"""arena: the Expanded Othello AI Arena command line.

Each subcommand lives in its own module under grader.cli.commands, named as the command, and
exposes `register(subparsers)`, which adds its parser and sets `func(args) -> int`. Only the
module of the command given is imported (`arena --help` and a mistyped command import all),
so a light command does not pay for the heavy ones' imports (numba, jinja2, docker).
Data goes to stdout; logs and progress to stderr. The exit codes are the table EXIT_CODES,
which `arena --help` prints and the README carries (a test holds the two the same).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
import traceback
from dataclasses import dataclass

from grader.common.visible import visible

# Order is the order of `arena --help`.
COMMAND_MODULES = [
    "grader.cli.commands.perft",
    "grader.cli.commands.envs",
    "grader.cli.commands.simulate",
    "grader.cli.commands.replay",
    "grader.cli.commands.doctor",
    "grader.cli.commands.play",
    "grader.cli.commands.image",
    "grader.cli.commands.round",
    "grader.cli.commands.capacity",
    "grader.cli.commands.merge",
    "grader.cli.commands.disclose",
    "grader.cli.commands.verify",
    "grader.cli.commands.demo",
    "grader.cli.commands.site",
    "grader.cli.commands.smoke",
    "grader.cli.commands.accounts",
    "grader.cli.commands.pr",
    "grader.cli.commands.score",
    "grader.cli.commands.dispatch",
    "grader.cli.commands.field",
    "grader.cli.commands.competition",
    "grader.cli.commands.grades",
    "grader.cli.commands.appeal",
    "grader.cli.commands.history",
    "grader.cli.commands.kit",
    "grader.cli.commands.open_submission",
    "grader.cli.commands.github",
]
# command -> its module (a module's `_` is the command's `-`)
COMMANDS = {module.rpartition(".")[2].replace("_", "-"): module for module in COMMAND_MODULES}


class UsageError(Exception):
    """Bad input from the user: printed as `arena COMMAND: error: ...`, exit 1."""


@dataclass(frozen=True)
class ExitCode:
    """One exit code of `arena`: its number, the constant that names it, and what it means."""

    code: int
    name: str
    meaning: str


# The one table of exit codes: the CLI returns these, `arena --help` and the README show them.
EXIT_CODES = (
    ExitCode(0, "OK", "done"),
    ExitCode(
        1,
        "INPUT_FAILED",
        "the input failed: a usage error, a missing or malformed file, an agent or "
        "submission that failed, a round that fails verification, a refused request",
    ),
    ExitCode(
        2,
        "ARENA_FAILED",
        "the arena failed: a full disk, a docker engine or sandbox that does not work, "
        "a round held for the arena's faults, an error in the arena's own code",
    ),
    ExitCode(130, "INTERRUPTED", "interrupted (Ctrl-C)"),
)
OK, INPUT_FAILED, ARENA_FAILED, INTERRUPTED = (e.code for e in EXIT_CODES)


def exit_codes_text() -> str:
    """The exit codes as plain lines, for `arena --help`."""
    return "exit codes:\n" + "\n".join(
        textwrap.fill(e.meaning, 88, initial_indent=f"  {e.code:<5}", subsequent_indent=" " * 7) for e in EXIT_CODES
    )


def exit_codes_markdown() -> str:
    """The exit codes as a Markdown table, as the README carries it."""
    rows = "\n".join(f"| {e.code} | `{e.name}` | {e.meaning} |" for e in EXIT_CODES)
    return "| exit code | name | meaning |\n|---|---|---|\n" + rows


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` alone."""
    parser = argparse.ArgumentParser(
        prog="arena",
        description=__doc__.split("\n\n")[0],
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(module).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the `arena` command line; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(command)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 0 on --help, 2 on a usage error: bad input here
        return INPUT_FAILED if exc.code else OK
    try:
        return int(args.func(args))
    except (UsageError, ValueError, FileNotFoundError) as exc:
        print(f"arena {args.command}: error: {visible(exc)}", file=sys.stderr)
        return INPUT_FAILED
    except OSError as exc:
        # A full disk, a read-only folder...: the arena's writes are atomic, so nothing finished
        # is lost, and a round started again with the same arguments resumes.
        where = f": {exc.filename}" if exc.filename else ""
        print(
            f"arena {args.command}: the arena failed: {visible(exc.strerror or exc)}{visible(where)}", file=sys.stderr
        )
        return ARENA_FAILED
    except KeyboardInterrupt:
        print(f"arena {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as exc:  # a bug of the arena's, never the input's: said in one line, traced below it
        traceback.print_exc(file=sys.stderr)
        print(f"arena {args.command}: the arena failed: {type(exc).__name__}: {visible(exc)}", file=sys.stderr)
        return ARENA_FAILED


if __name__ == "__main__":
    sys.exit(main())
