"""Versioned YAML documents of the arena's own (accounts, competition config, request log).

One strict loader for all of them: `safe_load` semantics, but a repeated mapping key is an
error (PyYAML would silently keep the last one, and in the accounts registry that would let a
second entry for one GitHub id hide the first). Every problem is reported with its path.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from engine import safeyaml


class DocumentError(ValueError):
    """A document that cannot be used; the message lists every problem, each with its path."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = list(problems)
        super().__init__(f"{source}: " + ("; ".join(self.problems) if len(self.problems) < 2 else
                                          f"{len(self.problems)} problems:\n  " + "\n  ".join(self.problems)))


class _StrictLoader(safeyaml.SAFE_LOADER):
    """SafeLoader (libyaml's when there) that refuses duplicate keys in any mapping."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears twice (lines {seen[key]} and {line})", key_node.start_mark)
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def check_envelope(data: Any, source: str, version: int, fields) -> list[str]:
    """The problems of a versioned document's top level: a mapping, the schema version this
    arena reads, no unknown field. Raises DocumentError when it is not a mapping at all."""
    if not isinstance(data, dict):
        raise DocumentError(source, [f"(top): expected a mapping, got {type(data).__name__}"])
    problems = []
    if data.get("schema_version") != version:
        problems.append(f"schema_version: must be {version}, got {data.get('schema_version')!r}")
    problems += [f"{k}: unknown field" for k in data if k not in fields]
    return problems


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML text strictly and boundedly (engine.safeyaml: no alias bomb, no nesting past
    its limit); raise DocumentError naming `source` and the line."""
    try:
        return safeyaml.load(text, _StrictLoader)
    except safeyaml.YamlError as exc:
        raise DocumentError(source, [str(exc)]) from None


def read_yaml(path: Path) -> Any:
    """Read and strictly parse a YAML file."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise DocumentError(str(path), [f"not UTF-8 text: byte {exc.start} is {exc.object[exc.start]:#04x}"]) from None
    return load_yaml(text, str(path))


def dump_yaml(data: Any) -> str:
    """YAML in the arena's house form: keys in the order given, block style, unicode kept."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def parse_time(value: Any, where: str, problems: list[str]) -> dt.datetime | None:
    """An aware UTC datetime from an ISO 8601 string with a zone (or a YAML timestamp).

    PyYAML turns an unquoted timestamp into a naive datetime already converted to UTC, so a
    naive datetime object is read as UTC; a string must carry its zone, since a time without
    one means something different on every runner.
    """
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{where}: {value!r} is not an ISO 8601 time")
            return None
        if parsed.tzinfo is None:
            problems.append(f"{where}: {value!r} has no time zone (write it with Z or +HH:MM)")
            return None
        return parsed.astimezone(dt.timezone.utc)
    problems.append(f"{where}: expected an ISO 8601 time, got {type(value).__name__} {value!r}")
    return None


def format_time(moment: dt.datetime) -> str:
    """The form times are written in: UTC, seconds, a Z."""
    return moment.astimezone(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
