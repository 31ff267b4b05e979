"""The tiers of environments: public, paper, and the seeded generator behind ladder and final."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from .layout import Layout, make_layout, opening_cells
from .rules import Capture, Win
from .seeding import derive_seed
from .spec import EnvSpec, parse_spec


class TierError(ValueError):
    """A tier asked for that cannot be given: names the argument (`field`) and its `value`."""

    def __init__(self, field: str, value: object, message: str):
        super().__init__(message)
        self.field, self.value = field, value


if TYPE_CHECKING:
    from .simulate import PlayStats

TIERS = ("public", "paper", "ladder", "final")
DEFAULT_GENERATED_COUNT = 28
SCREEN_GAMES = 400
GEN_MIN_SIDE, GEN_MAX_SIDE = 6, 12
# The 6x8 layout where orthogonal capture stalls, and what its two orthogonal pairs become.
STALLING_LAYOUT = "random-2"
STALL_SUBSTITUTES = {("most", "orthogonal"): "short-1", ("fewest", "orthogonal"): "short-2"}


@dataclass(frozen=True)
class GeneratorPool:
    """The win conditions and capture rules a generated tier draws from, in drawing order."""

    version: int
    wins: tuple[Win, ...]
    captures: tuple[Capture, ...]
    # A draw that is a public environment (same layout and rules: the same content id) is
    # redrawn: a scored tier must be unseen. Pool 1 did not check, and keeps its draws.
    public_excluded: bool = False


# A published pool is never edited: a new rule goes into a new version, so a seed keeps
# the tiers it has already generated under the version it was generated with.
GENERATOR_POOLS = {
    1: GeneratorPool(
        1,
        (Win.MOST, Win.FEWEST),
        (Capture.STANDARD, Capture.ORTHOGONAL, Capture.DIAGONAL, Capture.SHORT_1, Capture.SHORT_2, Capture.LONGEST),
    ),
    2: GeneratorPool(
        2,
        (Win.MOST, Win.FEWEST),
        (Capture.STANDARD, Capture.ORTHOGONAL, Capture.DIAGONAL, Capture.SHORT_1, Capture.SHORT_2, Capture.LONGEST),
        public_excluded=True,
    ),
}
POOL_VERSION = max(GENERATOR_POOLS)  # what a new tier is generated with


def generator_pool(version: int) -> GeneratorPool:
    """The pool of a version; an unknown version is refused with the versions there are."""
    try:
        return GENERATOR_POOLS[version]
    except KeyError:
        known = ", ".join(map(str, sorted(GENERATOR_POOLS)))
        raise TierError(
            "pool", version, f"generator pool version {version!r} is unknown (this engine has {known})"
        ) from None


@lru_cache(maxsize=1)
def _paper_data() -> dict[str, Any]:
    # JSON, read with the standard library: the engine parses no YAML (the grader does).
    data: dict[str, Any] = json.loads(resources.files("engine").joinpath("data/paper_layouts.json").read_text())
    return data


def paper_layouts() -> list[Layout]:
    """The paper's seven layouts, in the paper's order."""
    return [make_layout(d["rows"], d["cols"], d["obstacles"], d["name"]) for d in _paper_data()["layouts"]]


def public_rule_pairs() -> list[tuple[str, str]]:
    return [(p["win"], p["capture"]) for p in _paper_data()["public_rule_pairs"]]


def _spec(layout: Layout, rules: dict[str, Any], name: str) -> EnvSpec:
    return parse_spec({"layout": layout.to_dict(), "rules": rules}, name=name)


def public_tier() -> list[EnvSpec]:
    """7 layouts x 8 rule pairs = 56, with the stalling layout's orthogonal pairs substituted."""
    return list(_public_tier())


@lru_cache(maxsize=1)
def _public_tier() -> tuple[EnvSpec, ...]:  # specs are immutable: build (and validate) them once
    out = []
    for layout in paper_layouts():
        for win, capture in public_rule_pairs():
            if layout.name == STALLING_LAYOUT:
                capture = STALL_SUBSTITUTES.get((win, capture), capture)
            out.append(_spec(layout, {"win": win, "capture": capture}, f"{layout.name} {win}/{capture}"))
    return tuple(out)


def paper_tier() -> list[EnvSpec]:
    """The authors' 56 presets; preset id = condition index * 7 + layout index."""
    return list(_paper_tier())


@lru_cache(maxsize=1)
def _paper_tier() -> tuple[EnvSpec, ...]:
    layouts = paper_layouts()
    out = []
    for ci, cond in enumerate(_paper_data()["paper_conditions"]):
        for li, layout in enumerate(layouts):
            rules = {"win": "band", "capture": "standard", "k": cond["k"]}
            if cond.get("turn_limit") is not None:
                rules["turn_limit"] = cond["turn_limit"]
            label = f"paper-{ci * 7 + li} {layout.name} k={cond['k']}"
            if "turn_limit" in rules:
                label += f" limit={rules['turn_limit']}"
            out.append(_spec(layout, rules, label))
    return tuple(out)


class HashStream:
    """A deterministic integer stream from sha256 (the same on every machine and Python)."""

    def __init__(self, *key: object):
        self._key = "\x1f".join(map(str, key)).encode()
        self._counter = 0

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection so there is no modulo bias."""
        if n <= 1:
            return 0
        bits = (n - 1).bit_length()
        while True:
            self._counter += 1
            digest = hashlib.sha256(self._key + b"\x1e" + str(self._counter).encode()).digest()
            value = int.from_bytes(digest[:8], "little") & ((1 << bits) - 1)
            if value < n:
                return value


@dataclass(frozen=True)
class ScreenResult:
    spec: EnvSpec
    stats: PlayStats
    reasons: tuple[str, ...] = field(default=())

    @property
    def accepted(self) -> bool:
        return not self.reasons


def screen(spec: EnvSpec, seed: int, games: int = SCREEN_GAMES) -> ScreenResult:
    """Random play decides whether a generated environment is worth scoring (docs/rules.md §3)."""
    from .simulate import random_stats  # numba: only when a tier is generated

    stats = random_stats(spec, games, seed)
    reasons = []
    if not stats.first_move_exists:
        reasons.append("no legal first move")
    else:
        if stats.draw_rate > 0.70:
            reasons.append(f"draw rate {stats.draw_rate:.2f} > 0.70")
        if stats.mean_plies < 8:
            reasons.append(f"mean plies {stats.mean_plies:.1f} < 8")
        if stats.colour_skew > 0.88:
            reasons.append(f"one colour wins {stats.colour_skew:.2f} > 0.88 of decisive games")
        if stats.mean_fill < 0.5:
            reasons.append(f"fills {stats.mean_fill:.2f} < 0.50 of playable cells")
    return ScreenResult(spec, stats, tuple(reasons))


def _candidate(stream: HashStream, name: str, pool: GeneratorPool) -> EnvSpec:
    rows = GEN_MIN_SIDE + stream.below(GEN_MAX_SIDE - GEN_MIN_SIDE + 1)
    cols = GEN_MIN_SIDE + stream.below(GEN_MAX_SIDE - GEN_MIN_SIDE + 1)
    opening = {cell for colour in opening_cells(rows, cols) for cell in colour}
    free = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in opening]
    count = stream.below(rows * cols // 5 + 1)
    for i in range(count):  # partial Fisher-Yates: the first `count` cells are the sample
        j = i + stream.below(len(free) - i)
        free[i], free[j] = free[j], free[i]
    win = pool.wins[stream.below(len(pool.wins))]
    capture = pool.captures[stream.below(len(pool.captures))]
    layout = make_layout(rows, cols, free[:count], name)
    return _spec(layout, {"win": win.value, "capture": capture.value}, name)


@dataclass
class Generated:
    """A generated tier: its inputs (tier, seed, count, pool version), the accepted
    environments and every rejected candidate with its reasons."""

    tier: str
    specs: list[EnvSpec]
    rejected: list[ScreenResult]
    seed: int = 0
    count: int = 0
    pool: int = POOL_VERSION


def generate_tier(tier: str, seed: int, count: int = DEFAULT_GENERATED_COUNT, pool: int = POOL_VERSION) -> Generated:
    """`count` screened environments for `ladder` or `final` from `seed`, drawn from generator
    pool version `pool`; deterministic everywhere."""
    if tier not in ("ladder", "final"):
        raise TierError("tier", tier, f"tier {tier!r} is not generated (ladder or final)")
    if count < 1:
        raise TierError("count", count, f"count must be at least 1, got {count}")
    drawn = generator_pool(pool)
    accepted: list[EnvSpec] = []
    rejected: list[ScreenResult] = []
    seen: set[str] = set()
    public = {s.id for s in _public_tier()} if drawn.public_excluded else set()
    attempt = 0
    while len(accepted) < count:
        attempt += 1
        if attempt > 200 * count:
            raise RuntimeError(f"the generator found only {len(accepted)} of {count} environments")
        stream = HashStream("generate", tier, seed, attempt)
        spec = _candidate(stream, f"{tier}-{len(accepted) + 1:02d}", drawn)
        if spec.id in seen or spec.id in public:
            continue
        result = screen(spec, seed=derive_seed("screen", tier, seed, attempt))
        if result.accepted:
            seen.add(spec.id)
            accepted.append(spec)
        else:
            rejected.append(result)
    return Generated(tier, accepted, rejected, seed, count, pool)


def tier_specs(tier: str, seed: int | None = None, count: int | None = None, pool: int = POOL_VERSION) -> list[EnvSpec]:
    """The environments of a tier; ladder and final need a seed (and draw from `pool`)."""
    if tier == "public":
        specs = public_tier()
    elif tier == "paper":
        specs = paper_tier()
    elif tier in ("ladder", "final"):
        if seed is None:
            raise TierError("seed", None, f"the {tier} tier is generated and needs a seed")
        return generate_tier(tier, seed, count or DEFAULT_GENERATED_COUNT, pool).specs
    else:
        raise TierError("tier", tier, f"unknown tier {tier!r} (one of {', '.join(TIERS)})")
    return specs[:count] if count else specs
