"""Run every benchmark (or those named on the command line), each in a process of its own:
python -m benchmarks [engine round ...]."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import time

import benchmarks


def main(argv: list[str] | None = None) -> int:
    names = sorted(
        m.name[len("bench_") :] for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    wanted = argv if argv else names
    unknown = set(wanted) - set(names)
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))} (have: {', '.join(names)})", file=sys.stderr)
        return 2
    if len(wanted) == 1:
        return importlib.import_module(f"benchmarks.bench_{wanted[0]}").main() or 0
    status = 0
    for name in wanted:
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        # Each in a process of its own: one benchmark's imports, caches and heap (numba's, a
        # round's) must not slow the next (the site build's garbage collection, say).
        status |= subprocess.run([sys.executable, "-m", "benchmarks", name]).returncode
        print(f"=== {name}: {time.perf_counter() - start:.1f} s ===", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
