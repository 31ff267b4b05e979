"""The game engine of the arena: layouts, rules, tiers, kernels and reference opponents.

Imports only numpy and numba: nothing else of the arena's (specs reach it as plain data). The names below load
their module on first use, so a tool that needs only specs or tiers (the site's
environments page, most CLI commands) does not pay for importing numba.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "game": (
        "COLORS",
        "ENDINGS",
        "LOST",
        "PASS",
        "Color",
        "Game",
        "IllegalMoveError",
        "Outcome",
        "ReplayError",
        "Termination",
        "recorded_moves",
        "replay",
    ),
    "layout": ("Layout", "make_layout"),
    "opponents": ("OPPONENT_NAMES", "make_opponent"),
    "perft": ("perft", "perft_divide"),
    "rules": ("Capture", "Rules", "Win"),
    "seeding": ("derive_seed",),
    "simulate": ("PlayStats", "random_stats"),
    "spec": ("EnvSpec", "SpecError", "parse_spec"),
    "tiers": ("TIERS", "TierError", "generate_tier", "paper_tier", "public_tier", "tier_specs"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = list(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
