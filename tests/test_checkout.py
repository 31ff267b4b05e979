"""grader.common.checkout: the arena run from a plain `pip install .` finds the checkout it runs in,
so a round's provenance names that commit (it said `unknown`) and the site finds its templates."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from grader.common import checkout

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def installed_elsewhere(tmp_path, monkeypatch):
    """The package seen as a copy in site-packages; the current folder a clean git checkout."""
    monkeypatch.setattr(checkout, "package_parent", lambda: tmp_path / "site-packages")
    tree = tmp_path / "checkout"
    for name in ("pyproject.toml", "engine", "grader"):
        src = ROOT / name
        shutil.copytree(src, tree / name, ignore=shutil.ignore_patterns("__pycache__")) if src.is_dir() else (
            tree.mkdir(parents=True, exist_ok=True),
            shutil.copy2(src, tree / name),
        )
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=tree, check=True, capture_output=True)
    monkeypatch.chdir(tree)
    return tree


def test_a_plain_install_finds_the_checkout_it_runs_in(installed_elsewhere):
    assert checkout.source_tree() == installed_elsewhere.resolve()
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=installed_elsewhere, capture_output=True, text=True
    ).stdout.strip()
    # The running code is this worktree's, which is the checkout's copy: the same files, or -dirty.
    commit = checkout.git_commit()
    assert commit.removesuffix("-dirty") == head
    (installed_elsewhere / "grader" / "extra.py").write_text("# not the installed code\n")
    assert checkout.git_commit().endswith("-dirty")


def test_outside_any_checkout_the_commit_is_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(checkout, "package_parent", lambda: tmp_path / "site-packages")
    monkeypatch.chdir(tmp_path)
    assert checkout.source_tree() is None and checkout.git_commit() == "unknown"
