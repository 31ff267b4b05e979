"""The adaptive example's curve on a few paper environments, quiet and under a CPU load.

    python -m benchmarks adaptive

Plays the same paper round twice, as a submission in the local sandbox (one worker, its
sandbox pinned to a core): once on a quiet machine, once beside two processes that spin on
the CPU the whole time. The environments are the paper's K = 0.6 condition on four layouts,
the condition whose curve moved with the host's load while the pace bounded only the mean
over all calls (time banked in cheap self-play was spent on the measured games). With the
pace judged per phase, the measured games run at the pace, and the load costs the agent
playouts, not the shape of its curve. Prints each environment's win rate at every
checkpoint in both runs, the agent's mean act() time in the checkpoint games and in
self-play against the board's pace, and the wins at 500 games beside the figures from before the per-phase pace.
Not a speed figure: the arena's promise that a result does not depend on the host.
"""

from __future__ import annotations

import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

from engine import tier_specs
from grader.common.limits import DEFAULT_LIMITS
from grader.common.policy import CHECKPOINT, SELF_PLAY
from grader.play.agent_handle import AgentHandle
from grader.play.session import parse_entrant
from grader.rounds.orchestrate import make_plan, run_round
from grader.rounds.records import read_record, record_path
from grader.sandbox.local import bwrap_problem

ROOT = Path(__file__).resolve().parent.parent
# The paper tier's K = 0.6 environments on the standard, no-corners, partial-c-squares and
# x-squares layouts (paper-21 .. paper-24), by id.
ENVS = ",".join(spec.id for spec in tier_specs("paper", None)[21:25])
BUDGET = 500
CHECKPOINTS = [0, 100, 500]
GAMES = 20
SEED = "bench-adaptive"
LOAD_PROCESSES = 2
# Before the per-phase pace, wins at 500 games over 80 games of the K = 0.6 condition (four
# environments x 20): 67 in the reference agent's published round, 50 and 51 when the same
# round was re-run on a loaded machine (the measurement before the per-phase pace).
BEFORE_QUIET, BEFORE_LOADED = 67, (50, 51)


def spin() -> None:
    """A CPU load: one process busy until it is killed."""
    while True:
        pass


def play(tmp: Path) -> dict[str, dict]:
    """One round of the adaptive example on ENVS: per environment, its curve (win rate per
    checkpoint) and the agent's mean act() time in the checkpoint games."""
    field = [parse_entrant(f"adaptive={ROOT / 'examples' / 'adaptive'}")]
    plan = make_plan("paper", field, ENVS, BUDGET, CHECKPOINTS, GAMES, GAMES, SEED, None, "local")
    phases: list[dict[str, float]] = []  # per session as it closes: mean act() ms per phase
    close = AgentHandle.close

    def kept(handle: AgentHandle) -> None:
        phases.append(
            {p: 1e3 * s.mean_seconds for p, s in handle.phase_stats.items() if s.count}
            | {p + " queued": 1e3 * s.queued_seconds / s.count for p, s in handle.phase_stats.items() if s.count}
        )
        close(handle)

    AgentHandle.close = kept  # type: ignore[method-assign]
    try:
        outcome = run_round(
            plan, tmp / "rounds", tmp / "private", jobs=1, command="bench", stream=open("/dev/null", "w")
        )
    finally:
        AgentHandle.close = close  # type: ignore[method-assign]
    assert outcome.status == "published", outcome
    out = {}
    for entry, act_ms in zip(plan.envs, phases):  # one worker: the sessions close in the plan's order
        record = read_record(record_path(tmp / "private" / plan.round_id, entry.index))
        wins: dict[int, int] = {}
        for game in record.games:
            if game["phase"] == CHECKPOINT:
                won = game["winner"] is not None and game[game["winner"]] == "adaptive"
                wins[game["checkpoint"]] = wins.get(game["checkpoint"], 0) + won
        out[entry.spec.name] = {
            "wins": wins,
            "act_ms": act_ms,
            "pace_ms": 1e3 * DEFAULT_LIMITS.pace_seconds(entry.spec.layout.rows, entry.spec.layout.cols),
            "fault": record.entrants["adaptive"].fault,
        }
    return out


def loaded(tmp: Path) -> tuple[dict[str, dict], float]:
    """The same round beside LOAD_PROCESSES spinning processes, and the load average after."""
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(LOAD_PROCESSES)]
    for p in spinners:
        p.start()
    try:
        result = play(tmp)
        with open("/proc/loadavg") as fh:
            load = float(fh.read().split()[0])
    finally:
        for p in spinners:
            p.kill()
            p.join()
    return result, load


def main() -> int:
    problem = bwrap_problem()
    if problem is not None:
        print(f"bench_adaptive: the local sandbox does not work here ({problem}); skipped", file=sys.stderr)
        return 2
    start = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="bench-adaptive-") as a,
        tempfile.TemporaryDirectory(prefix="bench-adaptive-") as b,
    ):
        quiet = play(Path(a))
        busy, load = loaded(Path(b))
    print(
        f"adaptive example, paper tier K = 0.6 (paper-21 .. paper-24), budget {BUDGET}, checkpoints {CHECKPOINTS} x {GAMES} "
        f"against random, round seed {SEED!r}, local sandbox, one worker pinned to a core"
    )
    print(f"  quiet, then beside {LOAD_PROCESSES} spinning processes (1-min load average {load:.1f} at the end)")
    head = " ".join(f"{f'win {c}':>8}" for c in CHECKPOINTS)
    print(
        f"  {'environment':<34} {'run':<6} {head} {'ms cpoint':>9} {'ms self':>9} {'pace':>6} {'queued':>7}  "
        "(mean act() per phase, as charged: the wall time less the run-queue delay; queued: the mean delay "
        "not charged in the checkpoint games)"
    )
    for name in quiet:
        for label, run in (("quiet", quiet), ("loaded", busy)):
            r = run[name]
            wins = " ".join(f"{r['wins'].get(c, 0):>5}/{GAMES}" for c in CHECKPOINTS)
            fault = f"  fault: {r['fault']['kind']}" if r["fault"] else ""
            acts = " ".join(f"{r['act_ms'].get(p, 0.0):>9.2f}" for p in (CHECKPOINT, SELF_PLAY))
            queued = r["act_ms"].get(CHECKPOINT + " queued", 0.0)
            print(f"  {name:<34} {label:<6} {wins} {acts} {r['pace_ms']:>6.1f} {queued:>7.2f}{fault}")
    verdicts = {
        label: [(name, (r["fault"] or {}).get("kind")) for name, r in run.items()]
        for label, run in (("quiet", quiet), ("loaded", busy))
    }
    print(
        f"  verdicts: {'the same' if verdicts['quiet'] == verdicts['loaded'] else 'DIFFERENT'} quiet and loaded "
        f"({', '.join(n + ': ' + (k or 'no fault') for n, k in verdicts['loaded'])})"
    )
    total = {
        label: sum(r["wins"].get(BUDGET, 0) for r in run.values())
        for label, run in (("quiet", quiet), ("loaded", busy))
    }
    n = GAMES * len(quiet)
    print(
        f"  wins at {BUDGET} games: quiet {total['quiet']}/{n}, loaded {total['loaded']}/{n} "
        f"(before the per-phase pace: {BEFORE_QUIET}/{n} published, {BEFORE_LOADED[0]}/{n} and "
        f"{BEFORE_LOADED[1]}/{n} re-run under load); {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
