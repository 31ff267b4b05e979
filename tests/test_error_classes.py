"""Bad input raises one class per kind, carrying what was wrong (python-chess's way); each is
a ValueError, so `arena` still exits 2 with the same words."""

from __future__ import annotations

import dataclasses

import pytest

from engine import public_tier
from engine.opponents import UnknownOpponentError, make_opponent
from engine.perft import DepthError, perft, perft_divide
from engine.tiers import TierError
from grader.cli import main
from grader.disclosure import profile_for
from grader.errors import OptionError, PlanVersionError
from grader.limits import DEFAULT_LIMITS, LimitsError
from grader.sandbox.base import NetworkError, check_network
from grader.specs import UnknownSpecError, resolve_spec


def test_engine_errors_carry_the_input():
    spec = public_tier()[0]
    with pytest.raises(DepthError, match="depth must be >= 0, got -1") as info:
        perft(spec, -1)
    assert info.value.depth == -1
    with pytest.raises(DepthError, match="divide needs depth >= 1"):
        perft_divide(spec, 0)
    with pytest.raises(UnknownOpponentError, match="unknown opponent 'oracle'") as info:
        make_opponent("oracle", spec, 1)
    assert info.value.name == "oracle"


def test_grader_readers_name_what_was_wrong():
    with pytest.raises(LimitsError, match="bad limits: act_hard_seconds") as info:
        dataclasses.replace(DEFAULT_LIMITS, act_hard_seconds=DEFAULT_LIMITS.act_soft_seconds / 2)
    assert len(info.value.problems) == 1 and info.value.problems[0].startswith("act_hard_seconds")
    with pytest.raises(UnknownSpecError, match="'no-such-board' is neither a spec file") as info:
        resolve_spec("no-such-board")
    assert info.value.text == "no-such-board"
    with pytest.raises(NetworkError, match="network must be one of") as info:
        check_network("internet")
    assert info.value.network == "internet"
    with pytest.raises(TierError, match="unknown tier 'secret'") as info:
        profile_for("secret")
    assert (info.value.field, info.value.value) == ("tier", "secret")


def test_a_plan_of_another_version_is_named():
    from grader.rounds.plan import RoundPlan

    with pytest.raises(PlanVersionError, match="round plan version 99; this arena reads") as info:
        RoundPlan.from_dict({"plan_version": 99})
    assert info.value.version == 99


@pytest.mark.parametrize("argv,option,words", [
    (["envs", "--tier", "public", "--count", "0"], "--count", "--count must be at least 1, got 0"),
    (["envs", "--tier", "ladder"], "--seed", "--tier ladder is generated: give --seed"),
    (["perft", "standard-8x8", "--depth", "-2"], "--depth", "--depth must be >= 0, got -2"),
])
def test_options_exit_2_with_the_same_words(argv, option, words, capsys):
    assert main(argv) == 2
    assert f"arena {argv[0]}: error: {words}" in capsys.readouterr().err
    command = __import__(f"grader.commands.{argv[0]}", fromlist=["run"])
    args = __import__("grader.cli", fromlist=["build_parser"]).build_parser(argv[0]).parse_args(argv)
    with pytest.raises(OptionError) as info:
        command.run(args)
    assert info.value.option == option


def test_staff_steps_of_the_final_name_the_state():
    from grader.competition import Competition, FinalStateError

    competition = Competition(final_at=None)
    with pytest.raises(OptionError, match="'final-x' is not a round id") as info:
        competition.final_committed("final-x")
    assert (info.value.option, info.value.value) == ("--round", "final-x")
    with pytest.raises(FinalStateError, match="there is no final pending review") as state:
        competition.final_published(__import__("datetime").datetime(2030, 1, 1), 1)
    assert state.value.status == competition.final.status


def test_the_request_log_names_the_request():
    from grader.github.workflow import now
    from grader.quota import RequestLog, RequestStateError

    with pytest.raises(RequestStateError, match="no request c-7 in the log") as info:
        RequestLog(()).finish("c-7", "published", None)
    assert info.value.request_id == "c-7"
    with pytest.raises(OptionError, match="a finished request is one of") as bad:
        RequestLog(()).finish("c-7", "queued", None)
    assert (bad.value.option, bad.value.value) == ("--status", "queued")
    with pytest.raises(OptionError) as when:
        now("yesterday")
    assert (when.value.option, when.value.value) == ("--now", "yesterday")
