"""arena capacity: a round's capacity plan on the runners given, before the round starts.

Prints the games, the CPU hours at the pace (the most the rules let agents take) and at the
field's measured speed (its smoke tests', from a field document), the live sandboxes of a
runner and their memory, and the wall time on RUNNERS runners of CORES cores each (the model:
grader/rounds/capacity.py). With --job-hours, a round that cannot end inside that limit on
its slowest runner is refused (exit 1), saying how many runners it needs: `round.yml` runs
this before it takes the field. The field's size is --entrants, or the approved accounts with
a submission in --candidates (every one that could pass its smoke test), or the entrants of
--field (a field document `arena field` wrote, which carries their measured speed and peak
memory). The environments are shared over the runners by their predicted cost, as `arena round
--shard` shares them, and the plan prints its distance from the bound no schedule beats. A
round whose frozen agents cannot stay alive together in a runner's memory (--memory-gib, this
host's by default) is refused (exit 1), naming the memory it needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.cli.main import INPUT_FAILED
from grader.common.errors import OptionError
from grader.common.limits import DEFAULT_LIMITS, GIB
from grader.common.schedule import (
    CANONICAL_BUDGET,
    DEFAULT_GAMES_PER_CHECKPOINT,
    DEFAULT_PAIRING_GAMES,
    parse_checkpoints,
)
from grader.play.field import REGISTRY, SUBMISSIONS, read_field_measures
from grader.rounds.capacity import Machines, boards_for, host_memory, measured_fraction, plan_capacity
from grader.sandbox import ISOLATING
from grader.season.accounts import load_registry


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "capacity",
        help="a round's capacity plan on the runners given",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tier", required=True, choices=("public", "paper", "ladder", "final"))
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--entrants", type=int, help="the field's size")
    size.add_argument(
        "--candidates", type=Path, metavar="REPO", help="a clone of main: its approved accounts with a submission"
    )
    size.add_argument("--field", type=Path, metavar="FIELD.yaml", help="a field document from `arena field`")
    p.add_argument("--envs", help="N (the tier's first N) or ids/names separated by commas (default: the whole tier)")
    p.add_argument("--budget", type=int, default=CANONICAL_BUDGET)
    p.add_argument("--checkpoints")
    p.add_argument("--games-per-checkpoint", type=int, default=DEFAULT_GAMES_PER_CHECKPOINT)
    p.add_argument("--pairing-games", type=int, default=DEFAULT_PAIRING_GAMES)
    p.add_argument(
        "--tier-seed",
        help="generation seed of a ladder or final tier (or ARENA_TIER_SEED); without "
        "it every environment is planned as the largest board",
    )
    p.add_argument("--sandbox", choices=ISOLATING, default="docker", help="whose live memory (default docker)")
    p.add_argument("--runners", type=int, required=True, help="runners the environments are shared over")
    p.add_argument("--cores", type=int, required=True, help="cores of each runner")
    p.add_argument("--job-hours", type=float, help="a runner's job limit: refuse a round that does not end inside it")
    p.add_argument(
        "--memory-gib",
        type=float,
        help="each runner's memory in GiB (default: this host's): refuse a round whose live sandboxes do not fit in it",
    )
    p.set_defaults(func=run)


def candidates(repo: Path) -> int:
    """The approved accounts of `repo` with a submission folder: the most a field can hold."""
    registry = load_registry(repo / REGISTRY)
    return sum((repo / SUBMISSIONS / account.handle).is_dir() for account in registry.approved())


def run(args: argparse.Namespace) -> int:
    speeds: list[float | None] = []
    memory: list[int | None] | None = None
    if args.field is not None:
        measures = read_field_measures(args.field)
        speeds, memory = [m.pace_fraction for m in measures], [m.memory_bytes for m in measures]
        entrants = len(measures)
    elif args.candidates is not None:
        entrants = candidates(args.candidates)
    else:
        entrants = args.entrants
    if entrants < 1:
        raise OptionError("--entrants", entrants, f"the field has {entrants} entrants: no round to plan")
    tier_seed = args.tier_seed or (
        os.environ.get("ARENA_TIER_SEED") or None if args.tier in ("ladder", "final") else None
    )
    boards, known = boards_for(args.tier, args.envs, tier_seed)
    if args.memory_gib is not None and not args.memory_gib > 0:
        raise OptionError("--memory-gib", args.memory_gib, f"--memory-gib must be more than 0, got {args.memory_gib:g}")
    runner_memory = round(args.memory_gib * GIB) if args.memory_gib is not None else host_memory()
    plan = plan_capacity(
        boards,
        entrants,
        parse_checkpoints(args.checkpoints, args.budget),
        args.games_per_checkpoint,
        args.pairing_games,
        args.budget,
        Machines(args.runners, args.cores, args.job_hours, runner_memory),
        DEFAULT_LIMITS,
        args.sandbox,
        measured_fraction(speeds),
        shapes_known=known,
        memory=memory,
    )
    print("\n".join(plan.lines()))
    if (refusal := plan.memory_refusal()) is not None:
        print(f"arena capacity: refused: {refusal}", file=sys.stderr)
        return INPUT_FAILED
    if not plan.fits:
        need = (
            f"it needs {plan.runners_needed} runners of {args.cores} cores"
            if plan.runners_needed is not None
            else f"no number of runners of {args.cores} cores is enough"
        )
        print(
            f"arena capacity: refused: the round takes {plan.wall_hours:,.1f} h on its slowest runner, over the "
            f"job limit of {args.job_hours:g} h: {need}",
            file=sys.stderr,
        )
        return INPUT_FAILED
    return 0
