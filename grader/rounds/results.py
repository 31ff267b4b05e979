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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from grader.common.files import atomic_write_bytes, dumps_json, gzip_bytes
from grader.documents.schema import SchemaError, validate
from grader.documents.yaml_io import DocumentError, decode_text, dump_yaml, load_yaml

SCHEMA_VERSION = 1
GAMES_FILE = "games.jsonl.gz"
TWIN_VERSION = 1
# docs/results-schema.json is a link to this packaged file: one schema, no drift.
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "documents" / "data" / "results-schema.json"


class ResultsError(DocumentError):
    """A results file, its twin or its games file that does not load (a DocumentError headed
    "invalid results"); `problems` lists each with its path."""

    def __init__(self, source: str, problems: list[str]):
        super().__init__(source, problems, "invalid results")


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
    # grader.common.metrics.INTERVAL_METHODS; None (not written) in the first arena's rounds, whose
    # interval was Wilson's over the games.
    method: str | None = None


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
    """The results JSON Schema (grader/documents/data/results-schema.json, linked from docs/)."""
    return json.loads(SCHEMA_PATH.read_text())


def games_body(games: list[dict]) -> bytes:
    """The lines of `games` (one JSON object each), as one gzip member."""
    return gzip_bytes("".join(dumps_json(g) + "\n" for g in games).encode())


def games_bytes(round_id: str, profile: str, games: list[dict], body: bytes | None = None) -> bytes:
    """A games file: its header line and then its games' lines (`body`, from `games_body`), as
    two gzip members one after the other (one gzip stream to any reader). The staff record
    and a public file that publishes the same games share the second member."""
    header = {
        "schema_version": SCHEMA_VERSION,
        "kind": "games",
        "round": round_id,
        "profile": profile,
        "count": len(games),
    }
    return gzip_bytes((dumps_json(header) + "\n").encode()) + (games_body(games) if body is None else body)


def twin_path(path: Path) -> Path:
    """The JSON twin of a results file: `<id>.json` beside `<id>.yaml`."""
    return path.with_suffix(".json")


def twin_bytes(yaml_blob: bytes, data: dict) -> bytes:
    """The twin of a results file: the same document as compact JSON, bound to the YAML's
    bytes by their sha256 (a reader uses it only for exactly those bytes)."""
    return (
        dumps_json({"twin_version": TWIN_VERSION, "yaml_sha256": sha256_of(yaml_blob), "document": data}) + "\n"
    ).encode()


def sha256_of(blob: bytes) -> str:
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def write_round(folder: Path, data: dict, games: list[dict], body: bytes | None = None) -> Path:
    """Write `<folder>/<id>.yaml`, its JSON twin `<id>.json` and `<folder>/<id>/games.jsonl.gz`
    atomically (games first, then the twin, so a results file on disk always has its games and
    its twin); `data["games"]` is filled in here. `body` is `games_body(games)` when the caller
    has it already. The YAML is what people and auditors read and diff; the twin is for
    machines (the site), which read it in a hundredth of the time."""
    round_id = data["round"]["id"]
    blob = games_bytes(round_id, data["disclosure"]["profile"], games, body)
    atomic_write_bytes(folder / round_id / GAMES_FILE, blob)
    data["games"] = {"path": f"{round_id}/{GAMES_FILE}", "sha256": sha256_of(blob), "count": len(games)}
    problems = validate(data, schema())
    if problems:  # a bug of ours: never write a file that the loader would refuse
        raise ResultsError(round_id, problems)
    path = folder / f"{round_id}.yaml"
    text = dump_yaml(data, width=120).encode()
    atomic_write_bytes(twin_path(path), twin_bytes(text, data))
    atomic_write_bytes(path, text)
    return path


def read_document(
    path: Path, blob: bytes | None = None, loads: Callable[[bytes], Any] = json.loads
) -> tuple[dict, bool]:
    """The document of a results file, unvalidated, and whether it came from its twin: the
    twin when there is one bound to exactly these YAML bytes, the YAML otherwise (a file
    written before twins, or edited by hand since). Raises ResultsError for unreadable input.
    `loads` parses the twin (the site passes a faster parser of the same JSON)."""
    if blob is None:
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise ResultsError(str(path), [f"(file): cannot read: {exc.strerror}"]) from None
    twin = twin_path(path)
    if twin.is_file():
        try:
            doc = loads(twin.read_bytes())
        except (OSError, ValueError, RecursionError):
            doc = None  # not a twin at all: the YAML says what the round is
        if (
            isinstance(doc, dict)
            and doc.get("twin_version") == TWIN_VERSION
            and doc.get("yaml_sha256") == sha256_of(blob)
        ):
            return doc.get("document"), True
    return _parse_yaml(path, blob), False


def _parse_yaml(path: Path, blob: bytes) -> object:
    try:
        return load_yaml(decode_text(blob, str(path)), str(path))
    except DocumentError as exc:
        raise ResultsError(exc.source, exc.problems) from None


def check_twin(path: Path, data: dict) -> list[str]:
    """The problems of a results file's twin (for `arena verify`): none when there is no twin;
    otherwise it must be bound to the YAML's bytes and hold the YAML's document."""
    twin = twin_path(path)
    if not twin.exists():
        return []
    try:
        doc = json.loads(twin.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        return [f"{twin.name}: not a readable JSON twin: {str(exc)[:200]}"]
    if not isinstance(doc, dict) or doc.get("twin_version") != TWIN_VERSION:
        return [f"{twin.name}: twin_version: this arena reads {TWIN_VERSION}"]
    problems = []
    yaml_sha = sha256_of(path.read_bytes())
    if doc.get("yaml_sha256") != yaml_sha:
        problems.append(
            f"{twin.name}: yaml_sha256 is {doc.get('yaml_sha256')!r}, {path.name} has {yaml_sha} "
            "(a stale twin: rewrite it with `arena verify --write-twin`)"
        )
    if doc.get("document") != data:
        problems.append(f"{twin.name}: document differs from {path.name}")
    return problems


def write_twin(path: Path) -> Path:
    """Write (or rewrite) the twin of a results file from its YAML, once the YAML loads."""
    data = load_results(path, prefer_twin=False)
    target = twin_path(path)
    atomic_write_bytes(target, twin_bytes(path.read_bytes(), data))
    return target


def load_results(path: str | Path, prefer_twin: bool = True) -> dict:
    """Read and validate a results file (from its twin when one is bound to it); raises
    ResultsError listing every problem by path."""
    path = Path(path)
    if prefer_twin:
        data, _ = read_document(path)
    else:
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise ResultsError(str(path), [f"(file): cannot read: {exc.strerror}"]) from None
        data = _parse_yaml(path, blob)
    problems = check_document(data)
    if problems:
        raise ResultsError(str(path), problems)
    return data


def check_document(data: object) -> list[str]:
    """Every problem of a round document against the results schema, by path."""
    if isinstance(data, dict) and data.get("schema_version") != SCHEMA_VERSION:
        return [f"schema_version: this arena reads {SCHEMA_VERSION}, got {data.get('schema_version')!r}"]
    try:
        return validate(data, schema())
    except SchemaError as exc:
        return [f"(schema): {exc}"]


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
    want = {
        "schema_version": SCHEMA_VERSION,
        "kind": "games",
        "round": data["round"]["id"],
        "profile": data["disclosure"]["profile"],
        "count": data["games"]["count"],
    }
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
