"""`arena smoke`: the gate on every public board shape, in the local sandbox, in seconds."""

from __future__ import annotations

import dataclasses
import shutil
import textwrap

import pytest
import yaml

from grader.cli.main import main
from grader.common.limits import DEFAULT_LIMITS
from grader.play.smoke import SmokeSettings, run_smoke, smoke_boards
from grader.sandbox.local import bwrap_problem
from tests.sandbox.conftest import AGENTS

pytestmark = pytest.mark.timeout(300)  # a hang guard: a busy machine may take minutes
FAST = SmokeSettings(
    games_vs_random=2,
    self_play_games=1,
    frozen_games=1,
    limits=dataclasses.replace(DEFAULT_LIMITS, act_hard_seconds=2.0, act_soft_seconds=0.5),
)


@pytest.fixture(scope="module")
def sandbox():
    reason = bwrap_problem()
    if reason:
        pytest.skip(reason)
    from grader.sandbox.local import LocalSandbox

    return LocalSandbox()


def sleeper(tmp_path, seconds: float, extra: str = "") -> str:
    folder = tmp_path / f"sleeper-{seconds}"
    folder.mkdir()
    (folder / "agent.py").write_text(
        textwrap.dedent(f"""\
        import sys, time
        import numpy as np
        {extra}

        class Agent:
            def prepare(self, env_info):
                print("preparing", env_info["rows"], "x", env_info["cols"], file=sys.stderr)

            def act(self, obs, action_mask):
                # A busy wait on its own CPU time: sleep() in the sandbox overshoots by
                # milliseconds, and the pace charges the agent's own time, not the host's.
                end = time.thread_time() + {seconds}
                while time.thread_time() < end:
                    pass
                return int(np.flatnonzero(action_mask)[0])

            def observe_outcome(self, outcome):
                pass
        """)
    )
    return str(folder)


def test_one_public_environment_per_board_shape():
    shapes = [(s.layout.rows, s.layout.cols) for s in smoke_boards()]
    assert shapes == [(6, 8), (8, 8), (10, 10), (12, 10)]


def test_a_fast_agent_passes_every_board(sandbox, capsys):
    code = main(["smoke", str(AGENTS / "random_agent"), "--kit-version", "kit-1.2"])
    report = yaml.safe_load(capsys.readouterr().out)
    assert code == 0 and report["result"] == "pass" and report["first_failing_board"] is None
    assert list(report)[:5] == ["schema_version", "result", "reason", "needs_staff_label", "kit_version"]
    assert report["kit_version"] == "kit-1.2" and report["interpreter"].startswith("3.") and report["numpy"]
    assert [b["shape"] for b in report["boards"]] == ["6x8", "8x8", "10x10", "12x10"]
    for board in report["boards"]:
        assert board["result"] == "pass" and board["mean_act_ms"] < board["pace_ms"] and board["games"] == 8


def test_far_over_the_pace_is_stopped_early_on_the_first_board(sandbox, tmp_path):
    report = run_smoke(sleeper(tmp_path, 0.05), sandbox, FAST)
    assert not report.passed and report.first_failure.shape == "6x8"
    board = report.boards[0]
    assert board.fault["kind"] == "timeout" and board.acts == FAST.early_stop_acts
    assert [b.result for b in report.boards[1:]] == ["not_run"] * 3
    assert "preparing 6 x 8" in report.stderr_tail


def test_over_the_pace_but_not_far_fails_at_the_end_of_the_board(sandbox, tmp_path):
    # 6x8 pace 4.8 ms. The early stop is put out of reach (1000x the pace): 6.5 ms of CPU may
    # take 13-20 ms on a loaded machine, and the run-queue delay is only credited where the
    # host's schedstat is read.
    limits = dataclasses.replace(FAST.limits, pace_stop_factor=1000.0)
    report = run_smoke(sleeper(tmp_path, 0.0065), sandbox, dataclasses.replace(FAST, limits=limits))
    board = report.first_failure
    assert board.shape == "6x8" and board.fault is None and "over the 6x8 pace of 4.8 ms" in board.reason
    assert board.mean_act_ms > board.pace_ms


def test_crash_on_import_names_the_board_and_keeps_the_tail(sandbox, tmp_path):
    report = run_smoke(AGENTS / "crash_on_import", sandbox, FAST)
    assert not report.passed and report.first_failure.fault["kind"] == "agent_error"
    assert report.to_dict()["first_failing_board"] == "6x8"


def test_flagged_import_passes_but_needs_a_staff_label(sandbox, tmp_path):
    report = run_smoke(sleeper(tmp_path, 0, extra="import subprocess"), sandbox, FAST)
    assert report.passed and report.needs_staff_label
    assert report.to_dict()["flags"][0]["detail"].startswith("imports subprocess")


def test_an_invalid_submission_fails_before_anything_runs(tmp_path, capsys):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.txt").write_text("no agent here")
    assert main(["smoke", str(folder)]) == 1
    report = yaml.safe_load(capsys.readouterr().out)
    assert report["boards"] == [] and "no agent.py" in report["reason"]


def test_a_zip_is_smoke_tested_like_a_folder(sandbox, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "sub"), "zip", AGENTS / "random_agent")
    assert run_smoke(archive, sandbox, FAST).passed


def test_the_engine_is_compiled_before_any_boards_clock_starts(sandbox, tmp_path, monkeypatch):
    """A fresh install compiles the kernels at their first game: the gate plays one game of
    reference opponents on every board first, so that time never counts against the agent."""
    import grader.play.smoke as smoke

    order = []
    play_game, play_board = smoke.play_game, smoke._play_board

    def recorded_game(spec, black, white, seed):
        if (black, white) == ("random", "random"):
            order.append(("warm-up", spec.id))
        return play_game(spec, black, white, seed)

    def recorded_board(board, spec, *args):
        order.append(("board", spec.id))
        return play_board(board, spec, *args)

    monkeypatch.setattr(smoke, "play_game", recorded_game)
    monkeypatch.setattr(smoke, "_play_board", recorded_board)
    assert run_smoke(sleeper(tmp_path, 0), sandbox, FAST).passed
    ids = [s.id for s in smoke_boards()]
    assert order == [("warm-up", i) for i in ids] + [("board", i) for i in ids], order
