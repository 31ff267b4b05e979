"""A game's shapes, each built and read back here alone.

- `GameRecord`: the game as `grader.play.match.play_game` plays it (with what each side did).
- `ScoredGame`: a checkpoint or pairing game as a round stores it, one line of its games file
  (`grader.season.disclosure` projects it for the public).
- `KeptGame`: a self-play game as the environment record keeps it for `arena verify`.

The stored forms are hashed (`games.sha256`, `self_play.games_sha256`), so each dataclass's
fields are its document's keys in its document's order: adding, dropping or reordering one
changes every digest of every round.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from grader.common.faults import Fault
from grader.season.disclosure import RULE_BEARING_GAME_KEYS


@dataclass
class SideStats:
    """What one side did in one game."""

    acts: int = 0
    illegal: int = 0
    faults: list[Fault] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"acts": self.acts, "illegal": self.illegal, "faults": [f.to_dict() for f in self.faults]}


@dataclass
class GameRecord:
    """A finished game: enough to replay it (`engine.replay(spec, moves, forfeit)`) and score it."""

    env_id: str
    seed: int
    players: dict[str, str]
    moves: list
    termination: str
    winner: str | None
    black_discs: int
    white_discs: int
    forfeit: str | None
    sides: dict[str, SideStats]

    def to_dict(self) -> dict:
        return {
            "env_id": self.env_id,
            "seed": self.seed,
            "players": self.players,
            "moves": self.moves,
            "termination": self.termination,
            "winner": self.winner,
            "black_discs": self.black_discs,
            "white_discs": self.white_discs,
            "forfeit": self.forfeit,
            "sides": {k: v.to_dict() for k, v in self.sides.items()},
        }


def ending_of(record: GameRecord, dead: set[str]) -> str:
    """How a game ended, for the endings histogram: `fault` when the side that forfeited
    has a dead session (it crashed, timed out, ...), `forfeit` for a game lost on illegal moves."""
    if record.forfeit is None:
        return record.termination
    return "fault" if record.forfeit in dead else "forfeit"


@dataclass(frozen=True, slots=True)
class ScoredGame:
    """A scored game as a round stores it. Read back from a public projection, the fields
    the tier withholds (`grader.season.disclosure.RULE_BEARING_GAME_KEYS`) are None: `moves` is
    None exactly when the game cannot be replayed."""

    env: str
    phase: str  # "checkpoint" or "pairing"
    checkpoint: int | None
    index: int
    seed: int | None
    black: str
    white: str
    moves: list | None
    forfeit: str | None
    termination: str | None
    winner: str | None
    black_discs: int | None
    white_discs: int | None
    ending: str

    @classmethod
    def of(
        cls,
        record: GameRecord,
        env: str,
        phase: str,
        checkpoint: int | None,
        index: int,
        black: str,
        white: str,
        dead_colors: set[str],
    ) -> ScoredGame:
        """`record` played as game `index` of `phase` in environment `env`, `black` v `white`;
        `dead_colors` are the sides whose session was dead when it ended."""
        return cls(
            env,
            phase,
            checkpoint,
            index,
            record.seed,
            black,
            white,
            record.moves,
            record.forfeit,
            record.termination,
            record.winner,
            record.black_discs,
            record.white_discs,
            ending_of(record, dead_colors),
        )

    def to_doc(self) -> dict:
        """The full stored form (a fresh dict; the move list is shared, not copied)."""
        return {name: getattr(self, name) for name in SCORED_FIELDS}

    @classmethod
    def from_doc(cls, doc: dict) -> ScoredGame:
        """A stored game, full or projected; a key it must have and lacks raises KeyError."""
        values: dict[str, Any] = {
            name: doc.get(name) if name in RULE_BEARING_GAME_KEYS else doc[name] for name in SCORED_FIELDS
        }
        return cls(**values)

    def seat(self, color: str) -> str:
        """The player that held `color` ("black" or "white")."""
        return self.black if color == "black" else self.white


SCORED_FIELDS = tuple(f.name for f in fields(ScoredGame))


@dataclass(frozen=True, slots=True)
class KeptGame:
    """A self-play game as the environment record keeps it: enough for `arena verify` to
    replay it and to check the outcome the agent was sent."""

    seed: int
    moves: list
    forfeit: str | None
    outcome: list | None  # [winner or "draw", black_discs, white_discs] as sent; None: never sent

    @classmethod
    def of(cls, record: GameRecord, outcome: dict) -> KeptGame:
        """`record` kept with `outcome`, the `observe_outcome` message it is sent."""
        return cls(
            record.seed,
            record.moves,
            record.forfeit,
            [outcome["winner"], outcome["black_discs"], outcome["white_discs"]],
        )

    def to_doc(self) -> dict:
        """The kept form (a fresh dict; the move list is shared, not copied)."""
        return {name: getattr(self, name) for name in KEPT_FIELDS}

    @classmethod
    def from_doc(cls, doc: dict) -> KeptGame:
        """A kept game as an environment record holds it."""
        values: dict[str, Any] = {name: doc[name] for name in KEPT_FIELDS}
        return cls(**values)


KEPT_FIELDS = tuple(f.name for f in fields(KeptGame))
