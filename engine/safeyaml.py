"""Bounded YAML (and so JSON) loading for documents that people write: specs, results, registries.

`yaml.safe_load` builds no objects it should not, but it is not bounded: an alias bomb
("billion laughs", a few hundred bytes whose aliases expand to a billion nodes) loads in a
moment as shared references and then hangs whatever walks it (a repr in an error message, a
validator, a renderer), and a deeply nested document exhausts the recursion of the pure-Python
composer or of the code that walks it. `load` composes the document (libyaml's parser when
PyYAML has it, which itself refuses nesting past 1000 levels), measures the node graph before a
single object is built, and refuses, with a `YamlError` saying why and where:

- nesting deeper than `MAX_DEPTH` levels;
- aliases that would add more than `MAX_ALIAS_NODES` nodes once expanded, or that refer to a
  node from inside itself (a recursive document);
- anything PyYAML cannot parse, or an exhausted recursion anywhere in the load.
"""

from __future__ import annotations

from typing import Any

import yaml

# The arena's deepest document (a results file) nests 7 levels; 64 leaves room for people.
MAX_DEPTH = 64
# What aliases may add to a document once expanded: generous for a hand-written registry
# that shares a block or two, a millionth of a bomb.
MAX_ALIAS_NODES = 100_000

SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(ValueError):
    """Text that is not a document this arena reads: malformed, too deep, or an alias bomb."""


def load(text: str | bytes, loader: type = SAFE_LOADER) -> Any:
    """The value of one YAML document, as `yaml.load(text, Loader=loader)` gives it, once the
    document is known to be bounded; raises YamlError otherwise. `loader` is a SafeLoader
    (or CSafeLoader) or a subclass of one."""
    instance = loader(text)
    try:
        node = instance.get_single_node()
        if node is None:
            return None
        check_node(node)
        return instance.construct_document(node)
    except yaml.YAMLError as exc:
        raise YamlError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise YamlError(f"nested too deeply to read (the limit is {MAX_DEPTH} levels)") from None
    finally:
        instance.dispose()


def _where(node: yaml.Node) -> str:
    mark = node.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"


def _children(node: yaml.Node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def check_node(root: yaml.Node) -> None:
    """Refuse a composed node graph that is too deep, recursive, or that its aliases (shared
    nodes) would expand past MAX_ALIAS_NODES. Iterative and linear in the distinct nodes."""
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
            raise YamlError(f"the node at {_where(node)} holds an alias of itself (a recursive document)")
        if level > MAX_DEPTH:
            raise YamlError(f"nested more than {MAX_DEPTH} levels deep at {_where(node)}")
        distinct += 1
        on_path.add(key)
        stack.append((node, level, True))
        for child in _children(node):
            child_key = id(child)
            if child_key in on_path:
                raise YamlError(f"the node at {_where(child)} holds an alias of itself (a recursive document)")
            if child_key not in expanded:
                stack.append((child, level + 1, False))
    total = expanded[id(root)]
    if depth[id(root)] > MAX_DEPTH:  # a shared node first met high up may sit deeper elsewhere
        raise YamlError(f"nested more than {MAX_DEPTH} levels deep (through its aliases)")
    if total - distinct > MAX_ALIAS_NODES:
        raise YamlError(f"its aliases expand {distinct} nodes to {total}, more than the {MAX_ALIAS_NODES} "
                        "extra nodes allowed (an alias bomb?)")
