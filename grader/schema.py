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


def _predicate(schema: dict, root: dict, refs: dict):
    """`valid(value) -> bool` for `schema`: the same rules as `_compile`, without messages,
    as Python source generated from the schema and compiled once (a large document is
    checked in straight-line code, not a call per value)."""
    gen = _Generator(root)
    body = gen.node(schema, "v", 1)
    source = "def valid(v):\n" + "".join(body) + "    return True\n" + "".join(gen.functions)
    namespace = {"K": gen.constants, "MISSING": _MISSING, "_matched": _matched}
    exec(compile(source, "<results-schema checks>", "exec"), namespace)  # noqa: S102 - our own schema's text
    return namespace["valid"]


_MISSING = object()
_SEEN_MAX = 4096  # strings remembered per pattern: bounded whatever a document holds


def _matched(regex: re.Pattern, seen: set, value: str) -> bool:
    """Whether `value` matches, remembered when it does (and `seen` has room)."""
    if not regex.search(value):
        return False
    if len(seen) < _SEEN_MAX:
        seen.add(value)
    return True


_TYPE_TESTS = {
    "null": "{v} is None", "boolean": "({v} is True or {v} is False)", "string": "isinstance({v}, str)",
    "integer": "(isinstance({v}, int) and {v} is not True and {v} is not False)",
    "number": "(isinstance({v}, (int, float)) and {v} is not True and {v} is not False)",
    "array": "isinstance({v}, list)", "object": "isinstance({v}, dict)",
}


class _Generator:
    """Writes the lines of a predicate for a schema node; `$ref`s are inlined, or become a
    function of their own when one refers back to itself."""

    def __init__(self, root: dict):
        self.root = root
        self.constants: list[Any] = []
        self.functions: list[str] = []
        self.inlining: list[str] = []
        self.named: dict[str, str] = {}
        self.count = 0

    def const(self, value: Any) -> str:
        self.constants.append(value)
        return f"K[{len(self.constants) - 1}]"

    def var(self) -> str:
        self.count += 1
        return f"x{self.count}"

    def node(self, schema: dict, v: str, depth: int) -> list[str]:
        pad = "    " * depth
        if "$ref" in schema:
            ref = schema["$ref"]
            if ref in self.inlining:  # recursive: a function of its own
                if ref not in self.named:
                    name = self.named[ref] = f"f{len(self.named)}"
                    lines = self.node(_resolve(ref, self.root), "v", 1)
                    self.functions.append(f"def {name}(v):\n" + "".join(lines) + "    return True\n")
                return [f"{pad}if not {self.named[ref]}({v}):\n{pad}    return False\n"]
            self.inlining.append(ref)
            try:
                return self.node(_resolve(ref, self.root), v, depth)
            finally:
                self.inlining.pop()
        out: list[str] = []
        types = schema.get("type")
        # The kinds the type test leaves `v` to be (None: any): a check of one kind of value
        # tests that kind only when the type test has not already made sure of it.
        names: list[str] | None = None if types is None else [types] if isinstance(types, str) else list(types)
        kinds = None if names is None else set(names)

        def sure(of: set[str]) -> bool:
            return kinds is not None and kinds <= of

        if names is not None:
            test = " or ".join(_TYPE_TESTS[n].format(v=v) for n in names)
            out.append(f"{pad}if not ({test}):\n{pad}    return False\n")
        if "const" in schema:
            out.append(f"{pad}if {v} != {self.const(schema['const'])}:\n{pad}    return False\n")
        if "enum" in schema:
            out.append(f"{pad}if {v} not in {self.const(schema['enum'])}:\n{pad}    return False\n")
        number = "" if sure({"integer", "number"}) else \
            f"isinstance({v}, (int, float)) and {v} is not True and {v} is not False and "
        if "minimum" in schema:
            out.append(f"{pad}if {number}{v} < {self.const(schema['minimum'])}:\n{pad}    return False\n")
        if "maximum" in schema:
            out.append(f"{pad}if {number}{v} > {self.const(schema['maximum'])}:\n{pad}    return False\n")
        if "pattern" in schema:
            # A document repeats its strings (a round names each agent thousands of times): a
            # string once matched is remembered, and searched again only when new.
            regex, seen = self.const(re.compile(schema["pattern"])), self.const(set())
            string = "" if sure({"string"}) else f"isinstance({v}, str) and "
            out.append(f"{pad}if {string}{v} not in {seen} and not _matched({regex}, {seen}, {v}):\n"
                       f"{pad}    return False\n")
        # The lines of a list's (an object's) checks, at `inner` depth: one level in under an
        # `isinstance` test, or at this node's depth when the type test has made sure of it.
        as_list = sure({"array"})
        inner = depth if as_list else depth + 1
        ipad = "    " * inner
        list_lines = []
        if "minItems" in schema:
            list_lines.append(f"{ipad}if len({v}) < {schema['minItems']}:\n{ipad}    return False\n")
        if "maxItems" in schema:
            list_lines.append(f"{ipad}if len({v}) > {schema['maxItems']}:\n{ipad}    return False\n")
        if "items" in schema:
            item = self.var()
            lines = self.node(schema["items"], item, inner + 1)
            if lines:
                list_lines.append(f"{ipad}for {item} in {v}:\n" + "".join(lines))
        if list_lines:
            out.append(("" if as_list else f"{pad}if isinstance({v}, list):\n") + "".join(list_lines))
        as_dict = sure({"object"})
        inner = depth if as_dict else depth + 1
        ipad = "    " * inner
        obj_lines = []
        props = schema.get("properties", {})
        required = schema.get("required", [])
        checked = {}
        for key, sub in props.items():
            item = self.var()
            lines = self.node(sub, item, inner + (0 if key in required else 1))
            if lines:
                checked[key] = item, lines
        extra = schema.get("additionalProperties", True)
        exact = extra is False and set(required) == set(props)
        if exact:  # exactly these keys, every one required: one comparison, in C
            obj_lines.append(f"{ipad}if {v}.keys() != {self.const(frozenset(props))}:\n{ipad}    return False\n")
        elif required:  # every required key at once, in C; then each is read by subscript
            obj_lines.append(f"{ipad}if not {v}.keys() >= {self.const(frozenset(required))}:\n"
                             f"{ipad}    return False\n")
        for key, (item, lines) in checked.items():
            if key in required:
                obj_lines.append(f"{ipad}{item} = {v}[{key!r}]\n" + "".join(lines))
            else:
                obj_lines.append(f"{ipad}{item} = {v}.get({key!r}, MISSING)\n"
                                 f"{ipad}if {item} is not MISSING:\n" + "".join(lines))
        known = self.const(frozenset(props))
        if extra is False and not exact:
            obj_lines.append(f"{ipad}if not {known}.issuperset({v}):\n{ipad}    return False\n")
        elif isinstance(extra, dict):
            key, item = self.var(), self.var()
            lines = self.node(extra, item, inner + 2)
            if lines:
                obj_lines.append(f"{ipad}for {key}, {item} in {v}.items():\n"
                                 f"{ipad}    if {key} not in {known}:\n" + "".join(lines))
        if obj_lines:
            out.append(("" if as_dict else f"{pad}if isinstance({v}, dict):\n") + "".join(obj_lines))
        return out


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
