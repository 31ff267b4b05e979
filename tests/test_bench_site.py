"""The site benchmark writes its synthetic history with the arena's own writer."""

from __future__ import annotations

import random

from benchmarks import bench_site
from grader.rounds.results import load_results, read_document, twin_path


def test_synthetic_rounds_are_written_and_read_as_the_arena_does(monkeypatch, tmp_path):
    monkeypatch.setattr(bench_site, "AGENTS", 5)
    monkeypatch.setattr(bench_site, "ENVS", 3)
    ids = bench_site.write_history(tmp_path, 2, random.Random(1))
    for rid in ids:
        path = tmp_path / f"{rid}.yaml"
        data = load_results(path, prefer_twin=False)
        assert twin_path(path).exists() and read_document(path) == (data, True)
    assert not hasattr(bench_site, "emit")  # no YAML written by hand
