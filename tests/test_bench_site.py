"""The site benchmark writes its synthetic history by hand; it must be what the arena writes."""

from __future__ import annotations

import random

import yaml

from benchmarks import bench_site
from grader.results import dump_yaml
from grader.site import fastyaml


def test_synthetic_round_is_written_as_dump_yaml_writes_it(monkeypatch):
    monkeypatch.setattr(bench_site, "AGENTS", 5)
    monkeypatch.setattr(bench_site, "ENVS", 3)
    text, _ = bench_site.synthetic_round(0, random.Random(1))
    data = yaml.safe_load(text)
    assert text == dump_yaml(data).decode()
    assert fastyaml._Reader(text).document() == data  # the site reads it on its fast path
