"""Run every benchmark (or those named on the command line): python -m benchmarks [engine round ...]."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks


def main(argv: list[str] | None = None) -> int:
    names = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    wanted = argv if argv else names
    unknown = set(wanted) - set(names)
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))} (have: {', '.join(names)})", file=sys.stderr)
        return 2
    status = 0
    for name in wanted:
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        status |= importlib.import_module(f"benchmarks.bench_{name}").main() or 0
        print(f"=== {name}: {time.perf_counter() - start:.1f} s ===", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
