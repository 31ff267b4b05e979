"""What putting the sandbox back after every pairing costs (grader/sandbox/frozen.py).

    python -m benchmarks frozen

After freeze() and after each pairing the host ends every process of the sandbox but its init
and the frozen agent, puts /tmp and /dev/shm back as they were at freeze and checks the frozen
process. Prints, in each backend, for an agent that leaves nothing (the random example) and one
whose every pairing leaves two processes (tests/agents/pairing_helper): the host's time at
freeze, its mean time per pairing, and the mean time of a whole short pairing (its fork, one
move, its end) with the hold and, for the agent that leaves nothing, without it (the
baseline), over PAIRINGS pairings. A docker engine is used where one answers.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRINGS = 40
AGENTS = {"random": ROOT / "examples" / "random", "pairing_helper": ROOT / "tests" / "agents" / "pairing_helper"}


def pairings(sandbox, folder: Path, hold: bool) -> tuple[float, float, float]:
    """(the host's seconds at freeze, its mean seconds a pairing, the mean seconds of a pairing)."""
    import numpy as np

    from grader.documents.submission import load_submission
    from grader.play.agent_handle import AgentHandle
    from grader.sandbox import frozen

    restore = frozen.back_to_frozen
    if not hold:
        frozen.back_to_frozen = lambda cgroup, state: None  # type: ignore[assignment]
    obs = np.zeros((3, 8, 8), np.float32)
    mask = np.zeros(64, np.int8)
    mask[[19, 26, 37, 44]] = 1
    handle = AgentHandle.launch(sandbox, load_submission(folder))
    try:
        env = {"rows": 8, "cols": 8, "obstacles": [], "interaction_budget": 0, "env_index": 0, "env_count": 1}
        assert handle.prepare(env) is None and handle.freeze() is None, handle.fault
        at_freeze = handle.hold_seconds
        times = []
        for _ in range(PAIRINGS):
            start = time.perf_counter()
            handle.begin_pairing()
            handle.act(obs, mask)
            handle.end_pairing()
            times.append(time.perf_counter() - start)
        assert handle.fault is None, handle.fault
        return at_freeze, (handle.hold_seconds - at_freeze) / PAIRINGS, statistics.mean(times)
    finally:
        handle.close()
        frozen.back_to_frozen = restore  # type: ignore[assignment]


def main() -> int:
    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import DockerSandbox
    from grader.sandbox.local import LocalSandbox, bwrap_problem

    backends = []
    if bwrap_problem() is None:
        backends.append(("local", LocalSandbox()))
    docker = DockerSandbox()
    try:
        docker.image_record()
        backends.append(("docker", docker))
    except LaunchError as exc:
        print(f"docker: skipped ({exc})", file=sys.stderr)
    for name, sandbox in backends:
        for agent, folder in AGENTS.items():
            at_freeze, per_pairing, with_hold = pairings(sandbox, folder, hold=True)
            # Without the hold, the helper's processes pile up to the sandbox's limit: no baseline.
            baseline = "-" if agent == "pairing_helper" else f"{1000 * pairings(sandbox, folder, hold=False)[2]:.1f} ms"
            print(
                f"{name:6} {agent:15} at freeze {1000 * at_freeze:6.1f} ms; per pairing {1000 * per_pairing:6.2f} ms "
                f"of the host's; a pairing of one move {1000 * with_hold:6.1f} ms (without the hold: {baseline})",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
