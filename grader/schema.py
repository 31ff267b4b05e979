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
    """Every way `value` fails `schema`, each as `path: message` (an empty list when valid).

    The schema is compiled once into a tree of checks (cached per schema object), so a large
    document is checked without re-reading the schema at every value."""
    root = schema if root is None else root
    valid, check = _compiled(schema, root)
    if valid(value):  # the common case, without building a path for every value
        return []
    problems: list[str] = []
    check(value, path, problems)
    return problems


_CACHE: dict[tuple[int, int], tuple[dict, dict, Any, Any]] = {}


def _compiled(schema: dict, root: dict):
    key = (id(schema), id(root))
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not schema or hit[1] is not root:
        check = _compile(schema, root, {})  # first: it refuses what the schema may not use
        hit = _CACHE[key] = (schema, root, _predicate(schema, root, {}), check)
    return hit[2], hit[3]


_PY_TYPES = {"null": type(None), "boolean": bool, "integer": int, "number": (int, float), "string": str,
             "array": list, "object": dict}


def _predicate(schema: dict, root: dict, refs: dict):
    """`valid(value) -> bool` for `schema`: the same rules as `_compile`, without messages."""
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref not in refs:
            refs[ref] = None
            refs[ref] = _predicate(_resolve(ref, root), root, refs)
        return lambda value, ref=ref: refs[ref](value)
    types = schema.get("type")
    names = None if types is None else ([types] if isinstance(types, str) else list(types))
    if names is not None:
        allow_bool = "boolean" in names
        others = tuple(t for n in names if n != "boolean" for t in (_PY_TYPES[n] if isinstance(_PY_TYPES[n], tuple)
                                                                    else (_PY_TYPES[n],)))
    const, has_const = schema.get("const"), "const" in schema
    enum = schema.get("enum")
    low, high = schema.get("minimum"), schema.get("maximum")
    regex = re.compile(schema["pattern"]) if "pattern" in schema else None
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    item_ok = _predicate(schema["items"], root, refs) if "items" in schema else None
    props = {k: _predicate(v, root, refs) for k, v in schema.get("properties", {}).items()}
    required = list(schema.get("required", []))
    extra = schema.get("additionalProperties", True)
    extra_ok = _predicate(extra, root, refs) if isinstance(extra, dict) else None

    def valid(value) -> bool:
        if names is not None and not (allow_bool if value is True or value is False else isinstance(value, others)):
            return False
        if has_const and value != const:
            return False
        if enum is not None and value not in enum:
            return False
        if (low is not None or high is not None) and isinstance(value, (int, float)) and not isinstance(value, bool):
            if (low is not None and value < low) or (high is not None and value > high):
                return False
        if regex is not None and isinstance(value, str) and not regex.search(value):
            return False
        if isinstance(value, list):
            if (min_items is not None and len(value) < min_items) or (max_items is not None and len(value) > max_items):
                return False
            if item_ok is not None and not all(map(item_ok, value)):
                return False
        elif isinstance(value, dict) and (props or required or extra is not True):
            for key in required:
                if key not in value:
                    return False
            for key, item in value.items():
                ok = props.get(key)
                if ok is not None:
                    if not ok(item):
                        return False
                elif extra is False:
                    return False
                elif extra_ok is not None and not extra_ok(item):
                    return False
        return True
    return valid


def _compile(schema: dict, root: dict, refs: dict):
    """A function `check(value, path, problems)` for `schema`; `refs` shares compiled $defs
    (and lets a recursive reference resolve late)."""
    unknown = set(schema) - ANNOTATIONS - CHECKED
    if unknown:
        raise SchemaError(f"schema keywords not supported: {sorted(unknown)}")
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref not in refs:
            refs[ref] = None
            target = _resolve(ref, root)
            refs[ref] = _compile(target, root, refs)

        def check_ref(value, path, problems, ref=ref):
            refs[ref](value, path, problems)
        return check_ref
    types = schema.get("type")
    names = None if types is None else ([types] if isinstance(types, str) else list(types))
    if names is not None:
        for n in names:
            _type_ok(None, n)  # an unknown type name is a SchemaError now, not at the first value
    steps = []
    if "const" in schema:
        const = schema["const"]

        def check_const(value, where, problems):
            if value != const:
                problems.append(f"{where}: must be {const!r}, got {_short(value)}")
        steps.append(check_const)
    if "enum" in schema:
        enum = schema["enum"]

        def check_enum(value, where, problems):
            if value not in enum:
                problems.append(f"{where}: must be one of {enum}, got {_short(value)}")
        steps.append(check_enum)
    if "minimum" in schema or "maximum" in schema:
        low, high = schema.get("minimum"), schema.get("maximum")

        def check_range(value, where, problems):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if low is not None and value < low:
                    problems.append(f"{where}: must be >= {low}, got {value}")
                if high is not None and value > high:
                    problems.append(f"{where}: must be <= {high}, got {value}")
        steps.append(check_range)
    if "pattern" in schema:
        pattern = schema["pattern"]
        regex = re.compile(pattern)

        def check_pattern(value, where, problems):
            if isinstance(value, str) and not regex.search(value):
                problems.append(f"{where}: {_short(value)} does not match {pattern!r}")
        steps.append(check_pattern)
    list_keys = {"minItems", "maxItems", "items"} & set(schema)
    item_check = _compile(schema["items"], root, refs) if "items" in schema else None
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    obj = bool({"properties", "required", "additionalProperties"} & set(schema))
    props = {k: _compile(v, root, refs) for k, v in schema.get("properties", {}).items()}
    required = list(schema.get("required", []))
    extra = schema.get("additionalProperties", True)
    extra_check = _compile(extra, root, refs) if isinstance(extra, dict) else None

    def check(value, path, problems):
        where = path or "(top)"
        if names is not None and not any(_type_ok(value, n) for n in names):
            problems.append(f"{where}: expected {' or '.join(names)}, got {type(value).__name__} {_short(value)}")
            return
        for step in steps:
            step(value, where, problems)
        if list_keys and isinstance(value, list):
            if min_items is not None and len(value) < min_items:
                problems.append(f"{where}: needs at least {min_items} items, has {len(value)}")
            if max_items is not None and len(value) > max_items:
                problems.append(f"{where}: allows at most {max_items} items, has {len(value)}")
            if item_check is not None:
                for i, item in enumerate(value):
                    item_check(item, f"{path}[{i}]", problems)
        if obj and isinstance(value, dict):
            for key in required:
                if key not in value:
                    problems.append(f"{_join(path, key)}: missing")
            for key, item in value.items():
                sub = props.get(key)
                if sub is not None:
                    sub(item, _join(path, key), problems)
                elif extra is False:
                    problems.append(f"{_join(path, key)}: unknown field")
                elif extra_check is not None:
                    extra_check(item, _join(path, key), problems)
    return check


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
