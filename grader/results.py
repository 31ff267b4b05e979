"""The results document of a round: `rounds/<round-id>.yaml` and its games beside it.

Written from dataclasses with `yaml.safe_dump(sort_keys=False)`, `schema_version` first; read
back by `load_results`, which validates against docs/results-schema.json and lists every
problem by its path. Games are JSON lines in `<round-id>/games.jsonl.gz` (a header line, then
one game per line), gzip with a zero mtime so the same round gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from engine import safeyaml
from grader.files import atomic_write_bytes, dumps_json, gzip_bytes
from grader.schema import SchemaError, validate

SCHEMA_VERSION = 1
GAMES_FILE = "games.jsonl.gz"
# docs/results-schema.json is a link to this packaged file: one schema, no drift.
SCHEMA_PATH = Path(__file__).resolve().parent / "data" / "results-schema.json"


class ResultsError(ValueError):
    """A results file or games file that does not load; `problems` lists each with its path."""

    def __init__(self, source: str, problems: list[str]):
        self.problems = problems
        super().__init__(f"{source}: invalid results:\n  " + "\n  ".join(problems))


@dataclass
class CurvePoint:
    games: int
    win_rate: float
    draw_rate: float


@dataclass
class SaeValue:
    value: float | None
    b0: int | None
    b_max: int | None


@dataclass
class Record:
    """Pairing games that count: played against live opponents while alive."""

    wins: int
    draws: int
    losses: int
    games: int


@dataclass
class Standing:
    value: float
    rank: int
    faulted_games: int
    interval: list[float]


@dataclass
class Spread:
    final_win_rate: float | None
    sae: float | None
    standing: float | None


@dataclass
class AgentMetrics:
    name: str
    curve: list[CurvePoint]
    sae: SaeValue
    record: Record
    standing: Standing | None
    elo: float | None
    faulted_envs: int
    faults: dict[str, int]
    endings: dict[str, int]
    spread: Spread
    generalisation_gap: dict | None = None


@dataclass
class PairResult:
    a: str
    b: str
    a_wins: int
    draws: int
    b_wins: int
    games: int


@dataclass
class EnvAgent:
    name: str
    status: str  # "ok" or the agent's fault kind
    curve: list[CurvePoint]
    sae: float | None
    score: float | None  # match points per counted pairing game here; None when nothing counted
    record: Record
    self_play: dict


@dataclass
class EnvDetail:
    label: str
    id: str | None
    name: str | None
    spec: dict | None
    agents: list[EnvAgent]


@dataclass
class RoundInfo:
    id: str
    tier: str
    status: str  # complete | held
    private: bool
    research: bool
    standing_published: bool
    leaderboard: bool
    notes: list[str]


@dataclass
class Provenance:
    arena_version: str
    commit: str
    seed_commitment: str
    tier_seed_commitment: str | None
    config: dict
    limits: dict
    execution: dict


@dataclass
class GamesRef:
    path: str
    sha256: str
    count: int


@dataclass
class RoundResults:
    schema_version: int
    round: RoundInfo
    provenance: Provenance
    disclosure: dict
    field: list[dict]
    agents: list[AgentMetrics]
    elo: dict
    pairwise: list[PairResult]
    environments: list[EnvDetail]
    games: GamesRef

    def to_dict(self) -> dict:
        return asdict(self)


@lru_cache(maxsize=1)
def schema() -> dict:
    """The results JSON Schema (grader/data/results-schema.json, linked from docs/)."""
    return json.loads(SCHEMA_PATH.read_text())


# libyaml's emitter and parser when PyYAML has them, four times faster: a round's files are
# written and read whole. The text is PyYAML's own but for characters beyond the BMP (in an
# agent's error message, say), which libyaml writes escaped: the same data either way
# (tests/rounds/test_results_yaml.py).
_DUMPER: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def dump_yaml(data: dict) -> bytes:
    """A results document as the arena writes it: block style, keys in order, unicode as is."""
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=120).encode()


def games_body(games: list[dict]) -> bytes:
    """The lines of `games` (one JSON object each), as one gzip member."""
    return gzip_bytes("".join(dumps_json(g) + "\n" for g in games).encode())


def games_bytes(round_id: str, profile: str, games: list[dict], body: bytes | None = None) -> bytes:
    """A games file: its header line and then its games' lines (`body`, from `games_body`), as
    two gzip members one after the other (one gzip stream to any reader). The staff record
    and a public file that publishes the same games share the second member."""
    header = {"schema_version": SCHEMA_VERSION, "kind": "games", "round": round_id, "profile": profile,
              "count": len(games)}
    return gzip_bytes((dumps_json(header) + "\n").encode()) + (games_body(games) if body is None else body)


def write_round(folder: Path, data: dict, games: list[dict], body: bytes | None = None) -> Path:
    """Write `<folder>/<id>.yaml` and `<folder>/<id>/games.jsonl.gz` atomically (games first,
    so a results file on disk always has its games); `data["games"]` is filled in here.
    `body` is `games_body(games)` when the caller has it already."""
    round_id = data["round"]["id"]
    blob = games_bytes(round_id, data["disclosure"]["profile"], games, body)
    atomic_write_bytes(folder / round_id / GAMES_FILE, blob)
    data["games"] = {"path": f"{round_id}/{GAMES_FILE}", "sha256": "sha256:" + hashlib.sha256(blob).hexdigest(),
                     "count": len(games)}
    problems = validate(data, schema())
    if problems:  # a bug of ours: never write a file that the loader would refuse
        raise ResultsError(round_id, problems)
    path = folder / f"{round_id}.yaml"
    atomic_write_bytes(path, dump_yaml(data))
    return path


def load_results(path: str | Path) -> dict:
    """Read and validate a results file; raises ResultsError listing every problem by path."""
    path = Path(path)
    try:
        data = safeyaml.load(path.read_bytes().decode("utf-8"), _LOADER)
    except OSError as exc:
        raise ResultsError(str(path), [f"(file): cannot read: {exc.strerror}"]) from None
    except UnicodeDecodeError as exc:
        raise ResultsError(str(path), [f"(file): not UTF-8 text (byte {exc.start})"]) from None
    except safeyaml.YamlError as exc:
        raise ResultsError(str(path), [f"(file): {exc}"]) from None
    if isinstance(data, dict) and data.get("schema_version") != SCHEMA_VERSION:
        raise ResultsError(str(path), [f"schema_version: this arena reads {SCHEMA_VERSION}, "
                                       f"got {data.get('schema_version')!r}"])
    try:
        problems = validate(data, schema())
    except SchemaError as exc:
        raise ResultsError(str(path), [f"(schema): {exc}"]) from None
    if problems:
        raise ResultsError(str(path), problems)
    return data


def load_games(results_path: str | Path, data: dict) -> list[dict]:
    """The games of a results file, checked against its sha256 and count and each validated."""
    results_path = Path(results_path)
    games_path = results_path.parent / data["games"]["path"]
    try:
        blob = games_path.read_bytes()
    except OSError as exc:
        raise ResultsError(str(games_path), [f"(file): cannot read: {exc.strerror}"]) from None
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    problems = []
    if digest != data["games"]["sha256"]:
        problems.append(f"(file): sha256 is {digest}, the results file says {data['games']['sha256']}")
    try:
        lines = gzip.decompress(blob).decode().splitlines()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise ResultsError(str(games_path), problems + [f"(file): not gzip text: {exc}"]) from None
    want = {"schema_version": SCHEMA_VERSION, "kind": "games", "round": data["round"]["id"],
            "profile": data["disclosure"]["profile"], "count": data["games"]["count"]}
    try:
        header = json.loads(lines[0]) if lines else None
    except (ValueError, RecursionError):
        header = None
    if header != want:  # its first line says whose games they are: a field like any other
        problems.append(f"line 1: the header is {lines[0][:200] if lines else 'missing'}, expected {dumps_json(want)}")
    games = []
    root = schema()
    game_schema = root["$defs"]["game"]
    for n, line in enumerate(lines[1:], 2):
        try:
            game = json.loads(line)
        except ValueError as exc:  # JSONDecodeError, or an integer past the conversion limit
            problems.append(f"line {n}: not JSON: {exc}")
            continue
        except RecursionError:
            problems.append(f"line {n}: nested too deeply to be a game")
            continue
        problems += [f"line {n}: {p}" for p in validate(game, game_schema, root=root)]
        games.append(game)
    if len(games) != data["games"]["count"]:
        problems.append(f"(file): {len(games)} games, the results file says {data['games']['count']}")
    if problems:
        raise ResultsError(str(games_path), problems)
    return games
