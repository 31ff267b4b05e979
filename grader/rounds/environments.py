"""A round's environments: a tier's specs, all, the first N, or those named."""

from __future__ import annotations

from engine import EnvSpec, tier_specs
from engine.tiers import POOL_VERSION
from grader.common.errors import OptionError
from grader.rounds.seeds import int_seed


def select_envs(tier: str, envs: str | None, tier_seed: str | None, pool: int = POOL_VERSION) -> list[EnvSpec]:
    """The tier's environments, all or `N` first or those named (ids or names, comma-separated);
    a generated tier's drawn from generator pool `pool`."""
    seed = None if tier_seed is None else int_seed(tier_seed)
    if envs is None:
        return tier_specs(tier, seed, pool=pool)
    if envs.isdigit():
        count = int(envs)
        if count < 1:
            raise OptionError("--envs", envs, f"--envs {envs}: at least one environment")
        specs = tier_specs(tier, seed, count, pool=pool)
        if len(specs) < count:
            raise OptionError("--envs", envs, f"--envs {count}: the {tier} tier has only {len(specs)} environments")
        return specs
    every = tier_specs(tier, seed, pool=pool)
    chosen = []
    for item in (p.strip() for p in envs.split(",")):
        match = [s for s in every if item in (s.id, s.name)]
        if not match:
            raise OptionError("--envs", item, f"--envs: {item!r} is not the id or name of a {tier} environment")
        if match[0] in chosen:
            raise OptionError("--envs", item, f"--envs: {item!r} is listed twice")
        chosen.append(match[0])
    return chosen
