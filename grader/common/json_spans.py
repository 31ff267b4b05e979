"""One value of a JSON document replaced in its text, every other byte kept.

A hand-formatted JSON file (the results schema) holds copies of the code's registries; to
rewrite a copy without reformatting the file, `value_span` finds where a value's text starts
and ends, and `render` lays the new value out as the old one was: on one line if it was, else
wrapped between its items under the opening bracket.
"""

from __future__ import annotations

import json
import re
from typing import Any

WIDTH = 120  # where a wrapped value breaks: the results schema's own wrapping
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class PointerError(KeyError):
    """A JSON pointer that names no value of the document; `pointer` is it."""

    def __init__(self, pointer: str, message: str):
        super().__init__(message)
        self.pointer = pointer

    def __str__(self) -> str:
        return str(self.args[0])


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _parts(pointer: str) -> list[str]:
    if pointer in ("", "/"):
        return []
    if not pointer.startswith("/"):
        raise PointerError(pointer, f"a JSON pointer starts with '/': {pointer!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def value_span(text: str, pointer: str) -> tuple[int, int]:
    """Where the value at `pointer` (RFC 6901, through objects only) is in the JSON `text`:
    the offsets of its first character and one past its last."""
    pos = _skip(text, 0)
    for part in _parts(pointer):
        if text[pos : pos + 1] != "{":
            raise PointerError(pointer, f"no object holds {part!r} on the way to {pointer}")
        pos = _skip(text, pos + 1)
        while True:
            if text[pos : pos + 1] != '"':
                raise PointerError(pointer, f"no key {part!r} on the way to {pointer}")
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, _skip(text, pos) + 1)  # past the colon
            if key == part:
                break
            pos = _skip(text, _DECODER.raw_decode(text, pos)[1])
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
    return pos, _DECODER.raw_decode(text, pos)[1]


def _column(text: str, pos: int) -> int:
    return pos - (text.rfind("\n", 0, pos) + 1)


def render(value: Any, column: int, wrapped: bool) -> str:
    """`value` as JSON with the separators `, ` and `: `, starting at `column`: one line unless
    `wrapped` and one line would pass WIDTH, then filled item by item to WIDTH, each further
    line indented under the first item."""
    compact = json.dumps(value, ensure_ascii=False)
    if not wrapped or not isinstance(value, (list, dict)) or column + len(compact) <= WIDTH:
        return compact
    if isinstance(value, dict):
        items = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items()]
        opening, closing = "{", "}"
    else:
        items = [json.dumps(v, ensure_ascii=False) for v in value]
        opening, closing = "[", "]"
    indent = " " * (column + 1)
    lines = [opening]
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else closing)
        end = (column if len(lines) == 1 else 0) + len(lines[-1])  # the line's end, in the file
        if lines[-1] == opening:
            lines[-1] += piece
        elif end + 1 + len(piece) > WIDTH:
            lines.append(indent + piece)
        else:
            lines[-1] += " " + piece
    return "\n".join(lines)


def replace_value(text: str, pointer: str, value: Any) -> str:
    """`text` with the value at `pointer` replaced by `value`, laid out as the old one was
    (one line, or wrapped if it was wrapped); the rest of the text unchanged."""
    start, end = value_span(text, pointer)
    new = render(value, _column(text, start), "\n" in text[start:end])
    return text[:start] + new + text[end:]
