"""What the site reads of a round file: the pruned parse drops only what no page shows."""

from __future__ import annotations

import copy

import yaml

from grader.site.data import parse_round
from tests.site.goldens import FIXTURES


def _without_early_env_points(doc: dict) -> dict:
    out = copy.deepcopy(doc)
    for env in out["environments"]:
        for agent in env["agents"]:
            agent["curve"] = agent["curve"][-1:]
    return out


def test_pruned_parse_keeps_all_but_the_early_points_of_environment_curves():
    paths = sorted((FIXTURES / "rounds").glob("*.yaml"))
    assert paths
    pruned_some = False
    for path in paths:
        blob = path.read_bytes()
        full = yaml.safe_load(blob)
        assert parse_round(path, blob, validate=True) == full
        pruned = parse_round(path, blob, validate=False)
        assert pruned == _without_early_env_points(full), path.name
        pruned_some |= pruned != full
    assert pruned_some  # the fixtures have curves of several points: the pass did cut something


def test_text_written_otherwise_is_parsed_whole(tmp_path):
    doc = yaml.safe_load((sorted((FIXTURES / "rounds").glob("*.yaml"))[0]).read_bytes())
    # Flow style and another indentation: nothing matches the pruning pattern.
    blob = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, indent=4).encode()
    path = tmp_path / f"{doc['round']['id']}.yaml"
    assert parse_round(path, blob, validate=False) == doc
