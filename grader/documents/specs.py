"""Specs as files: read a SPEC argument and print a tier's specs.

A SPEC is a YAML/JSON file, or the id or name of a public or paper environment. The engine
builds specs from plain data; the files are read here, with the arena's one YAML loader
(grader.documents.yaml_io)."""

from __future__ import annotations

import json
from pathlib import Path

from engine import EnvSpec, SpecError, paper_tier, parse_spec, public_tier
from grader.documents.yaml_io import DocumentError, decode_text, dump_yaml, load_yaml


def load_spec(path: str | Path) -> EnvSpec:
    """Read a YAML or JSON spec file (JSON is YAML) and validate it; SpecError naming the file."""
    path = Path(path)
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise SpecError([f"(file): cannot read: {exc.strerror}"], str(path)) from None
    try:
        data = load_yaml(decode_text(blob, str(path)), str(path))
    except DocumentError as exc:
        problem = exc.problems[0].removeprefix("(file): ")
        where = "(file): " + ("" if problem.startswith("not UTF-8") else "not a YAML/JSON spec: ")
        raise SpecError([where + problem], str(path)) from None
    return parse_spec(data, source=str(path))


def dump_specs(specs: list[EnvSpec], fmt: str = "yaml") -> str:
    """Specs with their ids, as `arena envs` prints them."""
    docs = [s.to_dict(with_id=True) for s in specs]
    if fmt == "json":
        return json.dumps(docs, indent=1)
    return dump_yaml(docs, width=100, flow=None)


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
