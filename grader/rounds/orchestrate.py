"""A round from arguments to results: plan it, play (a shard of) it, hold it or publish it.

`make_plan` turns validated arguments into a `RoundPlan`; `run_round` plays the plan's
environments (all, or one shard's share) into the staff folder and, when every environment
is recorded and the arena did not fail too often, publishes; `merge_shards` does the same
from the staff folders of several shards.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import yaml

from engine.tiers import POOL_VERSION
from grader.common.errors import OptionError, ShardError
from grader.common.faults import FaultKind
from grader.common.files import atomic_write_bytes
from grader.common.limits import DEFAULT_LIMITS, Limits
from grader.play.session import Entrant, check_field
from grader.rounds.capacity import Board, CapacityError, CapacityPlan, plan_shard
from grader.rounds.environments import select_envs
from grader.rounds.plan import ARENA_RETRIES, MAX_ARENA_FAULTS, RoundPlan, git_commit, order_envs, read_plan
from grader.rounds.play import HeldEnv
from grader.rounds.publish import publish
from grader.rounds.records import IncompleteRecordsError, record_path
from grader.rounds.results import load_results
from grader.rounds.workers import finished_records, prepare_work, run_envs
from grader.season.disclosure import profile_for

HIDDEN_TIERS = ("ladder", "final")


@dataclass
class RoundOutcome:
    """What `run_round` or `merge_shards` did: `status` is published, shard or held."""

    status: str
    round_id: str
    public_path: Path | None = None
    full_path: Path | None = None
    message: str = ""


def public_round_baseline(path: str | Path) -> dict:
    """A public-tier round to measure the generalisation gap against: per digest, its figures."""
    path = Path(path)
    data = load_results(path)
    if data["round"]["tier"] != "public":
        raise OptionError(
            "--public-round", str(path), f"--public-round {path}: a {data['round']['tier']} round, not a public one"
        )
    digests = {f["name"]: f["digest"] for f in data["field"]}
    agents = {
        digests[a["name"]]: {
            "sae": a["sae"]["value"],
            "final_win_rate": a["curve"][-1]["win_rate"] if a["curve"] else None,
        }
        for a in data["agents"]
    }
    return {
        "id": data["round"]["id"],
        "sha256": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest(),
        "agents": agents,
    }


def make_plan(
    tier: str,
    field: list[Entrant],
    envs: str | None,
    budget: int,
    checkpoints: list[int],
    games_per_checkpoint: int,
    pairing_games: int,
    seed: str,
    tier_seed: str | None,
    sandbox: str,
    ladder_rules: str = "staff",
    limits: Limits = DEFAULT_LIMITS,
    public_round: dict | None = None,
    arena_retries: int = ARENA_RETRIES,
    max_arena_faults: int = MAX_ARENA_FAULTS,
    requested: bool = False,
) -> RoundPlan:
    if tier in HIDDEN_TIERS and tier_seed is None:
        raise OptionError(
            "--tier-seed", None, f"the {tier} tier is generated from a secret seed: give --tier-seed or ARENA_TIER_SEED"
        )
    if tier not in HIDDEN_TIERS and tier_seed is not None:
        raise OptionError(
            "--tier-seed", tier_seed, f"the {tier} tier is not generated; --tier-seed is for ladder and final"
        )
    if ladder_rules == "public" and tier != "ladder":
        raise OptionError("--ladder-rules", tier, "--ladder-rules is a setting of the ladder tier only")
    profile = profile_for(tier, ladder_rules_public=ladder_rules == "public")
    pool = POOL_VERSION if tier in HIDDEN_TIERS else None
    specs = select_envs(tier, envs, tier_seed, POOL_VERSION)
    entries = order_envs(specs, profile, f"{tier_seed}\x1f{seed}")
    return RoundPlan(
        tier=tier,
        envs=tuple(entries),
        field=tuple(check_field(field)),
        budget=budget,
        checkpoints=tuple(checkpoints),
        games_per_checkpoint=games_per_checkpoint,
        pairing_games=pairing_games,
        seed=str(seed),
        tier_seed=tier_seed,
        limits=limits,
        sandbox=sandbox,
        disclosure=profile.name,
        commit=git_commit(),
        public_round=public_round,
        arena_retries=arena_retries,
        max_arena_faults=max_arena_faults,
        requested=requested,
        pool=pool,
    )


def check_folders(out: Path, private: Path) -> None:
    """The staff folder must never sit inside the public one (or be it)."""
    o, p = out.resolve(), private.resolve()
    if p == o or o in p.parents:
        raise OptionError(
            "--private-out",
            str(private),
            f"--private-out {private} is inside --out {out}: staff records would be published",
        )


def _held(plan: RoundPlan, work: Path, held: list[HeldEnv], faults: int, stream: TextIO) -> RoundOutcome:
    reasons = []
    if held:
        reasons.append(
            f"the arena failed {len(held)} environment(s) on every attempt: " + ", ".join(h.label for h in held)
        )
    if faults > plan.max_arena_faults:
        reasons.append(f"{faults} arena faults, more than the {plan.max_arena_faults} allowed")
    short = sorted({f["entrant"] for h in held for f in h.arena_faults if f["kind"] == FaultKind.OOM.value})
    if short:
        reasons.append(memory_shortage(plan, short))
    report = {
        "round": plan.round_id,
        "status": "held",
        "reasons": reasons,
        "held_environments": [{"label": h.label, "arena_faults": h.arena_faults} for h in held],
    }
    path = work / "held.yaml"
    atomic_write_bytes(path, yaml.safe_dump(report, sort_keys=False).encode())
    message = (
        f"round {plan.round_id} is held, not published: {'; '.join(reasons)}. "
        f"Details in {path}; run the same command again to retry the unfinished environments."
    )
    print(message, file=stream)
    return RoundOutcome("held", plan.round_id, message=message)


def memory_shortage(plan: RoundPlan, killed: list[str]) -> str:
    """Why a round is held when the host ran short of memory, and what to change: no agent is
    charged (each was killed below its own limit)."""
    return (
        f"the host ran short of memory: the kernel killed {', '.join(killed)} below its own limit of "
        f"{plan.limits.memory_bytes >> 20} MiB (fault oom: the arena's, never charged to the agent). "
        f"Its {len(plan.field)} frozen agents stay alive together on one runner: run `arena capacity --field` "
        "with the field's measured memory to see what a runner needs, then give the runner more memory, "
        "free it of other work, or play fewer entrants, and run the same command again"
    )


def _finish(
    plan: RoundPlan,
    work: Path,
    out: Path,
    private: Path,
    command: str,
    shards: list[str],
    held: list[HeldEnv],
    stream: TextIO,
) -> RoundOutcome:
    indices = [e.index for e in plan.envs]
    records = finished_records(work, plan, indices)
    faults = sum(len(r.arena_faults) for r in records.values()) + sum(len(h.arena_faults) for h in held)
    missing = [plan.envs[i].label for i in indices if i not in records]
    if held or faults > plan.max_arena_faults:
        return _held(plan, work, held, faults, stream)
    if missing:
        raise IncompleteRecordsError(
            plan.round_id, missing, f"round {plan.round_id}: environments not recorded: {', '.join(missing)}"
        )
    public_path, full_path = publish(plan, list(records.values()), out, private, command, shards)
    (work / "held.yaml").unlink(missing_ok=True)
    message = f"round {plan.round_id} published: {public_path} (staff record: {full_path})"
    print(message, file=stream)
    return RoundOutcome("published", plan.round_id, public_path, full_path, message)


def shard_of(plan: RoundPlan, shard: tuple[int, int] | None) -> list[int]:
    """The environment positions a shard of the plan plays: shared out by predicted cost
    (grader.rounds.capacity.assign_shards), the same on every runner and in the capacity plan."""
    return plan_shard([Board.of(entry.spec) for entry in plan.envs], plan.limits, shard)


def run_round(
    plan: RoundPlan,
    out: Path,
    private: Path,
    jobs: int = 1,
    shard: tuple[int, int] | None = None,
    command: str = "",
    stream: TextIO | None = None,
    capacity: CapacityPlan | None = None,
) -> RoundOutcome:
    """Play the plan (or its shard's share) with resume; publish unless sharded or held. A
    `capacity` plan whose runner cannot hold the field's live sandboxes refuses the round
    before anything is played (CapacityError, naming the memory it needs)."""
    stream = stream or sys.stderr
    check_folders(out, private)
    if capacity is not None and (refusal := capacity.memory_refusal()) is not None:
        raise CapacityError(f"round {plan.round_id} refused before it starts: {refusal}")
    work = prepare_work(private, plan)
    indices = shard_of(plan, shard)
    held = run_envs(plan, indices, work, jobs, stream)
    if shard is not None:
        index, count = shard
        atomic_write_bytes(
            work / "shards" / f"{index}-of-{count}.json",
            json.dumps({"shard": f"{index}/{count}", "command": command}).encode(),
        )
        recorded = len(finished_records(work, plan, indices))
        message = (
            f"round {plan.round_id} shard {index}/{count}: {recorded} of {len(indices)} environments "
            f"recorded in {work}; join the shards with `arena merge`"
        )
        print(message, file=stream)
        return RoundOutcome("held" if held else "shard", plan.round_id, message=message)
    return _finish(plan, work, out, private, command, [], held, stream)


def merge_shards(
    folders: list[Path], out: Path, private: Path, command: str, stream: TextIO | None = None
) -> RoundOutcome:
    """Join shard folders (each a `<private>/<round-id>` of one runner) into one published round."""
    stream = stream or sys.stderr
    if not folders:
        raise ShardError(None, "arena merge: no shard folders given")
    check_folders(out, private)
    plans = []
    for folder in folders:
        path = folder / "plan.json"
        if not path.exists():
            raise ShardError(folder, f"{folder}: no plan.json; give the round's folder inside a shard's --private-out")
        plans.append(read_plan(path))
    plan = plans[0]
    for folder, other in zip(folders[1:], plans[1:]):
        if other.key() != plan.key():
            raise ShardError(folder, f"{folder} holds round {other.round_id}, not {plan.round_id}")
    work = prepare_work(private, plan)
    shards: list[str] = []
    for folder in folders:
        for i in range(len(plan.envs)):
            src, dst = record_path(folder, i), record_path(work, i)
            if src.exists() and src.resolve() != dst.resolve():
                blob = src.read_bytes()
                if dst.exists() and dst.read_bytes() != blob:
                    raise ShardError(
                        folder, f"environment {plan.envs[i].label} is recorded differently in {folder} and {work}"
                    )
                atomic_write_bytes(dst, blob)
        for shard_file in sorted((folder / "shards").glob("*.json")):
            try:
                command = json.loads(shard_file.read_bytes().decode("utf-8"))["command"]
                if not isinstance(command, str):
                    raise TypeError(f"its command is a {type(command).__name__}")
            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                raise ShardError(
                    folder, f"{shard_file}: not a shard's note: {type(exc).__name__}: {str(exc)[:200]}"
                ) from None
            shards.append(command)
    return _finish(plan, work, out, private, command, sorted(set(shards)), [], stream)
