"""The game engine of the arena: layouts, rules, tiers, kernels and reference opponents.

Imports only numpy, numba and pyyaml: nothing else of the arena's.
"""

from .game import (LOST, PASS, Color, Game, IllegalMoveError, Outcome, ReplayError, Termination,
                   replay)
from .layout import Layout, make_layout
from .opponents import OPPONENT_NAMES, make_opponent
from .perft import perft, perft_divide
from .rules import Capture, Rules, Win
from .seeding import derive_seed
from .simulate import PlayStats, random_stats
from .spec import EnvSpec, SpecError, dump_specs, load_spec, parse_spec
from .tiers import TIERS, generate_tier, paper_tier, public_tier, tier_specs

__all__ = [
    "LOST", "PASS", "Color", "Game", "IllegalMoveError", "Outcome", "ReplayError", "Termination",
    "replay", "Layout", "make_layout", "OPPONENT_NAMES", "make_opponent", "perft", "perft_divide",
    "Capture", "Rules", "Win", "derive_seed", "PlayStats", "random_stats", "EnvSpec", "SpecError",
    "dump_specs", "load_spec", "parse_spec", "TIERS", "generate_tier", "paper_tier", "public_tier",
    "tier_specs",
]
