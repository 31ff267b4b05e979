"""The rounds the site renders: read from `rounds/*.yaml`, checked, and cached between builds.

A round document is large (a 60-agent, 28-environment round is about 0.9 MB of YAML) and most
pages need only its summary (everything but `environments`), so only the summary is cached:
an incremental build loads the summaries of unchanged rounds, and parses the per-environment
detail only of the rounds whose pages it renders again. The cache is keyed by the file's size,
mtime and sha256, and is the build's own (marshal files, written and read by this module only).
Of each environment's curve the site keeps only the last point (see `parse_round`).

Checks: the site reads the fields listed in `_SHAPE` and refuses, naming the file and the
path, a document that lacks one (so a page never renders half a round). Full validation
against the results schema is `arena verify`'s job, which gates what reaches rounds/; it is
also available here with `validate=True` (slower: about 0.3 s for a round that size).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.results import SCHEMA_VERSION, load_games, schema
from grader.schema import validate as schema_validate
from grader.site import fastyaml

CACHE_FORMAT = f"site-rounds-2-py{sys.version_info[0]}.{sys.version_info[1]}"

# What the site reads of a round: key -> expected type(s), for the document and each entry.
_SHAPE = {
    "round": {"id": str, "tier": str, "status": str, "private": bool, "research": bool,
              "standing_published": bool, "leaderboard": bool, "notes": list},
    "provenance": {"arena_version": str, "commit": str, "seed_commitment": str, "config": dict, "limits": dict,
                   "execution": dict},
    "disclosure": {"profile": str, "description": str},
    "games": {"path": str, "sha256": str, "count": int},
}
_AGENT = {"name": str, "curve": list, "sae": dict, "record": dict, "standing": (dict, type(None)),
          "faulted_envs": int, "faults": dict, "endings": dict, "spread": dict}
_FIELD = {"name": str, "kind": str, "account": (str, type(None)), "digest": str}
_ENV = {"label": str, "id": (str, type(None)), "name": (str, type(None)), "spec": (dict, type(None)),
        "agents": list}
_ENV_AGENT = {"name": str, "status": str, "curve": list, "score": (float, int, type(None)), "record": dict}
_CONFIG = {"checkpoints": list, "budget": int, "games_per_checkpoint": int, "pairing_games": int}


class SiteDataError(ValueError):
    """A round file the site cannot render; the message names the file and every problem."""

    def __init__(self, source: str, problems: list[str]):
        self.problems = problems
        super().__init__(f"{source}: cannot be rendered:\n  " + "\n  ".join(problems[:20])
                         + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""))


def _check_entry(entry: Any, shape: dict, where: str, problems: list[str]) -> None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: expected a mapping")
        return
    for key, kinds in shape.items():
        if key not in entry:
            problems.append(f"{where}.{key}: missing")
        elif not isinstance(entry[key], kinds) or (kinds is int and isinstance(entry[key], bool)):
            problems.append(f"{where}.{key}: unexpected {type(entry[key]).__name__}")


def check_shape(doc: Any) -> list[str]:
    """Every problem with what the site reads of a round document (fast; not the full schema)."""
    if not isinstance(doc, dict):
        return ["(top): expected a mapping"]
    if doc.get("schema_version") != SCHEMA_VERSION:
        return [f"schema_version: this site reads {SCHEMA_VERSION}, got {doc.get('schema_version')!r}"]
    problems: list[str] = []
    for key, shape in _SHAPE.items():
        _check_entry(doc.get(key), shape, key, problems)
    if not problems:
        _check_entry(doc["provenance"]["config"], _CONFIG, "provenance.config", problems)
    for name, shape in (("field", _FIELD), ("agents", _AGENT), ("pairwise", None), ("environments", _ENV)):
        items = doc.get(name)
        if not isinstance(items, list):
            problems.append(f"{name}: expected a list")
            continue
        if shape is not None:
            for i, item in enumerate(items):
                _check_entry(item, shape, f"{name}[{i}]", problems)
    if problems:
        return problems
    for i, env in enumerate(doc["environments"]):
        for j, agent in enumerate(env["agents"]):
            _check_entry(agent, _ENV_AGENT, f"environments[{i}].agents[{j}]", problems)
    return problems


@dataclass
class RoundSource:
    """One round file: its summary now, its per-environment detail and games on demand."""

    id: str
    path: Path
    sha256: str
    summary: dict
    _environments: list | None = field(default=None, repr=False)

    @property
    def tier(self) -> str:
        return self.summary["round"]["tier"]

    @property
    def profile(self) -> str:
        return self.summary["disclosure"]["profile"]

    def environments(self) -> list[dict]:
        """The per-environment results; a round whose summary came from the cache reads them
        from its file when first asked (only for a page that is rendered again)."""
        if self._environments is None:
            blob = self.path.read_bytes()
            if "sha256:" + hashlib.sha256(blob).hexdigest() != self.sha256:
                raise SiteDataError(str(self.path), ["(file): changed while the site was being built"])
            self._environments = parse_round(self.path, blob, validate=False)["environments"]
        return self._environments

    def games_path(self) -> Path:
        return self.path.parent / self.summary["games"]["path"]

    def games(self) -> list[dict]:
        """The scored games, checked against the sha256 the results file records."""
        return load_games(self.path, self.summary)

    def games_sha256(self) -> str:
        return self.summary["games"]["sha256"]

    def check_games_file(self) -> None:
        """Refuse (SiteDataError naming the file) a games file whose bytes are not the ones the
        results file records, e.g. one truncated: the site publishes it for auditors."""
        path = self.games_path()
        try:
            digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise SiteDataError(str(path), [f"(file): cannot read: {exc.strerror}"]) from None
        if digest != self.games_sha256():
            raise SiteDataError(str(path), [f"(file): sha256 is {digest}, {self.path.name} says "
                                            f"{self.games_sha256()} (truncated or changed?)"])


class RoundCache:
    """Parsed rounds kept between builds in `folder` (None: no cache, every build reads all)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.index: dict[str, Any] = {}
        if folder is not None:
            try:
                stored = marshal.loads((folder / "rounds.index").read_bytes())
                if stored.get("format") == CACHE_FORMAT:
                    self.index = stored["files"]
            except (OSError, ValueError, EOFError, TypeError, KeyError):
                self.index = {}
        self.seen: dict[str, Any] = {}

    def lookup(self, path: Path, stat: os.stat_result) -> dict | None:
        """The cached entry of an unchanged file (same size and mtime), with its summary."""
        entry = self.index.get(path.name)
        return None if entry is None or entry["stat"] != [stat.st_size, stat.st_mtime_ns] else self._with_summary(entry)

    def lookup_sha(self, name: str, sha: str) -> dict | None:
        """The cached entry of a file touched but not changed (same sha256), with its summary."""
        entry = self.index.get(name)
        return None if entry is None or entry["sha256"] != sha else self._with_summary(entry)

    def _with_summary(self, entry: dict) -> dict | None:
        # `index` is empty without a folder, so an entry means there is one.
        summary_file = self.folder / f"{entry['id']}.summary"
        return entry | {"summary": marshal.loads(summary_file.read_bytes())} if summary_file.exists() else None

    def store(self, rid: str, summary: dict) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{rid}.summary").write_bytes(marshal.dumps(summary))

    def remember(self, path: Path, stat: os.stat_result, sha: str, rid: str) -> None:
        self.seen[path.name] = {"stat": [stat.st_size, stat.st_mtime_ns], "sha256": sha, "id": rid}

    def save(self) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "rounds.index").write_bytes(marshal.dumps({"format": CACHE_FORMAT, "files": self.seen}))


def load_round(path: Path, cache: RoundCache, validate: bool = False) -> RoundSource:
    """One round file through the cache; SiteDataError if it cannot be rendered."""
    stat = path.stat()
    hit = cache.lookup(path, stat)
    if hit is None:
        blob = path.read_bytes()
        sha = "sha256:" + hashlib.sha256(blob).hexdigest()
        hit = cache.lookup_sha(path.name, sha)
        if hit is None:
            doc = parse_round(path, blob, validate)
            rid = doc["round"]["id"]
            summary = {k: v for k, v in doc.items() if k != "environments"}
            cache.store(rid, summary)
            cache.remember(path, stat, sha, rid)
            return RoundSource(rid, path, sha, summary, doc["environments"])
    cache.remember(path, stat, hit["sha256"], hit["id"])
    return RoundSource(hit["id"], path, hit["sha256"], hit["summary"])


# Of an environment's curve, a page shows only the last point (the final win rate); the
# earlier points of every per-environment curve (a 16-line block under each agent of each
# environment, most of a large round) are cut from the text before it is parsed, in one
# C-level pass: that halves the parse. It matches only the block `dump_yaml` writes (a
# `curve:` key at indent 4, the key of an environment's agent entry, with its points in that
# order), and keeps the last point; text written any other way is parsed whole. The pattern
# starts with the newline before the key, not `^` in multiline mode: a literal start lets the
# regex engine skip ahead to each candidate instead of trying every line (twice as fast).
_POINT = r"    - games: [^\n]*\n      win_rate: [^\n]*\n      draw_rate: [^\n]*\n"
_EARLY_ENV_POINTS = re.compile(rf"(\n    curve:\n)(?:{_POINT})+?(?=(?:{_POINT})(?!    - games: ))")


def parse_round(path: Path, blob: bytes, validate: bool) -> dict:
    """Parse and check a round file's bytes (validate=True: the whole document, unpruned)."""
    try:
        text = blob.decode("utf-8")
        doc = fastyaml.load(text if validate else _EARLY_ENV_POINTS.sub(r"\1", text))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SiteDataError(str(path), [f"(file): not readable YAML: {exc}"]) from None
    problems = check_shape(doc)
    if not problems and validate:
        problems = schema_validate(doc, schema())
    if not problems and f"{doc['round']['id']}.yaml" != path.name:
        problems.append(f"round.id: {doc['round']['id']} does not match the file name")
    if problems:
        raise SiteDataError(str(path), problems)
    return doc


def load_rounds(folder: Path, cache: RoundCache, validate: bool = False) -> list[RoundSource]:
    """Every `<round-id>.yaml` in `folder`, sorted by id (a missing folder is an empty history)."""
    if not folder.is_dir():
        return []
    rounds = [load_round(p, cache, validate) for p in sorted(folder.glob("*.yaml"))]
    cache.save()
    return rounds
