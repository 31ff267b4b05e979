"""The first `make check` on a fresh kit: where its time goes, before and after `make setup`
compiles the engine.

    python -m benchmarks first_check

Each step runs in a process of its own with an empty numba cache of its own (what a fresh
kit's .venv has): the warm-up `make setup` now does (the engine on the gate's boards, a
line per board, then one short gate of a stand-in agent), then the gate itself on the example random agent with that cache
warm (the first `make check` after `make setup`). The baseline is the first check as it was,
compile and gate in one: the two added. Printed beside each other.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WARM_UP = "from grader.kit.build import warm_up_gate; warm_up_gate()"
GATE = (
    "import sys; from grader.sandbox import get_sandbox; from grader.play.smoke import run_smoke; "
    "r = run_smoke(sys.argv[1], get_sandbox('unsafe', quiet=True)); sys.exit(0 if r.passed else 1)"
)


def timed(code: str, cache: str, *args: str) -> float:
    env = os.environ | {"NUMBA_CACHE_DIR": cache}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, cwd=REPO)
    return time.perf_counter() - start


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="arena-bench-numba-") as cache:
        compile_s = timed(WARM_UP, cache)
        gate_s = timed(GATE, cache, str(REPO / "examples" / "random"))
    print(f"make setup, compiling the engine for the gate's boards: {compile_s:6.1f} s (once per kit)")
    print(f"first make check after make setup:                    {gate_s:6.1f} s")
    print(
        f"baseline, first make check compiling as it went:      {compile_s + gate_s:6.1f} s "
        f"(the first check is now {compile_s:.1f} s shorter)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
