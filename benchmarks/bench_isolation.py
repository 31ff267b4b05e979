"""What closing the page-cache channel between sessions costs a sandbox's start.

    python -m benchmarks isolation

Before each sandbox starts, the cached pages of every shared runtime file it can read are
dropped (grader/sandbox/pagecache.py), so that it reads them from the disk again. Prints, in
each backend: how many files are advised and how long that takes, and the median time from
launch to the runner's `ready` (the interpreter and numpy imported) with the drop and without
it, over STARTS starts each, as a share of an 8x8 session at a tenth of the pace (the cost a
round pays per entrant and environment). A docker engine is used where one answers.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from grader.common.limits import DEFAULT_LIMITS
from grader.sandbox import pagecache

ROOT = Path(__file__).resolve().parent.parent
STARTS = 8
# The acts of one agent in one 8x8 environment at the canonical settings (bench_docker's count).
SESSION_ACTS = 2000 * 60 + 5 * 20 * 30 + 29 * 20 * 30


def starts(sandbox, drop: bool) -> list[float]:
    """Seconds from launch to ready of STARTS sessions of the random example, one at a time."""
    from grader.documents.submission import load_submission
    from grader.play.agent_handle import AgentHandle

    submission = load_submission(ROOT / "examples" / "random")
    evict = pagecache.evict
    if not drop:
        pagecache.evict = lambda files: 0  # type: ignore[assignment]
    try:
        out = []
        for _ in range(STARTS):
            start = time.perf_counter()
            handle = AgentHandle.launch(sandbox, submission, DEFAULT_LIMITS)
            out.append(time.perf_counter() - start)
            assert handle.fault is None, handle.fault
            handle.close()
        return out
    finally:
        pagecache.evict = evict  # type: ignore[assignment]


def runtime_files(sandbox) -> tuple[str, ...]:
    from grader.sandbox.base import staged_runner

    if sandbox.name == "local":
        from grader.sandbox.local import runtime_binds

        return pagecache.files_under(tuple(src for src, _ in runtime_binds()) + (str(staged_runner()),))
    return pagecache.files_under(sandbox.layer_roots() + (str(staged_runner()),))


def main() -> int:
    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import DockerSandbox
    from grader.sandbox.local import LocalSandbox, bwrap_problem

    backends = [] if bwrap_problem() else [LocalSandbox()]
    docker = DockerSandbox()
    try:
        docker.image_record()
        backends.append(docker)
    except LaunchError as exc:
        print(f"docker: not measured ({exc})")
    session = SESSION_ACTS * DEFAULT_LIMITS.pace_seconds(8, 8) / 10
    for sandbox in backends:
        files = runtime_files(sandbox)
        t = time.perf_counter()
        dropped = pagecache.evict(files)
        advise = time.perf_counter() - t
        starts(sandbox, True)  # warm: the first start of a process lists the files and stages copies
        cold = statistics.median(starts(sandbox, True))
        warm = statistics.median(starts(sandbox, False))
        print(
            f"{sandbox.name}: {dropped} of {len(files)} runtime files advised in {advise * 1e3:.0f} ms; start to "
            f"ready {cold * 1e3:.0f} ms with the drop, {warm * 1e3:.0f} ms without (median of {STARTS}): "
            f"{(cold - warm) * 1e3:.0f} ms a session, {100 * (cold - warm) / session:.2f}% of an 8x8 session at a "
            f"tenth of the pace ({session:.0f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
