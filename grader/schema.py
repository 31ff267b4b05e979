"""A small JSON Schema checker for the arena's own documents, listing every problem by path.

It understands the subset docs/results-schema.json uses (type, properties, required,
additionalProperties, items, enum, const, minimum, maximum, minItems, maxItems, pattern,
$ref to #/$defs) and refuses a schema that uses anything else, so no rule of the schema
can be silently skipped. The arena's runtime stays free of a JSON Schema dependency.
"""

from __future__ import annotations

import re
from typing import Any

ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "$defs", "examples"}
CHECKED = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum",
           "maximum", "minItems", "maxItems", "pattern", "$ref"}


class SchemaError(ValueError):
    """The schema itself uses something this checker does not implement."""


def _type_ok(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise SchemaError(f"unknown type {name!r}")


def _resolve(ref: str, root: dict) -> dict:
    if not ref.startswith("#/$defs/"):
        raise SchemaError(f"only local #/$defs references are supported, got {ref!r}")
    try:
        return root["$defs"][ref[len("#/$defs/"):]]
    except KeyError:
        raise SchemaError(f"unresolved reference {ref!r}") from None


def validate(value: Any, schema: dict, root: dict | None = None, path: str = "") -> list[str]:
    """Every way `value` fails `schema`, each as `path: message` (an empty list when valid)."""
    root = schema if root is None else root
    unknown = set(schema) - ANNOTATIONS - CHECKED
    if unknown:
        raise SchemaError(f"{path or '(top)'}: schema keywords not supported: {sorted(unknown)}")
    where = path or "(top)"
    if "$ref" in schema:
        return validate(value, _resolve(schema["$ref"], root), root, path)
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_type_ok(value, n) for n in names):
            return [f"{where}: expected {' or '.join(names)}, got {type(value).__name__} {_short(value)}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: must be {schema['const']!r}, got {_short(value)}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: must be one of {schema['enum']}, got {_short(value)}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where}: must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where}: must be <= {schema['maximum']}, got {value}")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        problems.append(f"{where}: {_short(value)} does not match {schema['pattern']!r}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{where}: needs at least {schema['minItems']} items, has {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{where}: allows at most {schema['maxItems']} items, has {len(value)}")
        if "items" in schema:
            for i, item in enumerate(value):
                problems += validate(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{_join(path, key)}: missing")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                problems += validate(item, props[key], root, _join(path, key))
            elif extra is False:
                problems.append(f"{_join(path, key)}: unknown field")
            elif isinstance(extra, dict):
                problems += validate(item, extra, root, _join(path, key))
    return problems


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
