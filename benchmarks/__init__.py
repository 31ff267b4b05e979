"""The arena's benchmarks: `make bench` (python -m benchmarks) runs each bench_*.py main()."""
