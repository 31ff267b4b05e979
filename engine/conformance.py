"""A conformance harness shipped with the engine: random playouts checking invariants.

For every position of seeded random games it checks: disc total = 4 + placements; the
legal mask equals the legal cells; the observation's planes are disjoint, match the board
from the mover's side and carry the obstacles; a pass happens only with an empty mask;
the same seed gives the same game; and the move list replays to the same outcome.
"""

from __future__ import annotations

import numpy as np

from .game import Color, Game, replay
from .opponents import make_opponent
from .seeding import derive_seed
from .spec import EnvSpec


def play_checked(spec: EnvSpec, seed: int) -> tuple[list, list[str]]:
    """Play one random game checking every invariant; returns (moves, problems)."""
    problems: list[str] = []
    game = Game(spec)
    player = make_opponent("random", spec, seed)
    obstacles = np.zeros((spec.layout.rows, spec.layout.cols), dtype=np.float32)
    for r, c in spec.layout.obstacles:
        obstacles[r, c] = 1
    while not game.done:
        where = f"{spec.id} seed {seed} ply {game.plies}"
        black, white = game.counts()
        if black + white != 4 + game.placements:
            problems.append(f"{where}: {black + white} discs after {game.placements} placements")
        mask = game.legal_mask()
        if sorted(np.flatnonzero(mask).tolist()) != game.legal_cells():
            problems.append(f"{where}: legal mask and legal cells disagree")
        obs = game.observation()
        board = game.board()
        own_code, opp_code = (1, 2) if game.to_move is Color.BLACK else (2, 1)
        if obs.dtype != np.float32 or obs.shape != (3, spec.layout.rows, spec.layout.cols):
            problems.append(f"{where}: observation is {obs.dtype} {obs.shape}")
        elif not (
            np.array_equal(obs[0] == 1, board == own_code)
            and np.array_equal(obs[1] == 1, board == opp_code)
            and np.array_equal(obs[2], obstacles)
            and obs.sum(axis=0).max() <= 1
        ):
            problems.append(f"{where}: observation does not match the board")
        if mask.any():
            game.play(player.act(game))
        else:
            game.pass_turn()
    again = Game(spec)
    twin = make_opponent("random", spec, seed)
    while not again.done:
        again.play(twin.act(again)) if again.has_legal_move() else again.pass_turn()
    if again.moves != game.moves:
        problems.append(f"{spec.id} seed {seed}: the same seed played a different game")
    replayed = replay(spec, game.moves)
    if replayed.outcome() != game.outcome():
        problems.append(f"{spec.id} seed {seed}: the replay ended differently")
    return game.moves, problems


def check_environment(spec: EnvSpec, games: int = 3, root_seed: int = 0) -> list[str]:
    """Every problem found in `games` seeded random games of an environment."""
    problems: list[str] = []
    for i in range(games):
        problems += play_checked(spec, derive_seed("conformance", root_seed, spec.id, i))[1]
    return problems
