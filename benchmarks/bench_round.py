"""Round speed: where a round's time goes, and how a round grows with the field.

Prints, measured in the same run:
- a public round of 4 agents (random, greedy and minimax as reference players, and one
  submission playing random moves in the local sandbox, or in-process when there is no
  sandbox) on 8 environments at budget 200, one worker: wall time, games, and the share of
  the wall time spent in the arena rather than waiting on agents (target: under 10%).
  Waiting on agents is their moves and replies, and each sandboxed agent's own start (its
  interpreter, numpy and agent.py importing); the rest of each launch (the cgroup, bwrap's
  namespaces and mounts) is the arena's. That rest is measured in the same run: the median
  of the differences between starts of the same agent in the sandbox and outside any
  sandbox, made in turn (one start is too noisy on a shared machine to subtract from
  another). The share with the agents' start counted as the arena's is printed beside it,
  and the arena's time by part: the games with the fourth agent (less its replies and the
  reference players' thinking), the reference players' games among themselves (less their
  thinking), the environment records, publishing, sandboxes started and closed, the rest;
- from the per-game costs measured there, the cost of a full ladder round (28 environments,
  budget 2000, checkpoints 0/100/500/1000/2000 x 20 games, pairings of 20) for fields of 8,
  30, 100 and 300 (pairings grow as N^2), and the runners (2 workers each) needed to finish
  it overnight (10 hours), for agents as fast as the measured ones and for agents that use
  their whole act() pace on every move; and what one more environment adds (the cost is
  linear in the environments).
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import engine.opponents
import grader.rounds.orchestrate
import grader.rounds.workers
from benchmarks.bench_sandbox import sandbox_share, starts_in_turn
from grader.common.limits import DEFAULT_LIMITS
from grader.common.schedule import games_per_env
from grader.documents.submission import load_submission
from grader.play.agent_handle import AgentHandle
from grader.play.match import Table
from grader.play.session import parse_entrant, python_entrant
from grader.rounds.orchestrate import make_plan, run_round
from grader.rounds.records import read_record, record_path
from grader.sandbox.local import bwrap_problem

ENVS = "8"
BUDGET = 200
CHECKPOINTS = [0, 100, 200]
GAMES = 20
LADDER_ENVS = 28
LADDER_BUDGET = 2000
LADDER_CHECKPOINTS = [0, 100, 500, 1000, 2000]
FIELDS = (8, 30, 100, 300)
NIGHT_SECONDS = 10 * 3600
WORKERS_PER_RUNNER = 2
# Arena time per agent move of this round before the one turn path (grader/native_turns.py,
# removed), measured on this machine in turn with the one path: with the native turns, and
# with the same tree's Python path alone.
BEFORE_ONE_PATH_US_PER_MOVE = 14.0  # share 9.6-9.8%
BEFORE_PYTHON_US_PER_MOVE = 31.3  # share 16.1%
# Arena time per agent move at earlier stops, in runs of this bench on this machine: before a
# table was restarted in place and a legal move went to the kernel unjudged, 26.3-27.9 us (share
# 15.9%); then 22.0-25.6 us (12.2-14.1%); then 20.4 us in a quiet run (12.3%); at the last stop
# 18.1-22.0 us in four runs (12.0-13.3%).
LAST_STOP_US_PER_MOVE = "18.1-22.0"
# The sandbox's part of a start at the last stop, with the runtime's libraries bound one folder
# at a time: 8-12 ms in four runs (20-29 ms the stop before, with one bind per library).
LAST_STOP_SANDBOX_START_MS = "8-12"
PACE_BOARD = (10, 10)  # a middling generated board for the at-pace column
SPLIT_STARTS = 15  # pairs of starts in and out of the sandbox, in turn, to split a launch

AGENT = """
import numpy as np

class Agent:
    def prepare(self, env_info):
        self.rng = np.random.default_rng(env_info["rows"] * 100 + env_info["cols"])

    def act(self, obs, action_mask):
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def observe_outcome(self, outcome):
        pass
"""


class InProcessRandom:
    """The same agent, in-process, for hosts without a working sandbox."""

    def prepare(self, env_info):
        self.rng = np.random.default_rng(env_info["rows"] * 100 + env_info["cols"])

    def act(self, obs, action_mask):
        return int(self.rng.choice(np.flatnonzero(action_mask)))

    def observe_outcome(self, outcome):
        pass


@contextmanager
def timed_parts(seconds: dict[str, float], targets: list[tuple[object, str, str, Callable | None]]):
    """While in the block, the wall time spent in each function `getattr(owner, name)` of
    `targets` (owner, name, label, charged) is added to seconds[label], and, where `charged` is
    given, `charged(its result)` (thinking time the engine charged, in seconds) to
    seconds["charged"]; the functions are restored after."""
    saved = [(owner, name, getattr(owner, name)) for owner, name, _, _ in targets]

    def wrapped(function, label, charged):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                result = function(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - t
            if charged is not None:
                seconds["charged"] += charged(result)
            return result

        return timed

    for (owner, name, label, charged), (_, _, function) in zip(targets, saved):
        setattr(owner, name, wrapped(function, label, charged))
    try:
        yield
    finally:
        for owner, name, function in saved:
            setattr(owner, name, function)


def measure(tmp: Path) -> dict:
    folder = tmp / "sbx-random"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    sandboxed = bwrap_problem() is None
    if sandboxed:
        agent = parse_entrant(f"sbx-random={folder}")
    else:
        print("bench_round: no working sandbox here; the fourth agent runs in-process", file=sys.stderr)
        agent = python_entrant("inproc-random", "benchmarks.bench_round:InProcessRandom")
    field = [parse_entrant(n) for n in ("random", "greedy", "minimax")] + [agent]
    plan = make_plan("public", field, ENVS, BUDGET, CHECKPOINTS, GAMES, GAMES, "bench", None, "local")
    # Warm what a worker does once: the kernels' compile caches (one set per bitboard length,
    # so every environment of the round) and the sandbox's runtime binds (found with ldd).
    # The round then measures play, not set-up.
    warm = make_plan("public", field, ENVS, 2, [0, 2], 2, 2, "warm", None, "local")
    warm_start = time.perf_counter()
    run_round(warm, tmp / "warm", tmp / "warm-private", stream=open("/dev/null", "w"))
    warm_seconds = time.perf_counter() - warm_start
    launches: list[float] = []
    launch = AgentHandle.launch.__func__

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return launch(*args, **kwargs)
        finally:
            launches.append(time.perf_counter() - t)

    moves = []  # the sandboxed agent's acts, counted as each session closes
    acting: dict[AgentHandle, float] = {}  # the time the fourth agent took to reply to its acts, per session
    close = AgentHandle.close
    parts: dict[str, float] = defaultdict(float)

    def counted(handle):
        if handle.process is not None:
            moves.append(handle.act_stats.count)
        acting[handle] = handle.act_stats.total_seconds  # in a sandbox or not; a second close counts once
        t = time.perf_counter()
        try:
            return close(handle)
        finally:
            parts["closing sessions"] += time.perf_counter() - t

    AgentHandle.launch, AgentHandle.close = classmethod(timed), counted
    start = time.perf_counter()
    try:
        # engine.opponents._play_seated returns (out, moves, the ns charged to each side).
        with timed_parts(
            parts,
            [
                (Table, "play", "agent games", None),
                (engine.opponents, "_play_seated", "reference games", lambda r: sum(r[2]) * 1e-9),
                (grader.rounds.workers, "write_record", "records", None),
                (grader.rounds.orchestrate, "finished_records", "records", None),
                (grader.rounds.orchestrate, "publish", "publishing", None),
            ],
        ):
            outcome = run_round(
                plan, tmp / "rounds", tmp / "private", jobs=1, command="bench", stream=open("/dev/null", "w")
            )
    finally:
        AgentHandle.launch, AgentHandle.close = classmethod(launch), close
    wall = time.perf_counter() - start
    records = [read_record(record_path(tmp / "private" / plan.round_id, e.index)) for e in plan.envs]
    agent_seconds = sum(e.agent_seconds for r in records for e in r.entrants.values())
    reference = {e.name for e in field if e.kind == "reference"}
    thinking = sum(e.agent_seconds for r in records for name, e in r.entrants.items() if name in reference)
    # The arena's part of each: the agent games less the agent's replies and the reference
    # players' thinking in them (all of theirs but what the engine charged in its own games).
    parts["agent games"] -= sum(acting.values()) + thinking - parts["charged"]
    parts["reference games"] -= parts.pop("charged")
    scored = sum(len(r.games) for r in records)
    self_play = sum(e.self_play.games for r in records for e in r.entrants.values())
    plies = sum(e.self_play.plies for r in records for e in r.entrants.values()) / max(self_play, 1)
    assert outcome.status == "published"
    return {
        "wall": wall,
        "agent": agent_seconds,
        "games": scored + self_play,
        "plies": plies,
        "agent_moves": sum(moves),
        "sandboxed": sandboxed,
        "launches": launches,
        "warm": warm_seconds,
        "parts": dict(parts),
        "sandbox_start": sandbox_start(load_submission(folder)) if sandboxed else 0.0,
    }


def sandbox_start(submission) -> float:
    """The sandbox's part of a launch (the arena's: cgroup, bwrap's namespaces and mounts),
    before the agent's own start (its interpreter, numpy and agent.py importing, until it
    says ready), which is what the same agent takes to start outside any sandbox."""
    return sandbox_share(*starts_in_turn(submission, SPLIT_STARTS))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-round-") as tmp:
        m = measure(Path(tmp))
    n = len(m["launches"])
    setup = min(sum(m["launches"]), n * m["sandbox_start"])  # the sandbox's part of each launch
    startup = sum(m["launches"]) - setup  # the rest is the agents' own start
    arena = m["wall"] - m["agent"] - startup
    share = arena / m["wall"]
    per_game = m["wall"] / m["games"]
    arena_per_game = arena / m["games"]
    print(
        f"round: 4 agents ({'one sandboxed' if m['sandboxed'] else 'all in-process'}), {ENVS} public environments, "
        f"budget {BUDGET}, checkpoints {CHECKPOINTS} x {GAMES}, pairings of {GAMES}"
    )
    print(
        f"  wall {m['wall']:.1f} s for {m['games']} games ({per_game * 1e3:.2f} ms a game, {m['plies']:.0f} plies), "
        f"after a warm-up round of {m['warm']:.1f} s (the kernels' compile caches, the sandbox's binds: not counted)"
    )
    n = max(n, 1)
    print(
        f"  waiting on agents: {m['agent']:.1f} s for moves and replies, {startup:.1f} s for {len(m['launches'])} "
        f"agents to start ({startup / n * 1e3:.0f} ms each: interpreter, numpy, agent.py)"
    )
    print(
        f"  the sandboxed agent's moves: {m['agent_moves']:,}; arena time per agent move {arena / m['agent_moves'] * 1e6:.1f} us "
        f"(before the one turn path: {BEFORE_ONE_PATH_US_PER_MOVE} us with the native turns, "
        f"{BEFORE_PYTHON_US_PER_MOVE} us on the Python path beside them; at the last stop {LAST_STOP_US_PER_MOVE} us)"
    )
    print(
        f"  in the arena {arena:.1f} s = {share:.1%} of the wall time (target < 10%: "
        f"{'met' if share < 0.10 else 'NOT met'}), of which {setup:.2f} s starting sandboxes "
        f"({setup / n * 1e3:.0f} ms each: cgroup, bwrap's namespaces and mounts; {LAST_STOP_SANDBOX_START_MS} ms "
        f"at the last stop); counting the agents' "
        f"start as the arena's too: {(arena + startup) / m['wall']:.1%}"
    )
    parts = {label: m["parts"].get(label, 0.0) for label in ("agent games", "reference games", "records", "publishing")}
    parts |= {"starting sandboxes": setup, "closing sessions": m["parts"].get("closing sessions", 0.0)}
    parts["the rest (scheduling, outcomes, checks)"] = arena - sum(parts.values())
    agent_games = parts["agent games"]
    print(
        "  the arena's time by part: "
        + ", ".join(f"{label} {seconds:.2f} s" for label, seconds in parts.items())
        + f" (the agent games: {agent_games / max(m['agent_moves'], 1) * 1e6:.1f} us a move with their set-up)"
    )
    pace = DEFAULT_LIMITS.pace_seconds(*PACE_BOARD)
    at_pace = arena_per_game + m["plies"] * pace  # every move of a game an agent's, at the full pace
    print(
        f"full ladder round ({LADDER_ENVS} environments, budget {LADDER_BUDGET}, pairings of {GAMES}); "
        f"runners of {WORKERS_PER_RUNNER} workers to finish in {NIGHT_SECONDS // 3600} h:"
    )
    print(
        f"  {'field':>5} {'games':>13} {'pairing share':>13} {'CPU h (measured)':>17} {'runners':>7} "
        f"{'CPU h (at pace)':>16} {'runners':>7}"
    )
    for n in FIELDS:
        per_env = games_per_env(n, LADDER_CHECKPOINTS, GAMES, GAMES, LADDER_BUDGET)
        pairing = n * (n - 1) // 2 * GAMES
        total = per_env * LADDER_ENVS
        fast, slow = total * per_game, total * at_pace
        runners = [max(1, math.ceil(s / (NIGHT_SECONDS * WORKERS_PER_RUNNER))) for s in (fast, slow)]
        print(
            f"  {n:>5} {total:>13,} {pairing / per_env:>13.0%} {fast / 3600:>17.1f} {runners[0]:>7} "
            f"{slow / 3600:>16.1f} {runners[1]:>7}"
        )
    per_env = [games_per_env(n, LADDER_CHECKPOINTS, GAMES, GAMES, LADDER_BUDGET) for n in FIELDS]
    print(
        "  linear in the environments: one more environment costs "
        + ", ".join(f"{g * per_game / 3600:.2f}" for g in per_env)
        + " CPU h measured and "
        + ", ".join(f"{g * at_pace / 3600:.1f}" for g in per_env)
        + " at pace, for fields of "
        + ", ".join(str(n) for n in FIELDS)
    )
    print(
        f"  arena {arena_per_game * 1e3:.2f} ms a game (engine stepping, checkpoint opponent, records); beside agents "
        f"that use their pace it would be {arena_per_game / at_pace:.1%} of the wall time"
    )
    print(
        f"  (at pace: {pace * 1e3:.0f} ms per act on a {PACE_BOARD[0]}x{PACE_BOARD[1]} board, "
        f"{m['plies']:.0f} moves a game; a worker also holds all N sandboxes of an environment alive during its pairings)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
