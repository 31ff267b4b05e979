"""Resolve a SPEC argument: a spec file, or the id or name of a public or paper environment."""

from __future__ import annotations

from pathlib import Path

from engine import EnvSpec, load_spec, paper_tier, public_tier


class UnknownSpecError(ValueError):
    """A SPEC argument that is no file and no public or paper environment; `text` is it."""

    def __init__(self, text: str, message: str):
        super().__init__(message)
        self.text = text


def resolve_spec(text: str) -> EnvSpec:
    """A spec from a YAML/JSON file path, or an environment id or name of the public/paper tiers."""
    path = Path(text)
    if path.exists():
        return load_spec(path)
    for spec in public_tier() + paper_tier():
        if text in (spec.id, spec.name):
            return spec
    raise UnknownSpecError(text, f"{text!r} is neither a spec file nor the id or name of a public or paper environment")
