"""Shared pieces of the kit's tests: a copy of the checkout to build from, and the kit's scripts
imported in-process from a folder that holds them beside a kit.json."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KIT_SOURCE = REPO / "kit"
# What `arena kit build` reads of a checkout.
TREE = ("pyproject.toml", "README.md", "engine", "grader", "kit")
SCRIPTS = ("kitenv", "check", "package", "play", "history")


def copy_tree(dest: Path) -> Path:
    """The parts of the checkout a kit is built from, copied to `dest` (so a build never writes
    the repository's kit/version, and a test may change a kit file)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    # The checkout's kit/version is left behind, so every copy builds its kit from scratch.
    kit_ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "version")
    dest.mkdir(parents=True, exist_ok=True)
    for name in TREE:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=kit_ignore if name == "kit" else ignore)
        else:
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture
def kit_scripts(tmp_path, monkeypatch):
    """The kit's scripts imported from a folder with a kit.json, as modules; `enter_venv` is
    replaced by reading the manifest, since the test's interpreter already has the arena."""
    from grader.documents.sealing import public_key_text
    from grader.kit.build import kit_requirements, runtime_row

    folder = tmp_path / "kit"
    shutil.copytree(KIT_SOURCE, folder, ignore=shutil.ignore_patterns("__pycache__", "version"))
    manifest = {
        "schema_version": 1,
        "version": "2030.01.02-0123456789",
        "arena_version": "0.1.0",
        "runtime": runtime_row(),
        "requirements": kit_requirements(REPO / "pyproject.toml"),
        "wheel": "wheels/othello_arena-0.1.0-py3-none-any.whl",
        "submission_key": public_key_text(),
        "files": sorted(p.name for p in folder.iterdir()) + ["kit.json", "wheels/othello_arena-0.1.0-py3-none-any.whl"],
    }
    (folder / "kit.json").write_text(json.dumps(manifest))
    for name in SCRIPTS:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(folder))
    modules = {name: importlib.import_module(name) for name in SCRIPTS}
    monkeypatch.setattr(modules["kitenv"], "enter_venv", lambda script, force_setup=False: manifest)
    monkeypatch.setenv("HANDLE", "alice")  # as `make package HANDLE=alice` sets it
    yield folder, manifest, modules
    for name in SCRIPTS:
        sys.modules.pop(name, None)
