"""A fast reader for the YAML the arena itself writes, with PyYAML as the fallback.

Why: a round of 60 agents over 28 environments is about 0.9 MB of YAML, and PyYAML's safe
loader takes seconds per round even with libyaml (its constructor is pure Python), so a site of
a hundred rounds could not build in seconds. `grader.results.dump_yaml` (`yaml.safe_dump`,
block style) writes a small regular subset of YAML; this module reads exactly that subset and
hands anything else (flow collections, anchors, tags, comments, double-quoted or blank-line
scalars, document markers...) to `yaml.load(..., CSafeLoader)` for the whole document, so its
answer is always the one PyYAML would give (tests/site/test_fastyaml.py diffs the two).
"""

from __future__ import annotations

import gc
import re
from itertools import repeat
from operator import sub
from typing import Any

import yaml

from engine import safeyaml

try:  # libyaml when present: the fallback is still correct without it, only slower
    _FALLBACK_LOADER: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pyyaml built without libyaml
    _FALLBACK_LOADER = yaml.SafeLoader

_BAD_LINE = re.compile(r"^ *(?:#|---|\.\.\.|$)", re.M)
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?\Z")
_SPECIAL = {"null": None, "~": None, "Null": None, "NULL": None, "true": True, "True": True, "TRUE": True,
            "false": False, "False": False, "FALSE": False}
_RESOLVER = yaml.resolver.Resolver()
# Characters that start something other than a plain or single-quoted scalar in block context.
_INDICATORS = set("[]{}&*!|>\"%@`#")
_NOT_PLAIN = _INDICATORS | {"'", "-", "?", ":", ","}
# Keys seen to be plain strings that read as themselves: later lines with them take the fast path.
_SIMPLE_KEYS: set[str] = set()
# Plain scalar text -> its value (immutable: None, bool, int, float, str, date), bounded.
_PLAIN_SEEN: dict[str, Any] = {}
_PLAIN_SEEN_MAX = 1 << 18  # a few tens of MB at most; 4-digit rates alone are 10,000 values
_MISSING = object()


class _Unsupported(Exception):
    """The text uses YAML outside the subset read here: PyYAML reads it instead."""


def load(text: str) -> Any:
    """Parse a YAML document as `yaml.safe_load` would, or raise `engine.safeyaml.YamlError`
    (a ValueError) for one that is malformed, nested too deeply or an alias bomb: what the
    fast reader does not take is read by `engine.safeyaml`, which bounds it."""
    # The reader makes a million containers for a large round, none in a cycle: with the
    # cycle collector on, its passes over the growing heap cost a tenth of the parse.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _Reader(text).document()
    except (_Unsupported, RecursionError):  # deep nesting: the bounded reader says how deep
        pass
    finally:
        if collecting:
            gc.enable()
    return safeyaml.load(text, _FALLBACK_LOADER)


def _plain(value: str) -> Any:
    """A plain scalar's value under YAML 1.1 as PyYAML resolves it (memoised in `_PLAIN_SEEN`,
    which the reader consults inline: the same values recur thousands of times a document)."""
    result = _PLAIN_SEEN.get(value, _MISSING)
    if result is _MISSING:
        if len(_PLAIN_SEEN) >= _PLAIN_SEEN_MAX:
            _PLAIN_SEEN.clear()
        _PLAIN_SEEN[value] = result = _resolve_plain(value)
    return result


def _resolve_plain(value: str) -> Any:
    if value[:1] == " " or value[-1:] == " ":  # PyYAML strips these; `dump_yaml` never writes them
        raise _Unsupported("space around a plain scalar")
    if value in _SPECIAL:
        return _SPECIAL[value]
    if _INT.match(value):
        return int(value)
    if _FLOAT.match(value):
        return float(value)
    if " #" in value or value.endswith(":") or ": " in value:
        raise _Unsupported(value)
    if _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == "tag:yaml.org,2002:str":
        return value
    return yaml.load(value, Loader=_FALLBACK_LOADER)  # an unusual number or a date: PyYAML decides


class _Reader:
    """Recursive descent over (indent, content) lines of a block-style document."""

    def __init__(self, text: str):
        if "\t" in text or "\r" in text:
            raise _Unsupported("tabs or carriage returns")
        if text.endswith("\n"):
            text = text[:-1]
        # Lines split into (indent, content) with C-level passes only (str.split, map over
        # str.lstrip and len): a Python loop over every line cost as much as the parse.
        lines = text.split("\n")
        txt = list(map(str.lstrip, lines, repeat(" ")))
        # The per-line regex runs only when a cheap test says it could match: a blank or
        # spaces-only line (an empty content), a comment or a document marker (rare).
        if ("" in txt or "#" in text or "---" in text or "..." in text) and _BAD_LINE.search(text):
            raise _Unsupported("blank line, comment or document marker")
        self.ind: list[int] = list(map(sub, map(len, lines), map(len, txt)))
        self.txt: list[str] = txt
        self.n = len(txt)
        # A sentinel line at indent -1: every loop stops there without testing `i < n`.
        self.ind.append(-1)
        self.txt.append("")

    def document(self) -> Any:
        if self.n == 0:
            raise _Unsupported("empty document")
        value, i = self.block(0, self.ind[0])
        if i != self.n:
            raise _Unsupported(f"trailing content at line {i + 1}")
        return value

    def block(self, i: int, ind: int) -> tuple[Any, int]:
        text = self.txt[i]
        if text == "-" or text.startswith("- "):
            return self.sequence(i, ind)
        return self.mapping(i, ind)

    def mapping(self, i: int, ind: int) -> tuple[dict, int]:
        out: dict = {}
        inds, txt, seen = self.ind, self.txt, _PLAIN_SEEN.get
        while inds[i] == ind:  # the sentinel line (indent -1) ends every mapping
            text = txt[i]
            key, sep, rest = text.partition(": ")
            # The common line, `key: plain-scalar` with nothing folded after it, on a fast path:
            # a value seen before is a dict look-up (the same numbers and names recur thousands
            # of times), and `_plain` is a pure function of the text, so its memo is always right.
            if key in _SIMPLE_KEYS and sep and inds[i + 1] <= ind and key not in out:
                value = seen(rest, _MISSING)
                if value is not _MISSING:
                    out[key] = value
                    i += 1
                    continue
                if rest and rest[0] not in _NOT_PLAIN:  # `key: ` with nothing after is null: PyYAML's
                    out[key] = _plain(rest)
                    i += 1
                    continue
            if text[0] in _INDICATORS or text[0] in "'-?":
                raise _Unsupported(f"line {i + 1}: not a plain key")
            if not sep:
                if not text.endswith(":"):
                    raise _Unsupported(f"line {i + 1}: not a key")
                key, rest = text[:-1], ""
            if ":" in key or " #" in key or key in out:
                raise _Unsupported(f"line {i + 1}: unusual key")
            key_value = _plain(key)
            if isinstance(key_value, str) and key_value == key and " " not in key:
                _SIMPLE_KEYS.add(key)
            if rest:
                out[key_value], i = self.scalar(rest, i, ind)
            elif inds[i + 1] > ind:
                out[key_value], i = self.block(i + 1, inds[i + 1])
            elif inds[i + 1] == ind and (txt[i + 1] == "-" or txt[i + 1].startswith("- ")):
                out[key_value], i = self.sequence(i + 1, ind)  # PyYAML's indentless sequence
            else:
                raise _Unsupported(f"line {i + 1}: empty value")
        if inds[i] > ind:
            raise _Unsupported(f"line {i + 1}: unexpected indentation")
        return out, i

    def sequence(self, i: int, ind: int) -> tuple[list, int]:
        out: list = []
        inds, txt = self.ind, self.txt
        inner = ind + 2
        while inds[i] == ind and txt[i].startswith("- "):
            rest = txt[i][2:]
            if rest.startswith("- "):
                # A nested sequence that starts on this line: read it as if its first line were
                # indented to where its content starts.
                inds[i], txt[i] = inner, rest
                value, i = self.sequence(i, inner)
            elif rest[:1] not in _INDICATORS and rest[:1] != "'" and (": " in rest or rest.endswith(":")):
                # A mapping that starts on this line, likewise (straight to `mapping`: the hot case).
                inds[i], txt[i] = inner, rest
                value, i = self.mapping(i, inner)
            else:
                value, i = self.scalar(rest, i, ind)
            out.append(value)
        if inds[i] > ind:
            raise _Unsupported(f"line {i + 1}: unexpected indentation")
        return out, i

    def scalar(self, text: str, i: int, ind: int) -> tuple[Any, int]:
        """The scalar starting with `text` on line i, folded over more-indented lines after it."""
        j = i + 1
        inds = self.ind
        while inds[j] > ind:
            j += 1
        if j > i + 1:
            if text[-1:] == " " or any(t[-1:] == " " for t in self.txt[i + 1:j - 1]):
                raise _Unsupported(f"line {i + 1}: a folded scalar with trailing spaces")
            text = " ".join([text] + self.txt[i + 1:j])  # folding without blank lines: one space
        if not text or text in ("-", "?", ":") or text.startswith(("- ", "? ", ": ")):
            raise _Unsupported(f"line {i + 1}: an empty scalar or a block indicator")  # e.g. `- -` is [[null]]
        first = text[0]
        if first == "'":
            if len(text) < 2 or not text.endswith("'"):
                raise _Unsupported(f"line {i + 1}: unterminated quote")
            body = text[1:-1]
            if "'" in body.replace("''", ""):
                raise _Unsupported(f"line {i + 1}: quote inside a quoted scalar")
            return body.replace("''", "'"), j
        if first in _INDICATORS:
            if text == "[]":
                return [], j
            if text == "{}":
                return {}, j
            raise _Unsupported(f"line {i + 1}: flow, alias, tag or double-quoted scalar")
        value = _PLAIN_SEEN.get(text, _MISSING)
        return (_plain(text) if value is _MISSING else value), j
