"""The rounds the site renders, read through their JSON twins, checked and cached.

They are read from `rounds/*.yaml` and checked against the results schema.

A round document is large (a 60-agent, 28-environment round is about 1 MB of YAML) and most
pages need only its summary (everything but `environments`), so only the summary is cached:
an incremental build loads the summaries of unchanged rounds, and reads the per-environment
detail only of the rounds whose pages it renders again. The cache is keyed by the file's size,
mtime and sha256, and is the build's own (marshal files, written and read by this module only).

A round is read from its JSON twin when one is bound to the YAML's bytes (grader.rounds.results), from
the YAML otherwise; the twin is parsed with orjson, which reads a history's twins in under half
the time of the standard library's parser. Every round is checked, whole, against the results
schema (the one schema, in grader/documents/data/results-schema.json) in one pass when it is read, before
any page shows it, so a page never renders half a round.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from grader.documents.yaml_io import DocumentError
from grader.rounds.results import check_document, load_games, read_document

CACHE_FORMAT = f"site-rounds-3-py{sys.version_info[0]}.{sys.version_info[1]}"
HEADING = "cannot be rendered"


class SiteDataError(DocumentError):
    """A round file the site cannot render (a DocumentError headed "cannot be rendered")."""

    def __init__(self, source: str, problems: list[str]):
        super().__init__(source, problems, HEADING)


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
            raise SiteDataError(
                str(path),
                [f"(file): sha256 is {digest}, {self.path.name} says {self.games_sha256()} (truncated or changed?)"],
            )


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


def parse_round(path: Path, blob: bytes, validate: bool) -> dict:
    """Read and check a round file's document (its twin when bound to `blob`, else the YAML)
    against the whole results schema. (`validate` is kept for callers that ask for it: the
    check is always the whole schema now.)"""
    try:
        doc, _ = read_document(path, blob, loads=orjson.loads)
    except DocumentError as exc:
        raise SiteDataError(
            str(path), [f"(file): not readable YAML: {p.removeprefix('(file): ')}" for p in exc.problems]
        ) from None
    problems = check_document(doc)  # the whole document in one pass
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
