"""What one environment of a round produced: its games, its entrants' statuses, its faults.

An environment record is staff-only (it holds the spec, the agents' output and their fault
details). It is written once, atomically, when the environment finishes; a restarted round
skips every environment whose record is on disk. Files are gzip with a zero mtime and keys in
a fixed order, so the same environment gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from grader.common.files import atomic_write_bytes, dumps_json, gzip_bytes

RECORD_VERSION = 1


class RecordVersionError(ValueError):
    """An environment record of a version this arena does not read: `version` is what it says."""

    def __init__(self, version: object, message: str):
        super().__init__(message)
        self.version = version


class RecordError(ValueError):
    """An environment record file that cannot be read: `path` is the file, `reason` why (the
    message's words after "not a readable environment record: ")."""

    def __init__(self, path: Path, reason: str, message: str):
        super().__init__(message)
        self.path, self.reason = path, reason


class IncompleteRecordsError(ValueError):
    """A round whose environment records do not cover its plan, so it cannot be published:
    `round_id` names it, `missing` the labels of its environments without a record (empty when
    the records are all there but one is repeated or not of the plan)."""

    def __init__(self, round_id: str, missing: list[str], message: str):
        super().__init__(message)
        self.round_id, self.missing = round_id, list(missing)


@dataclass
class SelfPlay:
    """A summary of an entrant's budget self-play (the games are kept beside it, in
    EntrantEnv.self_play_games)."""

    games: int = 0
    black_wins: int = 0
    white_wins: int = 0
    draws: int = 0
    plies: int = 0

    def add(self, winner: str | None, plies: int) -> None:
        self.games += 1
        self.plies += plies
        if winner == "black":
            self.black_wins += 1
        elif winner == "white":
            self.white_wins += 1
        else:
            self.draws += 1


@dataclass
class EntrantEnv:
    """One entrant in one environment: its fault if it had one, and where it happened."""

    fault: dict | None = None
    fault_phase: str | None = None
    self_play: SelfPlay = field(default_factory=SelfPlay)
    agent_seconds: float = 0.0
    # Its self-play games as grader.play.games.KeptGame keeps them, in order (none for a
    # reference player, which is sent nothing); bound by `self_play_digest` in the results.
    self_play_games: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        # Shallow for the kept games (plain data already): asdict would deep-copy every move.
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"self_play": asdict(self.self_play)}


@dataclass
class EnvRecord:
    plan_key: str
    index: int
    label: str
    env_id: str
    attempts: int
    arena_faults: list[dict]
    entrants: dict[str, EntrantEnv]
    games: list[dict]
    stderr: dict[str, str]
    wall_seconds: float
    image: dict | None = None  # the docker image its agents ran in (None: the host's interpreter, or none ran)
    host: dict | None = None  # the host's load while it ran (grader.sandbox.pinning.load_over); None before it was kept
    record_version: int = RECORD_VERSION

    def to_dict(self) -> dict:
        # Shallow on purpose: the games are already plain dicts, and asdict's deep copy of
        # every move list cost more than playing the random agents' games.
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["entrants"] = {name: e.to_dict() for name, e in self.entrants.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict) -> EnvRecord:
        if data.get("record_version") != RECORD_VERSION:
            raise RecordVersionError(
                data.get("record_version"),
                f"environment record version {data.get('record_version')!r}; this arena reads {RECORD_VERSION}",
            )
        entrants = {
            name: EntrantEnv(
                e["fault"],
                e["fault_phase"],
                SelfPlay(**e["self_play"]),
                e["agent_seconds"],
                e.get("self_play_games", []),
            )  # absent in records from before they were kept
            for name, e in data["entrants"].items()
        }
        return cls(**(data | {"entrants": entrants}))


def record_path(work: Path, index: int) -> Path:
    return work / "envs" / f"env-{index:04d}.json.gz"


def write_record(work: Path, record: EnvRecord) -> Path:
    path = record_path(work, record.index)
    # Level 1: a staff-side working file, read back once (level 9 took a tenth of the round).
    atomic_write_bytes(path, gzip_bytes(dumps_json(record.to_dict()).encode(), level=1))
    return path


def read_record(path: Path) -> EnvRecord:
    try:
        return EnvRecord.from_dict(json.loads(gzip.decompress(path.read_bytes())))
    except RecursionError:
        raise RecordError(
            path, "nested too deeply", f"{path}: not a readable environment record: nested too deeply"
        ) from None
    except (OSError, EOFError, zlib.error, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise RecordError(path, reason, f"{path}: not a readable environment record: {reason}") from None


def self_play_digest(games: list[dict]) -> str:
    """The sha256 of an entrant's kept self-play games in one environment, as the results
    bind them (`self_play.games_sha256`)."""
    return hashlib.sha256(dumps_json(games).encode()).hexdigest()
