"""The round's progress line: every game counted once, void pairings too, and agent faults on
the console as they happen."""

from __future__ import annotations

import io
import re

import pytest

import grader.rounds.play as play
from grader.common.schedule import games_per_env
from grader.rounds.orchestrate import run_round
from tests.rounds.conftest import field, small_plan
from tests.rounds.test_arena_faults import failing_launches

pytestmark = pytest.mark.timeout(120)
GAMES = re.compile(r"games (-?\d+)/(\d+)")


def counts(text: str) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in GAMES.findall(text)]


def test_progress_ends_at_the_total_with_void_pairings_and_shows_the_faults(tmp_path):
    plan = small_plan(
        field(("alpha", "Learner"), ("crash", "CrashLate"), ("prep", "CrashOnPrepare")), envs="random-2 most/standard"
    )
    stream = io.StringIO()
    run_round(plan, tmp_path / "out", tmp_path / "private", command="t", stream=stream)
    text = stream.getvalue()
    total = games_per_env(
        len(plan.field), list(plan.checkpoints), plan.games_per_checkpoint, plan.pairing_games, plan.budget
    )
    done, of = counts(text)[-1]
    assert of == total and done == total, text  # the dead entrants' void pairings are counted
    assert all(d <= of for d, of in counts(text))
    assert "crash: fault agent_error during" in text and "prep: fault agent_error during prepare" in text
    assert "ZeroDivisionError" not in text  # a fault's detail (the agent's words) stays in the record


def test_an_abandoned_attempts_games_are_not_counted_twice(tmp_path, monkeypatch):
    plan = small_plan(field(("alpha", "Learner"), ("bravo", "FirstLegal")), envs="random-2 most/standard")
    # bravo's first launch fails the arena's way, after alpha's learning games were reported.
    monkeypatch.setattr(play, "open_session", failing_launches(1, who="bravo"))
    monkeypatch.setattr(play, "PROGRESS_EVERY", 1)
    monkeypatch.setattr("grader.rounds.workers.PROGRESS_SECONDS", 0.0)
    stream = io.StringIO()
    outcome = run_round(plan, tmp_path / "out", tmp_path / "private", command="t", stream=stream)
    assert outcome.status == "published"
    text = stream.getvalue()
    total = games_per_env(
        len(plan.field), list(plan.checkpoints), plan.games_per_checkpoint, plan.pairing_games, plan.budget
    )
    before = [line for line in text.splitlines() if "attempt 1 abandoned" in line]
    assert before and "the arena's launch_failed" in before[0]
    assert max(d for d, _ in counts(text[: text.index(before[0])])) > 0  # games were reported, then taken back
    assert counts(before[0])[0][0] == 0
    assert counts(text)[-1] == (total, total) and all(d <= of for d, of in counts(text)), text
