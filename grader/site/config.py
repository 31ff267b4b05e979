"""The site's settings (`site.yaml`) and the competition state it reads.

    schema_version: 1
    series:
      name: "Othello Arena, autumn term"      # the professor's series, named on the leaderboard
      rounds:                                   # optional: a round's title and date
        - {id: ladder-0123456789, date: 2026-10-05, title: "Round 1"}
    announcement: null                          # one line shown on every page, or null
    competition: config/competition.yaml        # the final's review state and `ended` (grader.competition)
    kit: {zip: build/kit/othello-arena-kit.zip, version: kit/version,
          repository: https://github.com/OWNER/NAME}   # where pull requests go; null: not linked

Paths are relative to the folder of the settings file. Which round the leaderboard shows is
not set here: the builder follows the rules (grader.site.builder.leaderboard_round). The round
files carry no date, so a round's date is the one given here, else a published final's
publication day, else the day the commit that added the file to rounds/ was made (git).
Whether the final is pending review and whether the competition has ended come from the
competition config that staff actions maintain (`grader.competition`), never from here, so
there is one switch for each and the site cannot disagree with the workflows.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from grader.competition import INVALIDATIONS_PATH, Competition, invalidated_in, load_competition, load_invalidations
from grader.documents import DocumentError, check_envelope, read_yaml

SCHEMA_VERSION = 1
ROUND_ID_RE = re.compile(r"^(public|paper|ladder|final)-[0-9a-f]{10}$")
TOP_FIELDS = ("schema_version", "series", "announcement", "competition", "kit")
DEFAULT_SERIES_NAME = "The professor's rounds"
REPOSITORY_RE = re.compile(r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~-]+)+/?$")


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
    if data is None:
        return DEFAULT_SERIES_NAME, ()
    if not isinstance(data, dict):
        problems.append("series: expected a mapping with name and rounds")
        return DEFAULT_SERIES_NAME, ()
    problems += [f"series.{k}: unknown field" for k in data if k not in ("name", "rounds")]
    name = data.get("name") or DEFAULT_SERIES_NAME
    if not isinstance(name, str):
        problems.append(f"series.name: expected text, got {name!r}")
        name = DEFAULT_SERIES_NAME
    rounds = data.get("rounds") or []
    if not isinstance(rounds, list):
        problems.append("series.rounds: expected a list")
        return name, ()
    out, seen = [], set()
    for i, entry in enumerate(rounds):
        where = f"series.rounds[{i}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a mapping with id, date and title")
            continue
        problems += [f"{where}.{k}: unknown field" for k in entry if k not in ("id", "date", "title")]
        rid = entry.get("id")
        if not isinstance(rid, str) or not ROUND_ID_RE.match(rid):
            problems.append(f"{where}.id: {rid!r} is not a round id")
            continue
        if rid in seen:
            problems.append(f"{where}.id: {rid} is listed twice")
        seen.add(rid)
        title = entry.get("title")
        if title is not None and not isinstance(title, str):
            problems.append(f"{where}.title: expected text, got {title!r}")
            title = None
        out.append(SeriesRound(rid, _date(entry.get("date"), f"{where}.date", problems), title))
    return name, tuple(out)


def _path(base: Path, value: Any, where: str, problems: list[str]) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        problems.append(f"{where}: expected a path, got {value!r}")
        return None
    return base / value


def parse_site_config(data: Any, base: Path, source: str = "site.yaml") -> SiteConfig:
    """Settings from parsed YAML; paths resolved against `base`; DocumentError lists every problem."""
    problems = check_envelope(data, source, SCHEMA_VERSION, TOP_FIELDS)
    name, series = _series(data.get("series"), problems)
    announcement = data.get("announcement")
    if announcement is not None and not (isinstance(announcement, str) and announcement.strip()):
        problems.append(f"announcement: expected one line of text or null, got {announcement!r}")
    kit = data.get("kit") or {}
    if not isinstance(kit, dict):
        problems.append("kit: expected a mapping with zip and version")
        kit = {}
    problems += [f"kit.{k}: unknown field" for k in kit if k not in ("zip", "version", "repository")]
    repository = kit.get("repository")
    if repository is not None and not (isinstance(repository, str) and REPOSITORY_RE.match(repository)):
        problems.append(f"kit.repository: expected the repository's https:// address or null, got {repository!r}")
    competition_path = _path(base, data.get("competition"), "competition", problems)
    kit_zip = _path(base, kit.get("zip"), "kit.zip", problems)
    kit_version = _path(base, kit.get("version"), "kit.version", problems)
    if problems:
        raise DocumentError(source, problems)
    competition, note = load_competition_state(competition_path)
    invalidations = () if competition_path is None else tuple(
        load_invalidations(competition_path.parent / INVALIDATIONS_PATH.name))
    return SiteConfig(name, series, announcement.strip() if announcement else None, competition, note,
                      kit_zip, kit_version, repository.rstrip("/") if repository else None, invalidations)


def load_competition_state(path: Path | None) -> tuple[Competition, str | None]:
    """The competition config, or the state before anything happened (and a note saying so)."""
    if path is None:
        return Competition(final_at=None), "no competition config is set: no final has been run"
    if not path.exists():
        return Competition(final_at=None), f"the competition config {path.name} does not exist yet: no final has been run"
    return load_competition(path), None


def load_site_config(path: Path | None) -> SiteConfig:
    """Read `path`, or the defaults (no series, no banner, no kit) when it is None."""
    if path is None:
        return SiteConfig(competition_note="no site settings given: no series, no final")
    return parse_site_config(read_yaml(path), path.parent, str(path.name))
