"""An owner's replays of a ladder or final round: the games their agent played, locked until the end.

The rules promise each student, once the competition has ended, the moves and the boards their
agent saw in its ladder and final games, and never the threshold, the winner or the disc counts.
When such a round is sealed into history, `build` makes one replays document per entrant from the
staff record, and `lock` encrypts it twice:

- inside, with a SecretBox key derived from the round's tier seed (`round_key`: keyed BLAKE2b of
  the round id), the same for every owner of the round. `seeds/published.yaml` carries that seed
  exactly when the competition has ended, so that is when the inner layer opens: no new secret
  and no step at the end;
- outside, with a fresh key per file (`FileLock.key`), which travels inside the history entry's
  payload, itself sealed to the owner and to the arena. One outer key sealed twice keeps the
  replays file one copy long, where sealing it to both keys would store it twice.

The file (`<round-id>.replays`, kept by grader.history.owner_history under a ref of its own) is `MAGIC`, then
the outer box. A replay holds,
per game: the environment's label and id, the phase (a checkpoint at N games used, or a pairing),
the game's index, the agent's colour, the opponent and every move of both sides in order. The
boards the agent was given are not stored: `with_boards` makes them when the replays are
opened, by the engine replaying the moves on the environments the published seed gives (the
kit has the engine; before the end the seed, and so the environments, are not known), which
keeps a final's file about a sixth of the size. A replay never holds the winner, the outcome,
disc counts, scores or any rule parameter, on any tier alike (`FORBIDDEN_KEYS`). Self-play
games are left out: by size (see docs/rules.md, section 8).
"""

from __future__ import annotations

import hashlib
import json
import lzma
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from nacl.exceptions import CryptoError
from nacl.secret import SecretBox
from nacl.utils import random as random_bytes

from engine.layout import cell_name
from engine.spec import EnvSpec

if TYPE_CHECKING:
    from engine.game import Game

SCHEMA_VERSION = 1
TIERS = ("ladder", "final")  # the tiers whose seeds are published at the end (grader.rounds.seeds.TIERS)
MAGIC = b"arena-replays 1\n"
SUFFIX = ".replays"
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_PLAIN_BYTES = 512 * 1024 * 1024  # unpacked: moves as JSON text, which xz packs about 3 times
PERSON = b"arena-replays-v1"  # BLAKE2b's personalisation: this key is for replays and nothing else
# What a replay may never carry, at any depth: who won, by how much, and the rules' parameters.
FORBIDDEN_KEYS = frozenset(
    {
        "winner",
        "outcome",
        "termination",
        "ending",
        "forfeit",
        "black_discs",
        "white_discs",
        "discs",
        "score",
        "scores",
        "threshold",
        "rules",
        "spec",
        "seed",
        "win",
    }
)
# A board as the agent saw it: its own discs, the opponent's, obstacles, empty cells, and the
# empty cells its legal-move mask allowed.
BOARD_CHARS = {"own": "x", "opponent": "o", "obstacle": "#", "empty": ".", "legal": "+"}


class ReplaysError(ValueError):
    """Replays that cannot be built, or a replays file that does not open; the message says which and why."""


class ReplaysLocked(ReplaysError):
    """The inner layer needs the tier's seed, which is published when the competition has ended."""


def round_key(tier_seed: str, round_id: str) -> bytes:
    """The inner layer's key of `round_id`: keyed BLAKE2b (the key a digest of the tier seed,
    which may be longer than BLAKE2b takes) over the round id."""
    secret = hashlib.sha256(tier_seed.encode("utf-8")).digest()
    return hashlib.blake2b(round_id.encode("utf-8"), key=secret, person=PERSON, digest_size=SecretBox.KEY_SIZE).digest()


# Board codes (engine.Game.board: 0 empty, 1 black, 2 white, 3 obstacle) to characters, by the
# colour of the side to move; a legal cell is marked over its empty code.
_CHARS = {
    own: np.frombuffer("".join(BOARD_CHARS[k] for k in kinds).encode(), dtype=np.uint8)
    for own, kinds in ((1, ("empty", "own", "opponent", "obstacle")), (2, ("empty", "opponent", "own", "obstacle")))
}
_LEGAL = ord(BOARD_CHARS["legal"])


def _view(game: Game, own: int) -> str:
    chars = _CHARS[own][game.board().reshape(-1)]
    chars[game.legal_mask() == 1] = _LEGAL
    return chars.tobytes().decode("ascii")


def game_acts(spec: EnvSpec, game: dict) -> dict[str, list[dict]]:
    """Each colour's acts in one game (its `moves`; `env`, `phase` and `index` name it in an
    error): the ply, the board its agent was given there, the move it made; from the engine
    replaying the moves on `spec`."""
    # Here, not at the top: the engine's game loads numba, which opening replays (the history,
    # the kit's listing, `score finish`) does not need.
    from engine import PASS, Color, Game, IllegalMoveError

    board = Game(spec)
    acts: dict[str, list[dict]] = {"black": [], "white": []}
    for ply, move in enumerate(game["moves"]):
        if board.done:
            raise ReplaysError(f"game {game['env']} {game['phase']} {game['index']}: move {ply} after the end")
        color = board.to_move
        if move != PASS:  # a forced pass is the engine's: the agent is not asked
            acts[color.label].append(
                {"ply": ply, "board": _view(board, 1 if color is Color.BLACK else 2), "move": move}
            )
        try:
            board.apply(move)
        except (IllegalMoveError, TypeError, ValueError, IndexError) as exc:
            raise ReplaysError(
                f"game {game['env']} {game['phase']} {game['index']}: move {ply} ({move!r}): {exc}"
            ) from None
    return acts


class _Stream:
    """One owner's document, written as it is built: JSON text packed by xz into a file, so
    that a final's field (about 5 MB each once packed, 30 MB as text) never sits in memory at
    once."""

    def __init__(self, head: dict, path: Path):
        self.path = path
        self.file = path.open("wb")
        # xz at its fast preset: fewer bytes than gzip -6 in about the same time; the default
        # preset is many times slower for a modest gain.
        self.packer = lzma.LZMACompressor(preset=1)
        self.label: str | None = None
        self.envs = self.games = 0
        self.write(_dumps(head)[:-1] + ',"environments":[')

    def write(self, text: str) -> None:
        self.file.write(self.packer.compress(text.encode("utf-8")))

    def game(self, label: str, spec: EnvSpec, game: dict) -> None:
        if label != self.label:
            if self.label is not None:
                self.write("]}")
            self.write(
                ("," if self.envs else "")
                + _dumps({"label": label, "env": spec.id, "rows": spec.layout.rows, "cols": spec.layout.cols})[:-1]
                + ',"games":['
            )
            self.label, self.envs, self.games = label, self.envs + 1, 0
        self.write(("," if self.games else "") + _dumps(game))
        self.games += 1

    def finish(self) -> bytes:
        self.write("]}]}" if self.label is not None else "]}")
        self.file.write(self.packer.flush())
        self.file.close()
        packed = self.path.read_bytes()
        self.path.unlink()
        return packed


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


class Packer:
    """Each of `names`' replays document of a round, packed (xz), built environment by
    environment as the staff record is read (`add`); `finish(name)` gives one owner's packed
    document. `work` holds the packing files meanwhile. `pool` is the generator pool the
    round's tier was drawn from (its config's `pool`; None: the engine's own)."""

    def __init__(self, round_id: str, tier: str, names: list[str], work: Path, pool: int | None = None):
        work.mkdir(parents=True, exist_ok=True)
        self.streams = {
            name: _Stream(
                {"schema_version": SCHEMA_VERSION, "round": round_id, "tier": tier, "pool": pool, "handle": name},
                work / f"{i}.json.xz",
            )
            for i, name in enumerate(names)
        }

    def add(self, label: str, spec: EnvSpec, games: list[dict]) -> None:
        """One environment's scored games (a staff record's game documents), for the owners seated in them."""
        for game in games:
            for colour, other in (("black", "white"), ("white", "black")):
                if game[colour] in self.streams:
                    self.streams[game[colour]].game(
                        label,
                        spec,
                        {
                            "phase": game["phase"],
                            "checkpoint": game["checkpoint"],
                            "index": game["index"],
                            "colour": colour,
                            "opponent": game[other],
                            "moves": list(game["moves"]),
                        },
                    )

    def finish(self, name: str) -> bytes:
        return self.streams.pop(name).finish()


def build(round_id: str, tier: str, name: str, environments: list[tuple[str, EnvSpec, list[dict]]], work: Path) -> dict:
    """`name`'s replays document of a round, as `Packer` packs it (`work`: a folder for its file)."""
    packer = Packer(round_id, tier, [name], work)
    for label, spec, games in environments:
        packer.add(label, spec, games)
    return json.loads(_unpack(packer.finish(name)))


@dataclass(frozen=True)
class FileLock:
    """What opens a replays file's outer layer: its name beside the history file, and its key."""

    file: str
    key: bytes

    def to_dict(self) -> dict:
        return {"file": self.file, "key": self.key.hex()}

    @classmethod
    def from_dict(cls, data: object, round_id: str) -> FileLock:
        if (
            not isinstance(data, dict)
            or data.get("file") != f"{round_id}{SUFFIX}"
            or not isinstance(data.get("key"), str)
        ):
            raise ReplaysError(f"round {round_id}: its entry's replays reference is not this round's")
        try:
            key = bytes.fromhex(data["key"])
        except ValueError:
            raise ReplaysError(f"round {round_id}: its entry's replays key is not hex") from None
        if len(key) != SecretBox.KEY_SIZE:
            raise ReplaysError(
                f"round {round_id}: its entry's replays key is {len(key)} bytes, not {SecretBox.KEY_SIZE}"
            )
        return cls(data["file"], key)


def lock(packed: bytes, round_id: str, handle: str, tier_seed: str) -> tuple[bytes, FileLock]:
    """The replays file's bytes for `handle`'s packed document (`Packer.finish`), and what opens
    its outer layer."""
    inner = SecretBox(round_key(tier_seed, round_id)).encrypt(packed)
    key = random_bytes(SecretBox.KEY_SIZE)
    blob = MAGIC + bytes(SecretBox(key).encrypt(inner))
    if len(blob) > MAX_FILE_BYTES:
        raise ReplaysError(f"round {round_id}: {handle}'s replays take {len(blob)} bytes, more than {MAX_FILE_BYTES}")
    return blob, FileLock(f"{round_id}{SUFFIX}", key)


def _unpack(data: bytes) -> bytes:
    # Bounded: the file sits in a repository anyone can send a pull request to.
    unpacker = lzma.LZMADecompressor()
    out = unpacker.decompress(data, max_length=MAX_PLAIN_BYTES + 1)
    if len(out) > MAX_PLAIN_BYTES or not unpacker.eof:
        raise ValueError("too large, or cut short")
    return out


def locked(tier: str) -> ReplaysLocked:
    """What a round's replays say until the seed of its `tier` is published."""
    return ReplaysLocked(f"replays of this round open when the competition has ended and the {tier} seed is published")


def unlock(blob: bytes, file_lock: FileLock, round_id: str, tier: str, tier_seed: str | None) -> dict:
    """The replays document of a file: the outer layer with `file_lock`, the inner with the
    published `tier_seed` (None: not published, ReplaysLocked)."""
    if len(blob) > MAX_FILE_BYTES:
        raise ReplaysError(f"{file_lock.file}: {len(blob)} bytes, more than {MAX_FILE_BYTES}")
    if not blob.startswith(MAGIC):
        raise ReplaysError(f"{file_lock.file}: not a replays file (it does not start with {MAGIC!r})")
    try:
        inner = SecretBox(file_lock.key).decrypt(blob[len(MAGIC) :])
    except CryptoError:
        raise ReplaysError(
            f"{file_lock.file}: does not open with its entry's key (damaged, or another round's)"
        ) from None
    if tier_seed is None:
        raise locked(tier)
    try:
        plain = SecretBox(round_key(tier_seed, round_id)).decrypt(inner)
    except CryptoError:
        raise ReplaysError(
            f"{file_lock.file}: does not open with the published {tier} seed (damaged, or a seed "
            "that is not this round's)"
        ) from None
    try:
        document = json.loads(_unpack(plain).decode("utf-8"))
    except (ValueError, lzma.LZMAError, EOFError, RecursionError):
        raise ReplaysError(f"{file_lock.file}: opened, but what it holds is not a replays document") from None
    if (
        not isinstance(document, dict)
        or document.get("schema_version") != SCHEMA_VERSION
        or document.get("round") != round_id
    ):
        raise ReplaysError(f"{file_lock.file}: not round {round_id}'s replays of version {SCHEMA_VERSION}")
    return document


def with_boards(document: dict, specs: list[EnvSpec]) -> dict:
    """The opened `document` with each game's `acts`: the ply, the board the agent was given
    there (`BOARD_CHARS`) and the move it made, from the engine replaying the game's moves on
    its environment, found by id among `specs` (the tier as its published seed draws it)."""
    by_id = {spec.id: spec for spec in specs}
    out = dict(document, board_chars=dict(BOARD_CHARS), environments=[])
    for env in document["environments"]:
        spec = by_id.get(env.get("env"))
        if spec is None:
            raise ReplaysError(
                f"environment {env.get('label')!r}: {env.get('env')!r} is not an environment of the "
                f"{document['tier']} tier the published seed draws (is the clone's arena older "
                "than the round's?)"
            )
        games = []
        for game in env["games"]:
            if game.get("colour") not in ("black", "white") or not isinstance(game.get("moves"), list):
                raise ReplaysError(f"environment {env['label']}: a game that is not a replay")
            games.append(dict(game, acts=game_acts(spec, dict(game, env=env["label"]))[game["colour"]]))
        out["environments"].append(dict(env, games=games))
    return out


def render_environment(env: dict) -> str:
    """One environment's replays as text: per game, its moves, then each of the agent's acts
    with the board it was given (columns a.., rows 1..)."""
    rows, cols = env["rows"], env["cols"]
    letters = " ".join(chr(ord("a") + c) for c in range(cols))
    width = len(str(rows))
    legend = ", ".join(f"{c} {what}" for what, c in BOARD_CHARS.items())
    out = [f"environment {env['label']}: {rows}x{cols}; boards as your agent saw them ({legend})", ""]
    for game in env["games"]:
        phase = f"checkpoint at {game['checkpoint']} games" if game["phase"] == "checkpoint" else "pairing"
        out.append(
            f"== {env['label']} {phase}, game {game['index']}: you played {game['colour']} against {game['opponent']}"
        )
        names = [m if isinstance(m, str) else cell_name(m, cols) for m in game["moves"]]
        out.append("moves: " + " ".join(names))
        for act in game["acts"]:
            move = act["move"]
            made = move if isinstance(move, str) else cell_name(move, cols)
            out.append("")
            out.append(f"move {act['ply'] + 1}: you played {made}")
            out.append(" " * (width + 1) + letters)
            cells = act["board"]
            for r in range(rows):
                out.append(f"{r + 1:>{width}} " + " ".join(cells[r * cols : (r + 1) * cols]))
        out.append("")
    return "\n".join(out) + "\n"


def write_readable(document: dict, folder: Path) -> list[Path]:
    """One text file per environment of `document` in `folder`; the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for env in document["environments"]:
        label = str(env["label"])
        if not label.isalnum():
            raise ReplaysError(f"environment label {label!r} is not a file name")
        path = folder / f"{label}.txt"
        path.write_text(render_environment(env), encoding="utf-8")
        written.append(path)
    return written
