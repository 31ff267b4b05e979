"""The capacity plan's arithmetic (grader/rounds/capacity.py) and `arena capacity`'s refusal."""

from __future__ import annotations

import pytest
import yaml

from grader.cli.main import main
from grader.common.limits import DEFAULT_LIMITS
from grader.common.schedule import default_checkpoints
from grader.rounds.capacity import (
    HOST_SECONDS_PER_MOVE,
    Board,
    CapacityError,
    Machines,
    env_cost,
    plan_capacity,
    runners_needed,
    unknown_boards,
)

EIGHT = Board("eight", 8, 8, 0)  # 60 acts a game; 6.4 ms an act at the pace: 0.384 s a game
HOST = 60 * HOST_SECONDS_PER_MOVE  # the arena's own time in a game of 60 moves


def test_one_environment_by_hand():
    cost = env_cost(
        EIGHT, entrants=3, checkpoints=[0, 4], per_checkpoint=2, per_pairing=2, budget=4, cores=2, act_seconds=0.0064
    )
    # Per entrant: 4 self-play games (0.384 s, and the host's time a move) and 2 x 2 checkpoint
    # games (half of that each).
    game = 0.384 + HOST
    learning = 4 * game + 4 * game / 2
    assert cost.games == 3 * (2 * 2 + 4) + 3 * 2
    assert cost.cpu_seconds == pytest.approx(3 * learning + 6 * game)
    # 2 cores: the core time (a pairing game holds one: its agents take turns) over them,
    # longer than any one chain.
    assert cost.wall_seconds == pytest.approx((3 * learning + 6 * game) / 2)


def test_a_long_chain_bounds_the_wall_time_however_many_cores():
    cost = env_cost(EIGHT, 3, [0, 4], 2, 2, 4, cores=1000, act_seconds=0.0064)
    game = 0.384 + HOST
    assert cost.wall_seconds == pytest.approx(4 * game + 4 * game / 2 + 2 * 2 * game)


def test_obstacles_and_the_opening_are_no_acts():
    assert Board("x", 10, 12, 8).acts_per_game == 120 - 8 - 4


def plan(boards, entrants, runners, cores, job_hours=None, **kw):
    return plan_capacity(
        boards,
        entrants,
        default_checkpoints(2000),
        20,
        20,
        2000,
        Machines(runners, cores, job_hours),
        DEFAULT_LIMITS,
        **kw,
    )


def test_a_final_of_120_on_28_runners_of_16_cores_at_the_8x8_pace():
    boards = [EIGHT._replace(name=f"e{i}") for i in range(28)]
    now = plan(boards, 120, 28, 16)
    before = plan(boards, 120, 28, 1)  # one core a runner: every game one after another
    assert now.wall_hours < 4 < 34 < before.wall_hours
    assert now.games == 28 * (120 * (5 * 20 + 2000) + 120 * 119 // 2 * 20)
    assert now.peak_sandboxes == 120 and now.memory_limit_bytes == 120 * DEFAULT_LIMITS.memory_bytes


def test_environments_are_shared_over_runners_as_shards_are():
    boards = [EIGHT._replace(name="a"), Board("b", 12, 12, 0), EIGHT._replace(name="c")]
    one = plan(boards[:1], 10, 1, 4).wall_hours
    big = plan(boards[1:2], 10, 1, 4).wall_hours
    assert plan(boards, 10, 2, 4).wall_hours == pytest.approx(max(2 * one, big))  # runner 1 plays a and c
    assert plan(boards, 10, 5, 4).wall_hours == pytest.approx(big)  # a runner past the third has nothing


def test_the_runners_needed_are_the_fewest_that_fit():
    boards = [EIGHT._replace(name=f"e{i}") for i in range(12)]
    full = plan(boards, 40, 1, 8)
    limit = full.wall_hours / 3.5  # four runners play 3 environments each: inside; three play 4: over
    refused = plan(boards, 40, 1, 8, job_hours=limit)
    assert not refused.fits and refused.runners_needed == 4
    assert plan(boards, 40, 4, 8, job_hours=limit).fits and not plan(boards, 40, 3, 8, job_hours=limit).fits
    assert runners_needed(list(full.envs), full.envs[0].wall_seconds / 3600 / 2) is None  # one alone is over
    assert "needs 4 runners of 8 cores" in "\n".join(refused.lines())


def test_the_measured_speed_scales_the_cpu_and_the_time():
    at = plan([EIGHT], 10, 1, 4, measured_fraction=0.25)
    # The agents' acts at a quarter of the pace; the arena's own time a move stays as it is.
    scale = (0.25 * 0.0064 + HOST_SECONDS_PER_MOVE) / (0.0064 + HOST_SECONDS_PER_MOVE)
    assert at.cpu_hours_measured == pytest.approx(at.cpu_hours_at_pace * scale)
    assert at.wall_hours_measured == pytest.approx(at.wall_hours * scale)


def test_unknown_shapes_are_planned_as_the_largest_board():
    boards = unknown_boards("final", None)
    assert len(boards) == 28 and {(b.rows, b.cols, b.obstacles) for b in boards} == {(12, 12, 0)}


@pytest.mark.parametrize("machines", [(0, 4, None), (2, 0, None), (2, 4, 0.0)])
def test_bad_machines_are_named(machines):
    with pytest.raises(CapacityError):
        Machines(*machines)


def test_capacity_refuses_a_dispatch_over_the_job_limit(capsys):
    argv = ["capacity", "--tier", "public", "--entrants", "120", "--cores", "16", "--job-hours", "72"]
    assert main(argv + ["--runners", "1"]) == 1
    out, err = capsys.readouterr()
    assert "fits: NO" in out and "refused" in err and "72 h" in err
    assert main(argv + ["--runners", "56"]) == 0
    assert "fits: yes" in capsys.readouterr()[0]


def test_capacity_names_the_runners_needed(capsys):
    argv = ["capacity", "--tier", "public", "--envs", "8", "--entrants", "30", "--cores", "16", "--runners", "1"]
    assert main(argv + ["--job-hours", "2"]) == 1
    err = capsys.readouterr()[1]
    assert "it needs" in err and "runners of 16 cores" in err


def test_capacity_reads_the_fields_measured_speed(tmp_path, capsys):
    field = {
        "schema_version": 1,
        "tier": "final",
        "source_commit": None,
        "taken_at": "2026-01-01T00:00:00Z",
        "frozen_at": None,
        "excluded": [],
        "entrants": [
            {"handle": h, "account_id": i, "digest": "d", "path": h, "flags": [], "pace_fraction": f}
            for i, (h, f) in enumerate((("a", 0.5), ("b", 0.3), ("c", None)))
        ],
    }
    path = tmp_path / "field.yaml"
    path.write_text(yaml.safe_dump(field))
    assert main(["capacity", "--tier", "public", "--field", str(path), "--runners", "4", "--cores", "4"]) == 0
    assert "3 entrants" in (out := capsys.readouterr()[0]) and "(40% of the pace)" in out
    field["entrants"][0]["pace_fraction"] = "fast"
    path.write_text(yaml.safe_dump(field))
    assert main(["capacity", "--tier", "public", "--field", str(path), "--runners", "4", "--cores", "4"]) == 1
    assert "entrants[0].pace_fraction" in capsys.readouterr()[1]


def test_on_one_core_a_pairing_game_holds_the_one():
    cost = env_cost(EIGHT, 3, [0, 4], 2, 2, 4, cores=1, act_seconds=0.0064)
    assert cost.wall_seconds == pytest.approx(cost.cpu_seconds)  # every game one after another


def test_the_floor_is_the_cpu_over_every_core_and_no_plan_beats_it():
    boards = [EIGHT._replace(name="a"), Board("b", 12, 12, 0), EIGHT._replace(name="c")]
    for runners in (1, 2, 3, 9):
        p = plan(boards, 10, runners, 4)
        assert p.floor_hours == pytest.approx(p.cpu_hours_at_pace / (min(runners, 3) * 4))
        assert p.wall_hours >= p.floor_hours
    assert any(line.startswith("  floor: ") for line in plan(boards, 10, 2, 4).lines())


def test_shards_by_predicted_cost_stay_within_a_tenth_of_the_bound():
    # The generated final of sample seed 1 (board shapes 6 to 12 a side) over 4 to 28 runners.
    from grader.rounds.capacity import boards_for

    boards, known = boards_for("final", None, "1")
    assert known and len(boards) == 28
    for runners in (4, 8, 16, 28):
        p = plan(boards, 120, runners, 16)
        assert p.wall_hours >= p.bound_hours * (1 - 1e-9)
        assert p.ratio <= 1.10, (runners, p.ratio)
        assert sorted(i for shard in p.shards for i in shard) == list(range(28))  # each once
    assert "ratio" in "\n".join(plan(boards, 120, 8, 16).lines())


def test_assign_shards_is_longest_first_and_deterministic():
    from grader.rounds.capacity import assign_shards

    costs = [5.0, 1.0, 4.0, 3.0, 3.0, 2.0]
    shares = assign_shards(costs, 2)
    assert shares == assign_shards(list(costs), 2)
    assert sorted(sum(costs[i] for i in s) for s in shares) == [9.0, 9.0]  # the best split of 18
    assert assign_shards(costs, 1) == [list(range(6))]
    assert assign_shards([1.0], 3) == [[0], [], []]


def test_a_round_its_runner_cannot_hold_in_memory_is_refused_naming_the_need():
    from grader.common.limits import MIB

    # 150 entrants: 149 measured at 40 MiB and one at 950 MiB.
    memory = [40 * MIB] * 149 + [950 * MIB]
    tight = plan_capacity(
        [EIGHT],
        150,
        default_checkpoints(2000),
        20,
        20,
        2000,
        Machines(1, 16, memory_bytes=4 * 1024 * MIB),
        DEFAULT_LIMITS,
        "local",
        memory=memory,
    )
    assert not tight.memory_fits and not tight.fits
    need = tight.memory_bytes
    assert need >= 149 * 40 * MIB + 950 * MIB
    refusal = tight.memory_refusal()
    assert "150 frozen agents" in refusal and "950 MiB" in refusal and "give each runner at least" in refusal
    roomy = plan_capacity(
        [EIGHT],
        150,
        default_checkpoints(2000),
        20,
        20,
        2000,
        Machines(1, 16, memory_bytes=need),
        DEFAULT_LIMITS,
        "local",
        memory=memory,
    )
    assert roomy.memory_fits and roomy.memory_refusal() is None


def test_capacity_refuses_a_field_whose_memory_does_not_fit(tmp_path, capsys):
    entrants = [
        {
            "handle": f"h{i}",
            "account_id": i,
            "digest": "d",
            "path": "p",
            "flags": [],
            "pace_fraction": 0.9,
            "memory_bytes": (950 if i == 0 else 60) * 1024 * 1024,
        }
        for i in range(150)
    ]
    field = {
        "schema_version": 1,
        "tier": "public",
        "source_commit": None,
        "taken_at": "2026-01-01T00:00:00Z",
        "frozen_at": None,
        "excluded": [],
        "entrants": entrants,
    }
    path = tmp_path / "field.yaml"
    path.write_text(yaml.safe_dump(field))
    argv = ["capacity", "--tier", "public", "--envs", "1", "--field", str(path), "--runners", "1", "--cores", "16"]
    assert main(argv + ["--memory-gib", "8"]) == 1
    out, err = capsys.readouterr()
    assert "150 measured" in err and "refused" in err and "950 MiB" in err and "memory: NO" in out
    assert main(argv + ["--memory-gib", "16"]) == 0
    field["entrants"][3]["memory_bytes"] = -5
    path.write_text(yaml.safe_dump(field))
    assert main(argv) == 1
    assert "entrants[3].memory_bytes" in capsys.readouterr()[1]


def test_a_field_larger_than_the_limits_allow_is_refused():
    with pytest.raises(CapacityError, match="at most 300"):
        plan([EIGHT], DEFAULT_LIMITS.largest_field + 1, 1, 16)
