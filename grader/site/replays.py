"""Replays: a scored game's moves drawn as a board after each one (static SVG frames).

Drawing a board after a move needs the capture rule applied, so this module replays the move
list through the engine (`engine.Game`): the only place the site runs the engine on a game.
It recomputes no result; the game record's own result is what the page prints.

Redaction (docs/rules.md §8): in a round whose tier is `final`, or whose public record withholds
the rules, a replay never shows the rules, the environment's identity, the winner or the disc
counts, and it stops at the board before the last move (the final board would give the counts
away). Public projections of such rounds carry no moves, so in practice the site has none of
their replays; the redaction holds whatever a record carries.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from engine.layout import cell_name
from grader.play.games import ScoredGame
from grader.site import svg
from grader.site.model import rules_text


@dataclass
class Frame:
    """One board: after move `ply` (0: the opening), with its caption."""

    ply: int
    caption: str
    board: Markup


@dataclass
class Replay:
    """What a replay page shows of one game."""

    number: int
    env: str
    env_name: str | None
    rules: str | None
    phase: str
    checkpoint: int | None
    index: int
    black: str
    white: str
    result: str | None
    frames: list[Frame]
    note: str | None = None


def redacted(tier: str, profile: str) -> bool:
    """True where a replay must not show rules, winner or disc counts."""
    return tier == "final" or profile not in ("open", "full")


def replayable(game: dict, spec: dict | None) -> bool:
    """Whether a stored game can be replayed: its environment's spec and its moves are published."""
    return spec is not None and isinstance(game.get("moves"), list)  # read for every game of a page: no parse


def _name(who: str) -> str:
    return "random (the checkpoint opponent)" if who == "@random" else who


def build_replay(number: int, doc: dict, env: dict, tier: str, profile: str) -> Replay:
    """Replay one stored game's moves into frames (the engine applies each move)."""
    from engine import LOST, PASS, Game, parse_spec

    game = ScoredGame.from_doc(doc)
    if game.moves is None:
        raise ValueError(f"game {number} carries no moves: it has no replay")
    hide = redacted(tier, profile)
    spec = env["spec"]
    layout = spec["layout"]
    rows, cols, obstacles = layout["rows"], layout["cols"], layout["obstacles"]
    position = Game(parse_spec(spec))
    frames = [
        Frame(
            0,
            "the opening; black to move",
            svg.board(rows, cols, obstacles, _cells(position), None, "opening", "frame", coords=True),
        )
    ]
    moves = game.moves
    shown = moves[:-1] if hide and moves else moves
    for ply, move in enumerate(shown, 1):
        mover = position.to_move.label
        if move == PASS:
            position.pass_turn()
            text, mark = f"{mover} passes", None
        elif move == LOST:
            position.lose_turn()
            text, mark = f"{mover} played an illegal move and lost the turn", None
        else:
            position.play(move)
            text, mark = f"{mover} plays {cell_name(move, cols)}", move
        if not hide:
            black, white = position.counts()
            text += f" (black {black}, white {white})"
        frames.append(
            Frame(
                ply,
                f"{ply}. {text}",
                svg.board(rows, cols, obstacles, _cells(position), mark, f"after move {ply}", "frame", coords=True),
            )
        )
    note = None
    if hide:
        note = (
            "A game of a round whose rules are withheld: the boards before the last move are shown; the "
            "rules, the result and the disc counts are not."
        )
        result = None
    else:
        result = _result(game)
    return Replay(
        number,
        game.env,
        None if hide else env.get("name"),
        None if hide else rules_text(spec["rules"]),
        game.phase,
        game.checkpoint,
        game.index,
        _name(game.black),
        _name(game.white),
        result,
        frames,
        note,
    )


def _cells(position) -> list[int]:
    return [int(v) for v in position.board().ravel()]


def _result(game: ScoredGame) -> str:
    """The result, the winner's count first and both colours named: "white (greedy) won 44 to 20
    (black 20, white 44)"."""
    winner = game.winner
    head = "a draw" if winner is None else f"{winner} ({_name(game.seat(winner))}) won"
    if game.black_discs is not None:
        black, white = game.black_discs, game.white_discs
        first, second = (white, black) if winner == "white" else (black, white)
        head += f"{',' if winner is None else ''} {first} to {second} (black {black}, white {white})"
    ending = game.ending
    if ending and ending != "no_moves":
        head += f"; ended by {ending}"
    return head
