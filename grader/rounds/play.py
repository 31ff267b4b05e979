"""Play one environment of a round (design §5), start to finish, into an `EnvRecord`.

For each entrant, in a fresh session: prepare; the checkpoint games against the seeded
`random` at 0 games used (no outcome sent); budget self-play (the entrant holds both seats
and hears each outcome, with `your_color: "both"`), pausing for checkpoint games at every
checkpoint; freeze. Then every pair of live entrants plays its pairing games, no outcome
sent. An agent's fault ends its session (the environment scores zero for it, its pairings
are void for the others); an arena fault abandons the attempt and the environment is played
again from the start, up to the plan's retries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from engine import Color
from grader.faults import Fault
from grader.match import GameRecord, env_info, play_games
from grader.rounds.plan import EnvEntry, RoundPlan
from grader.rounds.records import EntrantEnv, EnvRecord
from grader.schedule import (CHECKPOINT_LABEL, CHECKPOINT_OPPONENT, checkpoint_color, checkpoint_seed,
                             pairing_games, pairing_seed, pairs, self_play_seed)
from grader.session import Session, open_session

PROGRESS_EVERY = 50  # games between progress reports

# report(label, games finished since the last report, what is being played)
Report = Callable[[str, int, str], None]


class ArenaFault(Exception):
    """The arena failed an entrant's session (launch, pipe, memory, infrastructure)."""

    def __init__(self, name: str, fault: Fault, phase: str):
        super().__init__(f"{name}: {fault} during {phase}")
        self.record = {"entrant": name, "kind": fault.kind.value, "detail": fault.detail, "phase": phase}


@dataclass
class HeldEnv:
    """An environment that the arena failed on every attempt: not scored, holds the round."""

    index: int
    label: str
    arena_faults: list[dict]


def ending_of(record: GameRecord, dead: set[str]) -> str:
    """How a game ended, for the endings histogram: `fault` when the side that forfeited
    has a dead session (it crashed, timed out, ...), `forfeit` for a game lost on illegal moves."""
    if record.forfeit is None:
        return record.termination
    return "fault" if record.forfeit in dead else "forfeit"


def game_doc(label: str, phase: str, checkpoint: int | None, index: int, record: GameRecord,
             black: str, white: str, dead_colors: set[str]) -> dict:
    """A scored game as the round stores it (full form; disclosure projects it)."""
    return {"env": label, "phase": phase, "checkpoint": checkpoint, "index": index, "seed": record.seed,
            "black": black, "white": white, "moves": record.moves, "forfeit": record.forfeit,
            "termination": record.termination, "winner": record.winner, "black_discs": record.black_discs,
            "white_discs": record.white_discs, "ending": ending_of(record, dead_colors)}


class _EnvPlay:
    """One attempt at one environment."""

    def __init__(self, plan: RoundPlan, entry: EnvEntry, report: Report | None, sandbox):
        self.plan, self.entry, self.spec = plan, entry, entry.spec
        self.report = report or (lambda *_: None)
        self.sandbox = sandbox
        self.sessions: dict[str, Session] = {}
        self.entrants: dict[str, EntrantEnv] = {}
        self.games: list[dict] = []
        self.pending = 0

    def _tick(self, what: str) -> None:
        self.pending += 1
        if self.pending >= PROGRESS_EVERY:
            self.report(self.entry.label, self.pending, what)
            self.pending = 0

    def _check(self, name: str, phase: str) -> bool:
        """True while `name` is alive. Its first agent fault is recorded; an arena fault raises."""
        session, status = self.sessions[name], self.entrants[name]
        fault = session.fault
        if fault is None:
            return True
        if not fault.is_agents_fault:
            raise ArenaFault(name, fault, phase)
        if status.fault is None:
            status.fault, status.fault_phase = fault.to_dict(), phase
        return False

    def run(self) -> tuple[dict[str, EntrantEnv], list[dict], dict[str, str]]:
        info = env_info(self.spec, self.plan.budget)
        stderr: dict[str, str] = {}
        try:
            for entrant in self.plan.field:
                name = entrant.name
                self.entrants[name] = EntrantEnv()
                self.sessions[name] = session = open_session(entrant, self.spec, self.plan.limits, self.sandbox)
                if self._check(name, "launch"):
                    session.prepare(info)
                if self._check(name, "prepare") and self._learn(name):
                    session.freeze()
                    self._check(name, "freeze")
                session.idle()
            self._pairings()
        finally:
            for name, session in self.sessions.items():
                stderr[name] = session.stderr_text()
                session.close()
                self.entrants[name].agent_seconds = round(session.agent_seconds(), 6)
        if self.pending:
            self.report(self.entry.label, self.pending, "done")
        return self.entrants, self.games, stderr

    def _learn(self, name: str) -> bool:
        """Checkpoints and budget self-play; False when the entrant died on the way."""
        plan, session, status = self.plan, self.sessions[name], self.entrants[name]
        used = 0
        for checkpoint in plan.checkpoints:
            seeds = [self_play_seed(plan.seed, self.spec.id, name, i) for i in range(used, checkpoint)]
            for game in session.self_play(self.spec, seeds):
                status.self_play.add(game.winner, game.plies)
                used += 1
                self._tick(f"{name} self-play {used}/{plan.budget}")
                if not self._check(name, f"self-play game {used}"):
                    return False
                game.hear()
                if not self._check(name, f"outcome of self-play game {used}"):
                    return False
            games = []
            for i in range(plan.games_per_checkpoint):
                seed, color = checkpoint_seed(plan.seed, self.spec.id, checkpoint, i), checkpoint_color(i)
                seat = session.seat(color, seed)
                games.append((seat, CHECKPOINT_OPPONENT, seed) if color is Color.BLACK
                             else (CHECKPOINT_OPPONENT, seat, seed))
            for i, record in enumerate(play_games(self.spec, games)):
                color = checkpoint_color(i)
                black, white = (name, CHECKPOINT_LABEL) if color is Color.BLACK else (CHECKPOINT_LABEL, name)
                self.games.append(game_doc(self.entry.label, "checkpoint", checkpoint, i, record, black, white,
                                           set() if session.alive else {color.label}))
                self._tick(f"{name} checkpoint {checkpoint}")
                if not self._check(name, f"checkpoint {checkpoint} game {i}"):
                    return False
        return True

    def _pairings(self) -> None:
        plan = self.plan
        for a, b in pairs(plan.names):
            sa, sb = self.sessions[a], self.sessions[b]
            if not (sa.alive and sb.alive):
                continue  # void for the survivor, zero for the dead one: nothing to play
            sa.resume()
            sb.resume()
            games = pairing_games(a, b, plan.pairing_games)
            seats = []
            for game in games:
                seed = pairing_seed(plan.seed, self.spec.id, a, b, game.index)
                seats.append((self.sessions[game.black].seat(Color.BLACK, seed),
                              self.sessions[game.white].seat(Color.WHITE, seed), seed))
            for game, record in zip(games, play_games(self.spec, seats)):
                black, white = self.sessions[game.black], self.sessions[game.white]
                dead = {c.label for c, s in ((Color.BLACK, black), (Color.WHITE, white)) if not s.alive}
                self.games.append(game_doc(self.entry.label, "pairing", None, game.index, record,
                                           game.black, game.white, dead))
                self._tick(f"pairing {a} v {b}")
                alive_a = self._check(a, f"pairing with {b} game {game.index}")
                alive_b = self._check(b, f"pairing with {a} game {game.index}")
                if not (alive_a and alive_b):
                    break
            sa.idle()
            sb.idle()


def play_env(plan: RoundPlan, entry: EnvEntry, report: Report | None = None, sandbox=None) -> EnvRecord | HeldEnv:
    """Play `entry` to a record, re-running it after an arena fault up to the plan's retries."""
    faults: list[dict] = []
    for attempt in range(1, plan.arena_retries + 2):
        start = time.monotonic()
        try:
            entrants, games, stderr = _EnvPlay(plan, entry, report, sandbox).run()
        except ArenaFault as exc:
            faults.append(exc.record | {"attempt": attempt})
            continue
        return EnvRecord(plan_key=plan.key(), index=entry.index, label=entry.label, env_id=entry.spec.id,
                         attempts=attempt, arena_faults=faults, entrants=entrants, games=games, stderr=stderr,
                         wall_seconds=round(time.monotonic() - start, 3),
                         image=None if sandbox is None else sandbox.image())
    return HeldEnv(entry.index, entry.label, faults)
