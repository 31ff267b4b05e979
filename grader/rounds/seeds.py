"""The ladder and final seeds, published once the competition has ended: `seeds/published.yaml`.

While the competition runs, a scored tier's generation seed is secret and each round records
only its commitment (`provenance.tier_seed_commitment`, grader.rounds.plan.commitment). Once
the appeal window has closed, `arena competition publish-seeds` writes the seeds the rounds
were generated from, so anyone can check a round's commitment (`arena verify` does, when the
file is there) and regenerate its tier:

    schema_version: 1
    published_at: "2026-12-22T03:17:00Z"
    tier_seeds:               # the generation seeds of the scored tiers
      ladder: "3f0c..."
      final: "9a1b..."
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError, dump_yaml, format_time, parse_time, read_yaml
from grader.rounds.plan import commitment
from grader.season.competition import Competition

if TYPE_CHECKING:
    from engine.spec import EnvSpec

SCHEMA_VERSION = 1
TIERS = ("ladder", "final")
# Where the workflow keeps each tier's seed (GitHub secrets, passed to the one step that publishes).
SEED_ENV = {"ladder": "ARENA_LADDER_SEED", "final": "ARENA_FINAL_SEED"}
DEFAULT_PATH = Path("seeds") / "published.yaml"


def int_seed(text: str) -> int:
    """The generator's integer seed for a tier seed as published or kept in a secret: a decimal
    integer is itself, any other text (the hex strings the docs recommend) maps to one by hashing.
    Every command that takes a tier seed goes through here, so the published string works anywhere."""
    return (
        int(text)
        if text.lstrip("-").isdigit()
        else int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    )


def published_tier(tier: str, text: str, pool: int | None = None) -> list[EnvSpec]:
    """The environments (engine EnvSpecs) tier seed `text` draws for `tier`, from generator
    `pool` (None: the engine's own): what a published seed gives back, rules included."""
    from engine import tier_specs

    return tier_specs(tier, int_seed(text)) if pool is None else tier_specs(tier, int_seed(text), pool=pool)


def published_seeds(root: Path) -> dict[str, str]:
    """The tier seeds a clone's `seeds/published.yaml` carries (none before the end)."""
    path = Path(root) / DEFAULT_PATH
    return load(path).tier_seeds if path.is_file() else {}


def replay_boards(document: dict, tier_seed: str) -> dict:
    """An opened replays document (grader.history.replays) with the boards its agent saw, made on the
    environments `tier_seed` draws for the document's tier."""
    from grader.history.replays import with_boards

    return with_boards(document, published_tier(document["tier"], tier_seed, document.get("pool")))


class SeedsError(ValueError):
    """The seeds cannot be published now, or as given; the message says why."""


@dataclass(frozen=True)
class PublishedSeeds:
    published_at: dt.datetime
    tier_seeds: dict[str, str]

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "published_at": format_time(self.published_at),
            "tier_seeds": dict(self.tier_seeds),
        }


def publish(competition: Competition, now: dt.datetime, environ: Mapping[str, str]) -> PublishedSeeds:
    """The seeds to publish at `now`: only once the competition has ended (the appeal window closed)."""
    if not competition.ended:
        close = competition.appeals_close_at
        when = (
            f"the appeal window closes at {format_time(close)}"
            if close is not None
            else "the final has not been published"
        )
        raise SeedsError(f"the competition has not ended ({when}): the seeds stay secret until it has")
    missing = [SEED_ENV[t] for t in TIERS if not environ.get(SEED_ENV[t])]
    if missing:
        raise SeedsError(f"{', '.join(missing)} not set: the seeds come from the workflow's secrets")
    return PublishedSeeds(now, {t: environ[SEED_ENV[t]] for t in TIERS})


def parse(data: Any, source: str) -> PublishedSeeds:
    """A validated seeds document (grader/documents/data/seeds.schema.json); DocumentError lists every problem by path."""
    problems = problems_of(data, "seeds")
    if not isinstance(data, dict):
        raise DocumentError(source, problems)
    when = parse_time(data.get("published_at"), "published_at", problems)
    if problems or when is None:
        raise DocumentError(source, problems or ["published_at: expected a time"])
    return PublishedSeeds(when, dict(data["tier_seeds"]))


def load(path: Path) -> PublishedSeeds:
    return parse(read_yaml(path), str(path))


def write(path: Path, seeds: PublishedSeeds) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# The scored tiers' seeds, published after the competition ended (grader/rounds/seeds.py).\n"
        + dump_yaml(seeds.to_dict()),
        encoding="utf-8",
    )


def check_commitment(data: dict, seeds: PublishedSeeds) -> str:
    """Check a round's tier seed commitment against the published seed of its tier; the
    sentence that says what was checked. Raises SeedsError naming both digests on a mismatch."""
    tier = data["provenance"]["config"]["tier"]
    stated = data["provenance"]["tier_seed_commitment"]
    if stated is None:
        return f"the {tier} tier is not generated from a seed: no seed commitment to check"
    if tier not in seeds.tier_seeds:
        return f"no {tier} seed is published: the seed commitment is not checked"
    expected = commitment("tier", seeds.tier_seeds[tier])
    if stated != expected:
        raise SeedsError(
            f"provenance.tier_seed_commitment: the file says {stated}, the published {tier} seed commits to {expected}"
        )
    return f"the tier seed commitment matches the published {tier} seed"
