"""The README's "where things are" table names every folder of the repository, and only those."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def table_folders() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)/` \|", section, re.M)


def tracked_folders() -> set[str]:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return {f.split("/")[0] for f in files if "/" in f}


def test_the_table_names_the_folders():
    named = table_folders()
    assert len(named) == len(set(named)), f"a folder is named twice: {named}"
    tops = {n.split("/")[0] for n in named}
    assert tops == tracked_folders(), (
        f"folders missing from the table: {sorted(tracked_folders() - tops)}; "
        f"named but absent: {sorted(tops - tracked_folders())}"
    )
    assert all((ROOT / n).is_dir() for n in named), [n for n in named if not (ROOT / n).is_dir()]


def test_the_grader_rows_are_the_layers_in_order():
    from tests.test_layers import GRADER_LAYERS

    rows = [n.split("/")[1] for n in table_folders() if n.startswith("grader/")]
    layers = [prefix.split(".")[1] for _, prefixes in GRADER_LAYERS for prefix in prefixes if prefix != "grader"]
    assert rows == layers, f"README's grader rows {rows} are not the layers of tests/test_layers.py {layers}"
    packages = {p.parent.name for p in (ROOT / "grader").glob("*/__init__.py")}
    assert set(rows) == packages, f"packages of grader/ not in the table: {sorted(packages - set(rows))}"


def test_every_link_in_the_repository_resolves():
    """A tracked symbolic link points at a file of the tree (a move must carry its links along)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    links = [f for f in files if (ROOT / f).is_symlink()]
    assert links, "the tree has links (docs/results-schema.json): nothing is tested"
    assert [f for f in links if not (ROOT / f).exists()] == []
