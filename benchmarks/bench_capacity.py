"""What a round needs of its runners: the live memory of an entrant, and the capacity plan of
a 120-entrant final.

    python -m benchmarks capacity

Prints:
- the live memory of one entrant's sandbox in each backend: copies of the example agents
  started side by side, each after prepare() and a few acts, measured on the host (the
  sandbox's cgroup: its resident memory apart from the page cache; in docker, the engine's
  shim process of each container beside it), against the figures the capacity plan uses
  (`grader.rounds.capacity.LIVE_MEMORY_PER_ENTRANT`, docs/runners.md);
- the capacity plan of a 120-entrant final at the pace on 28 runners of 16 cores: with every
  board 8x8 (the 6.4 ms pace the arena's round time was first measured at; target: under 4
  hours, where one core a runner took more than 34), and as the final tier is drawn from a
  sample seed (its board shapes vary; the largest sets the time), with the floor of finals
  drawn from other seeds (their CPU hours over all 448 cores).

A docker engine is used where one answers (DOCKER_HOST); the docker figures are left out,
said, where none does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from engine import tier_specs
from grader.common.limits import DEFAULT_LIMITS, MIB
from grader.common.schedule import default_checkpoints
from grader.rounds.capacity import LIVE_MEMORY_PER_ENTRANT, Board, Machines, plan_capacity

ROOT = Path(__file__).resolve().parent.parent
COPIES = 4
EXAMPLES = ("random", "adaptive")
SAMPLE_TIER_SEED = 1
FLOOR_SEEDS = (2, 3, 4, 5)
INFO = {"rows": 8, "cols": 8, "obstacles": [], "interaction_budget": 0, "env_index": 0, "env_count": 1}


def _cgroup_bytes(cgroup) -> int:
    """The group's resident memory apart from the page cache (which files share)."""
    path = cgroup.dirs["memory"]
    stats = {}
    for line in (path / "memory.stat").read_text().splitlines():
        key, _, value = line.partition(" ")
        stats[key] = int(value)
    if "total_rss" in stats:  # cgroup v1
        return stats["total_rss"] + stats.get("total_mapped_file", 0)
    return stats.get("anon", 0) + stats.get("file_mapped", 0) + stats.get("kernel", 0)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def live_memory(sandbox, example: str) -> float:
    """Mean bytes per live sandbox of `example`, COPIES of them side by side."""
    from grader.documents.submission import load_submission
    from grader.play.agent_handle import AgentHandle

    handles = [
        AgentHandle.launch(sandbox, load_submission(ROOT / "examples" / example), DEFAULT_LIMITS) for _ in range(COPIES)
    ]
    try:
        obs, mask = np.zeros((3, 8, 8), np.float32), np.zeros(64, np.int8)
        mask[[19, 26, 37, 44]] = 1
        sizes = []
        for handle in handles:
            assert handle.prepare(INFO) is None, handle.fault
            for _ in range(20):
                assert handle.act(obs, mask)[1] is None, handle.fault
            process = handle.transport.process  # type: ignore[union-attr]
            size = _cgroup_bytes(process.cgroup)
            if sandbox.name == "docker":
                size += _rss(_parent(process.pid))  # the engine's shim, one per container, outside its cgroup
            sizes.append(size)
        return sum(sizes) / len(sizes)
    finally:
        for handle in handles:
            handle.close()


def docker_sandbox():
    """The docker sandbox where an engine answers and the image is there, else None (said)."""
    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import DockerSandbox

    sandbox = DockerSandbox()
    try:
        sandbox.image_record()
    except LaunchError as exc:
        print(f"  docker: not measured ({exc})")
        return None
    return sandbox


def final_plan(boards: list[Board]) -> list[str]:
    return plan_capacity(
        boards, 120, default_checkpoints(2000), 20, 20, 2000, Machines(28, 16, 72.0), DEFAULT_LIMITS, "docker"
    ).lines()


def main() -> int:
    from grader.sandbox.local import LocalSandbox, bwrap_problem

    print(f"live memory of one entrant's sandbox ({COPIES} copies side by side, after prepare() and 20 acts):")
    backends = [] if bwrap_problem() else [LocalSandbox()]
    docker = docker_sandbox()
    backends += [docker] if docker is not None else []
    for sandbox in backends:
        figures = ", ".join(f"{example} {live_memory(sandbox, example) / MIB:.1f} MiB" for example in EXAMPLES)
        print(f"  {sandbox.name:<6}: {figures} (the plan uses {LIVE_MEMORY_PER_ENTRANT[sandbox.name] / MIB:.0f} MiB)")
    print("\n120-entrant final at the pace on 28 runners of 16 cores, every board 8x8 (target: under 4 h):")
    print("\n".join("  " + line for line in final_plan([Board(f"final-{i:02d}", 8, 8, 0) for i in range(1, 29)])))
    print("\nthe same, one core a runner (every game one after another, as before; it took more than 34 h):")
    one_core = plan_capacity(
        [Board(f"final-{i:02d}", 8, 8, 0) for i in range(1, 29)],
        120,
        default_checkpoints(2000),
        20,
        20,
        2000,
        Machines(28, 1, 72.0),
        DEFAULT_LIMITS,
        "docker",
    )
    print(f"  wall time {one_core.wall_hours:,.1f} h")
    print(f"\nthe final as drawn from tier seed {SAMPLE_TIER_SEED} (shapes 6x6 to 12x12; the largest sets the time):")
    boards = [Board.of(spec) for spec in tier_specs("final", SAMPLE_TIER_SEED)]
    print("\n".join("  " + line for line in final_plan(boards)))
    print("\nthe floor of finals drawn from other seeds (no sharing of the work ends one sooner):")
    for seed in FLOOR_SEEDS:
        plan = plan_capacity(
            [Board.of(spec) for spec in tier_specs("final", seed)],
            120,
            default_checkpoints(2000),
            20,
            20,
            2000,
            Machines(28, 16, 72.0),
            DEFAULT_LIMITS,
            "docker",
        )
        print(
            f"  seed {seed}: {plan.cpu_hours_at_pace:,.0f} CPU hours, floor {plan.floor_hours:.1f} h, "
            f"wall {plan.wall_hours:.1f} h"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
