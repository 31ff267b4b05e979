"""The smoke test: the server's gate for a submission, and what `make check` runs.

Screen the submission (format and size by grader.submission, flags by grader.screening), then
for one public environment per public board shape, in a fresh sandbox: prepare, games against
the seeded random opponent, a little self-play with outcomes, freeze, and games after it - so
every call of the protocol is exercised on every board. Each board's mean act() time is judged
against that board's pace (grader.limits); an agent far over the pace is stopped early by its
handle (the pace stop judged after only `early_stop_acts` calls here, so a slow agent costs
seconds). The run stops at the first board that refuses the agent.

A flag from screening does not fail the test: the report says `needs_staff_label`.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine import EnvSpec, derive_seed, public_tier
from grader.agent_handle import AgentHandle
from grader.limits import DEFAULT_LIMITS, Limits
from grader.match import env_info, outcome_for, play_game
from grader.policy import CHECKPOINT, PAIRING, PHASES, SELF_PLAY
from grader.self_play import SELF_PLAY_COLOR
from grader.faults import FaultKind
from grader.sandbox.base import LaunchError, Sandbox
from grader.screening import Flag, screen
from grader.submission import SubmissionError, load_submission

SCHEMA_VERSION = 1
STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 2000


@dataclass(frozen=True)
class SmokeSettings:
    """How much is played per board. Small: the gate must answer in seconds per board."""

    games_vs_random: int = 4
    self_play_games: int = 2
    frozen_games: int = 2
    interaction_budget: int = 2000  # what prepare() is told, as in a real round
    early_stop_acts: int = 20
    board_wall_seconds: float = 120.0
    seed: str = "smoke"
    limits: Limits = DEFAULT_LIMITS

    def board_limits(self) -> Limits:
        """The round's limits, with the far-over-pace stop judged early and a short wall ceiling."""
        return dataclasses.replace(self.limits, pace_min_acts=self.early_stop_acts,
                                   env_wall_seconds=min(self.limits.env_wall_seconds, self.board_wall_seconds))


# `make check-long` (check.py --long): the budget's self-play up to its second checkpoint and a
# checkpoint's worth of frozen games per board, under the round's own pace stop and wall
# ceiling, so the play that follows learning, and its pace, run before a scored round does.
LONG_SETTINGS = SmokeSettings(self_play_games=500, frozen_games=20, early_stop_acts=DEFAULT_LIMITS.pace_min_acts,
                              board_wall_seconds=DEFAULT_LIMITS.env_wall_seconds)


@dataclass
class BoardResult:
    """One board of the smoke test."""

    shape: str
    env: str
    env_id: str
    result: str = "not_run"  # pass, fail or not_run
    reason: str | None = None
    fault: dict | None = None
    games: int = 0
    acts: int = 0
    mean_act_ms: float | None = None
    pace_ms: float = 0.0
    illegal_moves: int = 0
    seconds: float = 0.0
    stderr_tail: str = ""

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data.pop("stderr_tail")  # the report carries one tail, the failing board's (or the last run's)
        return data


@dataclass
class SmokeReport:
    """The whole gate's answer; `to_dict` is the YAML document on stdout."""

    submission: str
    sandbox: str
    result: str = "fail"  # pass, fail (the agent's), or arena_error (the arena failed: no verdict)
    reason: str | None = None
    digest: str | None = None
    kit_version: str | None = None
    interpreter: str | None = None
    numpy: str | None = None
    image: dict | None = None  # the docker image agents ran in (tag, id, base), None in the embedded sandbox
    flags: list[Flag] = field(default_factory=list)
    boards: list[BoardResult] = field(default_factory=list)
    stderr_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    @property
    def needs_staff_label(self) -> bool:
        return bool(self.flags)

    @property
    def first_failure(self) -> BoardResult | None:
        return next((b for b in self.boards if b.result == "fail"), None)

    def to_dict(self) -> dict:
        first = self.first_failure
        data = {"schema_version": SCHEMA_VERSION, "result": self.result, "reason": self.reason,
                "needs_staff_label": self.needs_staff_label}
        if self.kit_version is not None:
            data["kit_version"] = self.kit_version
        data |= {"interpreter": self.interpreter, "numpy": self.numpy, "sandbox": self.sandbox, "image": self.image,
                 "submission": {"name": self.submission, "digest": self.digest},
                 "flags": [f.to_dict() for f in self.flags],
                 "boards": [b.to_dict() for b in self.boards],
                 "first_failing_board": None if first is None else first.shape,
                 "stderr_tail": self.stderr_tail}
        return data


def smoke_boards(specs: list[EnvSpec] | None = None) -> list[EnvSpec]:
    """One public environment per public board shape: the first of each shape, in tier order."""
    chosen: dict[tuple[int, int], EnvSpec] = {}
    for spec in specs if specs is not None else public_tier():
        chosen.setdefault((spec.layout.rows, spec.layout.cols), spec)
    return sorted(chosen.values(), key=lambda s: s.layout.rows * s.layout.cols)


def tail(text: str) -> str:
    """The last lines of the agent's output, as a student needs them to find the error."""
    lines = text.rstrip().splitlines()[-STDERR_TAIL_LINES:]
    return "\n".join(lines)[-STDERR_TAIL_CHARS:]


def run_smoke(source: str | Path, sandbox: Sandbox, settings: SmokeSettings = SmokeSettings(),
              boards: list[EnvSpec] | None = None, kit_version: str | None = None, log=None) -> SmokeReport:
    """Screen and smoke-test the submission at `source`; never raises for anything the agent does."""
    # A zip is unpacked into a folder of our own, removed whatever happens.
    with tempfile.TemporaryDirectory(prefix="arena-smoke-") as unpacked:
        return _run_smoke(source, Path(unpacked), sandbox, settings, boards, kit_version, log)


def _run_smoke(source, unpacked: Path, sandbox: Sandbox, settings: SmokeSettings, boards, kit_version, log) -> SmokeReport:
    report = SmokeReport(submission=Path(source).name, sandbox=sandbox.name, kit_version=kit_version)
    try:
        submission = load_submission(source, extract_to=unpacked / "submission")
    except SubmissionError as exc:
        report.reason = f"not a valid submission: {exc}"
        return report
    report.digest = submission.digest
    report.flags = screen(submission)
    specs = smoke_boards(boards)
    report.boards = [BoardResult(f"{s.layout.rows}x{s.layout.cols}", s.name or s.id, s.id,
                                 pace_ms=round(settings.limits.pace_seconds(s.layout.rows, s.layout.cols) * 1e3, 3))
                     for s in specs]
    warm_up(specs)
    for board, spec in zip(report.boards, specs):
        if log:
            log(f"smoke: {board.shape} board ({board.env}) ...")
        _play_board(board, spec, submission, sandbox, settings, report)
        if log:
            mean = "-" if board.mean_act_ms is None else f"{board.mean_act_ms} ms"
            log(f"smoke: {board.shape}: {board.result}, mean act {mean} (pace {board.pace_ms} ms), {board.seconds:.1f} s")
        report.stderr_tail = board.stderr_tail
        if board.fault is not None and not FaultKind.parse(board.fault["kind"]).is_agents_fault:
            # Nothing is known of the agent: the gate has no verdict, and must not give one.
            report.result = "arena_error"
            report.reason = (f"the arena failed on the {board.shape} board, not your agent ({board.reason}); "
                             "the smoke test will be re-run")
            return report
        if board.result == "fail":
            report.reason = f"the {board.shape} board refused it: {board.reason}"
            return report
    report.result = "pass"
    return report


def warm_up(specs: list[EnvSpec]) -> None:
    """One game of reference opponents on each board before any board's clock starts: a fresh
    install compiles the engine's kernels at their first use, which on a busy runner takes long
    enough to reach a board's wall ceiling, and that time is the arena's, not the agent's."""
    for spec in specs:
        play_game(spec, "random", "random", 0)


def _play_board(board: BoardResult, spec: EnvSpec, submission, sandbox: Sandbox, settings: SmokeSettings,
                report: SmokeReport) -> None:
    limits = settings.board_limits()
    started = time.monotonic()
    if report.image is None:
        try:
            report.image = sandbox.image()
        except LaunchError:
            pass  # the launch below fails the same way and says why
    handle = AgentHandle.launch(sandbox, submission, limits, network="none", label=report.submission)
    try:
        if handle.versions:
            report.interpreter = handle.versions.get("python", report.interpreter)
            report.numpy = handle.versions.get("numpy", report.numpy)
        if handle.alive:
            _session(handle, spec, settings, board)
    finally:
        board.stderr_tail = tail(handle.stderr_text())
        handle.close()
    board.seconds = round(time.monotonic() - started, 3)
    stats = handle.act_stats
    board.acts = stats.count
    board.mean_act_ms = round(stats.mean_seconds * 1e3, 3) if stats.count else None
    board.illegal_moves = handle.conduct.illegal_total
    if handle.fault is not None:
        board.result, board.fault = "fail", handle.fault.to_dict()
        board.reason = f"{handle.fault.kind.value}: {handle.fault.detail}"
    elif stats.count == 0:
        board.result, board.reason = "fail", "act() was never called successfully"
    else:
        slow = [(phase, s) for phase, s in handle.phase_stats.items() if s.count and s.mean_seconds * 1e3 > board.pace_ms]
        if slow:
            phase, s = slow[0]
            board.result = "fail"
            board.reason = (f"mean act() {s.mean_seconds * 1e3:.3f} ms over {s.count} calls in {PHASES[phase]} is over "
                            f"the {board.shape} pace of {board.pace_ms} ms (each phase is judged on its own mean)")
        else:
            board.result = "pass"


def _session(handle: AgentHandle, spec: EnvSpec, settings: SmokeSettings, board: BoardResult) -> None:
    """prepare; games vs random (colours alternate, no outcome); self-play with outcomes; freeze; games."""
    if handle.prepare(env_info(spec, settings.interaction_budget)) is not None:
        return
    # The round's phases in miniature, each paced on its own as in a round (grader.policy).
    handle.enter_phase(CHECKPOINT)
    for i in range(settings.games_vs_random):
        black, white = (handle, "random") if i % 2 == 0 else ("random", handle)
        play_game(spec, black, white, derive_seed(settings.seed, spec.id, "random", i))
        board.games += 1
        if not handle.alive:
            return
    handle.enter_phase(SELF_PLAY)
    for i in range(settings.self_play_games):
        record = play_game(spec, handle, handle, derive_seed(settings.seed, spec.id, "self", i))
        board.games += 1
        if not handle.alive or handle.observe_outcome(outcome_for(record, SELF_PLAY_COLOR)) is not None:
            return
    if handle.freeze() is not None:
        return
    handle.enter_phase(PAIRING)  # frozen games against random stand in for the pairings
    if handle.begin_pairing() is not None:  # and are played as a pairing is: by a fork of the frozen agent
        return
    for i in range(settings.frozen_games):
        black, white = ("random", handle) if i % 2 == 0 else (handle, "random")
        play_game(spec, black, white, derive_seed(settings.seed, spec.id, "frozen", i))
        board.games += 1
        if not handle.alive:
            return
    handle.end_pairing()
