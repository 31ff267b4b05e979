"""Byte-identical results whatever --jobs, --shard or order; resume after a kill."""

from __future__ import annotations

import pytest

import grader.rounds.workers as runner
from grader.rounds.orchestrate import merge_shards, run_round
from tests.rounds.conftest import field, read_games, small_plan, without_execution

pytestmark = pytest.mark.timeout(240)

FIELD = (("alpha", "Learner"), ("bravo", "FirstLegal"))
ENVS = "random-2 most/standard,random-2 fewest/standard,random-2 most/longest"


def test_jobs_shards_and_field_order_give_identical_results(tmp_path):
    one = small_plan(field(*FIELD), envs=ENVS)
    a = run_round(one, tmp_path / "a", tmp_path / "pa", jobs=1, command="jobs 1")
    b = run_round(one, tmp_path / "b", tmp_path / "pb", jobs=2, command="jobs 2")
    # The same field given in another order is the same round.
    reordered = small_plan(list(reversed(field(*FIELD))), envs=ENVS)
    assert reordered.round_id == one.round_id
    for shard in ((1, 2), (2, 2)):
        assert (
            run_round(
                reordered, tmp_path / "c", tmp_path / f"s{shard[0]}", jobs=1, shard=shard, command=f"shard {shard}"
            ).status
            == "shard"
        )
    c = merge_shards(
        [tmp_path / "s1" / one.round_id, tmp_path / "s2" / one.round_id],
        tmp_path / "c",
        tmp_path / "pc",
        command="merge",
    )
    assert c.status == "published"
    assert without_execution(a.public_path) == without_execution(b.public_path) == without_execution(c.public_path)
    assert (
        read_games(tmp_path / "a", one.round_id)
        == read_games(tmp_path / "b", one.round_id)
        == read_games(tmp_path / "c", one.round_id)
    )
    assert (tmp_path / "a" / one.round_id / "games.jsonl.gz").read_bytes() == (
        tmp_path / "c" / one.round_id / "games.jsonl.gz"
    ).read_bytes()


def test_a_killed_round_resumes_from_finished_environments(tmp_path, monkeypatch, capsys):
    plan = small_plan(field(*FIELD), envs=ENVS)
    real = runner.play_env
    played = []

    def dies_on_second(plan_, entry, report=None, sandbox=None, cores=None):
        if len(played) == 1:
            raise KeyboardInterrupt  # the runner is killed in the middle of the second environment
        played.append(entry.label)
        return real(plan_, entry, report, sandbox, cores)

    monkeypatch.setattr(runner, "play_env", dies_on_second)
    with pytest.raises(KeyboardInterrupt):
        run_round(plan, tmp_path / "out", tmp_path / "private", command="first")
    assert not (tmp_path / "out").exists()  # nothing published from a partial round
    monkeypatch.setattr(
        runner,
        "play_env",
        lambda plan_, entry, report=None, sandbox=None, cores=None: (
            played.append(entry.label) or real(plan_, entry, report, sandbox)
        ),
    )
    resumed = run_round(plan, tmp_path / "out", tmp_path / "private", command="again")
    assert played == ["E01", "E02", "E03"]  # E01 was not played twice
    assert "resuming; 1 of 3 environments already recorded" in capsys.readouterr().err
    fresh = run_round(plan, tmp_path / "fresh", tmp_path / "fresh-private", command="fresh")
    assert without_execution(resumed.public_path) == without_execution(fresh.public_path)


def test_a_restart_with_other_arguments_is_another_round(tmp_path):
    plan = small_plan(field(*FIELD), envs="1")
    other = small_plan(field(*FIELD), envs="1", seed="8")
    assert plan.round_id != other.round_id
