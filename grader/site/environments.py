"""The environments page's data: the public tier, and any environment a published round discloses.

The public tier is fixed data (the paper's seven layouts, eight rule pairs each); it is read
from the engine's tier definition so that its ids match the ones rounds record. That is the
only use of the engine outside replays, and it recomputes nothing: it lists specs.
Other tiers show what their rounds' disclosure publishes: an `open` round carries each
environment's spec; a `staff` or `final` round carries labels only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from grader.site.model import rules_label, rules_text


@dataclass
class EnvEntry:
    id: str
    name: str | None
    rules: dict
    rounds: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return rules_label(self.rules)

    @property
    def text(self) -> str:
        return rules_text(self.rules)


@dataclass
class LayoutGroup:
    """Environments sharing one board, drawn once."""

    name: str
    rows: int
    cols: int
    obstacles: list[list[int]]
    envs: list[EnvEntry]


def public_tier_version() -> str:
    """A digest of the public tier's specs as the engine lists them (for the pages' cache key:
    the data itself, not the files it comes from)."""
    from engine.tiers import public_tier

    rows = [[s.id, s.name, s.to_dict()] for s in public_tier()]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _group(specs: list[tuple[str, str | None, dict]]) -> list[LayoutGroup]:
    groups: dict[tuple, LayoutGroup] = {}
    for env_id, name, spec in specs:
        layout = spec["layout"]
        key = (layout["rows"], layout["cols"], tuple(map(tuple, layout["obstacles"])))
        layout_name = (name or "").split(" ")[0] or f"{layout['rows']}x{layout['cols']}"
        group = groups.get(key)
        if group is None:
            group = groups[key] = LayoutGroup(layout_name, layout["rows"], layout["cols"], layout["obstacles"], [])
        group.envs.append(EnvEntry(env_id, name, spec["rules"]))
    return list(groups.values())


def public_groups() -> list[LayoutGroup]:
    """The public tier, by layout (imports the engine: only when this page is rendered)."""
    from engine.tiers import public_tier

    return _group([(s.id, s.name, s.to_dict()) for s in public_tier()])


def disclosed_groups(rounds: list, tier: str) -> tuple[list[LayoutGroup], list[str]]:
    """(layouts of the environments that open rounds of `tier` publish, the ids of the rounds
    of that tier that publish none)."""
    specs: dict[str, tuple[str, str | None, dict]] = {}
    withheld = []
    for r in rounds:
        if r.tier != tier:
            continue
        if r.profile != "open":
            withheld.append(r.id)
            continue
        for env in r.environments():
            if env["spec"] is None or env["id"] is None:
                continue
            specs.setdefault(env["id"], (env["id"], env["name"], env["spec"]))
    return _group(list(specs.values())), withheld


def attach_rounds(groups: list[LayoutGroup], rounds: list) -> None:
    """Note, for each public environment, the published rounds that played it."""
    by_id = {e.id: e for g in groups for e in g.envs}
    for r in rounds:
        if r.profile != "open":
            continue
        for env_id in r.summary["provenance"]["config"].get("env_ids") or []:
            if env_id in by_id and r.id not in by_id[env_id].rounds:
                by_id[env_id].rounds.append(r.id)
