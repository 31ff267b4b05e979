"""The kit's scripts in-process (the test's interpreter already has the arena, so no .venv):
what a submission ships, check.py's lines and verdicts, package.py's zip, play.py's plot."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
import zipfile

import pytest

from engine import public_tier
from grader.documents.submission import load_submission
from grader.kit.build import (
    KitError,
    choose_sandbox,
    kit_excludes,
    stage_submission,
    submission_files,
    write_submission_zip,
)
from grader.sandbox.local import bwrap_problem

pytestmark = pytest.mark.timeout(180)
RAISES_ON_8X8 = textwrap.dedent("""\
    import sys
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            self.shape = (env_info["rows"], env_info["cols"])

        def act(self, obs, action_mask):
            if self.shape == (8, 8):
                print("no plan for 8x8", file=sys.stderr)
                raise RuntimeError("cannot play 8x8")
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            pass
    """)


def test_a_submission_is_agent_py_and_what_sits_beside_it(tmp_path):
    (tmp_path / "agent.py").write_text("class Agent: pass\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "priors.json").write_text("{}")
    (tmp_path / "helper.py").write_text("X = 1\n")
    for hidden in (".venv/bin", ".git", "__pycache__", "data/__pycache__"):
        (tmp_path / hidden).mkdir(parents=True, exist_ok=True)
        (tmp_path / hidden / "junk").write_text("x")
    (tmp_path / ".DS_Store").write_text("x")
    (tmp_path / "helper.pyc").write_bytes(b"\0")
    (tmp_path / "check.py").write_text("kit's own\n")
    assert submission_files(tmp_path, exclude=["check.py"]) == ["agent.py", "data/priors.json", "helper.py"]


def test_a_folder_without_agent_py_is_refused_plainly(tmp_path):
    (tmp_path / "agnet.py").write_text("")
    with pytest.raises(KitError, match="no agent.py"):
        submission_files(tmp_path)


def test_the_kits_own_files_are_excluded_but_agent_py(kit_scripts):
    folder, manifest, _ = kit_scripts
    excluded = kit_excludes(folder, manifest)
    assert "agent.py" not in excluded
    assert {
        "check.py",
        "package.py",
        "play.py",
        "kitenv.py",
        "README.md",
        "Makefile",
        "kit.json",
        "wheels",
        "submission.zip",
        "play-results",
        "replays",
    } <= set(excluded)
    assert submission_files(folder, excluded) == ["agent.py"]
    assert kit_excludes(folder, None) == []


def test_the_zip_is_reproducible_and_the_server_loads_it(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "agent.py").write_text(
        "class Agent:\n    def prepare(self, e): pass\n    def act(self, o, m): return 0\n"
        "    def observe_outcome(self, o): pass\n"
    )
    (src / "table.csv").write_text("a,b\n1,2\n")
    files = submission_files(src)
    first = write_submission_zip(src, files, tmp_path / "one.zip").read_bytes()
    second = write_submission_zip(src, files, tmp_path / "two.zip").read_bytes()
    assert first == second
    staged = tmp_path / "staged"
    stage_submission(src, staged)
    from_zip = load_submission(tmp_path / "one.zip", extract_to=tmp_path / "unpacked")
    assert from_zip.digest == load_submission(staged).digest and from_zip.files == ("agent.py", "table.csv")


def test_an_unknown_sandbox_is_refused():
    with pytest.raises(KitError, match="auto, local, docker or none"):
        choose_sandbox("chroot")


def test_none_is_the_unsafe_backend_and_says_so():
    sandbox, note = choose_sandbox("none")
    assert sandbox.name == "unsafe" and "without isolation" in note and "the server's own" in note


def test_auto_is_bubblewrap_where_it_works():
    reason = bwrap_problem()
    sandbox, note = choose_sandbox("auto")
    if reason:
        assert sandbox.name == "unsafe" and note.startswith("none:")
    else:
        assert sandbox.name == "local" and "bubblewrap" in note


@pytest.fixture
def local_only():
    reason = bwrap_problem()
    if reason:
        pytest.skip(reason)


def test_check_prints_the_kit_version_first_and_passes_the_template(kit_scripts, capsys, local_only):
    _, manifest, modules = kit_scripts
    code = modules["check"].main([])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, "\n".join(lines)
    assert lines[0] == f"kit {manifest['version']}"
    assert lines[1].startswith("interpreter: Python ") and "python:3.11-slim" in lines[1]
    assert lines[2].startswith("numpy: ") and manifest["runtime"]["numpy"] in lines[2]
    assert lines[3].startswith("sandbox: local")
    assert "submission: agent.py" in lines
    assert lines[-1].startswith("PASS: every public board shape")
    assert lines[-2].startswith("not covered by this check: your win rate")
    for shape in ("6x8", "8x8", "10x10", "12x10"):
        assert any(line.strip().startswith(shape) and line.rstrip().endswith("pass") for line in lines)


def test_check_names_the_first_failing_board_and_shows_the_agents_stderr(kit_scripts, capsys, tmp_path, local_only):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(RAISES_ON_8X8)
    report = tmp_path / "smoke.yaml"
    code = modules["check"].main(["--report", str(report)])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL on the 8x8 board" in out and "RuntimeError: cannot play 8x8" in out
    assert "no plan for 8x8" in out  # the agent's own stderr
    import yaml

    data = yaml.safe_load(report.read_text())
    assert data["first_failing_board"] == "8x8" and data["kit_version"] == "2030.01.02-0123456789"
    assert [b["result"] for b in data["boards"]] == ["pass", "fail", "not_run", "not_run"]


def test_check_refuses_a_missing_agent_with_exit_2(kit_scripts, capsys, tmp_path):
    _, _, modules = kit_scripts
    assert modules["check"].main(["--agent", str(tmp_path / "nowhere"), "--sandbox", "none"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_package_writes_a_zip_of_the_agent_and_says_whether_it_was_checked(kit_scripts, capsys):
    folder, manifest, modules = kit_scripts
    (folder / "weights.json").write_text("[0.5, 0.25]")
    assert modules["package"].main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"kit {manifest['version']}"
    with zipfile.ZipFile(folder / "submission.zip") as zf:
        assert zf.namelist() == ["agent.py", "weights.json"]
    assert any(line.startswith("digest: sha256:") for line in out)
    assert "make check has not been run on these exact files: run it before you open the pull request" in out
    assert "OK: submission.zip is a valid submission" in out
    assert out[out.index("OK: submission.zip is a valid submission") + 1] == (
        "Before your first submission, get an account (once):"
    )


def test_package_reports_what_the_server_would_refuse(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text("class Agent:\n    pass\n")
    assert modules["package"].main([]) == 1
    assert "REFUSED" in capsys.readouterr().out


def test_package_shows_the_screenings_flags(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text((folder / "agent.py").read_text() + "\nimport subprocess\n")
    assert modules["package"].main([]) == 0
    assert "needs staff review: agent.py:" in capsys.readouterr().out


def test_play_defaults_to_one_environment_per_layout_with_varied_rules(kit_scripts):
    _, _, modules = kit_scripts
    envs = modules["play"].default_envs(public_tier())
    layouts = {(s.layout.rows, s.layout.cols, tuple(map(tuple, s.layout.obstacles))) for s in envs}
    assert len(envs) == len(layouts) == 7
    assert len({s.rules.win for s in envs}) == 2 and len({s.rules.capture for s in envs}) >= 4


def results_fixture() -> dict:
    def curve(rates):
        return [{"games": g, "win_rate": w, "draw_rate": d} for g, (w, d) in zip((0, 20, 50, 100), rates)]

    sae = {"value": 0.5, "b0": 20, "b_max": 100}
    agents = [
        {"name": n, "curve": curve(r), "sae": sae, "faulted_envs": 0}
        for n, r in (
            ("greedy", [(0.5, 0), (0.5, 0.1), (0.6, 0), (0.7, 0)]),
            ("you", [(0.3, 0), (0.4, 0.2), (0.5, 0.1), (0.8, 0)]),
        )
    ]
    env_rows = [
        {"name": "you", "status": "ok", "curve": curve([(0.3, 0), (0.4, 0.2), (0.5, 0.1), (0.8, 0)]), "sae": 0.6}
    ]
    return {
        "agents": agents,
        "environments": [{"label": "E01", "name": "standard most/standard", "agents": env_rows}],
        "pairwise": [{"a": "greedy", "b": "you", "a_wins": 3, "draws": 1, "b_wins": 6, "games": 10}],
    }


def test_the_curve_is_an_svg_with_a_line_per_entrant_and_your_draws_dashed(kit_scripts):
    _, _, modules = kit_scripts
    svg = modules["play"].curve_svg(results_fixture(), "you")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.findall(f"{ns}polyline")
    assert len(lines) == 3  # greedy win rate, your win rate, your draw rate
    assert sum(1 for line in lines if line.get("stroke-dasharray")) == 1
    assert "SAE window [20, 100]" in svg


def test_the_tables_give_the_curve_the_sae_window_and_your_pairings(kit_scripts, capsys):
    _, _, modules = kit_scripts
    modules["play"].print_tables(results_fixture(), "you")
    out = capsys.readouterr().out
    assert "SAE [20, 100]" in out
    assert "you v greedy  6     1      3       10" in out


def test_kitenv_refuses_an_old_python_with_the_way_out(kit_scripts, monkeypatch):
    _, manifest, modules = kit_scripts
    kitenv = modules["kitenv"]
    monkeypatch.setattr(kitenv, "MIN_PYTHON", (99, 0))
    with pytest.raises(kitenv.KitSetupError, match=r"needs Python 99\.0 or newer \(the grader runs Python 3\.11\)"):
        kitenv.check_platform(manifest)


def test_kitenv_says_when_the_folder_is_not_a_built_kit(kit_scripts):
    folder, _, modules = kit_scripts
    (folder / "kit.json").unlink()
    with pytest.raises(modules["kitenv"].KitSetupError, match="not a built kit"):
        modules["kitenv"].manifest()


class NoStartSandbox:
    """A sandbox that cannot start anything, as on a host where the isolation is missing."""

    name = "broken"

    def start(self, submission, limits, network="none"):
        from grader.sandbox.base import LaunchError

        raise LaunchError("no namespaces here")

    def capabilities(self) -> dict[str, bool]:
        return {}

    def image(self) -> None:
        return None


def test_a_sandbox_that_cannot_start_is_called_the_arenas_failure(kit_scripts, capsys, monkeypatch):
    _, _, modules = kit_scripts
    import grader.kit.build

    monkeypatch.setattr(grader.kit.build, "choose_sandbox", lambda name: (NoStartSandbox(), "broken: for the test"))
    assert modules["check"].main([]) == 1
    out = capsys.readouterr().out
    assert "FAIL on the 6x8 board" in out and "launch_failed: no namespaces here" in out
    assert "not your agent" in out


def test_check_takes_a_zip_too(kit_scripts, capsys, tmp_path, local_only):
    folder, _, modules = kit_scripts
    archive = write_submission_zip(folder, ["agent.py"], tmp_path / "mine.zip")
    assert modules["check"].main(["--agent", str(archive)]) == 0
    assert "submission: mine.zip" in capsys.readouterr().out


def test_package_seals_the_submission_and_only_the_arenas_key_opens_it(kit_scripts, capsys, tmp_path, monkeypatch):
    import yaml
    from nacl.public import PrivateKey

    from grader.documents.sealing import KEY_ENV, encode_key
    from grader.documents.submission import SubmissionError, load_submission

    folder, manifest, modules = kit_scripts
    assert modules["package"].main([]) == 0
    out = capsys.readouterr().out
    sealed = folder / "submission"
    assert sorted(p.name for p in sealed.iterdir()) == ["manifest.yaml", "submission.sealed"]
    doc = yaml.safe_load((sealed / "manifest.yaml").read_text())
    assert doc["handle"] == "alice" and doc["kit_version"] == manifest["version"]
    assert doc["recipient"] == manifest["submission_key"] and f"digest: {doc['digest']}" in out
    owner = folder / ".arena-owner.key"  # the owner's own key pair, beside the kit, never packaged
    assert doc["owner_key"] and owner.stat().st_mode & 0o077 == 0
    assert b"class Agent" not in (sealed / "submission.sealed").read_bytes()
    # This checkout's arena opens it, to the same files.
    opened = load_submission(sealed, extract_to=tmp_path / "opened")
    assert opened.digest == doc["digest"] and opened.files == ("agent.py",)
    # Another key opens nothing.
    monkeypatch.setenv(KEY_ENV, encode_key(bytes(PrivateKey.generate())))
    with pytest.raises(SubmissionError, match="sealed to another arena's key"):
        load_submission(sealed, extract_to=tmp_path / "other")


def test_package_without_a_handle_is_not_sealed(kit_scripts, capsys, monkeypatch):
    folder, _, modules = kit_scripts
    monkeypatch.delenv("HANDLE")
    assert modules["package"].main([]) == 1
    assert "NOT SEALED: submission/ holds no package now; say your handle" in capsys.readouterr().out
    assert not (folder / "submission").exists()
