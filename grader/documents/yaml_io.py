"""The arena's YAML documents: one loader, one writer, one error.

Results, accounts, the competition config, the request log and specs are read and written here;
their schemas are in grader/documents/data/ (grader/documents/schema.py checks them).

The loader has `safe_load` semantics (libyaml's parser when PyYAML has it) but is strict and
bounded. A repeated mapping key is an error (PyYAML would silently keep the last one, and in
the accounts registry that would let a second entry for one GitHub id hide the first). And
`yaml.safe_load` is not bounded: an alias bomb ("billion laughs", a few hundred bytes whose
aliases expand to a billion nodes) loads in a moment as shared references and then hangs
whatever walks it, and a deeply nested document exhausts the recursion of whatever walks it.
So the node graph is measured before a single object is built, and refused when it nests
deeper than `MAX_DEPTH`, when its aliases would add more than `MAX_ALIAS_NODES` nodes, or
when a node holds an alias of itself. Every problem is a DocumentError naming the source and,
for each problem, where it is.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

# The arena's deepest document (a results file) nests 7 levels; 64 leaves room for people.
MAX_DEPTH = 64
# What aliases may add to a document once expanded: generous for a hand-written registry
# that shares a block or two, a millionth of a bomb.
MAX_ALIAS_NODES = 100_000
_SHOWN = 20  # problems listed in a message; `problems` keeps them all


class DocumentError(ValueError):
    """A document that cannot be used: `source` (the file), `problems` (each `path: what`).

    `heading` says what kind of failure it is ("invalid results", "cannot be rendered")."""

    def __init__(self, source: str, problems: list[str], heading: str | None = None):
        self.source = source
        self.problems = list(problems)
        self.heading = heading
        shown = self.problems[:_SHOWN] + (
            [f"... and {len(self.problems) - _SHOWN} more"] if len(self.problems) > _SHOWN else []
        )
        if heading:
            message = f"{source}: {heading}:\n  " + "\n  ".join(shown)
        elif len(self.problems) < 2:
            message = f"{source}: " + "; ".join(self.problems)
        else:
            message = f"{source}: {len(self.problems)} problems:\n  " + "\n  ".join(shown)
        super().__init__(message)


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader (libyaml's when there) that refuses duplicate keys in any mapping."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears twice (lines {seen[key]} and {line})", key_node.start_mark
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _where(node: yaml.Node) -> str:
    mark = node.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"


def _children(node: yaml.Node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def _check_node(root: yaml.Node) -> str | None:
    """Why a composed node graph is refused (too deep, recursive, or aliases that expand past
    MAX_ALIAS_NODES), or None. Iterative and linear in the distinct nodes."""
    expanded: dict[int, int] = {}  # id(node) -> nodes it stands for, expanded
    depth: dict[int, int] = {}  # id(node) -> levels below and including it
    distinct = 0
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, level, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            expanded[key] = 1 + sum(expanded[id(c)] for c in children)
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
            continue
        if key in expanded:
            continue  # an alias of a node already measured
        if key in on_path:
            return f"the node at {_where(node)} holds an alias of itself (a recursive document)"
        if level > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep at {_where(node)}"
        distinct += 1
        on_path.add(key)
        stack.append((node, level, True))
        for child in _children(node):
            child_key = id(child)
            if child_key in on_path:
                return f"the node at {_where(child)} holds an alias of itself (a recursive document)"
            if child_key not in expanded:
                stack.append((child, level + 1, False))
    total = expanded[id(root)]
    if depth[id(root)] > MAX_DEPTH:  # a shared node first met high up may sit deeper elsewhere
        return f"nested more than {MAX_DEPTH} levels deep (through its aliases)"
    if total - distinct > MAX_ALIAS_NODES:
        return (
            f"its aliases expand {distinct} nodes to {total}, more than the {MAX_ALIAS_NODES} "
            "extra nodes allowed (an alias bomb?)"
        )
    return None


def load_yaml(text: str | bytes, source: str, heading: str | None = None) -> Any:
    """The value of one YAML (or JSON) document, strictly and boundedly parsed; raises
    DocumentError naming `source` and where the problem is."""
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        refused = _check_node(node)
        if refused:
            raise DocumentError(source, [f"(file): {refused}"], heading)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise DocumentError(source, [f"(file): not valid YAML: {exc}"], heading) from None
    except RecursionError:
        raise DocumentError(
            source, [f"(file): nested too deeply to read (the limit is {MAX_DEPTH} levels)"], heading
        ) from None
    finally:
        loader.dispose()


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


def read_yaml(path: Path, heading: str | None = None) -> Any:
    """Read and strictly parse a YAML file (FileNotFoundError when there is none)."""
    try:
        blob = Path(path).read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except OSError as exc:
        raise DocumentError(str(path), [f"(file): cannot read: {exc.strerror}"], heading) from None
    return load_yaml(decode_text(blob, str(path), heading), str(path), heading)


def decode_text(blob: bytes, source: str, heading: str | None = None) -> str:
    """UTF-8 text, or DocumentError naming the first byte that is not."""
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            source, [f"not UTF-8 text: byte {exc.start} is {exc.object[exc.start]:#04x}"], heading
        ) from None


_DUMPER: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data: Any, width: int = 80, flow: bool | None = False) -> str:
    """YAML in the arena's house form: keys in the order given, block style, unicode kept
    (libyaml's emitter when PyYAML has it, four times faster; its text differs from PyYAML's
    only in escaping characters beyond the BMP: the same data either way). `flow=None` writes
    innermost collections in flow style (`arena envs`: a layout's cells on one line)."""
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, default_flow_style=flow, width=width)


def parse_time(value: Any, where: str, problems: list[str]) -> dt.datetime | None:
    """An aware UTC datetime from an ISO 8601 string with a zone (or a YAML timestamp).

    PyYAML turns an unquoted timestamp into a naive datetime already converted to UTC, so a
    naive datetime object is read as UTC; a string must carry its zone, since a time without
    one means something different on every runner.
    """
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{where}: {value!r} is not an ISO 8601 time")
            return None
        if parsed.tzinfo is None:
            problems.append(f"{where}: {value!r} has no time zone (write it with Z or +HH:MM)")
            return None
        return parsed.astimezone(dt.UTC)
    problems.append(f"{where}: expected an ISO 8601 time, got {type(value).__name__} {value!r}")
    return None


def format_time(moment: dt.datetime) -> str:
    """The form times are written in: UTC, seconds, a Z."""
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
