"""The kit as a student gets it: build it, unzip it into an empty folder, and run its scripts
with a fresh virtual environment made by `check.py --setup` (installing from the package index,
or pip's cache when the packages were fetched before: nothing here disables the cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

from grader.kit.build import KIT_FOLDER, build_kit
from tests.kit.conftest import copy_tree

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
BROKEN = textwrap.dedent("""\
    import sys
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            self.shape = (env_info["rows"], env_info["cols"])

        def act(self, obs, action_mask):
            if self.shape == (10, 10):
                print("lost on the big board", file=sys.stderr)
                raise IndexError("my table has no row for 10x10")
            return int(np.flatnonzero(action_mask)[-1])

        def observe_outcome(self, outcome):
            pass
    """)


def run(kit, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """A kit script as a student runs it: `python SCRIPT ...` in the kit folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_KIT_IN_VENV", "PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([sys.executable, *argv], cwd=kit, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    """A built kit, unzipped into an empty folder, after `python check.py --setup`."""
    root = copy_tree(tmp_path_factory.mktemp("tree"))
    built = build_kit(root=root, out=tmp_path_factory.mktemp("out"))
    home = tmp_path_factory.mktemp("student")
    with zipfile.ZipFile(built.zip_path) as zf:
        zf.extractall(home)
    folder = home / KIT_FOLDER
    setup = run(folder, "check.py", "--setup")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return folder, built.version, setup


def test_setup_makes_a_fresh_venv_and_prints_what_it_found(kit):
    folder, version, setup = kit
    lines = setup.stdout.splitlines()
    assert lines[0] == f"kit {version}"
    assert lines[1].startswith("interpreter: Python 3.") and "the grader runs Python 3.11" in lines[1]
    assert lines[2].startswith("numpy: ") and "the grader pins numpy" in lines[2]
    assert (folder / ".venv" / "bin" / "python").exists()
    # The engine is compiled here, a line per board, so the first `make check` need not.
    assert "compiling the arena's engine for the gate's 4 boards" in setup.stderr
    assert "board 4/4 (12x10) ready" in setup.stderr and "... compiled in " in setup.stderr
    probe = subprocess.run(
        [str(folder / ".venv" / "bin" / "python"), "-c", "import grader.play.smoke, numba, yaml"],
        capture_output=True,
        text=True,
    )
    assert probe.returncode == 0, probe.stderr


def test_check_passes_the_template_with_the_version_first(kit):
    folder, version, _ = kit
    proc = run(folder, "check.py")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert lines[0] == f"kit {version}"
    assert lines[1].startswith("interpreter: ") and lines[2].startswith("numpy: ") and lines[3].startswith("sandbox: ")
    assert lines[-1].startswith("PASS")


def test_package_builds_checks_and_seals_submission_zip(kit, tmp_path):
    folder, version, _ = kit
    proc = run(folder, "package.py", "--handle", "alice")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert lines[0] == f"kit {version}"
    with zipfile.ZipFile(folder / "submission.zip") as zf:
        assert zf.namelist() == ["agent.py"]
    assert any(line.startswith("make check passed on these exact files") for line in lines)
    assert "To submit it:" in lines and any("submissions/<your handle>/" in line for line in lines)
    # The kit built in this checkout seals to a key this checkout's arena opens.
    from grader.documents.submission import load_submission

    opened = load_submission(folder / "submission", extract_to=tmp_path / "opened")
    assert f"digest: {opened.digest}" in lines


def test_play_runs_a_tiny_round_and_saves_the_plot(kit):
    folder, version, _ = kit
    proc = run(
        folder,
        "play.py",
        "--envs",
        "1",
        "--budget",
        "4",
        "--checkpoints",
        "0,2,4",
        "--games-per-checkpoint",
        "2",
        "--pairing-games",
        "2",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == f"kit {version}"
    assert "SAE [2, 4]" in proc.stdout
    assert (folder / "play-results" / "curve.svg").read_text().startswith("<svg")
    assert (folder / "play-results" / "logs" / "E01.log").is_file() and "play-results/logs/ (E01.log)" in proc.stdout


def test_a_broken_agent_fails_on_the_first_board_it_breaks(kit):
    folder, version, _ = kit
    original = (folder / "agent.py").read_text()
    (folder / "agent.py").write_text(BROKEN)
    try:
        proc = run(folder, "check.py")
    finally:
        (folder / "agent.py").write_text(original)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert out.splitlines()[0] == f"kit {version}"
    assert "FAIL on the 10x10 board" in out
    assert "IndexError: my table has no row for 10x10" in out and "lost on the big board" in out
    rows = {
        line.split()[0]: line.split()[-1]
        for line in out.splitlines()
        if line.startswith("  ") and line.split()[0] in ("6x8", "8x8", "10x10", "12x10")
    }
    assert rows == {"6x8": "pass", "8x8": "pass", "10x10": "fail", "12x10": "not_run"}
