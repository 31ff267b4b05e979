"""The site's settings (`site.yaml`) and the competition state it reads.

    schema_version: 1
    series:
      name: "Othello Arena, autumn term"      # the professor's series, named on the leaderboard
      rounds:                                   # optional: a round's title and date
        - {id: ladder-0123456789, date: 2026-10-05, title: "Round 1"}
    announcement: null                          # one line shown on every page, or null
    competition: config/competition.yaml        # the final's review state and `ended` (grader.season.competition)
    kit: {zip: build/kit/othello-arena-kit.zip, version: kit/version,
          repository: https://github.com/OWNER/NAME}   # where pull requests go; null: not linked

Paths are relative to the folder of the settings file. Which round the leaderboard shows is
not set here: the builder follows the rules (grader.site.builder.leaderboard_round). The round
files carry no date, so a round's date is the one given here, else a published final's
publication day, else the day the commit that added the file to rounds/ was made (git).
Whether the final is pending review and whether the competition has ended come from the
competition config that staff actions maintain (`grader.season.competition`), never from here, so
there is one switch for each and the site cannot disagree with the workflows.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from grader.common.patterns import ROUND_ID_RE
from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError, read_yaml
from grader.season.competition import (
    INVALIDATIONS_PATH,
    Competition,
    invalidated_in,
    load_competition,
    load_invalidations,
)

SCHEMA_VERSION = 1
DEFAULT_SERIES_NAME = "The professor's rounds"


@dataclass(frozen=True)
class SeriesRound:
    """A round of the professor's series: its id, and the date and title the site prints."""

    id: str
    date: str | None
    title: str | None


@dataclass(frozen=True)
class SiteConfig:
    series_name: str = DEFAULT_SERIES_NAME
    series: tuple[SeriesRound, ...] = ()
    announcement: str | None = None
    competition: Competition = field(default_factory=lambda: Competition(final_at=None))
    competition_note: str | None = None  # why the competition state is the default, if it is
    kit_zip: Path | None = None
    kit_version: Path | None = None
    repository: str | None = None  # the arena repository's web address, where submissions go as pull requests
    # Results staff invalidated (config/invalidations.yaml beside the competition config).
    invalidations: tuple = ()

    def struck(self, round_id: str) -> dict[str, str]:
        """handle -> reason, for the results of `round_id` that staff invalidated."""
        return invalidated_in(list(self.invalidations), round_id)

    def series_entry(self, round_id: str) -> SeriesRound | None:
        return self._series_by_id.get(round_id)

    @cached_property
    def _series_by_id(self) -> dict[str, SeriesRound]:
        return {s.id: s for s in self.series}


def _date(value: Any, where: str, problems: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()[:10]
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}$", value):
        return value
    problems.append(f"{where}: expected a date YYYY-MM-DD, got {value!r}")
    return None


def _series(data: Any, problems: list[str]) -> tuple[str, tuple[SeriesRound, ...]]:
    """The series' name and rounds (the schema has checked their shape); each round listed once."""
    if not isinstance(data, dict):
        return DEFAULT_SERIES_NAME, ()
    name: str = data["name"] if isinstance(data.get("name"), str) and data["name"] else DEFAULT_SERIES_NAME
    rounds: list[Any] = data["rounds"] if isinstance(data.get("rounds"), list) else []
    out, seen = [], set()
    for i, entry in enumerate(rounds):
        where = f"series.rounds[{i}]"
        rid = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(rid, str) or not ROUND_ID_RE.match(rid):
            continue  # the schema named it
        if rid in seen:
            problems.append(f"{where}.id: {rid} is listed twice")
        seen.add(rid)
        title = entry.get("title") if isinstance(entry.get("title"), str) else None
        out.append(SeriesRound(rid, _date(entry.get("date"), f"{where}.date", problems), title))
    return name, tuple(out)


def parse_site_config(data: Any, base: Path, source: str = "site.yaml") -> SiteConfig:
    """Settings from parsed YAML (grader/documents/data/site.schema.json); paths resolved against `base`;
    DocumentError lists every problem."""
    problems = problems_of(data, "site")
    if not isinstance(data, dict):
        raise DocumentError(source, problems)
    name, series = _series(data.get("series"), problems)
    if problems:
        raise DocumentError(source, problems)
    announcement = data.get("announcement")
    kit = data.get("kit") or {}
    repository = kit.get("repository")
    competition = data.get("competition")
    competition_path = None if competition is None else base / competition
    kit_zip = None if kit.get("zip") is None else base / kit["zip"]
    kit_version = None if kit.get("version") is None else base / kit["version"]
    competition_state, note = load_competition_state(competition_path)
    invalidations = (
        () if competition_path is None else tuple(load_invalidations(competition_path.parent / INVALIDATIONS_PATH.name))
    )
    return SiteConfig(
        name,
        series,
        announcement.strip() if announcement else None,
        competition_state,
        note,
        kit_zip,
        kit_version,
        repository.rstrip("/") if repository else None,
        invalidations,
    )


def load_competition_state(path: Path | None) -> tuple[Competition, str | None]:
    """The competition config, or the state before anything happened (and a note saying so)."""
    if path is None:
        return Competition(final_at=None), "no competition config is set: no final has been run"
    if not path.exists():
        return Competition(
            final_at=None
        ), f"the competition config {path.name} does not exist yet: no final has been run"
    return load_competition(path), None


def load_site_config(path: Path | None) -> SiteConfig:
    """Read `path`, or the defaults (no series, no banner, no kit) when it is None."""
    if path is None:
        return SiteConfig(competition_note="no site settings given: no series, no final")
    return parse_site_config(read_yaml(path), path.parent, str(path.name))
