"""Budget self-play: an agent's games against itself, each followed by its outcome (design §5).

A round plays hundreds of these per agent and environment, and sends each outcome before the
next game. For a sandboxed agent that answers in microseconds, the arena's own Python around
each game (setting it up, building its record and the outcome message, the outcome call)
would cost more than the agent; so a live sandboxed agent's self-play is played by
`native_turns.self_play_turns`, game after game with their outcomes, and comes back here only
when something needs Python: a game it stopped in is played on by `Table.play_on` (as
`play_game` would), an outcome call it stopped in is finished by
`AgentHandle.resume_outcome` (as `observe_outcome` would).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterator

import numpy as np

from engine import Color, EnvSpec
from grader.match import WINNER_LABELS, SideStats, Table, outcome_for, play_game
from grader.native_turns import DONE, HEARD, HEARING

SELF_PLAY_COLOR = "both"  # `your_color` of a self-play outcome: the agent held both seats


@dataclass
class SelfPlayGame:
    """One self-play game: its winner ("black", "white" or None for a draw), its plies, and
    `hear()`, which delivers its outcome to the agent (a fault lands on the agent's session;
    nothing is left to do when the outcome was heard natively)."""

    winner: str | None
    plies: int
    hear: Callable[[], object]


def heard() -> None:
    """`hear` of a game whose outcome needs no sending: heard natively, or not sent at all
    (a reference player learns nothing)."""


def played_in_python(spec: EnvSpec, seat: Callable[[Color, int], object], observe: Callable[[dict], object],
                     seeds: list[int]) -> Iterator[SelfPlayGame]:
    """The games seeded `seeds` with `seat(color, seed)` on both sides, one `play_game` each;
    `hear` sends the outcome through `observe`. Lazy: a caller that stops iterating (the
    agent died) plays no further game."""
    for seed in seeds:
        record = play_game(spec, seat(Color.BLACK, seed), seat(Color.WHITE, seed), seed)
        yield SelfPlayGame(record.winner, len(record.moves), partial(observe, outcome_for(record, SELF_PLAY_COLOR)))


def played_natively(spec: EnvSpec, handle, seeds: list[int]) -> Iterator[SelfPlayGame]:
    """The self-play of an `AgentHandle`: for one that plays natively (`plays_natively`) game
    after game in one kernel call, their outcomes heard there too; for any other, as
    `played_in_python` plays it. Each game is the one `played_in_python` gives, and the
    agent's accounting (acts, calls, conduct) the same."""
    if not (seeds and handle.plays_natively):
        yield from played_in_python(spec, lambda color, seed: handle, handle.observe_outcome, seeds)
        return
    if handle.frozen:
        raise ValueError("observe_outcome after freeze: no feedback once an agent is frozen")
    table = Table(spec, handle, handle, seeds[0])
    driver = table.driver
    results = np.zeros((len(seeds), 4), dtype=np.int64)
    done = 0
    while done < len(seeds):
        if not handle.plays_natively:  # dead, or no sandbox any more: the Python path says so
            yield from played_in_python(spec, lambda color, seed: handle, handle.observe_outcome, seeds[done:])
            return
        status = driver.self_play(results[done:])
        finished = driver.games
        quiet = finished - 1 if status in (HEARING, HEARD) else finished  # heard, nothing left to do
        for winner, plies in results[done:done + quiet, :2].tolist():
            yield SelfPlayGame(WINNER_LABELS[winner], plies, heard)
        done += quiet
        if status == DONE:
            continue
        if status in (HEARING, HEARD):
            winner, plies = results[done, :2].tolist()
            hear = handle.after_native_outcome if status == HEARD else \
                partial(handle.resume_outcome, *driver.outcome_call())
            yield SelfPlayGame(WINNER_LABELS[winner], plies, hear)
        else:  # stopped in a game (ASK, RESUME, ACTED): Python plays it on
            table.seed, table.sides = seeds[done], (SideStats(), SideStats())
            turn, act = driver.resume_game(status, table.sides)
            record = table.play_on(turn, act)
            yield SelfPlayGame(record.winner, len(record.moves),
                               partial(handle.observe_outcome, outcome_for(record, SELF_PLAY_COLOR)))
        done += 1
