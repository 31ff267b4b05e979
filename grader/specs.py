"""Resolve a SPEC argument: a spec file, or the id or name of a public or paper environment."""

from __future__ import annotations

from pathlib import Path

from engine import EnvSpec, load_spec, paper_tier, public_tier


def resolve_spec(text: str) -> EnvSpec:
    """A spec from a YAML/JSON file path, or an environment id or name of the public/paper tiers."""
    path = Path(text)
    if path.exists():
        return load_spec(path)
    for spec in public_tier() + paper_tier():
        if text in (spec.id, spec.name):
            return spec
    raise ValueError(f"{text!r} is neither a spec file nor the id or name of a public or paper environment")
