"""The site's fast YAML reader gives exactly what yaml.safe_load gives, or hands over to it."""

from __future__ import annotations

import random
import re
import string

import pytest
import yaml

from grader.results import dump_yaml
from grader.site import fastyaml
from tests.site.goldens import FIXTURES

pytestmark = pytest.mark.timeout(60)


def test_fixture_rounds_read_without_fallback():
    paths = sorted((FIXTURES / "rounds").glob("*.yaml")) + sorted((FIXTURES / "private").glob("*.yaml"))
    assert len(paths) >= 8
    for path in paths:
        text = path.read_text()
        assert fastyaml._Reader(text).document() == yaml.safe_load(text), path.name


def _random_value(rng: random.Random, depth: int = 0):
    alphabet = string.ascii_letters + string.digits + " :#'\"-_.,!?[]{}&*|>%@`~é\\/\t"
    k = rng.random()
    if depth < 4 and k < 0.25:
        keys = ["".join(rng.choice(string.ascii_lowercase + "_- 0123456789") for _ in range(rng.randint(1, 8)))
                for _ in range(rng.randint(0, 4))]
        return {key: _random_value(rng, depth + 1) for key in keys}
    if depth < 4 and k < 0.45:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    c = rng.random()
    if c < 0.2:
        return rng.randint(-10 ** 6, 10 ** 6)
    if c < 0.35:
        return rng.random() * 10 ** rng.randint(-8, 8)
    if c < 0.4:
        return rng.choice([None, True, False, "yes", "no", "null", "1.0", "0x1f", "2026-10-05", "~", "-", ""])
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 150)))


def test_random_documents_read_as_pyyaml_reads_them():
    rng = random.Random(7)
    fast = 0
    for _ in range(1500):
        data = {"x": _random_value(rng)}
        text = dump_yaml(data).decode()
        assert fastyaml.load(text) == yaml.safe_load(text), text[:300]
        try:
            fastyaml._Reader(text).document()
            fast += 1
        except fastyaml._Unsupported:
            pass
    assert fast > 500  # the fast path is taken (tabs and odd keys in this mix send many to PyYAML)


@pytest.mark.parametrize("text", ["a: [1, 2]\n", "a: &x 1\nb: *x\n", "# c\na: 1\n", "a: \"q\\n\"\n", "a:\n\n  b: 1\n",
                                  "--- \na: 1\n", "a: !!str 5\n", "a: 2026-10-05\n", "a: 0o17\n", "a: |\n  x\n"])
def test_what_the_subset_does_not_cover_falls_back(text):
    assert fastyaml.load(text) == yaml.safe_load(text)


def test_every_truncation_of_a_round_reads_as_pyyaml_reads_it():
    """Red team (issue 14): a truncated file is bytes like any other; cut anywhere (mid-line,
    after `key: `, after `- `), the fast reader answers as PyYAML does, or refuses as it does."""
    from engine.safeyaml import YamlError
    text = (FIXTURES / "rounds" / "public-335bc0b253.yaml").read_text()
    cuts = sorted(set(range(0, len(text), 37)) | {m.end() for m in re.finditer(r": |- ", text)})
    for cut in cuts:
        part = text[:cut]
        try:
            want = yaml.load(part, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            with pytest.raises(YamlError):
                fastyaml.load(part)
            continue
        assert fastyaml.load(part) == want, cut
