"""A round's dispatch inputs, checked before the field is taken.

round.yml's tier, budget, envs and shards: a typo costs seconds, not the field job's smoke tests.

The checks are the ones `arena round` would make hours later, made on the inputs alone: the
tier is one a round plays, the budget a positive integer with its checkpoints, the environments
the tier's (a generated tier's by count or name: its ids need the secret seed), at least one
environment per shard, and a final played only from the final's date, never twice.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from engine import tier_specs
from engine.tiers import DEFAULT_GENERATED_COUNT
from grader.common.schedule import ScheduleError, parse_checkpoints
from grader.documents.yaml_io import format_time
from grader.season.competition import Competition

TIERS = ("ladder", "final", "public")  # the tiers round.yml offers
GENERATED = ("ladder", "final")
ENV_ID_RE = re.compile(r"^env-[0-9a-f]{12}$")


@dataclass(frozen=True)
class DispatchCheck:
    """The checked inputs: `problems` is empty when the round may start; `envs` is how many
    environments it plays (None when only the secret seed can tell)."""

    problems: list[str]
    envs: int | None = None
    budget: int | None = None
    shards: int | None = None


def positive_integer(name: str, text: str, problems: list[str]) -> int | None:
    """An input given as text (a workflow's number input arrives as `2000` or `2000.0`)."""
    try:
        number = float(text)
    except ValueError:
        problems.append(f"{name}: expected a positive integer, got {text!r}")
        return None
    if not number.is_integer() or number < 1:
        problems.append(f"{name}: expected a positive integer, got {text!r}")
        return None
    return int(number)


def count_envs(tier: str, envs: str, problems: list[str]) -> int | None:
    """How many environments `envs` names on `tier` (empty: the whole tier), each name checked."""
    envs = envs.strip()
    whole = DEFAULT_GENERATED_COUNT if tier in GENERATED else len(tier_specs(tier))
    if not envs:
        return whole
    if envs.isdigit():
        count = int(envs)
        if not 1 <= count <= whole:
            problems.append(f"envs: {count}: the {tier} tier has 1 to {whole} environments")
            return None
        return count
    items = [item.strip() for item in envs.split(",")]
    if tier in GENERATED:
        names = {f"{tier}-{i:02d}" for i in range(1, whole + 1)}
        known = [i for i in items if i not in names and not ENV_ID_RE.match(i)]
    else:
        specs = tier_specs(tier)
        known = [i for i in items if i not in {s.id for s in specs} | {s.name for s in specs}]
    for item in known:
        hint = f" ({tier}-01 to {tier}-{whole:02d}, or ids)" if tier in GENERATED else " (`arena envs --tier public`)"
        problems.append(f"envs: {item!r} is not the id or name of a {tier} environment{hint}")
    twice = sorted({i for i in items if items.count(i) > 1})
    problems += [f"envs: {item!r} is listed twice" for item in twice]
    return len(items)


def check_dispatch(
    tier: str, budget: str, envs: str, shards: str, competition: Competition, now: dt.datetime
) -> DispatchCheck:
    """Every problem with a round's dispatch inputs, by input name."""
    problems: list[str] = []
    if tier not in TIERS:
        problems.append(f"tier: {tier!r} is not one round.yml plays ({', '.join(TIERS)})")
        return DispatchCheck(problems)
    games = positive_integer("budget", budget, problems)
    if games is not None:
        try:
            parse_checkpoints(None, games)
        except ScheduleError as exc:
            problems.append(f"budget: {exc}")
    count = count_envs(tier, envs, problems)
    parts = positive_integer("shards", shards, problems)
    if parts is not None and count is not None and parts > count:
        problems.append(f"shards: {parts} shards for {count} environments: a shard would play none")
    if tier == "final":
        if competition.final.status == "published":
            problems.append(
                f"tier: the final is already published (round {competition.final.round_id}); it is run once"
            )
        elif competition.final.status == "pending_review":
            problems.append(
                f"tier: the final has been played: round {competition.final.round_id} is pending review; "
                "it is run once (to play it again, staff first set it aside with `arena competition "
                "rerun-final --reason TEXT`, which is recorded)"
            )
        elif competition.final_at is None:
            problems.append(
                "tier: the final has no date (config/competition.yaml final_at is null; "
                "set it with `arena competition set --final-at`)"
            )
        elif now < competition.final_at:
            problems.append(f"tier: the final is at {format_time(competition.final_at)}; it is {format_time(now)}")
    return DispatchCheck(problems, count, games, parts)
