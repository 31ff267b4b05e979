"""A class-size round fits its limits and its memory: agents at 90% of the pace in every phase
never fault on a total because the field is large, one agent at 950 MiB (inside its 1 GiB
limit) plays beside them, and a round whose frozen agents a runner cannot hold is refused
before it starts, naming the memory it needs.

At 150 entrants the limits and the refusal are checked by arithmetic and on the plan (a round
of 150 agents at 90% of the pace costs hours of CPU, beyond a test suite). The round that plays
is the largest affordable: 12 agents at 90% of the pace (one holding 950 MiB) on the smallest
board, in both sandboxes, under limits whose bases are cut so that only each limit's growth
with the field keeps them inside it (at the old fixed totals they would fault `budget`)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import yaml

from grader.common.limits import DEFAULT_LIMITS, MIB, PACE_SHAPES
from grader.common.schedule import (
    CANONICAL_BUDGET,
    CANONICAL_CHECKPOINTS,
    DEFAULT_GAMES_PER_CHECKPOINT,
    DEFAULT_PAIRING_GAMES,
    session_games,
)
from grader.play.session import parse_entrant, python_entrant
from grader.rounds.capacity import OPENING_CELLS, CapacityError, plan_of_round
from grader.rounds.orchestrate import make_plan, run_round
from grader.verification.verify import verify

ROOT = Path(__file__).resolve().parent.parent.parent
PACE_AGENT = ROOT / "tests" / "agents" / "pace_fraction"
FRACTION = 0.9


def at_fraction_of_the_pace(rows: int, cols: int, field: int, fraction: float = FRACTION) -> tuple[float, float]:
    """(CPU s, wall s) of one agent's canonical session at `fraction` of the pace in every phase
    on a rows x cols board in a field of `field`: every game as long as the board allows (the
    agent holds both seats of a self-play game, one seat of the others); its wall time also
    runs while its opponent, at the same fraction, is to move."""
    pace = fraction * DEFAULT_LIMITS.pace_seconds(rows, cols)
    moves = rows * cols - OPENING_CELLS  # a game's moves, both seats together
    learning = CANONICAL_BUDGET * moves + len(CANONICAL_CHECKPOINTS) * DEFAULT_GAMES_PER_CHECKPOINT * moves / 2
    pairing = (field - 1) * DEFAULT_PAIRING_GAMES * moves
    return pace * (learning + pairing / 2), pace * (learning + pairing)


@pytest.mark.parametrize("field", [8, 50, 150, 300])
@pytest.mark.parametrize("shape", PACE_SHAPES)
def test_an_agent_at_90_percent_of_the_pace_fits_every_total_at_any_field(shape, field):
    rows, cols = shape
    cpu, wall = at_fraction_of_the_pace(rows, cols, field)
    session = DEFAULT_LIMITS.for_session(rows, cols, session_games(field))
    assert cpu < session.cpu_seconds_per_env and wall < session.env_wall_seconds


def test_the_fixed_totals_of_before_did_not_hold_a_field_of_150():
    # The figure: on 12x10 at 150 entrants an agent at the pace uses about 4,900 CPU s
    # (here, every game the whole board: more), over the 3,600 s the share used to be.
    cpu, wall = at_fraction_of_the_pace(12, 10, 150, fraction=1.0)
    assert cpu > DEFAULT_LIMITS.cpu_seconds_per_env and wall > DEFAULT_LIMITS.env_wall_seconds
    grown = DEFAULT_LIMITS.for_session(12, 10, session_games(150))
    assert cpu < grown.cpu_seconds_per_env and wall < grown.env_wall_seconds
    small = DEFAULT_LIMITS.for_session(12, 10, session_games(8))
    assert (
        small.cpu_seconds_per_env
        < grown.cpu_seconds_per_env
        < DEFAULT_LIMITS.for_session(12, 10, session_games(300)).cpu_seconds_per_env
    )
    assert small.output_cap_bytes < grown.output_cap_bytes


def test_a_field_of_150_with_one_at_950_mib_is_refused_before_it_starts_naming_the_memory(tmp_path):
    agent = agent_copy(tmp_path / "agent")  # submissions: each plays in a sandbox of its own
    field = [parse_entrant(f"a{i:03d}={agent}") for i in range(150)]
    plan = make_plan("public", field, "random-2 most/standard", 2, [0, 2], 1, 2, "1", None, "local")
    memory = [950 * MIB] + [40 * MIB] * 149
    short = plan_of_round(plan, 1, 2, memory, runner_memory=4 * 1024 * MIB)
    with pytest.raises(CapacityError) as refused:
        run_round(plan, tmp_path / "out", tmp_path / "private", command="t", capacity=short)
    message = str(refused.value)
    assert "refused before it starts" in message and "150 frozen agents" in message
    assert f"need {short.memory_bytes / 1024 / MIB:,.1f} GiB" in message and "the largest 950 MiB" in message
    assert not (tmp_path / "private").exists() and not (tmp_path / "out").exists()  # nothing was played


def agent_copy(folder: Path, hold_mib: int = 0) -> Path:
    shutil.copytree(PACE_AGENT, folder)
    (folder / "pace.json").write_text(
        json.dumps({"seconds_per_cell": PACE_PER_CELL, "fraction": FRACTION, "hold_mib": hold_mib})
    )
    return folder


ENTRANTS = 12
PACE_PER_CELL = DEFAULT_LIMITS.pace_seconds_per_cell  # 4.8 ms a move on 6x8
LIMITS = dataclasses.replace(DEFAULT_LIMITS, cpu_seconds_per_env=1.0, env_wall_seconds=60.0)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("backend", ["local", "docker"])
def test_agents_at_90_percent_of_the_pace_and_one_at_950_mib_play_with_no_fault(backend, request, tmp_path):
    request.getfixturevalue(f"{backend}_sandbox")  # skipped, saying why, where it cannot run
    field = [
        parse_entrant(f"p{i:02d}={agent_copy(tmp_path / 'agents' / f'p{i:02d}', 950 if i == 0 else 0)}")
        for i in range(ENTRANTS)
    ]
    plan = make_plan("public", field, "random-2 most/standard", 2, [0, 2], 1, 2, "31", None, backend, limits=LIMITS)
    # Without its growth with the field the CPU share (1 s) is below what each agent's acts
    # take at 90% of the pace in the longest games (about 2.7 s).
    spent = FRACTION * LIMITS.pace_seconds(6, 8) * (6 * 8 - OPENING_CELLS) * (2 + 2 / 2 + (ENTRANTS - 1) * 2 / 2)
    assert spent > LIMITS.cpu_seconds_per_env
    capacity = plan_of_round(plan, 1, 2, [1024 * MIB] + [None] * (ENTRANTS - 1), runner_memory=64 * 1024 * MIB)
    outcome = run_round(plan, tmp_path / "out", tmp_path / "private", jobs=2, command="t", capacity=capacity)
    assert outcome.status == "published", outcome.message
    data = yaml.safe_load(outcome.public_path.read_text())
    faults = {a["name"]: a["faults"] for a in data["agents"] if any(a["faults"].values())}
    assert not faults, faults
    assert not data["provenance"]["execution"]["arena_faults"]
    verify(outcome.public_path, tmp_path / "private")


def test_arena_round_reads_the_fields_memory_by_entrant(tmp_path):
    from grader.cli.commands.round import field_memory

    entrants = [
        {"handle": h, "account_id": i, "digest": "d", "path": h, "flags": [], "pace_fraction": None, "memory_bytes": m}
        for i, (h, m) in enumerate((("ann", 950 * MIB), ("bob", None)))
    ]
    path = tmp_path / "field.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "tier": "public",
                "source_commit": None,
                "taken_at": "2026-01-01T00:00:00Z",
                "frozen_at": None,
                "excluded": [],
                "entrants": entrants,
            }
        )
    )
    assert field_memory(path, ["bob", "ann", "cid"]) == [None, 950 * MIB, None]
    assert field_memory(None, ["ann"]) is None


def test_agents_in_the_arenas_process_need_no_sandbox_memory():
    field = [python_entrant(f"a{i:03d}", "tests.rounds.agents:Learner") for i in range(150)]
    plan = make_plan("public", field, "random-2 most/standard", 2, [0, 2], 1, 2, "1", None, "local")
    capacity = plan_of_round(plan, 1, 2, None, runner_memory=1024 * MIB)
    assert capacity.peak_sandboxes == 0 and capacity.memory_fits
