"""Round throughput by cores given: one environment of a field of sandboxed agents, played on
1 core and then on every core this machine gives (2 here), in the same run.

Prints, for each: the wall time, games per second, and the host's CPU time per move (the
round's own process, every thread of it, over every move played: the host's side of a move
against the agent's 6.4 ms pace on 8x8); then the speed-up of the most cores over one
(target: at least 0.7 of the cores given, on a quiet machine; the learning phase runs one
session per core, the pairings one pairing per core). Both runs must give the same
bytes (checked here too: the results do not depend on the cores).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader.rounds.orchestrate import make_plan, run_round
from grader.rounds.records import read_record, record_path
from grader.sandbox import pinning
from grader.sandbox.local import bwrap_problem
from grader.session import parse_entrant

ROOT = Path(__file__).resolve().parent.parent
ENTRANTS = 12
ENV = "random-2 most/standard"  # the smallest board (6x8)
BUDGET = 40
CHECKPOINTS = [0, 40]
GAMES = 4
PAIRING = 4
HOST_US_PER_MOVE = 10.0  # the design's figure for the host's side of a move
SPEEDUP_TARGET = 0.7  # of the cores given


def _moves(out: Path, private: Path, round_id: str) -> tuple[int, int]:
    """(games, moves) of the round: its scored games and its kept self-play games."""
    lines = gzip.decompress((out / round_id / "games.jsonl.gz").read_bytes()).splitlines()[1:]
    scored = [json.loads(line) for line in lines]
    games = len(scored)
    moves = sum(len(g["moves"]) for g in scored)
    record = read_record(record_path(private / round_id, 0))
    for entrant in record.entrants.values():
        games += len(entrant.self_play_games)
        moves += sum(len(g["moves"]) for g in entrant.self_play_games)
    return games, moves


def _round(jobs: int, field: list, folder: Path) -> tuple[float, int, int, float, bytes]:
    """Play the round on `jobs` cores: (wall s, games, moves, host CPU s, games' bytes)."""
    plan = make_plan("public", field, ENV, BUDGET, CHECKPOINTS, GAMES, PAIRING, "2026", None, "local")
    out, private = folder / "out", folder / "private"
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        outcome = run_round(plan, out, private, jobs=jobs, command="bench", stream=quiet)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    if outcome.status != "published":
        raise RuntimeError(f"the round was not published: {outcome.message}")
    host = (after.ru_utime - cpu.ru_utime) + (after.ru_stime - cpu.ru_stime)
    games, moves = _moves(out, private, plan.round_id)
    body = gzip.decompress((out / plan.round_id / "games.jsonl.gz").read_bytes())
    return wall, games, moves, host, body


def main() -> int:
    problem = bwrap_problem()
    if problem:
        print(f"bench_lanes: skipped, the local sandbox is not usable here ({problem})")
        return 0
    cores = len(pinning.available_cores())
    with tempfile.TemporaryDirectory(prefix="bench-lanes-") as tmp:
        folder = Path(tmp)
        field = []
        for i in range(ENTRANTS):
            target = folder / "agents" / f"r{i:02d}"
            shutil.copytree(ROOT / "examples" / "random", target)
            field.append(parse_entrant(f"r{i:02d}={target}"))
        results = {}
        load = [pinning.load_average()]
        for jobs in sorted({1, cores}):
            results[jobs] = _round(jobs, field, folder / f"jobs{jobs}")
        load.append(pinning.load_average())
    print(f"one environment ({ENV}, 6x8) of {ENTRANTS} agents in the local sandbox, budget {BUDGET}, "
          f"checkpoints {CHECKPOINTS} x {GAMES}, pairings of {PAIRING}; host load average {load[0]} to {load[1]} "
          f"on {cores} cores:")
    for jobs, (wall, games, moves, host, _) in results.items():
        print(f"  {jobs} core{'s' if jobs > 1 else ''}: {wall:.1f} s, {games} games, {games / wall:.1f} games/s, "
              f"{moves / wall:.0f} moves/s; host CPU {host * 1e6 / moves:.1f} us a move "
              f"[design figure ~{HOST_US_PER_MOVE:g} us, against the 6.4 ms pace on 8x8]")
    if cores > 1:
        one, most = results[1], results[cores]
        speedup = one[0] / most[0]
        ok = speedup >= SPEEDUP_TARGET * cores
        print(f"  speed-up on {cores} cores: {speedup:.2f}x  [{'ok' if ok else 'MISS'}: target at least "
              f"{SPEEDUP_TARGET * cores:.1f}x, {SPEEDUP_TARGET:g} of the cores; a loaded machine reads lower]")
        same = one[4].replace(b"jobs", b"") == most[4].replace(b"jobs", b"")
        print(f"  the same games on 1 and {cores} cores: {'yes' if same else 'NO'}")
        if not same:
            return 1
    else:
        print("  one core here: no speed-up to measure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
