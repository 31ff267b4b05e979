"""The copies of the code's registries that files people read must hold, and their one generator.

The results schema lists the fault kinds, the sandboxes, the tiers, the disclosure profiles,
the game endings and the colours as JSON `enum`s (an auditor reads a plain JSON Schema, and
the schema's validator needs no code of ours); docs/protocol.md and docs/results.md show the
fault kinds; the README shows `arena`'s exit codes (grader.cli.main.EXIT_CODES); kit/kitenv.py,
which runs before the arena is installed, names the kit's sandboxes; the other documents'
schemas in grader/documents/data/ copy grader/common/patterns.py's identifiers and some status lists. Each of
those is a copy of a registry in code, written from it here:

    python -m grader.cli.registries --write   # rewrite every copy from its registry
    python -m grader.cli.registries --check   # exit 1, naming each file whose copy is stale

In a schema only the listed values are rewritten (the rest of the file keeps its bytes); in
the other files, the text between a `generated: NAME` line and the next `end generated` line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.game import Color, Termination
from engine.tiers import TIERS
from grader.cli.main import exit_codes_markdown
from grader.common.faults import FAULT_ROWS, Payer, kinds
from grader.common.json_spans import replace_value
from grader.common.metrics import ENDINGS
from grader.common.patterns import BY_NAME, ROUND_ID
from grader.github.pr_check import KINDS, VERDICTS
from grader.kit.build import KIT_SANDBOXES
from grader.sandbox import ISOLATING
from grader.season.competition import FINAL_STATUSES
from grader.season.disclosure import PROFILES, PUBLISHED
from grader.season.quota import STATUSES

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "grader/documents/data/results-schema.json"
COMMAND = "python -m grader.cli.registries --write"
# What the first row of each payer in docs/protocol.md's table says the payer's fault costs.
CONSEQUENCE = {Payer.AGENT: "scores 0", Payer.ARENA: "re-run"}


def schema_values() -> dict[str, Any]:
    """Each value of the results schema that copies a registry, by its JSON pointer."""
    count = {"$ref": "#/$defs/count"}
    agent = list(kinds(Payer.AGENT))
    sides: list[str | None] = [c.label for c in Color]
    config = "/properties/provenance/properties/config/properties"
    agents = "/properties/agents/items/properties"
    game = "/$defs/game/properties"
    return {
        "/properties/round/properties/id/pattern": ROUND_ID,
        "/properties/round/properties/tier/enum": list(TIERS),
        f"{config}/tier/enum": list(TIERS),
        f"{config}/sandbox/enum": list(ISOLATING),
        f"{config}/disclosure/enum": list(PUBLISHED),
        "/properties/provenance/properties/execution/properties/arena_faults/items/properties/kind/enum": list(
            kinds(Payer.ARENA)
        ),
        "/properties/disclosure/properties/profile/enum": list(PROFILES),
        f"{agents}/faults/required": agent,
        f"{agents}/faults/properties": dict.fromkeys(agent, count),
        f"{agents}/endings/required": list(ENDINGS),
        f"{agents}/endings/properties": dict.fromkeys(ENDINGS, count),
        "/properties/environments/items/properties/agents/items/properties/status/enum": ["ok", *agent],
        f"{game}/forfeit/enum": [*sides, None],
        f"{game}/termination/enum": [t.value for t in Termination],
        f"{game}/winner/enum": [*sides, None],
        f"{game}/ending/enum": list(ENDINGS),
    }


def fault_table() -> str:
    """docs/protocol.md's table of the fault kinds: each kind, who pays, when it is recorded."""
    lines = ["| kind | who pays | raised when |", "|---|---|---|"]
    seen: set[Payer] = set()
    for kind, (payer, description) in FAULT_ROWS.items():
        who = payer.value if payer in seen else f"{payer.value} ({CONSEQUENCE[payer]})"
        seen.add(payer)
        lines.append(f"| `{kind.value}` | {who} | {description} |")
    return "\n".join(lines) + "\n"


def fault_kinds_by_payer() -> str:
    """docs/results.md's table of the fault kinds each payer pays for."""
    lines = ["| who pays | kinds |", "|---|---|"]
    for payer in Payer:
        lines.append(f"| {payer.value} | {', '.join(f'`{k}`' for k in kinds(payer))} |")
    return "\n".join(lines) + "\n"


def kit_sandboxes() -> str:
    """kit/kitenv.py's copy of grader.kit.build.KIT_SANDBOXES, as a line of Python."""
    return f"SANDBOXES = ({', '.join(json.dumps(name) for name in KIT_SANDBOXES)})\n"


# Each file's generated blocks by name, and what writes each.
BLOCKS: dict[str, dict[str, Callable[[], str]]] = {
    "docs/protocol.md": {"fault-kinds": fault_table},
    "docs/results.md": {"fault-kinds-by-payer": fault_kinds_by_payer},
    "kit/kitenv.py": {"kit-sandboxes": kit_sandboxes},
    "README.md": {"exit-codes": lambda: exit_codes_markdown() + "\n"},
}


class RegistryCopyError(ValueError):
    """A file that lacks a place the generator writes (a block's markers, a schema value);
    `path` names the file."""

    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


def replace_block(text: str, name: str, body: str, path: str = "") -> str:
    """`text` with the lines between its `generated: NAME` line and the next `end generated`
    line replaced by `body`; `path` names the file in the error when there is not one such block."""
    pattern = re.compile(rf"^([^\n]*generated: {re.escape(name)}\b[^\n]*\n)(.*?)(^[^\n]*end generated)", re.M | re.S)
    found = pattern.findall(text)
    if len(found) != 1:
        raise RegistryCopyError(
            path,
            f"{path}: {len(found)} blocks `generated: {name}` ... `end generated`; the generator writes exactly one",
        )
    return pattern.sub(lambda m: m.group(1) + body + m.group(3), text)


# The other documents' schemas, and the values in each that copy a registry (beside the
# identifiers' patterns of grader/common/patterns.py, written into every schema's `$defs` that names one).
DOCUMENT_SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "grader/documents/data/accounts.schema.json": dict,
    "grader/documents/data/competition.schema.json": lambda: {
        "/properties/final/properties/status/enum": list(FINAL_STATUSES)
    },
    "grader/documents/data/requests.schema.json": lambda: {"/$defs/request/properties/status/enum": list(STATUSES)},
    "grader/documents/data/seeds.schema.json": dict,
    "grader/documents/data/invalidations.schema.json": dict,
    "grader/documents/data/history.schema.json": dict,
    "grader/documents/data/site.schema.json": dict,
    "grader/documents/data/manifest.schema.json": dict,
    "grader/documents/data/decision.schema.json": lambda: {
        "/properties/kind/enum": list(KINDS),
        "/properties/verdict/enum": list(VERDICTS),
    },
    "grader/documents/data/smoke-report.schema.json": dict,
}


def pattern_values(text: str) -> dict[str, Any]:
    """The pattern of each identifier a schema's `$defs` names, by its JSON pointer."""
    defs = json.loads(text).get("$defs", {})
    return {f"/$defs/{name}/pattern": BY_NAME[name] for name in defs if name in BY_NAME}


def generate_schema(text: str, path: str = SCHEMA, values: dict[str, Any] | None = None) -> str:
    """A schema's text with every registry's copy rewritten from the registry (by default the
    results schema's)."""
    values = schema_values() if values is None else values
    for pointer, value in (values | pattern_values(text)).items():
        try:
            text = replace_value(text, pointer, value)
        except KeyError as exc:
            raise RegistryCopyError(path, f"{path}: {exc}") from None
    return text


def generated(root: Path = ROOT) -> dict[str, tuple[str, str]]:
    """Every file that holds a copy, by its path under `root`: (its text, its text as the
    generator writes it)."""
    out: dict[str, tuple[str, str]] = {}
    text = (root / SCHEMA).read_text(encoding="utf-8")
    out[SCHEMA] = (text, generate_schema(text))
    for path, values in DOCUMENT_SCHEMAS.items():
        text = (root / path).read_text(encoding="utf-8")
        out[path] = (text, generate_schema(text, path, values()))
    for path, blocks in BLOCKS.items():
        text = (root / path).read_text(encoding="utf-8")
        new = text
        for name, write in blocks.items():
            new = replace_block(new, name, write(), path)
        out[path] = (text, new)
    return out


def stale(root: Path = ROOT) -> list[str]:
    """The files under `root` whose copy differs from what the registries give."""
    return [path for path, (old, new) in generated(root).items() if old != new]


def stale_message(paths: list[str]) -> str:
    """What to tell whoever left `paths` stale."""
    return f"copies of the registries are stale in {', '.join(paths)}: run `{COMMAND}`"


def main(argv: list[str] | None = None) -> int:
    """`--check`: 1, naming the stale files, when a copy differs; `--write`: rewrite them."""
    parser = argparse.ArgumentParser(
        prog="python -m grader.cli.registries", description="Write the copies of the code's registries from them."
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every copy from its registry")
    mode.add_argument("--check", action="store_true", help="exit 1 when a copy differs from its registry")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this checkout)")
    args = parser.parse_args(argv)
    files = generated(args.root)
    paths = [path for path, (old, new) in files.items() if old != new]
    if args.check:
        if paths:
            print(stale_message(paths), file=sys.stderr)
            return 1
        print(f"every copy of the registries is current ({len(files)} files)")
        return 0
    for path in paths:
        (args.root / path).write_text(files[path][1], encoding="utf-8")
    print(f"rewrote {', '.join(paths)}" if paths else f"every copy was current ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
