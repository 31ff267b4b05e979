"""Red team, hostile documents: a broken file in rounds/ fails the site build with
its name and what is wrong (never a traceback, never a site built over it)."""

from __future__ import annotations

import gzip
import shutil

import pytest

from grader.cli.main import main as arena
from grader.site import build
from tests.site.goldens import FIXTURES
from tests.test_bounded_yaml import BOMB

pytestmark = pytest.mark.timeout(120)
PUBLIC = "public-072167ceac"  # a fixture round whose rules (and games file) are public


@pytest.fixture
def rounds(tmp_path):
    folder = tmp_path / "rounds"
    shutil.copytree(FIXTURES / "rounds", folder)
    return folder


def _truncate(path, keep: float = 0.5) -> None:
    blob = path.read_bytes()
    path.write_bytes(blob[: int(len(blob) * keep)])


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda f: _truncate(f / f"{PUBLIC}.yaml"), "cannot be rendered"),
        (lambda f: _truncate(f / f"{PUBLIC}.yaml", 0.013), "cannot be rendered"),
        (lambda f: (f / f"{PUBLIC}.yaml").write_bytes(b"schema_version: 1\nround: \xff\n"), "not readable YAML"),
        (lambda f: (f / f"{PUBLIC}.yaml").write_text(BOMB), "alias bomb"),
        (
            lambda f: (f / f"{PUBLIC}.yaml").write_text("x:\n" + "".join(" " * i + "-\n" for i in range(2, 1400, 2))),
            "nested",
        ),
        (lambda f: (f / f"{PUBLIC}.yaml").write_text("[" * 5000 + "]" * 5000), "not readable YAML"),
        (lambda f: _truncate(f / PUBLIC / "games.jsonl.gz"), "(?s)games.jsonl.gz: .*sha256 is"),
        (
            lambda f: (f / PUBLIC / "games.jsonl.gz").write_bytes(gzip.compress(b"{}\n")),
            "(?s)games.jsonl.gz: .*sha256 is",
        ),
    ],
)
def test_a_broken_round_file_fails_the_build_naming_it(rounds, tmp_path, capsys, damage, message):
    damage(rounds)
    # Refused by what is wrong with it (a bomb is refused, never expanded: the test's timeout
    # is the only clock here, since a busy machine may take any time).
    with pytest.raises(ValueError, match=message) as err:
        build(rounds, tmp_path / "out", data_commit="c", log=lambda m: None)
    assert PUBLIC in str(err.value)
    code = arena(
        [
            "site",
            "build",
            "--rounds",
            str(rounds),
            "--out",
            str(tmp_path / "cli"),
            "--no-cache",
            "--commit",
            "c",
            "--docs",
            str(FIXTURES / "docs"),
            "--accounts",
            str(FIXTURES / "accounts.yaml"),
        ]
    )
    err_text = capsys.readouterr().err
    assert code == 1 and PUBLIC in err_text and "Traceback" not in err_text


def test_the_untouched_fixture_rounds_build(rounds, tmp_path):
    report = build(rounds, tmp_path / "out", data_commit="c", log=lambda m: None)
    assert (tmp_path / "out" / "index.html").exists() and report.line()


def test_a_document_that_is_not_utf8_is_named(rounds, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "docs", docs)
    (docs / "rules.md").write_bytes(b"# Rules\n\xff\xfe\n")
    from grader.site.docs import DocTextError

    with pytest.raises(DocTextError, match=r"rules.md: not UTF-8 text \(byte 8 is 0xff\)") as info:
        build(rounds, tmp_path / "out", docs_dir=docs, data_commit="c", log=lambda m: None)
    assert info.value.path.name == "rules.md" and info.value.offset == 8


def test_an_alias_bomb_in_the_accounts_registry_is_named(rounds, tmp_path):
    accounts = tmp_path / "accounts.yaml"
    accounts.write_text(BOMB)
    with pytest.raises(ValueError, match="accounts.yaml: .*alias bomb"):
        build(rounds, tmp_path / "out", accounts=accounts, data_commit="c", log=lambda m: None)
