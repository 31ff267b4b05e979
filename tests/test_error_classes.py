"""Bad input raises one class per kind, carrying what was wrong (python-chess's way); each is
a ValueError, so `arena` still exits 1 (bad input) with the same words."""

from __future__ import annotations

import dataclasses

import pytest

from engine import public_tier
from engine.opponents import UnknownOpponentError, make_opponent
from engine.perft import DepthError, perft, perft_divide
from engine.tiers import TierError
from grader.cli.main import main
from grader.common.errors import OptionError, PlanVersionError
from grader.common.limits import DEFAULT_LIMITS, LimitsError
from grader.documents.specs import UnknownSpecError, resolve_spec
from grader.sandbox.base import NetworkError, check_network
from grader.season.disclosure import profile_for


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


@pytest.mark.parametrize(
    "argv,option,words",
    [
        (["envs", "--tier", "public", "--count", "0"], "--count", "--count must be at least 1, got 0"),
        (["envs", "--tier", "ladder"], "--seed", "--tier ladder is generated: give --seed"),
        (["perft", "standard-8x8", "--depth", "-2"], "--depth", "--depth must be >= 0, got -2"),
    ],
)
def test_options_exit_1_with_the_same_words(argv, option, words, capsys):
    assert main(argv) == 1
    assert f"arena {argv[0]}: error: {words}" in capsys.readouterr().err
    command = __import__(f"grader.cli.commands.{argv[0]}", fromlist=["run"])
    args = __import__("grader.cli.main", fromlist=["build_parser"]).build_parser(argv[0]).parse_args(argv)
    with pytest.raises(OptionError) as info:
        command.run(args)
    assert info.value.option == option


def test_staff_steps_of_the_final_name_the_state():
    from grader.season.competition import Competition, FinalStateError

    competition = Competition(final_at=None)
    with pytest.raises(OptionError, match="'final-x' is not a round id") as info:
        competition.final_committed("final-x")
    assert (info.value.option, info.value.value) == ("--round", "final-x")
    with pytest.raises(FinalStateError, match="there is no final pending review") as state:
        competition.final_published(__import__("datetime").datetime(2030, 1, 1), 1)
    assert state.value.status == competition.final.status


def test_the_request_log_names_the_request():
    from grader.github.workflow import now
    from grader.season.quota import RequestLog, RequestStateError

    with pytest.raises(RequestStateError, match="no request c-7 in the log") as info:
        RequestLog(()).finish("c-7", "published", None)
    assert info.value.request_id == "c-7"
    with pytest.raises(OptionError, match="a finished request is one of") as bad:
        RequestLog(()).finish("c-7", "queued", None)
    assert (bad.value.option, bad.value.value) == ("--status", "queued")
    with pytest.raises(OptionError) as when:
        now("yesterday")
    assert (when.value.option, when.value.value) == ("--now", "yesterday")


def test_metrics_name_the_argument():
    from grader.common.metrics import MetricError, Tally, endings_histogram, sae, t_quantile, wilson
    from grader.rounds.aggregates import _interval

    cases = [
        (lambda: Tally().add("resigned"), "result", "resigned", "a game result is win, draw or loss"),
        (lambda: sae([0, 100, 50], [0.1, 0.2, 0.3]), "checkpoints", [0, 100, 50], "must increase strictly"),
        (lambda: sae([0, 100], [0.1]), "win_rates", [0.1], "2 checkpoints but 1 win rates"),
        (lambda: wilson(1.5, 10), "p", 1.5, r"a proportion lies in \[0, 1\], got 1.5"),
        (lambda: t_quantile(0), "df", 0, "at least 1 degree of freedom, got 0"),
        (lambda: endings_histogram(["resigned"]), "endings", "resigned", "unknown ending 'resigned'"),
        (lambda: _interval("bootstrap", [0.5], 10), "method", "bootstrap", "unknown interval method 'bootstrap'"),
    ]
    for call, argument, value, words in cases:
        with pytest.raises(MetricError, match=words) as info:
            call()
        assert (info.value.argument, info.value.value) == (argument, value)


def test_an_environment_record_names_its_file_and_version(tmp_path):
    import gzip
    import json

    from grader.rounds.records import RecordError, RecordVersionError, read_record

    with pytest.raises(RecordVersionError, match="environment record version 2; this arena reads 1") as version:
        __import__("grader.rounds.records", fromlist=["EnvRecord"]).EnvRecord.from_dict({"record_version": 2})
    assert version.value.version == 2
    path = tmp_path / "env-0000.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"record_version": 2}).encode()))
    with pytest.raises(RecordError, match="env-0000.json.gz: not a readable environment record: ") as info:
        read_record(path)
    assert info.value.path == path and info.value.reason.endswith("this arena reads 1")
    path.write_bytes(b"not gzip")
    with pytest.raises(RecordError) as info:
        read_record(path)
    assert info.value.path == path and info.value.reason.startswith("BadGzipFile")


def test_a_round_without_its_records_names_the_missing_environments():
    from grader.play.session import parse_entrant
    from grader.rounds.orchestrate import make_plan
    from grader.rounds.publish import build
    from grader.rounds.records import IncompleteRecordsError

    plan = make_plan(
        "public",
        [parse_entrant("random"), parse_entrant("greedy")],
        "random-2 most/standard",
        10,
        [0, 10],
        2,
        2,
        "7",
        None,
        "local",
    )
    with pytest.raises(IncompleteRecordsError, match="the round's environment records are incomplete") as info:
        build(plan, [], {})
    assert info.value.round_id == plan.round_id
    assert info.value.missing == [e.label for e in plan.envs]


def test_github_values_are_refused_by_name(tmp_path):
    from grader.github.api import GitHubArgumentError, Repo
    from grader.github.workflow import StepOutputError, write_outputs

    with pytest.raises(GitHubArgumentError, match="repository 'octocat' is not OWNER/NAME") as info:
        Repo(None, "octocat")  # type: ignore[arg-type]  # refused before the connection is used
    assert (info.value.argument, info.value.value) == ("repository", "octocat")
    with pytest.raises(GitHubArgumentError, match="status state 'done' is not one of") as info:
        Repo.__new__(Repo).set_status("abc", "done", "", "arena")
    assert (info.value.argument, info.value.value) == ("state", "done")
    outputs = tmp_path / "outputs"
    with pytest.raises(StepOutputError, match="step output 'handle': keys are identifiers") as step:
        write_outputs({"verdict": "ok", "handle": "a\nb"}, str(outputs))
    assert (step.value.key, step.value.value) == ("handle", "a\nb")
    assert not outputs.exists()  # nothing written: every line is checked first


def test_an_npy_header_of_another_version_is_named():
    import io

    from grader.season.screening import NpyVersionError, _npy_dtype

    with pytest.raises(NpyVersionError, match=r"unsupported .npy version \(3, 0\)") as info:
        _npy_dtype(io.BytesIO(b"\x93NUMPY\x03\x00" + b"\0" * 16))
    assert info.value.version == (3, 0)


def test_a_sandbox_backend_this_checkout_lacks_is_named(monkeypatch):
    from types import SimpleNamespace

    import grader.sandbox
    from grader.rounds import workers as runner
    from grader.sandbox import SandboxNameError

    def missing(name):
        raise ImportError(name)

    monkeypatch.setattr(grader.sandbox, "get_sandbox", missing)
    monkeypatch.setattr(runner, "_SANDBOXES", {})
    plan = SimpleNamespace(field=[SimpleNamespace(kind="submission")], sandbox="local")  # what _sandbox reads
    with pytest.raises(SandboxNameError, match="the 'local' sandbox backend is not available") as info:
        runner._sandbox(plan)
    assert info.value.name == "local"
