"""The docker sandbox's speed, beside the embedded sandbox's, measured in the same run.

Prints:
- the act round trip on a 12x12 board through a container (median and p99, microseconds)
  beside the same through the embedded sandbox and a bare pipe (target: the container's
  median within 2x the embedded sandbox's);
- a container's start to its runner's first reply, then prepare, beside the embedded
  sandbox's (target: start plus prepare under 1 s), and what starting containers costs a
  round of 28 environments and 30 agents (840 sessions), as a share of the round for
  agents playing at a tenth of the 8x8 pace (target: under 1%).

A private engine is started when none answers (tests/docker_engine.py), and the agents'
image built when it is missing.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_sandbox import AGENT, bench_act, bench_bare_pipe

STARTS = 12
ENVS, AGENTS = 28, 30
# The acts of one agent in one environment at the canonical settings on 8x8: 2,000 self-play
# games of about 60 plies (both seats), 5 checkpoints of 20 games and 29 pairings of 20 games
# (about 30 of its own plies each).
SESSION_ACTS = 2000 * 60 + 5 * 20 * 30 + 29 * 20 * 30


def start_and_prepare(sandbox, submission, limits) -> tuple[float, float]:
    """(seconds from launch to ready, seconds of prepare) of one session."""
    from grader.play.agent_handle import AgentHandle

    info = {"rows": 8, "cols": 8, "obstacles": [], "interaction_budget": 2000, "env_index": 0, "env_count": 1}
    t0 = time.perf_counter()
    handle = AgentHandle.launch(sandbox, submission, limits)
    t1 = time.perf_counter()
    fault = handle.fault or handle.prepare(info)
    t2 = time.perf_counter()
    handle.close()
    if fault:
        raise RuntimeError(f"the benchmark agent failed: {fault}")
    return t1 - t0, t2 - t1


def main() -> int:
    from grader.common.limits import DEFAULT_LIMITS
    from grader.documents.submission import load_submission
    from grader.play.agent_handle import AgentHandle
    from grader.sandbox.docker import DockerSandbox
    from grader.sandbox.local import LocalSandbox
    from tests.docker_engine import NoEngine, engine, ensure_image

    try:
        with engine() as client, tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
            ensure_image(client, lambda line: print(f"[image] {line}", file=sys.stderr))
            Path(tmp, "agent.py").write_text(AGENT)
            submission = load_submission(tmp)
            docker, local = DockerSandbox(), LocalSandbox()
            record = docker.image_record()
            trips = {}
            for name, sandbox in (("docker", docker), ("local", local)):
                handle = AgentHandle.launch(sandbox, submission, DEFAULT_LIMITS)
                try:
                    trips[name] = bench_act(handle)
                finally:
                    handle.close()
            pipe = bench_bare_pipe()
            starts: dict[str, list[tuple[float, float]]] = {"docker": [], "local": []}
            for _ in range(STARTS):  # in turn, so that a slow spell of the machine falls on both
                for name, sandbox in (("docker", docker), ("local", local)):
                    starts[name].append(start_and_prepare(sandbox, submission, DEFAULT_LIMITS))
    except NoEngine as exc:
        print(f"bench_docker: skipped, {exc}")
        return 0

    print(f"image {record.describe()}")
    for name, label in (("docker", "container"), ("local", "embedded sandbox")):
        med, p99 = trips[name]
        print(f"act round trip 12x12, {label + ':':<18} median {med:.1f} us, p99 {p99:.1f} us")
    print(f"act round trip 12x12, {'bare pipe:':<18} median {pipe[0]:.1f} us, p99 {pipe[1]:.1f} us")
    ratio = trips["docker"][0] / trips["local"][0]
    print(f"  container / embedded sandbox {ratio:.2f}x  [{'ok' if ratio <= 2 else 'MISS'}: target within 2x]")
    medians = {}
    for name, label in (("docker", "container"), ("local", "embedded sandbox")):
        ready = statistics.median(s for s, _ in starts[name])
        prepared = statistics.median(s + p for s, p in starts[name])
        medians[name] = prepared
        print(
            f"start to ready, {label + ':':<18} median {ready * 1e3:.0f} ms; with prepare {prepared * 1e3:.0f} ms "
            f"(median of {STARTS}, made in turn)"
        )
    print(f"  container start + prepare [{'ok' if medians['docker'] < 1 else 'MISS'}: target under 1 s]")
    session = SESSION_ACTS * DEFAULT_LIMITS.pace_seconds(8, 8) / 10
    share = medians["docker"] / (medians["docker"] + session)
    print(
        f"  a round of {ENVS} environments x {AGENTS} agents starts {ENVS * AGENTS} containers: "
        f"{ENVS * AGENTS * medians['docker']:.0f} s, {share:.2%} of the round for agents at a tenth of the 8x8 pace "
        f"({session:.0f} s a session)  [{'ok' if share < 0.01 else 'MISS'}: target under 1%]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
