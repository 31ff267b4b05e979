"""Play one environment of a round, start to finish, into an `EnvRecord`.

For each entrant, in a fresh session: prepare; the checkpoint games against the seeded
`random` at 0 games used (no outcome sent); budget self-play (the entrant holds both seats
and hears each outcome, with `your_color: "both"`), pausing for checkpoint games at every
checkpoint; freeze. Then every pair of live entrants plays its pairing games, no outcome
sent. An agent's fault ends its session (the environment scores zero for it, its pairings
are void for the others); an arena fault abandons the attempt and the environment is played
again from the start, up to the plan's retries.

A re-run that fails the same way again (the same entrant, the same kind of arena fault, except
a kill for memory below the agent's own limit: the host's shortage, never an agent's) is
that entrant's doing, not the arena's: the environment is played once more without it, and
it is charged an `agent_error` naming the repeated fault, so that no agent can hold back the
others' results (or the round) by failing the arena's way. That is decided only once a
control agent (`control_agent/`, known to be good) has just played in the same sandbox:
when it fails too, the arena's side is broken and the faults stay the arena's. Faults that
differ from attempt to attempt stay the arena's and, every attempt failing, hold the
environment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from engine import Color
from grader.common.faults import Fault, FaultKind
from grader.common.limits import Limits
from grader.common.policy import CHECKPOINT, PAIRING, SELF_PLAY
from grader.common.schedule import (
    CHECKPOINT_LABEL,
    CHECKPOINT_OPPONENT,
    checkpoint_color,
    checkpoint_seed,
    games_per_env,
    pairing_games,
    pairing_seed,
    pairs,
    self_play_seed,
    session_games,
)
from grader.documents.submission import load_submission
from grader.play.games import ScoredGame
from grader.play.match import env_info, play_games
from grader.play.session import Entrant, Session, open_session, python_entrant
from grader.rounds.lanes import Lanes, PairQueue, each_on_a_core, pairing_cores
from grader.rounds.plan import EnvEntry, RoundPlan
from grader.rounds.records import EntrantEnv, EnvRecord
from grader.sandbox import pinning

PROGRESS_EVERY = 50  # games between progress reports

# report(label, games finished since the last report (less than 0: an abandoned attempt's games
# taken back), what is being played, whether it is a notice the console must show at once)
Report = Callable[[str, int, str, bool], None]


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


# Arena faults never charged to an agent however often they repeat: `oom` is a kill below the
# agent's own memory limit (the kill at its limit is its `agent_error`), so the host ran short,
# and no agent inside its limits is to blame (docs/rules.md); such an environment is held.
NEVER_CHARGED = frozenset({FaultKind.OOM.value})


def charged_fault(faults: list[dict]) -> dict | None:
    """The entrant's own fault when the last two attempts failed the same way (the same
    entrant, the same kind, one an agent can be charged: not NEVER_CHARGED):
    {"entrant", "fault", "phase"}; None otherwise."""
    if len(faults) < 2:
        return None
    last, before = faults[-1], faults[-2]
    if (last["entrant"], last["kind"]) != (before["entrant"], before["kind"]) or last["kind"] in NEVER_CHARGED:
        return None
    attempts = sum(1 for f in faults if (f["entrant"], f["kind"]) == (last["entrant"], last["kind"]))
    detail = (
        f"the arena's {last['kind']} again on each of {attempts} attempts, by this agent alone, during "
        f"{last['phase']}: charged to the agent ({last['detail']})"
    )
    return {"entrant": last["entrant"], "fault": Fault(FaultKind.AGENT_ERROR, detail), "phase": last["phase"]}


CONTROL_AGENT = Path(__file__).resolve().parent.parent / "sandboxed" / "control_agent"


def control_entrant(kind: str) -> Entrant:
    """The known-good control agent, of the faulting entrant's kind (in the sandbox or in-process)."""
    if kind == "submission":
        return Entrant("arena-control", "submission", str(CONTROL_AGENT), load_submission(CONTROL_AGENT).digest)
    return python_entrant("arena-control", "grader.sandboxed.control_agent.agent:Agent")


def session_limits(plan: RoundPlan, entry: EnvEntry) -> Limits:
    """The limits of one entrant's session of `entry`: the plan's, with the CPU share, the wall
    ceiling and the output cap grown by the session's games in this field (grader.common.limits)."""
    layout = entry.spec.layout
    games = session_games(len(plan.field), plan.checkpoints, plan.games_per_checkpoint, plan.pairing_games, plan.budget)
    return plan.limits.for_session(layout.rows, layout.cols, games)


def arena_works(plan: RoundPlan, entry: EnvEntry, sandbox, kind: str) -> bool:
    """Whether the arena's side works now: the control agent launches, prepares and plays a
    game in this environment the way the faulting entrant would have."""
    session = open_session(control_entrant(kind), entry.spec, session_limits(plan, entry), sandbox)
    try:
        if session.alive:
            session.prepare(env_info(entry.spec, plan.budget))
        if session.alive:
            seed = checkpoint_seed(plan.seed, entry.spec.id, 0, 0)
            list(play_games(entry.spec, [(session.seat(Color.BLACK, seed), CHECKPOINT_OPPONENT, seed)]))
        return session.alive
    finally:
        session.close()


class _EnvPlay:
    """One attempt at one environment; `charged` is an entrant played without, its fault recorded.
    Its sessions play at once on `cores` (grader.rounds.lanes); its record is put together in
    the canonical order, whatever finished first."""

    def __init__(
        self,
        plan: RoundPlan,
        entry: EnvEntry,
        report: Report | None,
        sandbox,
        charged: dict | None = None,
        cores: list[int] | None = None,
    ):
        self.plan, self.entry, self.spec = plan, entry, entry.spec
        self.limits = session_limits(plan, entry)
        self.report: Report = report or (lambda *_: None)
        self.sandbox = sandbox
        self.charged = charged
        self.cores = cores or [pinning.core()]  # type: ignore[list-item]
        self.sessions: dict[str, Session] = {}
        self.entrants: dict[str, EntrantEnv] = {}
        self.core_of: dict[str, object] = {}  # the core each live sandbox is on
        self.checkpoint_games: dict[str, list[dict]] = {}
        self.pairing_games: dict[int, list[dict]] = {}
        self.pending = 0
        self.reported = 0  # games this attempt has reported
        self.lanes = Lanes()

    def _tick(self, what: str) -> None:
        self.lanes.check()  # another lane failed: stop between games
        with self.lanes.lock:
            self.pending += 1
            if self.pending >= PROGRESS_EVERY:
                self._report(self.pending, what)
                self.pending = 0

    def _report(self, count: int, what: str, notice: bool = False) -> None:
        self.reported += count
        self.report(self.entry.label, count, what, notice)

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
            # The console hears it at once, not only the results: the kind and the phase, the
            # arena's words only (a detail can quote the agent's bytes, which a log must not hold).
            self._report(0, f"{name}: fault {fault.kind.value} during {phase}", True)
        return False

    def run(self) -> tuple[dict[str, EntrantEnv], list[dict], dict[str, str]]:
        stderr: dict[str, str] = {}
        names = [entrant.name for entrant in self.plan.field]
        learners = []
        for entrant in self.plan.field:
            self.entrants[entrant.name] = status = EntrantEnv()
            if self.charged is not None and self.charged["entrant"] == entrant.name:
                status.fault = self.charged["fault"].to_dict()
                status.fault_phase = self.charged["phase"]
                continue  # no session: its pairings are void for the others
            learners.append(entrant)
        try:
            each_on_a_core(self.lanes, [c for c in self.cores], learners, self._learner)
            self.sessions = {n: self.sessions[n] for n in names if n in self.sessions}
            self._pairings()
            for name, session in self.sessions.items():
                if session.alive:  # the rules at the end of a session: the pace of each phase
                    session.end(self.spec)
                    self._check(name, "end of session")
        finally:
            for name in [n for n in names if n in self.sessions]:
                opened = self.sessions[name]
                stderr[name] = opened.stderr_text()
                opened.close()
                self.entrants[name].agent_seconds = round(opened.agent_seconds(), 6)
        # Every game of the environment is counted once it is done, those never played too (a
        # dead entrant's void pairings, the rest of a pairing cut short), so progress ends at its total.
        total = games_per_env(
            len(names),
            list(self.plan.checkpoints),
            self.plan.games_per_checkpoint,
            self.plan.pairing_games,
            self.plan.budget,
        )
        self._report(total - self.reported, "done")
        games = [g for n in names for g in self.checkpoint_games.get(n, [])]
        games += [g for i in sorted(self.pairing_games) for g in self.pairing_games[i]]
        return self.entrants, games, stderr

    def _learner(self, entrant: Entrant) -> None:
        """An entrant's session, on this lane's core: launch, prepare, learn, freeze; then it
        waits, stopped, for its pairings."""
        name = entrant.name
        session = open_session(entrant, self.spec, self.limits, self.sandbox)
        with self.lanes.lock:
            self.sessions[name] = session
            self.core_of[name] = pinning.core()
        if self._check(name, "launch"):
            session.prepare(env_info(self.spec, self.plan.budget))
        if self._check(name, "prepare") and self._learn(name):
            session.freeze()
            self._check(name, "freeze")
        session.idle()

    def _learn(self, name: str) -> bool:
        """Checkpoints and budget self-play; False when the entrant died on the way."""
        plan, session, status = self.plan, self.sessions[name], self.entrants[name]
        kept_games = self.checkpoint_games.setdefault(name, [])
        used = 0
        for checkpoint in plan.checkpoints:
            seeds = [self_play_seed(plan.seed, self.spec.id, name, i) for i in range(used, checkpoint)]
            session.enter_phase(SELF_PLAY)
            for game in session.self_play(self.spec, seeds):
                status.self_play.add(game.winner, game.plies)
                used += 1
                self._tick(f"{name} self-play {used}/{plan.budget}")
                kept = game.kept if session.learns else None
                if not self._check(name, f"self-play game {used}"):
                    if kept is not None:
                        status.self_play_games.append(replace(kept, outcome=None).to_doc())  # never sent
                    return False
                game.hear()
                if kept is not None:
                    status.self_play_games.append(kept.to_doc())
                if not self._check(name, f"outcome of self-play game {used}"):
                    return False
            games = []
            session.enter_phase(CHECKPOINT)
            for i in range(plan.games_per_checkpoint):
                seed, color = checkpoint_seed(plan.seed, self.spec.id, checkpoint, i), checkpoint_color(i)
                seat = session.seat(color, seed)
                games.append(
                    (seat, CHECKPOINT_OPPONENT, seed) if color is Color.BLACK else (CHECKPOINT_OPPONENT, seat, seed)
                )
            for i, record in enumerate(play_games(self.spec, games)):
                color = checkpoint_color(i)
                black, white = (name, CHECKPOINT_LABEL) if color is Color.BLACK else (CHECKPOINT_LABEL, name)
                kept_games.append(
                    ScoredGame.of(
                        record,
                        self.entry.label,
                        "checkpoint",
                        checkpoint,
                        i,
                        black,
                        white,
                        set() if session.alive else {color.label},
                    ).to_doc()
                )
                self._tick(f"{name} checkpoint {checkpoint}")
                if not self._check(name, f"checkpoint {checkpoint} game {i}"):
                    return False
        return True

    def _pairings(self) -> None:
        """Every pairing of the live entrants, as many at once as there are cores;
        each agent's own pairings in the canonical order (grader.rounds.lanes.PairQueue)."""
        order = pairs(self.plan.names)
        queue = PairQueue(order, lambda name: name in self.sessions and self.sessions[name].alive)

        def lane(_: int, cores: object) -> None:
            try:
                while True:
                    self.lanes.check()
                    index = queue.take()
                    if index is None:
                        return
                    try:
                        self._pairing(index, order[index], cores)  # type: ignore[arg-type]
                    finally:
                        queue.done(index)
            except BaseException:
                queue.stop()
                raise

        self.lanes.run(pairing_cores(self.cores), lane)

    def _pin(self, name: str, core: int | None) -> None:
        """Move `name`'s sandbox to `core` unless it is there (a docker move is an engine call)."""
        if core is not None and self.core_of.get(name) != core:
            self.sessions[name].pin(core)
            self.core_of[name] = core

    def _pairing(self, index: int, pair: tuple[str, str], cores: tuple[int | None, int | None]) -> None:
        a, b = pair
        sa, sb = self.sessions[a], self.sessions[b]
        if self.core_of.get(a) == cores[1] or self.core_of.get(b) == cores[0]:
            cores = (cores[1], cores[0])  # fewer moves (each is an engine call in docker)
        self._pin(a, cores[0])
        self._pin(b, cores[1])
        sa.resume()
        sb.resume()
        sa.enter_phase(PAIRING)
        sb.enter_phase(PAIRING)
        # Each side plays from its frozen state (docs/architecture.md, "A round"): neither the
        # pairings before this one nor the other entrants change its games.
        begun = []
        try:
            for name, other, session in ((a, b, sa), (b, a, sb)):
                session.begin_pairing()
                if not self._check(name, f"the start of the pairing with {other}"):
                    break
                begun.append((name, other, session))
            if len(begun) == 2:
                self.pairing_games[index] = self._pairing_games(a, b)
            for name, other, session in begun:
                if session.alive:
                    session.end_pairing()
                    self._check(name, f"the end of the pairing with {other}")
        finally:
            sa.idle()
            sb.idle()

    def _pairing_games(self, a: str, b: str) -> list[dict]:
        """The games of the pairing a v b, until either side dies."""
        plan = self.plan
        games = pairing_games(a, b, plan.pairing_games)
        seats = []
        played: list[dict] = []
        for game in games:
            seed = pairing_seed(plan.seed, self.spec.id, a, b, game.index)
            seats.append(
                (
                    self.sessions[game.black].seat(Color.BLACK, seed),
                    self.sessions[game.white].seat(Color.WHITE, seed),
                    seed,
                )
            )
        for game, record in zip(games, play_games(self.spec, seats)):
            black, white = self.sessions[game.black], self.sessions[game.white]
            dead = {c.label for c, s in ((Color.BLACK, black), (Color.WHITE, white)) if not s.alive}
            played.append(
                ScoredGame.of(
                    record, self.entry.label, "pairing", None, game.index, game.black, game.white, dead
                ).to_doc()
            )
            self._tick(f"pairing {a} v {b}")
            alive_a = self._check(a, f"pairing with {b} game {game.index}")
            alive_b = self._check(b, f"pairing with {a} game {game.index}")
            if not (alive_a and alive_b):
                break
        return played


def play_env(
    plan: RoundPlan, entry: EnvEntry, report: Report | None = None, sandbox=None, cores: list[int] | None = None
) -> EnvRecord | HeldEnv:
    """Play `entry` to a record, re-running it after an arena fault up to the plan's retries;
    its sessions play at once on `cores` (default: this thread's core, one thing at a time)."""
    faults: list[dict] = []
    charged = None
    attempt = 0
    while attempt <= plan.arena_retries or charged is not None:
        attempt += 1
        start = time.monotonic()
        env = _EnvPlay(plan, entry, report, sandbox, charged, cores)
        try:
            entrants, games, stderr = env.run()
        except ArenaFault as exc:
            faults.append(exc.record | {"attempt": attempt})
            # The attempt's games are played again: progress takes them back, and says why.
            env._report(
                -env.reported,
                f"attempt {attempt} abandoned: the arena's {exc.record['kind']} "
                f"({exc.record['entrant']}, {exc.record['phase']})",
                True,
            )
            # A fault with the entrant left out is another entrant's: no one is charged then.
            charged = charged_fault(faults) if charged is None else None
            if charged is not None:
                kind = next(e.kind for e in plan.field if e.name == charged["entrant"])
                if not arena_works(plan, entry, sandbox, kind):
                    charged = None  # the control failed too: the arena's side is broken
            continue
        if charged is not None:  # its faults were its own: they are not the arena's
            faults = [f for f in faults if f["entrant"] != charged["entrant"]]
        return EnvRecord(
            plan_key=plan.key(),
            index=entry.index,
            label=entry.label,
            env_id=entry.spec.id,
            attempts=attempt,
            arena_faults=faults,
            entrants=entrants,
            games=games,
            stderr=stderr,
            wall_seconds=round(time.monotonic() - start, 3),
            image=None if sandbox is None else sandbox.image(),
        )
    return HeldEnv(entry.index, entry.label, faults)
