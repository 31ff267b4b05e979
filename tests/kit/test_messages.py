"""What a student reads from the kit's scripts when something is wrong, and the steps to a pull
request: package.py after a failed check, checks remembered by digest, a module the grader's
image lacks, play.py's saved logs, the long check, the engine compiled by `make setup`."""

from __future__ import annotations

import textwrap

import pytest

import grader.play.smoke
from grader.kit.build import render_fields, submit_steps
from grader.play.smoke import SmokeSettings, run_smoke
from grader.sandbox import get_sandbox
from grader.sandbox.image import NUMPY_VERSION

pytestmark = pytest.mark.timeout(300)
FAILS_LATER = textwrap.dedent("""\
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            self.outcomes = 0

        def act(self, obs, action_mask):
            if self.outcomes >= 3:  # only once it has "learned": the short gate never gets here
                raise RuntimeError("the learned policy is broken")
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            self.outcomes += 1
    """)
PRINTS = textwrap.dedent("""\
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            print("debug: prepare on", env_info["rows"], "x", env_info["cols"])

        def act(self, obs, action_mask):
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            pass
    """)
BROKEN = (
    "class Agent:\n    def prepare(self, e): pass\n    def act(self, o, m): raise RuntimeError('no')\n"
    "    def observe_outcome(self, o): pass\n"
)


def check(modules, capsys, *argv: str) -> tuple[int, str]:
    code = modules["check"].main(["--sandbox", "none", *argv])
    return code, capsys.readouterr().out


def package(modules, capsys, *argv: str) -> tuple[int, list[str]]:
    code = modules["package"].main(list(argv))
    return code, capsys.readouterr().out.splitlines()


def test_package_refuses_what_make_check_failed_unless_forced(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(BROKEN)
    code, out = check(modules, capsys)
    assert code == 1 and "FAIL on the 6x8 board" in out
    code, lines = package(modules, capsys)
    assert code == 1
    assert any(line.startswith("make check FAILED on these exact files (") for line in lines)
    assert not any(line.startswith("OK:") for line in lines)
    assert lines[-1].startswith(
        "REFUSED: make check failed on these exact files, so submission.zip was not kept. Fix your agent"
    )
    assert not (folder / "submission.zip").exists()
    code, lines = package(modules, capsys, "--force")
    assert code == 0 and (folder / "submission.zip").exists()
    assert "packaged anyway (--force): a round would fail your agent as make check did" in lines


def test_every_checked_agent_is_remembered_by_its_digest(kit_scripts, capsys, tmp_path):
    folder, _, modules = kit_scripts
    passed = folder  # the template agent
    failed = tmp_path / "other"
    failed.mkdir()
    (failed / "agent.py").write_text(BROKEN)
    assert check(modules, capsys)[0] == 0
    assert check(modules, capsys, "--agent", str(failed))[0] == 1  # checked after the passing one
    code, lines = package(modules, capsys, "--agent", str(passed))
    assert code == 0
    assert any(line.startswith("make check passed on these exact files (") for line in lines)
    code, lines = package(modules, capsys, "--agent", str(failed), "--out", str(tmp_path / "other.zip"))
    assert code == 1 and any(line.startswith("make check FAILED on these exact files") for line in lines)


def test_package_ends_with_the_steps_to_a_pull_request(kit_scripts, capsys):
    _, manifest, modules = kit_scripts
    manifest["repository"] = "https://github.com/course/othello-arena"
    code, lines = package(modules, capsys)
    assert code == 0
    tail = lines[lines.index("To submit it:") + 1 : -2]
    assert tail == [f"  {n}. {step}" for n, step in enumerate(submit_steps(manifest["repository"]), 1)]
    assert lines[-2] == "The arena's repository: https://github.com/course/othello-arena"
    assert lines[-1].startswith("The arena's site: <https://course.github.io/othello-arena/>")
    text = "\n".join(tail)
    assert "Fork https://github.com/course/othello-arena on GitHub" in text
    assert "`git switch -c submit`" in text and "`submissions/<your handle>/`" in text
    assert "open a pull request against the arena's `main`" in text


def test_the_readme_carries_the_same_steps(kit_scripts):
    folder, manifest, _ = kit_scripts
    fields = render_fields({**manifest, "repository": "https://github.com/course/othello-arena"})
    steps = submit_steps("https://github.com/course/othello-arena")
    assert fields["submit_steps"].splitlines() == [f"{n}. {s}" for n, s in enumerate(steps, 1)]
    assert "{{submit_steps}}" in (folder / "README.md").read_text()


def test_a_module_the_image_lacks_is_named_with_what_the_image_holds(tmp_path):
    (tmp_path / "agent.py").write_text(
        "import pandas\n\nclass Agent:\n    def prepare(self, e): pass\n"
        "    def act(self, o, m): return 0\n    def observe_outcome(self, o): pass\n"
    )
    lines: list[str] = []
    report = run_smoke(
        tmp_path,
        get_sandbox("unsafe", quiet=True),
        SmokeSettings(games_vs_random=1, self_play_games=1, frozen_games=1),
        log=lines.append,
    )
    assert report.result == "fail"
    assert (
        "import of agent.py failed: ModuleNotFoundError: No module named 'pandas' - the grader's image has only "
        f"Python's standard library and numpy {NUMPY_VERSION}, so 'pandas' cannot be imported there"
    ) in report.reason
    assert NUMPY_VERSION == "2.4.6"
    progress = " ".join(lines)
    assert "None" not in progress and "mean act - (pace" in progress


def test_play_saves_what_the_agent_printed_per_environment_and_says_where(kit_scripts, capsys, tmp_path):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(PRINTS)
    out_dir = tmp_path / "results"
    code = modules["play"].main(
        [
            "--envs",
            "2",
            "--budget",
            "2",
            "--checkpoints",
            "0,2",
            "--games-per-checkpoint",
            "2",
            "--pairing-games",
            "2",
            "--opponents",
            "random",
            "--sandbox",
            "none",
            "--out",
            str(out_dir),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    logs = sorted((out_dir / "logs").glob("*.log"))
    assert [p.name for p in logs] == ["E01.log", "E02.log"]
    assert "debug: prepare on" in logs[0].read_text()
    assert (
        f"your agent's output (what it printed), one file per environment: {out_dir / 'logs'}/ (E01.log, E02.log)"
    ) in out


def test_the_long_check_exercises_play_after_learning(kit_scripts, capsys, monkeypatch):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(FAILS_LATER)
    code, out = check(modules, capsys)
    assert code == 0, out  # the gate's 2 self-play games never reach the learned play
    assert "not covered by this check:" in out and "`make check-long` plays 500 self-play games per board" in out
    monkeypatch.setattr(grader.play.smoke, "LONG_SETTINGS", SmokeSettings(self_play_games=5, frozen_games=2))
    code, out = check(modules, capsys, "--long")
    assert code == 1
    assert "the long check (the server's gate with a round's checkpoints and more self-play)" in out
    assert "5 self-play games" in out
    assert "RuntimeError: the learned policy is broken" in out


def test_setup_compiles_the_engine_with_a_line_per_board(kit_scripts, capsys):
    _, _, modules = kit_scripts
    assert modules["check"].main(["--setup"]) == 0
    err = capsys.readouterr().err
    assert "compiling the arena's engine for the gate's 4 boards (once; every later check reuses it) ..." in err
    for n, shape in enumerate(("6x8", "8x8", "10x10", "12x10"), 1):
        assert f"board {n}/4 ({shape}) ready" in err
    assert "the gate's own path, with the control agent" in err and "... compiled in " in err


@pytest.mark.parametrize(
    "returned,said",
    [
        (
            "float(np.flatnonzero(action_mask)[0])",
            "act() returned float 35.0, not an int: return the cell's index as a "
            "Python int, e.g. int(row * cols + col)",
        ),
        (
            "(4, 3)",
            "act() returned tuple (4, 3), not an int: return the cell's index as a Python int, "
            "e.g. int(row * cols + col)",
        ),
        ("None", "act() returned NoneType None, not an int: a missing `return` in act()?"),
    ],
)
def test_a_wrong_return_from_act_says_what_to_return(tmp_path, returned, said):
    (tmp_path / "agent.py").write_text(
        "import numpy as np\n\nclass Agent:\n    def prepare(self, e): pass\n"
        f"    def act(self, obs, action_mask):\n        return {returned}\n"
        "    def observe_outcome(self, o): pass\n"
    )
    report = run_smoke(
        tmp_path, get_sandbox("unsafe", quiet=True), SmokeSettings(games_vs_random=1, self_play_games=1, frozen_games=1)
    )
    assert report.result == "fail"
    if "35.0" in said:  # the first legal cell of the 6x8 opening differs: compare all but the number
        assert said.split("35.0")[1] in report.reason and "act() returned float " in report.reason
    else:
        assert said in report.reason


def test_play_names_the_option_it_refuses(kit_scripts, capsys):
    from grader.common.errors import OptionError

    play = kit_scripts[2]["play"]
    with pytest.raises(OptionError, match=r"--opponents: oracle \(reference opponents: ") as info:
        play.play(play.parse_args(["--opponents", "random,oracle"]), {})
    assert (info.value.option, info.value.value) == ("--opponents", ["oracle"])
    with pytest.raises(OptionError, match="--name 'greedy' is also a reference opponent's name") as info:
        play.play(play.parse_args(["--name", "greedy", "--opponents", "greedy"]), {})
    assert (info.value.option, info.value.value) == ("--name", "greedy")
    assert play.main(["--opponents", "oracle"]) == 2
    assert "--opponents: oracle" in capsys.readouterr().err
