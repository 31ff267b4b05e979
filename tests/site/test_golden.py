"""The fixture site matches the committed goldens (regenerate: python -m tests.site.goldens --update)."""

from __future__ import annotations

import pytest
import yaml

from tests.site.goldens import FIXTURES, compare

pytestmark = pytest.mark.timeout(120)


def test_running_site_matches_its_golden(site_running):
    assert compare("running", site_running) == []


def test_ended_site_matches_its_golden(site_ended):
    assert compare("ended", site_ended) == []


def test_data_files_are_byte_copies_of_the_rounds(site_ended):
    for path in sorted((FIXTURES / "rounds").glob("*.yaml")):
        copy = site_ended / "data" / path.name
        if yaml.safe_load(path.read_text())["round"]["private"]:  # never published on the site
            assert not copy.exists() and not (site_ended / "data" / path.stem).exists()
            continue
        assert copy.read_bytes() == path.read_bytes()
        games = path.with_suffix("") / "games.jsonl.gz"
        assert (site_ended / "data" / path.stem / "games.jsonl.gz").read_bytes() == games.read_bytes()
