"""One game between two players, each an agent in a sandbox or a reference opponent.

`play_game` never raises for anything a player does: an agent's fault ends
the game as a forfeit by that side and is recorded in the GameRecord; the
illegal-move rules come from grader.common.policy. Outcomes are *not* sent to the
agents here: whether a game gives feedback is the round's decision
(`outcome_for` builds the message).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import numpy as np

from engine import COLORS, ENDINGS, Color, EnvSpec, Game, recorded_moves
from engine.opponents import EngineSeats, Meter, Opponent, play_seated_games, seated_opponent
from grader.common.faults import Fault, FaultKind
from grader.common.policy import Verdict
from grader.play.games import GameRecord, SideStats

LABELS = tuple(c.label for c in COLORS)
WINNER_LABELS = {1: "black", -1: "white", 0: None}  # a winner as engine.search.winner_of gives it for black


def env_info(spec: EnvSpec, interaction_budget: int) -> dict:
    """The `prepare` message for `spec`: geometry and budget, never the rules."""
    layout = spec.layout
    return {
        "rows": layout.rows,
        "cols": layout.cols,
        "obstacles": [list(c) for c in layout.obstacles],
        "interaction_budget": int(interaction_budget),
        "env_index": 0,
        "env_count": 1,
    }


def outcome_for(record: GameRecord, color: Color | str) -> dict:
    """The `observe_outcome` message for the agent that played `color` in `record`."""
    label = color if isinstance(color, str) else color.label
    return {
        "winner": record.winner or "draw",
        "black_discs": record.black_discs,
        "white_discs": record.white_discs,
        "your_color": label,
    }


class AgentSeat(Protocol):
    """A seat held by a submission over the wire: an AgentHandle or anything shaped like one.

    The other kind of seat is a reference opponent (`engine.opponents.Opponent`), which the
    engine plays itself and which has no conduct to judge. An agent seat is given the
    game's own view arrays (`engine.Game.view`, which the engine rewrites for every move) if
    it says `reads_views_in_place`, else a copy of them for every move.
    """

    label: str
    conduct: object

    def act(self, obs: np.ndarray, mask: np.ndarray) -> tuple[int | None, Fault | None]: ...

    def fail(self, fault: Fault) -> Fault: ...


def play_game(spec: EnvSpec, black, white, seed: int) -> GameRecord:
    """Play one game of `spec`; each player is an AgentSeat, a reference opponent
    (`engine.opponents.Opponent`) or its name (engine.OPPONENT_NAMES).

    A named opponent is seeded with `derive_seed(seed, colour)`. The same AgentSeat may hold
    both seats (self-play). The engine plays the reference opponents' moves and forced
    passes in its kernels and writes the agent's view, coming back here only for the
    agent's move.
    """
    table = _SPARE_TABLES.pop(spec.id, None)
    if table is None or (table.spec is not spec and table.spec != spec):
        table = Table(spec)
    record = table.play(black, white, seed)
    _SPARE_TABLES[spec.id] = table  # a game that raised leaves its table behind
    return record


# One idle table per environment: the games of a session follow each other, and a table
# laid out again for each would cost more than some games' moves.
_SPARE_TABLES: dict[str, Table] = {}


def is_engine_seat(seat) -> bool:
    """Whether `seat` is a reference player the engine plays (an Opponent, or its name)."""
    return isinstance(seat, (str, Opponent))


def play_engine_games(spec: EnvSpec, games: list[tuple]) -> list[GameRecord]:
    """The records `play_game` gives for `games`, each (black, white, seed) with both seats
    reference players (`is_engine_seat`), in order: the games of one seating (the same
    players' kinds, as Opponents sharing a meter or by name) are played in one kernel call.
    The thinking time goes to the Opponents' meters, as in `play_game`."""
    records: list[GameRecord | None] = [None] * len(games)
    groups: dict[tuple, list[int]] = {}
    seated = []
    spare: dict[tuple, Meter] = {}  # a named seat's meter, one per name and colour (nobody reads it, as in play_game)
    for i, (black, white, seed) in enumerate(games):
        pair = []
        for color, player in zip(COLORS, (black, white)):
            if isinstance(player, str):
                meter = spare.setdefault((player, color), Meter())
                player = seated_opponent(player, spec, seed, color.label, meter)
            pair.append(player)
        seated.append(pair)
        groups.setdefault(tuple((type(p), id(p.meter)) for p in pair), []).append(i)
    for indices in groups.values():
        out, moves = play_seated_games(spec, [seated[i][0] for i in indices], [seated[i][1] for i in indices])
        for i, (winner, plies, black_discs, white_discs, ending), row in zip(indices, out.tolist(), moves):
            black, white = seated[i]
            records[i] = GameRecord(
                env_id=spec.id,
                seed=games[i][2],
                players={"black": black.name, "white": white.name},
                moves=recorded_moves(row[:plies]),
                termination=ENDINGS[ending].value,
                winner=WINNER_LABELS[winner],
                black_discs=black_discs,
                white_discs=white_discs,
                forfeit=None,
                sides={"black": SideStats(), "white": SideStats()},
            )
    return [r for r in records if r is not None]  # every one is filled: each game is in one group


def play_games(spec: EnvSpec, games: list[tuple]) -> Iterable[GameRecord]:
    """The records of `games`, each (black, white, seed), in order, as `play_game` plays them:
    all at once (`play_engine_games`) when every seat is a reference player, else one game at
    a time as the caller iterates (one that stops, an agent having died, plays no more)."""
    if all(is_engine_seat(black) and is_engine_seat(white) for black, white, _ in games):
        return play_engine_games(spec, games)
    return (play_game(spec, black, white, seed) for black, white, seed in games)


class Table:
    """A game of `spec` to seat two players at, game after game: the game is laid out once and
    restarted in place (`engine.Game.restart`). `play` plays one game at it."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.game = Game(spec)
        self._used = False

    def play(self, black, white, seed: int) -> GameRecord:
        """Seat `black` and `white` (as `play_game` takes them) and play a game to its record."""
        spec, game = self.spec, self.game
        players: list[Any] = [
            seated_opponent(p, spec, seed, c.label) if isinstance(p, str) else p for c, p in zip(COLORS, (black, white))
        ]
        held = [p if isinstance(p, Opponent) else None for p in players]
        if self._used:
            game.restart()  # before the seats are packed: a player kept from the last game takes its stream out
        self._used = True
        seats = EngineSeats(spec, *held)
        copies = [not getattr(p, "reads_views_in_place", False) for p in players]
        sides = (SideStats(), SideStats())
        forfeit = self._play_on(players, copies, sides, seats, game.play_to_agent(seats))
        seats.settle()  # a game that ended outside the kernel (a forfeit) is settled here
        outcome = game.outcome()
        return GameRecord(
            env_id=spec.id,
            seed=seed,
            players={label: o.name if o is not None else p.label for label, p, o in zip(LABELS, players, held)},
            moves=game.moves,
            termination=outcome.termination.value,
            winner=None if outcome.winner is None else outcome.winner.label,
            black_discs=outcome.black_discs,
            white_discs=outcome.white_discs,
            forfeit=forfeit,
            sides=dict(zip(LABELS, sides)),
        )

    def _play_on(
        self, players: list, copies: list[bool], sides: tuple[SideStats, SideStats], seats: EngineSeats, turn: int
    ) -> str | None:
        """Play the game on from `turn` (the side to move, its view written; -1 when over) to
        its end; the colour that forfeited, if one did. The hot loop of a round: a legal move
        costs the agent's act and one kernel call, which refuses an illegal cell itself; each
        side's legal moves are told to its conduct in one count when it has to judge a move
        (or the game ends), as `judge` would have counted them one by one."""
        game = self.game
        obs, mask = game.view
        play = game.play_to_agent
        legal, told = [0, 0], [0, 0]  # legal moves per side, and how many its player's conduct has counted
        forfeit = None
        while turn >= 0:
            player = players[turn]
            if copies[turn]:
                action, fault = player.act(obs.copy(), mask.copy())
            else:
                action, fault = player.act(obs, mask)
            if fault is None:
                after = play(seats, action)
                if after != -2:
                    legal[turn] += 1
                    turn = after
                    continue
                _tell_legal(players, legal, told)
                side = sides[turn]
                verdict = player.conduct.judge(False, side.illegal)
                side.illegal += 1
                if verdict is Verdict.LOSE_TURN:
                    game.lose_turn()
                    turn = play(seats)
                    continue
                if verdict is Verdict.FORFEIT_GAME:
                    fault = Fault(FaultKind.FORFEIT, f"{side.illegal} illegal moves in one game")
                else:
                    fault = player.fail(player.conduct.never_legal_fault())
            else:
                sides[turn].acts += 1  # an act that failed: neither legal nor illegal
            sides[turn].faults.append(fault)
            color = COLORS[turn]
            game.forfeit(color)
            forfeit = color.label
            break
        for side, n in zip(sides, legal):
            side.acts += n + side.illegal
        _tell_legal(players, legal, told)
        return forfeit


def _tell_legal(players: list, legal: list[int], told: list[int]) -> None:
    """Count each side's legal moves not yet counted on its player's conduct."""
    for i in (0, 1):
        if legal[i] > told[i]:
            players[i].conduct.played_legal(legal[i] - told[i])
            told[i] = legal[i]
