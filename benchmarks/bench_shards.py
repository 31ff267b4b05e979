"""Shards by predicted cost, and the arena's own host time per move that the plan adds.

    python -m benchmarks shards

Prints:
- the capacity plan of a 120-entrant final (the generated tier of sample seed 1, its board
  shapes 6 to 12 a side) on 4, 8, 16 and 28 runners of 16 cores: each plan's slowest runner,
  its bound (the larger of the floor, the CPU time at the pace over every core, and the largest
  environment, which one runner plays whole) and their ratio (target: at most 1.10 each);
- the host's CPU time per move of a round of example agents in the local sandbox on one core
  (the round's own process, every thread, over every move played), beside the figure the plan
  reads (`grader.rounds.capacity.HOST_SECONDS_PER_MOVE`), the two in the same run.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import tempfile
from pathlib import Path

from grader.common.limits import DEFAULT_LIMITS
from grader.common.schedule import default_checkpoints
from grader.play.session import parse_entrant
from grader.rounds.capacity import HOST_SECONDS_PER_MOVE, SHARD_RATIO_TARGET, Machines, boards_for, plan_capacity
from grader.rounds.orchestrate import make_plan, run_round
from grader.rounds.records import read_record, record_path
from grader.sandbox.local import bwrap_problem

ROOT = Path(__file__).resolve().parent.parent
ENTRANTS = 120
RUNNERS = (4, 8, 16, 28)
CORES = 16
SAMPLE_TIER_SEED = "1"
# The round the host time is measured on: a field of the example random agent, the smallest board.
HOST_FIELD = 8
HOST_ENV = "random-2 most/standard"


def shard_ratios() -> list[tuple[int, float, float, float]]:
    """(runners, plan hours, bound hours, ratio) of the sample final on each of RUNNERS."""
    boards, _ = boards_for("final", None, SAMPLE_TIER_SEED)
    out = []
    for runners in RUNNERS:
        plan = plan_capacity(
            boards, ENTRANTS, default_checkpoints(2000), 20, 20, 2000, Machines(runners, CORES), DEFAULT_LIMITS
        )
        out.append((runners, plan.wall_hours, plan.bound_hours, plan.ratio))
    return out


def host_seconds_per_move(folder: Path) -> tuple[float, int]:
    """(host CPU seconds per move, moves) of a small round of example agents on one core."""
    field = []
    for i in range(HOST_FIELD):
        target = folder / "agents" / f"r{i:02d}"
        shutil.copytree(ROOT / "examples" / "random", target)
        field.append(parse_entrant(f"r{i:02d}={target}"))
    plan = make_plan("public", field, HOST_ENV, 40, [0, 40], 4, 4, "2026", None, "local")
    out, private = folder / "out", folder / "private"
    before = resource.getrusage(resource.RUSAGE_SELF)
    with open(os.devnull, "w") as quiet:
        outcome = run_round(plan, out, private, jobs=1, command="bench", stream=quiet)
    after = resource.getrusage(resource.RUSAGE_SELF)
    if outcome.status != "published":
        raise RuntimeError(f"the round was not published: {outcome.message}")
    host = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = gzip.decompress((out / plan.round_id / "games.jsonl.gz").read_bytes()).splitlines()[1:]
    moves = sum(len(json.loads(line)["moves"]) for line in lines)
    record = read_record(record_path(private / plan.round_id, 0))
    moves += sum(len(g["moves"]) for e in record.entrants.values() for g in e.self_play_games)
    return host / moves, moves


def main() -> int:
    status = 0
    print(
        f"shards by predicted cost: a final of {ENTRANTS} entrants (tier seed {SAMPLE_TIER_SEED}), runners of "
        f"{CORES} cores, at the pace with {HOST_SECONDS_PER_MOVE * 1e6:.0f} us of host time a move:"
    )
    for runners, hours, bound, ratio in shard_ratios():
        ok = ratio <= SHARD_RATIO_TARGET
        status |= 0 if ok else 1
        print(
            f"  {runners:2d} runners: plan {hours:6.2f} h, bound {bound:6.2f} h, ratio {ratio:.3f} "
            f"[target <= {SHARD_RATIO_TARGET:.2f}: {'ok' if ok else 'OVER'}]"
        )
    problem = bwrap_problem()
    if problem:
        print(f"host time per move: skipped, the local sandbox is not usable here ({problem})")
        return status
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as tmp:
        per_move, moves = host_seconds_per_move(Path(tmp))
    print(
        f"host time per move: {per_move * 1e6:.1f} us measured over {moves:,} moves (a round of {HOST_FIELD} "
        f"example agents, local sandbox, one core); the plan reads {HOST_SECONDS_PER_MOVE * 1e6:.0f} us "
        "(grader/rounds/capacity.py HOST_SECONDS_PER_MOVE)"
    )
    return status
