"""Perft: leaves of the game tree at a depth (a forced pass is a ply; a finished game counts 1)."""

from __future__ import annotations

from . import bitboard as bb
from .game import Game, geometry, turn_limit_arg
from .spec import EnvSpec


class DepthError(ValueError):
    """A perft depth the count cannot take; `depth` is what was asked for."""

    def __init__(self, depth: int, message: str):
        super().__init__(message)
        self.depth = depth


def perft(spec: EnvSpec, depth: int) -> int:
    """Leaves at `depth` plies from the opening."""
    if depth < 0:
        raise DepthError(depth, f"depth must be >= 0, got {depth}")
    geo = geometry(spec.layout)
    return int(
        bb.perft(
            geo.black0,
            geo.white0,
            0,
            depth,
            geo.masks,
            geo.shifts,
            geo.nxt,
            spec.rules.capture.code,
            turn_limit_arg(spec.rules),
        )
    )


def perft_divide(spec: EnvSpec, depth: int) -> dict[str, int]:
    """Perft below each first move ("pass" when black must pass): printed when a count is wrong."""
    if depth < 1:
        raise DepthError(depth, "divide needs depth >= 1")
    root = Game(spec)
    out: dict[str, int] = {}
    if root.done:
        return {}
    geo = geometry(spec.layout)
    cap, limit = spec.rules.capture.code, turn_limit_arg(spec.rules)
    first: list[int | str] = list(root.legal_cells()) or ["pass"]
    for move in first:
        game = Game(spec)
        if isinstance(move, str):
            game.pass_turn()
        else:
            game.play(move)
        own, opp = game.sides()
        if game.done:
            out[str(move)] = 1
            continue
        out[str(move)] = int(bb.perft(own, opp, game.placements, depth - 1, geo.masks, geo.shifts, geo.nxt, cap, limit))
    return out
