"""arena simulate SPEC --games N --seed S: play reference opponents; a JSON summary on the last line."""

from __future__ import annotations

import argparse
import json
import sys

from engine import OPPONENT_NAMES, Game, derive_seed, random_stats
from engine.simulate import PlayStats
from grader.common.errors import OptionError
from grader.documents.specs import resolve_spec
from grader.play.match import play_game


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="play games between reference opponents", description=__doc__)
    p.add_argument("spec", help="spec file, or a public/paper environment id or name")
    p.add_argument("--games", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--black", choices=OPPONENT_NAMES, default="random")
    p.add_argument("--white", choices=OPPONENT_NAMES, default="random")
    p.set_defaults(func=run)


def play_stats(spec, games: int, seed: int, black: str, white: str) -> PlayStats:
    """Random-vs-random runs in the batch kernel; other pairings game by game."""
    if black == white == "random":
        return random_stats(spec, games, seed)
    counts = {"black": 0, "white": 0, "draw": 0}
    plies = discs = 0
    for i in range(games):
        record = play_game(spec, black, white, derive_seed(seed, i))
        counts[record.winner or "draw"] += 1
        plies += len(record.moves)
        discs += record.black_discs + record.white_discs
        if games >= 20 and (i + 1) % max(1, games // 10) == 0:
            print(f"simulate: {i + 1}/{games} games", file=sys.stderr)
    first = Game(spec).has_legal_move()
    return PlayStats(
        games,
        counts["black"],
        counts["white"],
        counts["draw"],
        plies / games,
        discs / games / spec.layout.playable_cells,
        first,
    )


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise OptionError("--games", args.games, f"--games must be at least 1, got {args.games}")
    spec = resolve_spec(args.spec)
    stats = play_stats(spec, args.games, args.seed, args.black, args.white)
    summary = {
        "env": spec.id,
        "black": args.black,
        "white": args.white,
        "games": stats.games,
        "black_wins": stats.black_wins,
        "white_wins": stats.white_wins,
        "draws": stats.draws,
        "mean_plies": round(stats.mean_plies, 3),
        "mean_fill": round(stats.mean_fill, 4),
    }
    print(json.dumps(summary))
    return 0
