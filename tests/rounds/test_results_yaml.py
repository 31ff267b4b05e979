"""The arena's documents (results files at width 120, the others at PyYAML's default 80) are
written by libyaml's emitter when PyYAML has it: the same text as PyYAML's own but for
characters beyond the BMP, which libyaml escapes; the same data always."""

from __future__ import annotations

import pytest
import yaml

from grader.documents.yaml_io import dump_yaml

NASTY = [
    "plain",
    "",
    " leading space",
    "trailing space ",
    "colon: inside",
    "- dash",
    "# hash",
    "quote ' and \"",
    "line\nbreak",
    "tab\there",
    "\x00\x07\x1b control",
    "é ü 中文 🙂",
    "\u2028 line separator",
    "\ufeff bom",
    "null",
    "true",
    "1.5",
    "0x10",
    "2026-11-30",
    "~",
    "@at",
    "`tick`",
    "%percent",
    "x" * 300,
    "word " * 60,
    "a very long line with: colons, 'quotes' and \"double quotes\" " * 5,
]


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML without libyaml: one emitter only")
def test_libyaml_writes_what_pyyaml_writes():
    for strings in ([s for s in NASTY if all(ord(c) < 0x10000 for c in s)], NASTY):
        doc = {
            "schema_version": 1,
            "strings": strings,
            "detail": {s[:20] or "empty": s for s in strings},
            "numbers": [0, -1, 1.5, 1e-7, 123456789012, 0.1 + 0.2, float("inf")],
            "flags": [True, False, None],
            "nested": [{"a": [1, {"b": strings[:5]}]}],
        }
        for width in (120, 80):
            pyyaml = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=width)
            ours = dump_yaml(doc, width=width)
            assert yaml.safe_load(ours) == yaml.safe_load(pyyaml) == doc
            if strings is not NASTY:
                assert ours == pyyaml
        assert dump_yaml(doc) == dump_yaml(doc, width=80)
