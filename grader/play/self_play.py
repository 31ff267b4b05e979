"""Budget self-play: an agent's games against itself, each followed by its outcome."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from engine import Color, EnvSpec
from grader.play.games import KeptGame
from grader.play.match import outcome_for, play_game

SELF_PLAY_COLOR = "both"  # `your_color` of a self-play outcome: the agent held both seats


@dataclass
class SelfPlayGame:
    """One self-play game: its winner ("black", "white" or None for a draw), its plies, and
    `hear()`, which delivers its outcome to the agent (a fault lands on the agent's session).
    A game an agent played also carries what is kept of it for the audit (`kept`); a
    reference player's carries nothing."""

    winner: str | None
    plies: int
    hear: Callable[[], object]
    kept: KeptGame | None = None


def heard() -> None:
    """`hear` of a game whose outcome is not sent (a reference player learns nothing)."""


def play_self_play(
    spec: EnvSpec, seat: Callable[[Color, int], object], observe: Callable[[dict], object], seeds: list[int]
) -> Iterator[SelfPlayGame]:
    """The games seeded `seeds` with `seat(color, seed)` on both sides, one `play_game` each;
    `hear` sends the outcome through `observe`. Lazy: a caller that stops iterating (the
    agent died) plays no further game."""
    for seed in seeds:
        record = play_game(spec, seat(Color.BLACK, seed), seat(Color.WHITE, seed), seed)
        outcome = outcome_for(record, SELF_PLAY_COLOR)
        yield SelfPlayGame(record.winner, len(record.moves), partial(observe, outcome), KeptGame.of(record, outcome))
