"""The one validator of the arena's documents: JSON Schema, checked by the `jsonschema` library.

`validate` lists every problem of a document as `path: what`, in the arena's wording, for the
schemas in grader/documents/data/ (each field's meaning is its `description`). The library decides; a
predicate generated from a schema that keeps to a small subset of keywords only answers "valid"
first, because the library alone takes 3.6 s of CPU for one 1 MB results file, which the site
reads a hundred of (benchmarks/bench_site.py); tests/test_schema_predicate.py holds the two to
the same verdicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

DATA = Path(__file__).resolve().parent / "data"
ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "$defs", "examples", "default"}
# The keywords the fast predicate implements: a schema with any other is checked by the library alone.
PREDICATE_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "pattern",
    "$ref",
}


class SchemaError(ValueError):
    """A schema that is not a valid JSON Schema, or a reference that does not resolve."""


def _is_integer(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# JSON Schema lets 1.0 be an integer; the arena's documents count with ints only (YAML's 1.0 is a float).
_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TYPES)


@cache
def load_schema(name: str) -> dict:
    """The schema `grader/documents/data/<name>.schema.json` (read once; callers must not change it)."""
    return json.loads((DATA / f"{name}.schema.json").read_text(encoding="utf-8"))


def validate(value: Any, schema: dict, root: dict | None = None, path: str = "") -> list[str]:
    """Every way `value` fails `schema` (a part of `root`, whose `$defs` its references name),
    each as `path: what`; an empty list when it is valid."""
    root = schema if root is None else root
    valid, validator = _compiled(schema, root)
    if valid is not None and valid(value):  # the common case, without building a path for every value
        return []
    problems: list[str] = []
    seen: set[str] = set()
    for error in validator.iter_errors(value):
        for problem in _words(error, path, value):
            if problem not in seen:
                seen.add(problem)
                problems.append(problem)
    return problems


def problems_of(value: Any, name: str) -> list[str]:
    """Every problem of `value` as a `name` document (grader/documents/data/<name>.schema.json)."""
    return validate(value, load_schema(name))


_CACHE: dict[tuple[int, int], tuple[dict, dict, Any, Any]] = {}


def _compiled(schema: dict, root: dict) -> tuple[Callable[[Any], bool] | None, Any]:
    key = (id(schema), id(root))
    hit = _CACHE.get(key)
    if hit is None or hit[0] is not schema or hit[1] is not root:
        whole = schema if schema is root else {**schema, "$defs": root.get("$defs", {})}
        try:
            _Validator.check_schema(whole)
        except jsonschema.SchemaError as exc:
            raise SchemaError(f"not a valid JSON Schema: {exc.message}") from None
        validator = _Validator(whole)
        valid = _predicate(schema, root) if _keywords(root) <= PREDICATE_KEYWORDS | ANNOTATIONS else None
        hit = _CACHE[key] = (schema, root, valid, validator)
    return hit[2], hit[3]


def _keywords(schema: Any) -> set[str]:
    """Every keyword a schema uses, at any depth (property names and $defs names are not keywords)."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, sub in schema.items():
        if key in ("properties", "$defs"):
            for inner in sub.values():
                found |= _keywords(inner)
        elif key in ("items", "additionalProperties"):
            found |= _keywords(sub)
    return found


def _words(error: jsonschema.ValidationError, prefix: str, document: Any) -> list[str]:
    """One library error in the arena's wording: `path: what`, the path as `agents[0].name`."""
    path, node = prefix, document
    rule: Any
    value: Any
    for part in error.absolute_path:
        path = f"{path}[{part}]" if isinstance(node, list) else _join(path, str(part))
        node = node[part]
    where = path or "(top)"
    # The library types these as maybe unset; an error from iter_errors always has them.
    kind, rule, value = error.validator, error.validator_value, error.instance
    schema: Any = error.schema
    if kind in ("oneOf", "anyOf") and error.context:
        # `X or null`: say what X wants, not that no branch matched.
        branches = [e for e in error.context if rule[e.schema_path[0]] != {"type": "null"}]
        if branches:
            return _words(branches[0], prefix, document)
    if kind == "type":
        names = [rule] if isinstance(rule, str) else list(rule)
        return [f"{where}: expected {' or '.join(names)}, got {type(value).__name__} {_short(value)}"]
    if kind == "const":
        return [f"{where}: must be {rule!r}, got {_short(value)}"]
    if kind == "enum":
        return [f"{where}: must be one of {rule}, got {_short(value)}"]
    if kind == "minimum":
        return [f"{where}: must be >= {rule}, got {value}"]
    if kind == "exclusiveMinimum":
        return [f"{where}: must be > {rule}, got {value}"]
    if kind == "maximum":
        return [f"{where}: must be <= {rule}, got {value}"]
    if kind == "pattern":
        # A pattern with a title (grader/common/patterns.py's identifiers) is named by it, not shown as a regex.
        title = schema.get("title")
        return [
            f"{where}: {_short(value)} is not {title}" if title else f"{where}: {_short(value)} does not match {rule!r}"
        ]
    if kind == "minLength":
        return [f"{where}: must not be empty" if rule == 1 else f"{where}: needs at least {rule} characters"]
    if kind == "minItems":
        return [f"{where}: needs at least {rule} items, has {len(value)}"]
    if kind == "maxItems":
        return [f"{where}: allows at most {rule} items, has {len(value)}"]
    if kind == "required":
        return [f"{_join(path, key)}: missing" for key in rule if key not in value]
    if kind == "additionalProperties" and rule is False:
        known = schema.get("properties", {})
        return [f"{_join(path, key)}: unknown field" for key in value if key not in known]
    return [f"{where}: {error.message}"]


def _predicate(schema: dict, root: dict) -> Callable[[Any], bool]:
    """`valid(value) -> bool` for `schema`, as Python source generated from the schema and
    compiled once (a large document is checked in straight-line code, not a call per value)."""
    gen = _Generator(root)
    body = gen.node(schema, "v", 1)
    source = "def valid(v):\n" + "".join(body) + "    return True\n" + "".join(gen.functions)
    namespace = {"K": gen.constants, "MISSING": _MISSING, "_matched": _matched, "_among": _among}
    exec(compile(source, "<schema predicate>", "exec"), namespace)  # noqa: S102 - our own schema's text
    valid: Callable[[Any], bool] = namespace["valid"]  # type: ignore[assignment]
    return valid


def _resolve(ref: str, root: dict) -> dict:
    if not ref.startswith("#/$defs/"):
        raise SchemaError(f"only local #/$defs references are supported, got {ref!r}")
    try:
        return root["$defs"][ref[len("#/$defs/") :]]
    except KeyError:
        raise SchemaError(f"unresolved reference {ref!r}") from None


def _among(value: Any, options: list) -> bool:
    """Whether `value` is one of `options` as JSON Schema compares: true and 1 are not equal."""
    return any(value == o and isinstance(value, bool) == isinstance(o, bool) for o in options)


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
    "null": "{v} is None",
    "boolean": "({v} is True or {v} is False)",
    "string": "isinstance({v}, str)",
    "integer": "(isinstance({v}, int) and {v} is not True and {v} is not False)",
    "number": "(isinstance({v}, (int, float)) and {v} is not True and {v} is not False)",
    "array": "isinstance({v}, list)",
    "object": "isinstance({v}, dict)",
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
        for options in ([schema["const"]] if "const" in schema else None, schema.get("enum")):
            if options is None:
                continue
            if all(o is None or isinstance(o, str) for o in options):  # `in` is exact: no true that equals 1
                out.append(f"{pad}if {v} not in {self.const(options)}:\n{pad}    return False\n")
            else:
                out.append(f"{pad}if not _among({v}, {self.const(options)}):\n{pad}    return False\n")
        number = (
            ""
            if sure({"integer", "number"})
            else f"isinstance({v}, (int, float)) and {v} is not True and {v} is not False and "
        )
        if "minimum" in schema:
            out.append(f"{pad}if {number}{v} < {self.const(schema['minimum'])}:\n{pad}    return False\n")
        if "maximum" in schema:
            out.append(f"{pad}if {number}{v} > {self.const(schema['maximum'])}:\n{pad}    return False\n")
        if "pattern" in schema:
            # A document repeats its strings (a round names each agent thousands of times): a
            # string once matched is remembered, and searched again only when new.
            regex, seen = self.const(re.compile(schema["pattern"])), self.const(set())
            string = "" if sure({"string"}) else f"isinstance({v}, str) and "
            out.append(
                f"{pad}if {string}{v} not in {seen} and not _matched({regex}, {seen}, {v}):\n{pad}    return False\n"
            )
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
            obj_lines.append(f"{ipad}if not {v}.keys() >= {self.const(frozenset(required))}:\n{ipad}    return False\n")
        for key, (item, lines) in checked.items():
            if key in required:
                obj_lines.append(f"{ipad}{item} = {v}[{key!r}]\n" + "".join(lines))
            else:
                obj_lines.append(
                    f"{ipad}{item} = {v}.get({key!r}, MISSING)\n{ipad}if {item} is not MISSING:\n" + "".join(lines)
                )
        known = self.const(frozenset(props))
        if extra is False and not exact:
            obj_lines.append(f"{ipad}if not {known}.issuperset({v}):\n{ipad}    return False\n")
        elif isinstance(extra, dict):
            key, item = self.var(), self.var()
            lines = self.node(extra, item, inner + 2)
            if lines:
                obj_lines.append(
                    f"{ipad}for {key}, {item} in {v}.items():\n{ipad}    if {key} not in {known}:\n" + "".join(lines)
                )
        if obj_lines:
            out.append(("" if as_dict else f"{pad}if isinstance({v}, dict):\n") + "".join(obj_lines))
        return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
