"""arena envs --tier T: list a tier's environment specs with their ids (YAML or JSON)."""

from __future__ import annotations

import argparse

from engine import TIERS, tier_specs
from engine.tiers import GENERATOR_POOLS, POOL_VERSION
from grader.common.errors import OptionError
from grader.documents.specs import dump_specs


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("envs", help="list the environments of a tier", description=__doc__)
    p.add_argument("--tier", choices=TIERS, required=True)
    p.add_argument(
        "--seed",
        help="generation seed of ladder and final: as published in seeds/published.yaml "
        "(any text; a decimal integer is itself)",
    )
    p.add_argument("--count", type=int, help="how many environments (generated tiers: default 28)")
    p.add_argument(
        "--pool",
        type=int,
        default=POOL_VERSION,
        choices=sorted(GENERATOR_POOLS),
        help=f"generator pool of a generated tier: a round's provenance.config.pool (default {POOL_VERSION})",
    )
    p.add_argument("--format", choices=("yaml", "json"), default="yaml")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.tier in ("ladder", "final") and args.seed is None:
        raise OptionError("--seed", None, f"--tier {args.tier} is generated: give --seed")
    if args.count is not None and args.count < 1:
        raise OptionError("--count", args.count, f"--count must be at least 1, got {args.count}")
    seed = None
    if args.seed is not None:  # only a generated tier's listing pays for the seeds module's imports
        from grader.rounds.seeds import int_seed

        seed = int_seed(args.seed)
    print(dump_specs(tier_specs(args.tier, seed, args.count, pool=args.pool), args.format), end="")
    return 0
