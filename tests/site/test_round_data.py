"""What the site reads of a round file: the whole document, checked against the one schema."""

from __future__ import annotations

import shutil

import pytest
import yaml

from grader.rounds.results import twin_path, write_twin
from grader.site.data import SiteDataError, parse_round
from tests.site.goldens import FIXTURES


def test_the_site_reads_the_whole_document_from_yaml_or_twin(tmp_path):
    paths = sorted((FIXTURES / "rounds").glob("*.yaml"))
    assert paths
    for path in paths:
        blob = path.read_bytes()
        full = yaml.safe_load(blob)
        assert parse_round(path, blob, validate=False) == full
        copy = tmp_path / path.name
        shutil.copyfile(path, copy)
        write_twin(copy)
        assert twin_path(copy).exists() and parse_round(copy, blob, validate=False) == full


def test_a_bad_environment_entry_is_refused_by_its_path(tmp_path):
    path = sorted((FIXTURES / "rounds").glob("*.yaml"))[0]
    doc = yaml.safe_load(path.read_bytes())
    doc["environments"][0]["agents"][0]["score"] = "high"
    target = tmp_path / path.name
    target.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(SiteDataError, match=r"cannot be rendered:\n  environments\[0\]\.agents\[0\]\.score: "):
        parse_round(target, target.read_bytes(), validate=False)
