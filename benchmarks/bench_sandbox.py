"""Sandbox speed: one act() round trip on a 12x12 board, and sandbox start-up.

Prints, measured in the same run:
- act round trip through the local sandbox (host -> runner -> agent -> host),
  median and p99 in microseconds, beside a bare pipe round trip of the same
  bytes to a plain child process (targets: median < 60 us, <= 3x bare pipe);
- time from starting a sandbox to the first reply of an agent that imports
  numpy, beside the same runner started as a bare process (target: the
  sandbox's own share < 50 ms).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROWS = COLS = 12
WARMUP = 300
SAMPLES = 5000
STARTS = 12
# The sandbox's share of a start at the last stop, the runtime's libraries bound one folder at a
# time (26.8 ms the stop before, each shared library a bind of its own).
LAST_STOP_SHARE_MS = 11.4

AGENT = """
import numpy as np

class Agent:
    def prepare(self, env_info):
        pass

    def act(self, obs, action_mask):
        return int(action_mask.argmax())

    def observe_outcome(self, outcome):
        pass
"""

# The bare pipe's child: read one frame's worth of bytes, answer with the reply's bytes.
ECHO = r"""
import os, sys
n, reply = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
read, write = os.read, os.write
while True:
    got = 0
    while got < n:
        data = read(0, n - got)
        if not data:
            sys.exit(0)
        got += len(data)
    write(1, reply)
"""


def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1e6, samples[int(len(samples) * 0.99)] * 1e6


def _board() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    obs = (rng.random((3, ROWS, COLS)) < 0.3).astype(np.float32)
    mask = (rng.random(ROWS * COLS) < 0.1).astype(np.int8)
    return obs, mask


def bench_act(handle) -> tuple[float, float]:
    obs, mask = _board()
    act = handle.act
    for _ in range(WARMUP):
        act(obs, mask)
    times = []
    clock = time.perf_counter
    for _ in range(SAMPLES):
        t = clock()
        act(obs, mask)
        times.append(clock() - t)
    if handle.fault:
        raise RuntimeError(f"the benchmark agent faulted: {handle.fault}")
    return _percentiles(times)


def bench_bare_pipe() -> tuple[float, float]:
    from grader.common import protocol

    obs, mask = _board()
    frame = protocol.encode_raw(protocol.act_header(ROWS, COLS), obs.tobytes(), mask.tobytes())
    head = b'{"op":"action","action":17}'
    reply = protocol.PREFIX.pack(len(head), 0) + head
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", ECHO, str(len(frame)), reply.hex()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
    )
    wfd, rfd = child.stdin.fileno(), child.stdout.fileno()
    clock = time.perf_counter
    times = []
    try:
        for i in range(WARMUP + SAMPLES):
            t = clock()
            os.write(wfd, frame)
            got = 0
            while got < len(reply):
                got += len(os.read(rfd, 65536))
            if i >= WARMUP:
                times.append(clock() - t)
    finally:
        child.stdin.close()
        child.wait(5)
    return _percentiles(times)


def start_seconds(sandbox, submission, limits) -> float:
    """Seconds one launch of `submission` takes, until its runner is ready."""
    from grader.play.agent_handle import AgentHandle

    t = time.perf_counter()
    handle = AgentHandle.launch(sandbox, submission, limits)
    elapsed = time.perf_counter() - t
    if handle.fault:
        raise RuntimeError(f"the benchmark agent failed to start: {handle.fault}")
    handle.close()
    return elapsed


def starts_in_turn(submission, starts: int) -> tuple[list[float], list[float]]:
    """`starts` launches of `submission` in the local sandbox and as many outside any sandbox,
    made in turn (a shared machine's slow spells then fall on both alike): their seconds."""
    from grader.common.limits import DEFAULT_LIMITS
    from grader.sandbox.local import LocalSandbox
    from grader.sandbox.unsafe import UnsafeSandbox

    boxed: list[float] = []
    bare: list[float] = []
    for _ in range(starts):
        boxed.append(start_seconds(LocalSandbox(), submission, DEFAULT_LIMITS))
        bare.append(start_seconds(UnsafeSandbox(quiet=True), submission, DEFAULT_LIMITS))
    return boxed, bare


def sandbox_share(boxed: list[float], bare: list[float]) -> float:
    """The sandbox's own part of a start: the median of the differences of starts made in
    turn (`starts_in_turn`), pair by pair, so that a slow spell falls on both sides of a pair;
    never below zero."""
    return max(0.0, statistics.median(b - u for b, u in zip(boxed, bare)))


def main() -> int:
    from grader.common.limits import DEFAULT_LIMITS
    from grader.documents.submission import load_submission
    from grader.play.agent_handle import AgentHandle
    from grader.sandbox.local import LocalSandbox, runtime_binds
    from grader.sandbox.probe import local_checks

    t = time.perf_counter()
    runtime_binds()  # once per host process: ldd over the runtime's shared objects
    binds_ms = (time.perf_counter() - t) * 1e3
    missing = [c.name for c in local_checks(LocalSandbox()) if c.required and not c.ok]
    if missing:
        print(f"bench_sandbox: skipped, the local sandbox is not usable here (missing: {', '.join(missing)})")
        return 0
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        Path(tmp, "agent.py").write_text(AGENT)
        submission = load_submission(tmp)
        sandbox = LocalSandbox()
        handle = AgentHandle.launch(sandbox, submission, DEFAULT_LIMITS)
        try:
            act_med, act_p99 = bench_act(handle)
        finally:
            handle.close()
        pipe_med, pipe_p99 = bench_bare_pipe()
        sandboxed, bare = starts_in_turn(submission, STARTS)

    ratio = act_med / pipe_med
    start_s, start_b = statistics.median(sandboxed) * 1e3, statistics.median(bare) * 1e3
    share = sandbox_share(sandboxed, bare) * 1e3
    print(f"sandbox act round trip {ROWS}x{COLS} ({SAMPLES} calls): median {act_med:.1f} us, p99 {act_p99:.1f} us")
    print(f"bare pipe round trip, same bytes:          median {pipe_med:.1f} us, p99 {pipe_p99:.1f} us")
    print(
        f"  ratio {ratio:.2f}x  [{'ok' if act_med < 60 and ratio <= 3 else 'MISS'}: target median < 60 us and <= 3x bare]"
    )
    print(
        f"start to first reply (numpy imported), median of {STARTS} made in turn: sandbox {start_s:.1f} ms, "
        f"bare process {start_b:.1f} ms"
    )
    print(
        f"  sandbox share {share:.1f} ms (median of the pairs' differences; {LAST_STOP_SHARE_MS} ms at the last stop)  "
        f"[{'ok' if share < 50 else 'MISS'}: target < 50 ms]"
        f"  (plus {binds_ms:.0f} ms once per host process to list the runtime's libraries)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
