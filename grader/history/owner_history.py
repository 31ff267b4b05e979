"""An owner's history: their requested runs and their own logs, sealed to them in the repository.

A requested run is private (its owner and staff), and a public repository's files are readable
by everyone, so what the arena keeps of it for its owner is sealed: `history/<handle>.yaml`
holds one entry per round, each carrying the round's results document and the owner's own
log (the agent's stderr and prints, by environment label) twice, sealed with libsodium's
sealed box to the owner's key (`owner_key` of the submission's manifest, whose private half
the kit keeps beside it) and to the arena's key (the manifest's `recipient`: staff's copy).
Only the round's id, kind, tier and time are plain; the request log names them already.

A ladder or final round also leaves each owner their replays (grader.history.replays): the entry's
payload (version 2) names the file and carries the key of its outer layer; the inner layer
opens with the tier's seed once `seeds/published.yaml` carries it. Payloads of version 1 (no
replays) still open. The file is not on a branch: it is a commit of its own under
`refs/replays/<handle>/<round-id>` (`store_replays`), which no checkout and no clone of the
branches fetches. A final's replays are about 5 MB an owner, 0.6 GB a field of 120, and every
workflow job and every clone of main would carry them all; an owner fetches just theirs
(`read_replays`). Staging folders (`arena history seal --out`) hold them as files,
`history/<handle>/<round-id>.replays`, until `merge` stores them.

The kit's `history.py` lists and opens the owner's entries with the owner's key; staff open
any entry with `arena history open`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import gzip
import io
import json
import os
import subprocess
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, PublicKey, SealedBox

from grader.common.files import atomic_write_bytes
from grader.common.patterns import HANDLE_RE, ROUND_ID_RE
from grader.documents.schema import problems_of
from grader.documents.sealing import SealError, encode_key
from grader.documents.yaml_io import DocumentError, dump_yaml, format_time, load_yaml, parse_time
from grader.history.replays import SUFFIX as REPLAYS_SUFFIX
from grader.history.replays import FileLock, ReplaysError, locked, unlock

SCHEMA_VERSION = 1
PAYLOAD_VERSION = 2  # 2: an optional `replays` (grader.history.replays.FileLock); 1 is read as well
PAYLOAD_VERSIONS = (1, 2)
FOLDER = "history"
KINDS = ("requested", "round")
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024  # unpacked: a round's results and its logs (64 KiB per environment)
ENTRY_FIELDS = ("round", "kind", "tier", "request", "finished_at", "owner_key", "owner", "staff_key", "staff")


class HistoryError(ValueError):
    """A history file or entry that cannot be read, or one that does not open with a key."""


def history_path(root: Path, handle: str) -> Path:
    """The history file of `handle` under the repository's top folder `root`."""
    if not HANDLE_RE.match(handle):
        raise HistoryError(f"{handle!r} is not a handle")
    return Path(root) / FOLDER / f"{handle}.yaml"


@dataclass(frozen=True)
class Entry:
    """One round in an owner's history: plain what it is, sealed what it holds."""

    round: str
    kind: str  # "requested" (a /score run) or "round" (a round staff ran)
    tier: str
    request: str | None
    finished_at: dt.datetime
    owner_key: str  # the owner's public key the `owner` copy is sealed to
    owner: str  # base64 of the sealed payload, for the owner
    staff_key: str  # the arena's public key the `staff` copy is sealed to
    staff: str  # base64 of the sealed payload, for staff

    def to_dict(self) -> dict:
        return asdict(self) | {"finished_at": format_time(self.finished_at)}

    def open(self, key: PrivateKey) -> dict:
        """The payload (`round`, `results`, `log`) opened with `key`, the owner's or the arena's."""
        public = encode_key(bytes(key.public_key))
        if public == self.owner_key:
            sealed = self.owner
        elif public == self.staff_key:
            sealed = self.staff
        else:
            raise HistoryError(
                f"round {self.round}: sealed to the owner's key {self.owner_key[:12]}... and the "
                f"arena's {self.staff_key[:12]}..., not to this key ({public[:12]}...)"
            )
        try:
            packed = SealedBox(key).decrypt(base64.b64decode(sealed, validate=True))
            plain = _gunzip(packed)
            payload = json.loads(plain.decode("utf-8"))
        except (CryptoError, binascii.Error, ValueError, zlib.error, EOFError, OSError):
            raise HistoryError(f"round {self.round}: its sealed copy does not open (damaged)") from None
        if (
            not isinstance(payload, dict)
            or payload.get("schema_version") not in PAYLOAD_VERSIONS
            or payload.get("round") != self.round
        ):
            raise HistoryError(
                f"round {self.round}: its sealed copy is not this round's (payload version "
                f"{payload.get('schema_version') if isinstance(payload, dict) else None!r})"
            )
        return payload


def _gunzip(data: bytes) -> bytes:
    # Bounded: a payload is ours, but the file is in a repository anyone can send a pull request to.
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
        out = f.read(MAX_PAYLOAD_BYTES + 1)
    if len(out) > MAX_PAYLOAD_BYTES:
        raise ValueError("payload too large")
    return out


def _seal(blob: bytes, recipient: str, what: str) -> str:
    try:
        raw = base64.b64decode(recipient, validate=True)
        box = SealedBox(PublicKey(raw))
    except (binascii.Error, ValueError, TypeError) as exc:
        raise SealError(f"{what}: not a public key ({type(exc).__name__})") from None
    return base64.b64encode(box.encrypt(blob)).decode("ascii")


def seal_entry(
    results: dict,
    log: dict[str, str],
    kind: str,
    owner_key: str,
    staff_key: str,
    finished_at: dt.datetime,
    request: str | None = None,
    replays: FileLock | None = None,
) -> Entry:
    """An entry for a finished round: `results` (its results document as published for its
    entrants), `log` (environment label -> the owner's agent's output there) and what opens
    the outer layer of the owner's replays file if the round left one, sealed to `owner_key`
    and to `staff_key`."""
    if kind not in KINDS:
        raise HistoryError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    round_info = results.get("round") or {}
    round_id, tier = round_info.get("id"), round_info.get("tier")
    if not isinstance(round_id, str) or not isinstance(tier, str):
        raise HistoryError("the results document names no round id and tier")
    payload = {"schema_version": PAYLOAD_VERSION, "round": round_id, "results": results, "log": log}
    if replays is not None:
        payload["replays"] = replays.to_dict()
    blob = gzip.compress(json.dumps(payload, sort_keys=False).encode("utf-8"), mtime=0)
    return Entry(
        round_id,
        kind,
        tier,
        request,
        finished_at.astimezone(dt.UTC).replace(microsecond=0),
        owner_key,
        _seal(blob, owner_key, "the owner's key"),
        staff_key,
        _seal(blob, staff_key, "the arena's key"),
    )


def _entry(doc: Any, where: str, problems: list[str]) -> Entry | None:
    if not isinstance(doc, dict):
        problems.append(f"{where}: expected a mapping")
        return None
    start = len(problems)
    problems += [f"{where}.{k}: unknown field" for k in doc if k not in ENTRY_FIELDS]
    for name in ("round", "tier", "owner_key", "owner", "staff_key", "staff"):
        if not isinstance(doc.get(name), str) or not doc[name]:
            problems.append(f"{where}.{name}: a non-empty string is required")
    if doc.get("kind") not in KINDS:
        problems.append(f"{where}.kind: must be one of {', '.join(KINDS)}, got {doc.get('kind')!r}")
    if doc.get("request") is not None and not isinstance(doc.get("request"), str):
        problems.append(f"{where}.request: a string or null is required")
    when = parse_time(doc.get("finished_at"), f"{where}.finished_at", problems)
    if len(problems) > start or when is None:
        return None
    return Entry(
        doc["round"],
        doc["kind"],
        doc["tier"],
        doc.get("request"),
        when,
        doc["owner_key"],
        doc["owner"],
        doc["staff_key"],
        doc["staff"],
    )


@dataclass(frozen=True)
class History:
    """An owner's history file: their entries, oldest first."""

    handle: str
    entries: tuple[Entry, ...] = ()

    def add(self, entry: Entry) -> History:
        """This history with `entry` (an entry of the same round and kind is replaced: a round
        recorded again, as a push retried from a newer main does, is one entry)."""
        kept = tuple(e for e in self.entries if (e.round, e.kind) != (entry.round, entry.kind))
        return History(self.handle, tuple(sorted(kept + (entry,), key=lambda e: (e.finished_at, e.round))))

    def get(self, round_id: str) -> Entry | None:
        return next((e for e in reversed(self.entries) if e.round == round_id), None)

    def to_yaml(self) -> str:
        return dump_yaml(
            {"schema_version": SCHEMA_VERSION, "handle": self.handle, "entries": [e.to_dict() for e in self.entries]},
            width=1 << 30,
        )


def parse_history(blob: bytes, source: str) -> History:
    """A history file's text, checked (HistoryError naming every problem)."""
    if len(blob) > MAX_FILE_BYTES:
        raise HistoryError(f"{source}: {len(blob)} bytes, more than {MAX_FILE_BYTES}")
    try:
        data = load_yaml(blob.decode("utf-8"), source)
    except (DocumentError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{source}: not a history file: {str(exc)[:300]}") from None
    problems = problems_of(data, "history")  # grader/documents/data/history.schema.json; each entry below
    if not isinstance(data, dict):
        raise HistoryError(f"{source}: not a history file: {problems[0]}")
    handle = data.get("handle")
    entries: list[Any] = data["entries"] if isinstance(data.get("entries"), list) else []
    read = [_entry(doc, f"entries[{i}]", problems) for i, doc in enumerate(entries)]
    if problems:
        raise HistoryError(f"{source}: " + "; ".join(problems[:20]))
    return History(str(handle), tuple(e for e in read if e is not None))


def load_history(path: Path, handle: str | None = None) -> History:
    """The history file at `path`; an empty history of `handle` when there is none yet."""
    path = Path(path)
    if not path.exists():
        if handle is None:
            raise HistoryError(f"{path}: no such history file")
        return History(handle)
    history = parse_history(path.read_bytes(), str(path))
    if handle is not None and history.handle != handle:
        raise HistoryError(f"{path}: the history of {history.handle!r}, not of {handle!r}")
    return history


def replays_path(root: Path, handle: str, round_id: str) -> Path:
    """The replays file of `handle`'s round `round_id` under the repository's top folder `root`."""
    if not ROUND_ID_RE.match(round_id):
        raise HistoryError(f"{round_id!r} is not a round id")
    return history_path(root, handle).with_suffix("") / f"{round_id}{REPLAYS_SUFFIX}"


REPLAYS_REFS = "refs/replays"
_BOT = {
    "GIT_AUTHOR_NAME": "arena-bot",
    "GIT_AUTHOR_EMAIL": "arena-bot@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "arena-bot",
    "GIT_COMMITTER_EMAIL": "arena-bot@users.noreply.github.com",
}


def replays_ref(handle: str, round_id: str) -> str:
    """The ref that holds `handle`'s replays of round `round_id`."""
    replays_path(Path("."), handle, round_id)  # both names checked
    return f"{REPLAYS_REFS}/{handle}/{round_id}"


def _git(repo: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, env={**os.environ, **_BOT}, check=False
    )


def _git_out(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    done = _git(repo, *args, data=data)
    if done.returncode != 0:
        raise HistoryError(f"git {args[0]} in {repo} failed: {done.stderr.decode(errors='replace').strip()[-300:]}")
    return done.stdout


def store_replays(repo: Path, handle: str, round_id: str, blob: bytes) -> str:
    """Keep `blob` as `handle`'s replays of `round_id` in the git repository `repo`: a commit of
    one file and no parent under `replays_ref` (replacing what a re-run left there); the ref."""
    ref = replays_ref(handle, round_id)
    blob_id = _git_out(repo, "hash-object", "-w", "--stdin", data=blob).decode().strip()
    tree = (
        _git_out(repo, "mktree", data=f"100644 blob {blob_id}\t{round_id}{REPLAYS_SUFFIX}\n".encode()).decode().strip()
    )
    commit = _git_out(repo, "commit-tree", tree, "-m", f"replays of {handle} in round {round_id}").decode().strip()
    _git_out(repo, "update-ref", ref, commit)
    return ref


def push_replays(repo: Path, remote: str = "origin") -> None:
    """Push every replays ref of `repo` to `remote` (forced: a re-run's replace the last ones,
    as its history entries do)."""
    _git_out(repo, "push", "--quiet", remote, f"+{REPLAYS_REFS}/*:{REPLAYS_REFS}/*")


def read_replays(repo: Path, handle: str, round_id: str, remote: str = "origin") -> bytes:
    """`handle`'s replays file of `round_id` from the git repository `repo` (a clone), fetched
    from `remote` when the clone does not have it yet."""
    ref = replays_ref(handle, round_id)
    if _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        fetched = _git(repo, "fetch", "--quiet", "--no-tags", remote, f"+{ref}:{ref}")
        if fetched.returncode != 0:
            why = fetched.stderr.decode(errors="replace").strip().splitlines()
            raise ReplaysError(
                f"{ref}: not in {repo}, and not fetched from {remote!r}: "
                f"{why[-1] if why else 'git fetch failed'} (the replays are kept in the arena's "
                "repository, not in a fork: fetch from it, or clone it)"
            )
    done = _git(repo, "cat-file", "blob", f"{ref}:{round_id}{REPLAYS_SUFFIX}")
    if done.returncode != 0:
        raise ReplaysError(f"{ref}: holds no {round_id}{REPLAYS_SUFFIX}")
    return done.stdout


def open_replays(
    root: Path, handle: str, entry: Entry, payload: dict, tier_seed: str | None, remote: str = "origin"
) -> dict | None:
    """The replays document of an opened entry (None: its round left none), read from the
    clone `root` (`read_replays`); ReplaysLocked while `tier_seed` (the published seed of the
    entry's tier) is None, ReplaysError when missing or damaged."""
    if "replays" not in payload:
        return None
    file_lock = FileLock.from_dict(payload["replays"], entry.round)
    if tier_seed is None:
        raise locked(entry.tier)  # said before anything is fetched: nothing would open yet
    return unlock(read_replays(root, handle, entry.round, remote), file_lock, entry.round, entry.tier, tier_seed)


def write_history(path: Path, history: History) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(Path(path), history.to_yaml().encode("utf-8"))


def summary(payload: dict, handle: str) -> str:
    """One line of an opened entry: the owner's SAE with its window, final win rate, faults."""
    results = payload.get("results") or {}
    agent = next((a for a in results.get("agents") or () if a.get("name") == handle), None)
    if agent is None:
        return "no row for you in this round"
    sae = agent.get("sae") or {}
    curve = agent.get("curve") or []
    parts = [
        f"SAE {sae['value']:.4f} over {sae['b0']}..{sae['b_max']} games" if sae.get("value") is not None else "SAE none"
    ]
    if curve:
        parts.append(f"win rate {curve[-1]['win_rate']:.3f} at {curve[-1]['games']} games")
    faults = {k: v for k, v in (agent.get("faults") or {}).items() if v}
    parts.append("faults " + (", ".join(f"{k} {v}" for k, v in sorted(faults.items())) if faults else "none"))
    return "; ".join(parts)


def merge(source: Path, into: Path) -> list[Path]:
    """Add every entry of `source`/history/*.yaml to `into`/history/, and store the replays
    files staged beside them (`<handle>/<round-id>.replays`) as refs of the git repository
    `into` (`store_replays`; `push_replays` sends them); the files changed."""
    changed = []
    for path in sorted((source / FOLDER).glob("*.yaml")):
        incoming = load_history(path)
        target = history_path(into, incoming.handle)
        history: History = load_history(target, incoming.handle)
        for entry in incoming.entries:
            history = history.add(entry)
            replays = replays_path(source, incoming.handle, entry.round)
            if replays.is_file():
                store_replays(into, incoming.handle, entry.round, replays.read_bytes())
        write_history(target, history)
        changed.append(target)
    return changed
