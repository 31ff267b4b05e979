"""Red team, hostile bytes: every byte an agent sends is data. A header nested past
any parser's recursion, lone surrogates in its messages or frames, an exception that cannot be
printed, a forged `ready`: each ends in a fault of the agent's kind, and the round, the smoke
report and `arena play` that meet it still write their record, in both sandboxes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from grader.common.faults import FaultKind
from grader.play.smoke import SmokeSettings, run_smoke
from grader.rounds.results import load_results
from grader.verification.verify import verify

from .conftest import AGENTS, TEST_LIMITS, play

pytestmark = pytest.mark.timeout(240)


def encodable(text: str) -> bool:
    """Whether every UTF-8 writer (YAML, JSON without ASCII escapes, a file) takes `text`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize(
    "name, kind, detail",
    [
        ("deep_header", FaultKind.PROTOCOL, "nested too deeply"),
        ("surrogate_error", FaultKind.AGENT_ERROR, "RuntimeError: bad \ufffd text \ufffd here"),
        ("surrogate_frame", FaultKind.AGENT_ERROR, "act() raised {'nested': ["),
        (
            "str_raises",
            FaultKind.AGENT_ERROR,
            "Unprintable: <the exception's message cannot be shown: str() raised ValueError>",
        ),
        ("surrogate_repr", FaultKind.PROTOCOL, "act() returned Cell \ufffd\ufffd"),
    ],
)
def test_hostile_bytes_end_in_the_agents_fault(launch, assert_unharmed, name, kind, detail):
    handle = launch(name)
    assert handle.fault is None, handle.fault
    faults = play(handle, 10)
    assert [f.kind for f in faults] == [kind], (faults, handle.stderr_text()[-2000:])
    assert detail in faults[0].detail
    assert encodable(faults[0].detail) and len(faults[0].detail) <= 300
    json.dumps(faults[0].to_dict(), ensure_ascii=False).encode("utf-8")
    handle.close()
    assert_unharmed()


def test_a_forged_ready_keeps_only_short_encodable_versions(launch, assert_unharmed):
    handle = launch("forged_ready")
    assert handle.fault is None, handle.fault
    assert set(handle.versions) == {"python", "numpy"}
    assert all(encodable(v) and len(v) <= 40 for v in handle.versions.values()), handle.versions
    assert handle.versions["numpy"] == "{'a': [1, 2]}"
    faults = play(handle, 2)
    assert [f.kind for f in faults] == [FaultKind.PROTOCOL] and "unexpected reply 'ready'" in faults[0].detail
    handle.close()
    assert_unharmed()


SMOKE = SmokeSettings(games_vs_random=2, self_play_games=1, frozen_games=1, limits=TEST_LIMITS)


@pytest.mark.parametrize(
    "name, kind",
    [
        ("surrogate_error", "agent_error"),
        ("str_raises", "agent_error"),
        ("deep_header", "protocol"),
        ("forged_ready", "protocol"),
    ],
)
def test_a_smoke_report_is_written_for_a_hostile_agent(sandbox, name, kind):
    report = run_smoke(AGENTS / name, sandbox, SMOKE)
    assert report.result == "fail" and report.first_failure is not None
    assert report.first_failure.fault["kind"] == kind
    text = yaml.safe_dump(report.to_dict(), allow_unicode=True)
    assert encodable(text) and yaml.safe_load(text)["result"] == "fail"


def test_arena_play_records_a_hostile_agents_fault(sandbox, capsys):
    assert (
        main(
            [
                "play",
                "random-2 most/standard",
                "--black",
                str(AGENTS / "deep_header"),
                "--white",
                "random",
                "--sandbox",
                sandbox.name,
            ]
        )
        == 0
    )
    record = json.loads(capsys.readouterr().out)
    agent = record["agents"][str(AGENTS / "deep_header")]
    assert agent["fault"]["kind"] == "protocol" and "nested too deeply" in agent["fault"]["detail"]


def test_a_round_with_hostile_agents_publishes_and_verifies(sandbox, tmp_path, capsys):
    out, private = tmp_path / "rounds", tmp_path / "private"
    argv = [
        "round",
        "--tier",
        "public",
        "--envs",
        "random-2 most/standard",
        "--budget",
        "4",
        "--checkpoints",
        "0,4",
        "--games-per-checkpoint",
        "2",
        "--pairing-games",
        "2",
        "--sandbox",
        sandbox.name,
        "--agents",
        f"sur={AGENTS / 'surrogate_error'}",
        f"unprintable={AGENTS / 'str_raises'}",
        f"deep={AGENTS / 'deep_header'}",
        f"frame={AGENTS / 'surrogate_frame'}",
        "random",
        "--out",
        str(out),
        "--private-out",
        str(private),
    ]
    assert main(argv) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    data = load_results(path)
    statuses = {a["name"]: a["status"] for a in data["environments"][0]["agents"]}
    assert statuses == {
        "sur": "agent_error",
        "unprintable": "agent_error",
        "deep": "protocol",
        "frame": "agent_error",
        "random": "ok",
    }
    assert verify(path, private).replayed > 0
    # The staff's environment record keeps the fault details, written as UTF-8.
    record = json.loads(gzip.decompress((private / data["round"]["id"] / "envs" / "env-0000.json.gz").read_bytes()))
    assert record["entrants"]["sur"]["fault"]["detail"] == "act() raised RuntimeError: bad \ufffd text \ufffd here"


# -- the parsers alone, without a sandbox ---------------------------------------------------
@pytest.mark.parametrize(
    "head, message",
    [
        (b"[" * 8000 + b"]" * 8000, "nested too deeply"),
        (b'{"op": "action", "action": ' + b"9" * 5000 + b"}", "not JSON"),
        (b'{"op": "ok"}\xff', "not JSON"),
        (b"[1, 2]", "a JSON object with a string 'op', got list"),
        (b'{"op": 5}', "a JSON object with a string 'op', got dict"),
    ],
)
def test_a_header_that_is_not_a_message_is_a_wire_error(head, message):
    from grader.common.protocol import WireError, parse_header

    with pytest.raises(WireError, match=message) as err:
        parse_header(head)
    assert len(str(err.value)) < 400


def test_the_runner_describes_any_exception_an_agent_makes():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "arena_runner", Path(__file__).resolve().parents[2] / "grader" / "sandboxed" / "runner.py"
    )
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)

    class Sly(str):
        def __getitem__(self, key):
            raise RuntimeError("no slicing")

    class ReturnsSly(Exception):
        def __str__(self):
            return Sly("hello")

    class ReturnsInt(Exception):
        def __str__(self):
            return 5

    class Nameless(type):
        @property
        def __name__(cls):
            raise RuntimeError("no name")

    class Anonymous(Exception, metaclass=Nameless):
        pass

    assert runner.describe(ReturnsSly()) == "ReturnsSly: hello"
    assert (
        runner.describe(ReturnsInt()) == "ReturnsInt: <the exception's message cannot be shown: str() raised TypeError>"
    )
    assert runner.describe(Anonymous("m")) == "<a class whose name cannot be read>: m"
    assert len(runner.describe(ValueError("x" * 10_000))) == 500
    frame = runner.error_frame("act", ValueError("bad \ud800"))
    assert b'"error":"ValueError: bad \\ud800"' in frame  # ASCII on the wire; the host replaces it


def test_clean_text_makes_any_value_recordable():
    from grader.common.faults import Fault, FaultKind, clean_text

    class BadRepr:
        def __repr__(self):
            raise RuntimeError("no")

    assert clean_text("a\ud800b\udfff", 10) == "a\ufffdb\ufffd"
    assert clean_text("x" * 50, 10) == "xxxxxxx..."
    assert clean_text(BadRepr(), 80) == "<unprintable BadRepr: its repr raised RuntimeError>"
    assert clean_text({"a": ["\udcff"]}, 80) == "{'a': ['\\udcff']}"
    fault = Fault(FaultKind.AGENT_ERROR, "\ud800" * 1000)
    assert len(fault.detail) == 300 and encodable(fault.detail)
