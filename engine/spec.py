"""Environment specs: `(layout, rules)` as small validated data with a content id.

The engine builds specs from plain data (`parse_spec`); reading a spec file (YAML or JSON) is
the grader's (grader.documents.specs.load_spec, through the arena's one YAML loader).

    layout: {rows: 8, cols: 8, obstacles: [[0, 0], [7, 7]]}
    rules:  {win: most, capture: standard}          # k with band only; turn_limit optional
"""

from __future__ import annotations

import functools
import hashlib
import json
import numbers
import reprlib
from dataclasses import dataclass, field
from typing import Any

from . import scoring
from .layout import MAX_SIDE, MIN_SIDE, Layout, make_layout, opening_cells
from .rules import Capture, Rules, Win

SPEC_VERSION = 1


class SpecError(ValueError):
    """A spec failed validation; `problems` lists every one as `path: message`."""

    def __init__(self, problems: list[str], source: str | None = None):
        self.problems = problems
        where = f"{source}: " if source else ""
        super().__init__(where + "invalid environment spec:\n  " + "\n  ".join(problems))


@dataclass(frozen=True)
class EnvSpec:
    """One environment: a layout and its rules. `id` is derived from the content alone."""

    layout: Layout
    rules: Rules
    name: str | None = field(default=None, compare=False)

    def to_dict(self, with_id: bool = False) -> dict:
        out: dict[str, Any] = {}
        if with_id:
            out["id"] = self.id
            if self.name:
                out["name"] = self.name
        out["layout"] = self.layout.to_dict()
        out["rules"] = self.rules.to_dict()
        return out

    @functools.cached_property
    def id(self) -> str:
        """`env-` and 12 hex digits of the sha256 of the canonical content (layout and rules)."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return "env-" + hashlib.sha256(canonical.encode()).hexdigest()[:12]

    @functools.cached_property
    def win_args(self) -> tuple[int, int, int, int, int]:
        """The win condition as the kernels take it (`scoring.win_args`), kept per spec:
        every game asks for it, and hashing the rules costs more than reading it."""
        return scoring.win_args(self.rules)

    def with_rules(self, **changes: Any) -> EnvSpec:
        data = self.rules.to_dict() | {k: (v.value if hasattr(v, "value") else v) for k, v in changes.items()}
        return parse_spec({"layout": self.layout.to_dict(), "rules": data}, name=self.name)


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60


def _shown(value: Any) -> str:
    """A short repr of a value from a document, for an error message: bounded in length and in
    the time it takes, however large or shared the value is."""
    return _REPR.repr(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_keys(data: dict, allowed: set[str], path: str, problems: list[str]) -> None:
    for key in data:
        if key not in allowed:
            problems.append(f"{path}{key}: unknown field (allowed: {', '.join(sorted(allowed))})")


def _parse_layout(data: Any, problems: list[str]) -> tuple[int, int, list[tuple[int, int]]] | None:
    if not isinstance(data, dict):
        problems.append(f"layout: must be a mapping with rows, cols, obstacles, got {_shown(data)}")
        return None
    _check_keys(data, {"rows", "cols", "obstacles", "name"}, "layout.", problems)
    sides = {}
    for key in ("rows", "cols"):
        value = data.get(key)
        if value is None:
            problems.append(f"layout.{key}: missing")
        elif not _is_int(value):
            problems.append(f"layout.{key}: must be an integer, got {_shown(value)}")
        elif not MIN_SIDE <= value <= MAX_SIDE:
            problems.append(f"layout.{key}: must be {MIN_SIDE}..{MAX_SIDE}, got {value}")
        else:
            sides[key] = int(value)
    raw = data.get("obstacles", [])
    if raw is None:
        raw = []
    if not isinstance(raw, (list, tuple)):
        problems.append(f"layout.obstacles: must be a list of [row, col], got {_shown(raw)}")
        return None
    if len(sides) < 2:
        return None
    rows, cols = sides["rows"], sides["cols"]
    opening = {cell for colour in opening_cells(rows, cols) for cell in colour}
    seen: set[tuple[int, int]] = set()
    cells: list[tuple[int, int]] = []
    for i, item in enumerate(raw):
        path = f"layout.obstacles[{i}]"
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not all(_is_int(v) for v in item):
            problems.append(f"{path}: must be [row, col] with two integers, got {_shown(item)}")
            continue
        r, c = int(item[0]), int(item[1])
        if not (0 <= r < rows and 0 <= c < cols):
            problems.append(f"{path}: [{r}, {c}] is off the {rows}x{cols} board")
        elif (r, c) in opening:
            problems.append(f"{path}: [{r}, {c}] is an opening cell")
        elif (r, c) in seen:
            problems.append(f"{path}: [{r}, {c}] is listed twice")
        else:
            seen.add((r, c))
            cells.append((r, c))
    return rows, cols, cells


def _parse_rules(data: Any, problems: list[str]) -> Rules | None:
    if not isinstance(data, dict):
        problems.append(f"rules: must be a mapping with win and capture, got {_shown(data)}")
        return None
    _check_keys(data, {"win", "capture", "k", "turn_limit"}, "rules.", problems)
    win = capture = None
    try:
        win = Win(data.get("win"))
    except ValueError:
        names = ", ".join(w.value for w in Win)
        problems.append(f"rules.win: must be one of {names}, got {_shown(data.get('win'))}")
    try:
        capture = Capture(data.get("capture"))
    except ValueError:
        names = ", ".join(c.value for c in Capture)
        problems.append(f"rules.capture: must be one of {names}, got {_shown(data.get('capture'))}")
    k = data.get("k")
    if k is not None:
        if not _is_number(k):
            problems.append(f"rules.k: must be a number, got {_shown(k)}")
            k = None
        elif win is not None and win is not Win.BAND:
            problems.append(f"rules.k: only the band win condition takes k (win is {win.value})")
        elif not -1.0 <= float(k) <= 2.0:
            problems.append(f"rules.k: must lie in [-1, 2], got {k}")
    elif win is Win.BAND:
        problems.append("rules.k: the band win condition needs k")
    limit = data.get("turn_limit")
    if limit is not None and (not _is_int(limit) or limit < 1):
        problems.append(f"rules.turn_limit: must be a positive integer or null, got {_shown(limit)}")
    if win is None or capture is None:
        return None
    return Rules(win, capture, None if k is None else float(k), None if limit is None else int(limit))


def parse_spec(data: Any, name: str | None = None, source: str | None = None) -> EnvSpec:
    """Validate a spec document (a dict) and return the EnvSpec; raises SpecError listing every problem."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise SpecError([f"(top): must be a mapping with layout and rules, got {type(data).__name__}"], source)
    _check_keys(data, {"layout", "rules", "id", "name", "spec_version"}, "", problems)
    version = data.get("spec_version", SPEC_VERSION)
    if version != SPEC_VERSION:
        problems.append(f"spec_version: this arena reads version {SPEC_VERSION}, got {_shown(version)}")
    geometry = _parse_layout(data.get("layout"), problems)
    rules = _parse_rules(data.get("rules"), problems)
    layout_data = data.get("layout")
    name = name or data.get("name") or (layout_data.get("name") if isinstance(layout_data, dict) else None)
    if problems or geometry is None or rules is None:
        raise SpecError(problems or ["(top): incomplete spec"], source)
    rows, cols, obstacles = geometry
    spec = EnvSpec(make_layout(rows, cols, obstacles, name), rules, name)
    claimed = data.get("id")
    if claimed is not None and claimed != spec.id:
        raise SpecError([f"id: {_shown(claimed)} does not match the content (its id is {spec.id})"], source)
    return spec
