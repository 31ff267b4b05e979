"""Round throughput by cores given, and what a pairing's turns cost: one environment of a field
of sandboxed agents, played on 1 core and then on every core this machine gives (2 here), each
with its pairings' agents taking turns (the one not to move frozen by its cgroup, as a round
plays them), without (the baseline: AgentHandle.take_turns off), and with turns by signals (as
on a host without the cgroup freezer, which is how turns were made before it), in the same run.

Prints, for each: the wall time, games per second, and the host's CPU time per move (the
round's own process, every thread of it, over every move played: the host's side of a move
against the agent's 6.4 ms pace on 8x8); the turns' figures beside the baseline's (target:
within 10% of it in games per second and host CPU a move) and what they cost a pairing move;
then the speed-up of the most cores over one with turns (target: at least 0.7 of the cores
given, on a quiet machine; the learning phase runs one session per core, the pairings one
pairing per core). Every run must give the same bytes (checked here too: the results depend
on neither the cores nor the turns). Each configuration is played REPEATS times, in turn
with the others, and its best run kept: what other work on the machine costs a run is noise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from grader.play.agent_handle import AgentHandle
from grader.play.session import parse_entrant
from grader.rounds.orchestrate import make_plan, run_round
from grader.rounds.records import read_record, record_path
from grader.sandbox import pinning
from grader.sandbox.cgroup import Cgroup
from grader.sandbox.local import bwrap_problem

ROOT = Path(__file__).resolve().parent.parent
ENTRANTS = 12
ENV = "random-2 most/standard"  # the smallest board (6x8)
BUDGET = 40
CHECKPOINTS = [0, 40]
GAMES = 4
PAIRING = 4
HOST_US_PER_MOVE = 10.0  # the design's figure for the host's side of a move
SPEEDUP_TARGET = 0.7  # of the cores given
TURNS_TARGET = 0.10  # the turns' figures against the baseline's
REPEATS = 2
# The pairings without turns (the baseline), with them by the cgroup freezer (as a round plays
# them), and with them by signals (a host without the freezer).
MODES = ("none", "freezer", "signals")


def _moves(out: Path, private: Path, round_id: str) -> tuple[int, int, int]:
    """(games, moves, pairing moves) of the round: its scored games and its kept self-play games."""
    lines = gzip.decompress((out / round_id / "games.jsonl.gz").read_bytes()).splitlines()[1:]
    scored = [json.loads(line) for line in lines]
    games = len(scored)
    moves = sum(len(g["moves"]) for g in scored)
    pairing = sum(len(g["moves"]) for g in scored if g["phase"] == "pairing")
    record = read_record(record_path(private / round_id, 0))
    for entrant in record.entrants.values():
        games += len(entrant.self_play_games)
        moves += sum(len(g["moves"]) for g in entrant.self_play_games)
    return games, moves, pairing


@dataclass
class Run:
    """One round's figures."""

    wall: float  # seconds
    games: int
    moves: int
    pairing_moves: int  # the moves that take turns
    host: float  # CPU seconds of this process
    body: bytes  # the scored games, as published

    @property
    def games_per_second(self) -> float:
        return self.games / self.wall

    @property
    def host_us(self) -> float:
        """Host CPU a move, in microseconds."""
        return self.host * 1e6 / self.moves


def _round(jobs: int, mode: str, field: list, folder: Path) -> Run:
    """Play the round on `jobs` cores, its pairings in `mode` (one of MODES)."""
    plan = make_plan("public", field, ENV, BUDGET, CHECKPOINTS, GAMES, PAIRING, "2026", None, "local")
    out, private = folder / "out", folder / "private"
    AgentHandle.take_turns = mode != "none"
    # "signals": as on a host whose cgroups have no freezer (a turn is a SIGSTOP or SIGCONT to
    # each process of the group's list, a pause passes of them: how every turn was made before).
    no_freezer = (
        mock.patch.object(Cgroup, "freeze", lambda self, frozen: False)
        if mode == "signals"
        else contextlib.nullcontext()
    )
    try:
        with no_freezer:
            cpu = resource.getrusage(resource.RUSAGE_SELF)
            start = time.perf_counter()
            with open(os.devnull, "w") as quiet:
                outcome = run_round(plan, out, private, jobs=jobs, command="bench", stream=quiet)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        AgentHandle.take_turns = True
    if outcome.status != "published":
        raise RuntimeError(f"the round was not published: {outcome.message}")
    host = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    games, moves, pairing = _moves(out, private, plan.round_id)
    body = gzip.decompress((out / plan.round_id / "games.jsonl.gz").read_bytes())
    shutil.rmtree(folder)
    return Run(wall, games, moves, pairing, host, body.replace(b"jobs", b""))


def _best(runs: list[Run]) -> Run:
    """The run least slowed by other work: the fastest, with the least host CPU a move of any."""
    fastest = min(runs, key=lambda r: r.wall)
    return dataclasses.replace(fastest, host=min(r.host_us for r in runs) * fastest.moves / 1e6)


def _line(label: str, run: Run) -> str:
    return (
        f"  {label}: {run.wall:.1f} s, {run.games} games, {run.games_per_second:.1f} games/s, "
        f"{run.moves / run.wall:.0f} moves/s; host CPU {run.host_us:.1f} us a move"
    )


def main() -> int:
    problem = bwrap_problem()
    if problem:
        print(f"bench_lanes: skipped, the local sandbox is not usable here ({problem})")
        return 0
    cores = len(pinning.available_cores())
    configs = [(jobs, mode) for jobs in sorted({1, cores}) for mode in MODES]
    runs: dict[tuple[int, str], list[Run]] = {config: [] for config in configs}
    with tempfile.TemporaryDirectory(prefix="bench-lanes-") as tmp:
        folder = Path(tmp)
        field = []
        for i in range(ENTRANTS):
            target = folder / "agents" / f"r{i:02d}"
            shutil.copytree(ROOT / "examples" / "random", target)
            field.append(parse_entrant(f"r{i:02d}={target}"))
        load = [pinning.load_average()]
        for repeat in range(REPEATS):
            # Every other pass in the reverse order: no configuration is always the first to run.
            for jobs, mode in configs if repeat % 2 == 0 else configs[::-1]:
                runs[jobs, mode].append(_round(jobs, mode, field, folder / f"run-{repeat}-{jobs}-{mode}"))
        load.append(pinning.load_average())
    best = {config: _best(found) for config, found in runs.items()}
    first = best[configs[0]]
    print(
        f"one environment ({ENV}, 6x8) of {ENTRANTS} agents in the local sandbox, budget {BUDGET}, "
        f"checkpoints {CHECKPOINTS} x {GAMES}, pairings of {PAIRING} ({first.pairing_moves} of {first.moves} moves "
        f"in pairings); best of {REPEATS} runs each; host load average {load[0]} to {load[1]} on {cores} cores "
        f"[design figure ~{HOST_US_PER_MOVE:g} us of host CPU a move, against the 6.4 ms pace on 8x8]:"
    )
    for jobs in sorted({1, cores}):
        plain = best[jobs, "none"]
        cores_text = f"{jobs} core{'s' if jobs > 1 else ''}"
        print(_line(f"{cores_text}, without turns", plain))
        for mode in MODES[1:]:
            turned = best[jobs, mode]
            speed = turned.games_per_second / plain.games_per_second - 1
            host = turned.host_us / plain.host_us - 1
            cost = (turned.host - plain.host) * 1e6 / turned.pairing_moves
            ok = speed >= -TURNS_TARGET and host <= TURNS_TARGET
            verdict = (
                f"[{'ok' if ok else 'MISS'}: target within {TURNS_TARGET:.0%} of the baseline]"
                if mode == "freezer"
                else "[a host without the freezer: what turns cost before it]"
            )
            print(
                _line(f"{cores_text}, turns by {mode}", turned)
                + f"\n    games/s {speed:+.1%}, host CPU a move {host:+.1%} ({cost:+.1f} us a pairing move)  {verdict}"
            )
    if cores > 1:
        one, most = best[1, "freezer"], best[cores, "freezer"]
        speedup = one.wall / most.wall
        ok = speedup >= SPEEDUP_TARGET * cores
        print(
            f"  speed-up on {cores} cores, with turns: {speedup:.2f}x  [{'ok' if ok else 'MISS'}: target at least "
            f"{SPEEDUP_TARGET * cores:.1f}x, {SPEEDUP_TARGET:g} of the cores; a loaded machine reads lower]"
        )
    else:
        print("  one core here: no speed-up to measure")
    bodies = {run.body for found in runs.values() for run in found}
    print(f"  the same games on every run (cores, turns): {'yes' if len(bodies) == 1 else 'NO'}")
    reference = runs[configs[0]][0].body.splitlines()
    for (jobs, mode), found in runs.items():
        for number, run in enumerate(found):
            if run.body != runs[configs[0]][0].body:
                print(
                    f"    {jobs} core(s), {mode}, run {number + 1}: {_first_difference(reference, run.body.splitlines())}"
                )
    return 0 if len(bodies) == 1 else 1


def _first_difference(reference: list[bytes], lines: list[bytes]) -> str:
    """What differs in the first game that differs from the reference run's (moves aside)."""
    for index, (mine, theirs) in enumerate(zip(reference, lines)):
        if mine != theirs:
            a, b = json.loads(mine), json.loads(theirs)
            fields = {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if k != "moves" and a.get(k) != b.get(k)}
            return f"line {index}: {fields or 'the moves'}"
    return f"{len(lines)} lines against {len(reference)}"


if __name__ == "__main__":
    sys.exit(main())
