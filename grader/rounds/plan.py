"""A round's plan: everything that decides what is played, fixed before the first game.

The plan is written to the staff folder when a round starts and checked on every restart,
so a resumed round plays exactly the round it started. The round id is derived from the
plan, so the same arguments name the same round on every runner and every shard.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import grader
from engine import EnvSpec, parse_spec
from grader.common import checkout
from grader.common.errors import OptionError, PlanVersionError
from grader.common.limits import Limits
from grader.common.schedule import check_checkpoints
from grader.play.session import Entrant
from grader.season.disclosure import Disclosure, profile_for

PLAN_VERSION = 1
ARENA_RETRIES = 2
# Round-wide arena faults tolerated before the round is held (re-run environments included).
MAX_ARENA_FAULTS = 5


@dataclass(frozen=True)
class EnvEntry:
    """An environment of the round: its place, its label in results, and its spec."""

    index: int
    label: str
    spec: EnvSpec


@dataclass(frozen=True)
class RoundPlan:
    tier: str
    envs: tuple[EnvEntry, ...]
    field: tuple[Entrant, ...]
    budget: int
    checkpoints: tuple[int, ...]
    games_per_checkpoint: int
    pairing_games: int
    seed: str
    tier_seed: str | None
    limits: Limits
    sandbox: str
    disclosure: str
    commit: str
    arena_version: str = grader.__version__
    arena_retries: int = ARENA_RETRIES
    max_arena_faults: int = MAX_ARENA_FAULTS
    public_round: dict | None = None
    requested: bool = False  # a requested run (/score): private to its entrant (docs/rules.md §5)
    # The generator pool a ladder or final tier was drawn from (engine.tiers.GENERATOR_POOLS);
    # None for the fixed tiers. Kept so that the published tier seed regenerates these
    # environments after a later arena adds a pool.
    pool: int | None = None
    round_id: str = dataclasses.field(default="", compare=False)

    def __post_init__(self) -> None:
        check_checkpoints(list(self.checkpoints), self.budget)
        if self.games_per_checkpoint < 1:
            raise OptionError(
                "--games-per-checkpoint",
                self.games_per_checkpoint,
                f"--games-per-checkpoint must be at least 1, got {self.games_per_checkpoint}",
            )
        if self.pairing_games < 2 or self.pairing_games % 2:
            raise OptionError(
                "--pairing-games",
                self.pairing_games,
                f"--pairing-games must be even and at least 2, got {self.pairing_games}",
            )
        if not self.round_id:
            object.__setattr__(self, "round_id", f"{self.tier}-{self.key()[:10]}")

    @property
    def profile(self) -> Disclosure:
        return profile_for(self.tier, ladder_rules_public=self.disclosure == "open")

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.field]

    def to_dict(self) -> dict:
        """The plan as stored (staff only: it holds the secrets and the machine's paths)."""
        return (
            {
                "plan_version": PLAN_VERSION,
                "round_id": self.round_id,
                "tier": self.tier,
                "envs": [{"index": e.index, "label": e.label, "spec": e.spec.to_dict(with_id=True)} for e in self.envs],
                "field": [asdict(e) for e in self.field],
                "budget": self.budget,
                "checkpoints": list(self.checkpoints),
                "games_per_checkpoint": self.games_per_checkpoint,
                "pairing_games": self.pairing_games,
                "seed": self.seed,
                "tier_seed": self.tier_seed,
                "limits": self.limits.to_dict(),
                "sandbox": self.sandbox,
                "disclosure": self.disclosure,
                "commit": self.commit,
                "arena_version": self.arena_version,
                "arena_retries": self.arena_retries,
                "max_arena_faults": self.max_arena_faults,
                "public_round": self.public_round,
            }
            | ({"requested": True} if self.requested else {})
            | (  # absent when false: older plans keep their key
                {"pool": self.pool} if self.pool is not None else {}
            )
        )

    def key(self) -> str:
        """sha256 of what decides the games and their scoring. Entrants' sources (paths on one
        machine) are left out: two runners with the same submissions plan the same round."""
        data = self.to_dict()
        # Retries and the held threshold decide publication, not games: a held round may be
        # resumed with a higher threshold without replaying what it has.
        for key in ("round_id", "arena_retries", "max_arena_faults"):
            data.pop(key)
        # The pool decided which environments were drawn, and those are in the key already.
        data.pop("pool", None)
        for entrant in data["field"]:
            entrant.pop("source")
        return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: dict) -> RoundPlan:
        if data.get("plan_version") != PLAN_VERSION:
            raise PlanVersionError(
                data.get("plan_version"),
                f"round plan version {data.get('plan_version')!r}; this arena reads {PLAN_VERSION}",
            )
        envs = tuple(EnvEntry(e["index"], e["label"], parse_spec(e["spec"])) for e in data["envs"])
        return cls(
            tier=data["tier"],
            envs=envs,
            field=tuple(Entrant(**e) for e in data["field"]),
            budget=data["budget"],
            checkpoints=tuple(data["checkpoints"]),
            games_per_checkpoint=data["games_per_checkpoint"],
            pairing_games=data["pairing_games"],
            seed=data["seed"],
            tier_seed=data["tier_seed"],
            limits=Limits(**data["limits"]),
            sandbox=data["sandbox"],
            disclosure=data["disclosure"],
            commit=data["commit"],
            arena_version=data["arena_version"],
            arena_retries=data["arena_retries"],
            max_arena_faults=data["max_arena_faults"],
            public_round=data["public_round"],
            requested=data.get("requested", False),
            pool=data.get("pool"),
            round_id=data["round_id"],
        )


class PlanError(ValueError):
    """A stored plan file that is not a round plan; the message names the file and why."""


def read_plan(path: Path) -> RoundPlan:
    """The round plan stored at `path` (a staff file, but bytes all the same: a damaged or
    hand-edited one is a PlanError naming it, never a KeyError or RecursionError)."""
    try:
        return RoundPlan.from_dict(json.loads(Path(path).read_bytes().decode("utf-8")))
    except RecursionError:
        raise PlanError(f"{path}: not a round plan: nested too deeply") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # JSON, a missing key, a wrong type
        kind = "missing field" if isinstance(exc, KeyError) else type(exc).__name__
        raise PlanError(f"{path}: not a round plan: {kind}: {str(exc)[:200]}") from None


def commitment(kind: str, secret: str) -> str:
    """sha256 commitment of a seed. It binds the round to its seed; it hides the seed only if
    the seed has enough entropy (staff should draw scored seeds with `secrets.token_hex`)."""
    return "sha256:" + hashlib.sha256(f"arena {kind} seed\x1f{secret}".encode()).hexdigest()


def env_labels(count: int) -> list[str]:
    width = max(2, len(str(count)))
    return [f"E{i + 1:0{width}d}" for i in range(count)]


def order_envs(specs: list[EnvSpec], profile: Disclosure, secret: str) -> list[EnvEntry]:
    """Label the environments. A profile with shuffled labels orders them by a hash of a
    secret, so a label (and the order) says nothing about which environment it was."""
    if profile.shuffled_labels:
        specs = sorted(specs, key=lambda s: hashlib.sha256(f"{secret}\x1f{s.id}".encode()).hexdigest())
    return [EnvEntry(i, label, spec) for i, (label, spec) in enumerate(zip(env_labels(len(specs)), specs))]


def git_commit(root: Path | None = None) -> str:
    """The arena's commit, with `-dirty` when its code differs from it; `unknown` outside git
    (grader.common.checkout: the checkout the package lives in, or the one it was installed from)."""
    return checkout.git_commit(root)
