"""The kit tells the student what the grader will do: each phase's pace with its margin, the
output a round would print, the latest verdict of either check, a missing freeze(), what the
agent printed, make play's progress, a submission a folder too deep, and how to get an account."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import grader.play.smoke
from grader.common.limits import DEFAULT_LIMITS
from grader.common.policy import CHECKPOINT, PAIRING, SELF_PLAY
from grader.documents.submission import SubmissionError, load_submission
from grader.kit.build import NO_REPOSITORY, register_steps, render, render_fields
from grader.play.smoke import BoardResult, PhaseResult, SmokeReport, SmokeSettings, run_smoke
from grader.rounds.aggregates import MIN_FIELD_FOR_STANDING
from grader.sandbox import get_sandbox
from grader.season.accounts import check_change, registry_from_text
from tests.kit.test_messages import FAILS_LATER as MESSAGES_FAILS_LATER

pytestmark = pytest.mark.timeout(300)
# Fast, except in the checkpoint games that follow its self-play (before freeze), where each
# move sleeps twice the 6x8 pace: one mean over the whole session stays far under the pace.
SLOW_AFTER_LEARNING = textwrap.dedent("""\
    import time
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            self.outcomes, self.frozen = 0, False
            self.pace = 0.0001 * env_info["rows"] * env_info["cols"]

        def act(self, obs, action_mask):
            if self.outcomes >= 2 and not self.frozen:  # the gate's last checkpoint games
                time.sleep(2 * self.pace)
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            self.outcomes += 1

        def freeze(self):
            self.frozen = True
    """)
PRINTS_THE_BOARD = textwrap.dedent("""\
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            pass

        def act(self, obs, action_mask):
            for row in obs[0] - obs[1]:
                print(" ".join("x" if v > 0 else "o" if v < 0 else "." for v in row))
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            pass

        def freeze(self):
            pass
    """)
NO_FREEZE = textwrap.dedent("""\
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            pass

        def act(self, obs, action_mask):
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            pass
    """)
# test_messages' agent that fails once it has learned, with a freeze() (no note about a missing one).
FAILS_LATER = MESSAGES_FAILS_LATER + textwrap.indent("\ndef freeze(self):\n    pass\n", "    ")


def check(modules, capsys, *argv: str) -> tuple[int, str]:
    code = modules["check"].main(["--sandbox", "none", *argv])
    return code, capsys.readouterr().out


def package(modules, capsys, *argv: str) -> tuple[int, list[str]]:
    code = modules["package"].main(list(argv))
    return code, capsys.readouterr().out.splitlines()


def table_rows(out: str, shape: str) -> list[list[str]]:
    """The rows of the check's table for the board `shape`: its first row and its phase rows."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(shape + " "))
    rows = [lines[start].split()]
    for line in lines[start + 1 :]:
        if not line.startswith("   ") or not line.strip():
            break
        rows.append(line.split())
    return rows


def test_each_phase_is_printed_beside_its_pace_and_a_slow_one_fails_the_check(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    code, out = check(modules, capsys)
    assert code == 0, out
    assert "  board  environment" in out and "phase" in out and "margin" in out
    for shape in ("6x8", "8x8", "10x10", "12x10"):
        rows = table_rows(out, shape)
        assert (
            [r for r in rows if CHECKPOINT in r]
            and [r for r in rows if SELF_PLAY in r]
            and [r for r in rows if PAIRING in r]
        ), rows
        assert rows[0][-1] == "pass" and all(r[-2 if r is rows[0] else -1].endswith("%") for r in rows)
    assert "a scored round needs a margin of 25% here" in out
    assert "PASS: every public board shape, every phase's mean act() under its pace" in out

    (folder / "agent.py").write_text(SLOW_AFTER_LEARNING)
    code, out = check(modules, capsys)
    assert code == 1, out
    lines = out.splitlines()
    fail = next(line for line in lines if line.startswith("FAIL on the 6x8 board"))
    assert "calls in the checkpoint games is over the 6x8 pace of 4.8 ms (each phase is judged on its own mean)" in fail
    checkpoint = next(r for r in table_rows(out, "6x8") if CHECKPOINT in r)
    assert checkpoint[-2].startswith("-") and checkpoint[-2].endswith("%")  # a negative margin: over the pace
    assert checkpoint[-1] == "fail"


def test_the_checkpoint_games_follow_self_play_as_in_a_round():
    """The bundled example was faulted in a round's checkpoint games, which mostly follow
    self-play; the gate now plays them before and after its self-play, the long check at a
    round's own checkpoints."""
    assert SmokeSettings().checkpoint_points() == (0, 2)
    long = grader.play.smoke.LONG_SETTINGS
    assert long.checkpoint_points() == (0, 100, 500) and long.games_vs_random == 20
    assert long.phase_games() == {CHECKPOINT: 60, SELF_PLAY: 500, PAIRING: 20}
    with pytest.raises(ValueError, match="checkpoints"):
        SmokeSettings(self_play_games=2, checkpoints=(0, 5))


def board_with(phases: dict[str, tuple[int, int, float, int]], pace_ms: float = 6.4) -> BoardResult:
    board = BoardResult("8x8", "standard most/standard", "env-x", result="pass", pace_ms=pace_ms)
    board.phases = {name: PhaseResult(games, acts, mean, out) for name, (games, acts, mean, out) in phases.items()}
    return board


def test_a_phase_inside_the_margin_is_named_tight(kit_scripts, capsys):
    _, _, modules = kit_scripts
    board = board_with({CHECKPOINT: (4, 60, 5.6, 0), SELF_PLAY: (2, 120, 0.2, 0), PAIRING: (2, 30, 3.0, 0)})
    report = SmokeReport(submission="agent", sandbox="none", result="pass", boards=[board])
    modules["check"].print_report(report, 1.0)
    out = capsys.readouterr().out
    assert "TIGHT: under the pace but inside that margin: 8x8 checkpoint (12%)" in out
    rows = table_rows(out, "8x8")
    assert rows[0][3:] == ["checkpoint", "4", "60", "5.600", "ms", "6.4", "ms", "12%", "pass"]


def test_output_that_a_round_would_cut_off_fails_the_short_check(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(PRINTS_THE_BOARD)
    code, out = check(modules, capsys)
    assert code == 1, out
    # Under the cap on 6x8 (about 2 KiB a game); 8x8's 64 cells a move take it over at 4 KiB a game.
    fail = next(line for line in out.splitlines() if line.startswith("FAIL on the 8x8 board"))
    assert "your agent printed" in fail and "MiB output cap of that session, and a round kills it there" in fail
    field = DEFAULT_LIMITS.largest_field
    assert "2,000 self-play games" in fail and f"against a field of {field}" in fail
    assert f"{20 * (field - 1):,} pairing games" in fail
    assert f"projected to a round's session in a field of {field} entrants" in out
    assert "output: your agent printed" in out and "MiB output cap" in out and "CPU share of" in out
    code, lines = package(modules, capsys)
    assert code == 1 and lines[-1].startswith("REFUSED: make check failed on these exact files")


def test_the_projection_is_for_the_largest_field_or_the_one_given():
    assert SmokeSettings().round_field() == DEFAULT_LIMITS.largest_field
    assert SmokeSettings(field=MIN_FIELD_FOR_STANDING).round_field() == MIN_FIELD_FOR_STANDING
    games = grader.play.smoke.round_games(150)
    assert games == {CHECKPOINT: 100, SELF_PLAY: 2000, PAIRING: 20 * 149}
    board = board_with({CHECKPOINT: (4, 60, 5.0, 400), SELF_PLAY: (2, 120, 2.0, 200), PAIRING: (2, 60, 5.0, 100)})
    board.round_field, board.output_bytes = 150, 1000  # 300 of them printed by prepare
    # Acts a game times the mean act, times a round's games of each phase.
    assert grader.play.smoke.project_act_seconds(board) == pytest.approx(
        15 * 100 * 0.005 + 60 * 2000 * 0.002 + 30 * 2980 * 0.005
    )
    assert grader.play.smoke.project_output(board) == 300 + 100 * 100 + 100 * 2000 + 50 * 2980


def test_a_quiet_agent_is_projected_under_the_cap(tmp_path):
    (tmp_path / "agent.py").write_text(NO_FREEZE.replace("pass\n\n    def act", "print('ready')\n\n    def act", 1))
    report = run_smoke(tmp_path, get_sandbox("unsafe", quiet=True), SmokeSettings())
    assert report.passed, report.reason
    board = report.boards[0]
    assert board.output_bytes == len("ready\n") and board.round_output_bytes == len("ready\n")


def test_package_honours_the_latest_verdict_of_either_check(kit_scripts, capsys, monkeypatch):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(FAILS_LATER)
    assert check(modules, capsys)[0] == 0
    code, lines = package(modules, capsys)
    assert code == 0 and any(line.startswith("make check passed on these exact files (") for line in lines)
    monkeypatch.setattr(grader.play.smoke, "LONG_SETTINGS", SmokeSettings(self_play_games=5, frozen_games=2))
    assert check(modules, capsys, "--long")[0] == 1
    code, lines = package(modules, capsys)
    assert code == 1
    assert any(
        line.startswith("make check-long FAILED on these exact files (") and "its latest check" in line
        for line in lines
    )
    assert not any("make check passed" in line or line.startswith("OK:") for line in lines)
    assert lines[-1].startswith(
        "REFUSED: make check-long failed on these exact files, so submission.zip was not "
        "kept. Fix your agent, run `make check-long` until it passes"
    )


def test_a_missing_freeze_is_said_with_what_the_grader_does(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(NO_FREEZE)
    code, out = check(modules, capsys)
    assert code == 0, out
    assert (
        "note: class Agent has no freeze() method: once the budget's self-play is spent the grader calls "
        "freeze(), and finding none calls nothing"
    ) in out
    (folder / "agent.py").write_text(FAILS_LATER)  # has freeze()
    assert "note: class Agent has no freeze()" not in check(modules, capsys)[1]


def test_what_the_agent_printed_is_labelled_as_its_printed_output(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(
        "class Agent:\n    def prepare(self, e):\n        print('thinking')\n"
        "    def act(self, o, m): raise RuntimeError('no')\n"
        "    def observe_outcome(self, o): pass\n"
    )
    code, out = check(modules, capsys)
    assert code == 1
    assert (
        "--- what your agent printed on that board (print() and stderr, kept off the protocol channel; last lines) ---"
    ) in out
    assert "thinking" in out and "your agent's stderr" not in out


def test_the_readme_says_one_thing_of_when_the_pace_is_judged(kit_scripts):
    folder, manifest, _ = kit_scripts
    text = render((folder / "README.md").read_text(), render_fields(manifest), "README.md")
    assert "a scored round judges a phase once 200 of its\ncalls are timed (stopped then if over 3x the pace" in text
    assert (
        "so it judges each one on all\nits calls at the end of the board, and stops one over 3x the pace after\n20 calls"
        in text
    )
    assert "is stopped early." not in text  # the old sentence, which gave the gate's 20 as the rule
    said = " ".join(text.split())
    assert (
        "is your agent's printed output: the arena's runner keeps it off the protocol channel, so it never "
        "reaches the game"
    ) in said


def test_play_says_whose_games_and_times_each_environment_on_its_own(kit_scripts, capsys, monkeypatch):
    play = kit_scripts[2]["play"]
    words = play.progress_words
    assert words("you self-play 40/100", "you") == "your agent: self-play game 40 of 100"
    assert words("greedy self-play 40/100", "you") is None  # a reference opponent learns nothing: no line
    assert (
        words("greedy checkpoint 20", "you") == "reference opponent greedy: the games against random at checkpoint 20"
    )
    assert words("you checkpoint 20", "you") == "your agent: the games against random at checkpoint 20"
    assert words("pairing you v random", "you") == "pairing games, you against random"
    clock = iter([130.0, 131.0])
    monkeypatch.setattr(play.time, "monotonic", lambda: next(clock))
    report = play.progress("E02", "you", env_started=100.0, started=10.0)
    report("E02", 50, "random self-play 50/100")
    report("E02", 50, "you self-play 50/100")
    assert capsys.readouterr().err == "  E02: your agent: self-play game 50 of 100 (30 s in E02, 120 s in all)\n"


def test_a_submission_a_folder_too_deep_is_told_where_agent_py_is(tmp_path, kit_scripts, capsys):
    inner = tmp_path / "jo" / "othello-arena-kit"
    inner.mkdir(parents=True)
    (inner / "agent.py").write_text(NO_FREEZE)
    (inner / "weights.json").write_text("[]")
    said = (
        "no agent.py at the top of the submission, but there is othello-arena-kit/agent.py: move what is in "
        "othello-arena-kit/ up to the top (in a pull request: into submissions/<your handle>/ itself)"
    )
    with pytest.raises(SubmissionError) as info:
        load_submission(tmp_path / "jo")
    assert str(info.value) == said  # no machine path: the pull request's smoke test says it as it is
    report = run_smoke(tmp_path / "jo", get_sandbox("unsafe", quiet=True), SmokeSettings())
    assert report.reason == f"not a valid submission: {said}"
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    with pytest.raises(SubmissionError, match=r"no agent.py at the top of the submission, nor in its folders"):
        load_submission(empty)
    _, _, modules = kit_scripts
    code = modules["check"].main(["--sandbox", "none", "--agent", str(tmp_path / "jo")])
    assert code == 2 and "but there is othello-arena-kit/agent.py: move what is in" in capsys.readouterr().err


def test_package_says_how_to_get_an_account_and_where_the_repository_is(kit_scripts, capsys):
    _, manifest, modules = kit_scripts
    code, lines = package(modules, capsys)
    assert code == 0
    start = lines.index("Before your first submission, get an account (once):")
    steps = register_steps(None)
    assert lines[start + 1 : start + 1 + len(steps)] == [f"  {n}. {s}" for n, s in enumerate(steps, 1)]
    text = "\n".join(lines)
    assert "https://api.github.com/users/<your login>" in text and "accounts.yaml" in text
    repository = [line for line in lines if line.startswith("The arena's repository:")]
    assert repository == [f"The arena's repository: {NO_REPOSITORY}"]
    assert "Kit page" not in repository[0]  # the old pointer to a page that has no address either
    manifest["repository"] = "https://github.com/course/othello-arena"
    code, lines = package(modules, capsys)
    assert "The arena's repository: https://github.com/course/othello-arena" in lines
    assert "Fork https://github.com/course/othello-arena on GitHub, and on a branch" in "\n".join(lines)


def test_the_registration_the_steps_describe_is_one_the_pull_request_check_accepts():
    base_text = (Path(__file__).resolve().parents[2] / "accounts.yaml").read_text()
    base = registry_from_text(base_text, "accounts.yaml")
    # What the third step says to write, in place of `{}`, for a student with id 583231.
    head_text = base_text.replace(
        "accounts: {}", "accounts:\n  583231: {login: jo-smith, handle: jo, approved: false, staff: false}"
    )
    head = registry_from_text(head_text, "accounts.yaml")
    assert check_change(base, head, 583231) == []
    assert "`<id>: {login: <your login>, handle: <handle>, approved: false, staff: false}`" in register_steps(None)[2]


def test_the_readme_renders_the_account_steps_and_the_repository(kit_scripts):
    folder, manifest, _ = kit_scripts
    source = (folder / "README.md").read_text()
    assert "{{register_steps}}" in source and "{{repository}}" in source
    text = render(source, render_fields(manifest), "README.md")
    assert "## How to get an account" in text and "https://api.github.com/users/<your login>" in text
    assert "This kit was built without the arena repository's address (`kit.repository`" in text
    text = render(source, render_fields({**manifest, "repository": "https://github.com/course/arena"}), "README.md")
    assert "The arena's repository: <https://github.com/course/arena>" in text
