"""The smoke test: the server's gate for a submission, and what `make check` runs.

Screen the submission (format and size by grader.documents.submission, flags by grader.season.screening), then
for one public environment per public board shape, in a fresh sandbox: prepare, games against
the seeded random opponent before and after a little self-play with outcomes, freeze, and
games after it - a round's session in miniature, so every call of the protocol is exercised on
every board. Each phase's mean act() time is judged against that board's pace (grader.common.limits)
on its own, as a round judges it; an agent far over the pace is stopped early by its handle
(the pace stop judged after only `early_stop_acts` calls here, so a slow agent costs seconds).
Each phase is projected to a round's session in the largest field a round plays (the limits'
`largest_field`, or the field the next round will have when it is given): its act time against
the session's CPU share and its output against the output cap, both of which grow with the
field (grader.common.limits). The peak resident memory of the board's sandbox (its cgroup's
high-water mark) is measured: the round's capacity plan adds up the field's. The run stops at
the first board that refuses the agent.

A flag from screening does not fail the test: the report says `needs_staff_label`.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine import EnvSpec, derive_seed, public_tier
from grader.common.faults import FaultKind
from grader.common.limits import DEFAULT_LIMITS, MIB, Limits
from grader.common.policy import CHECKPOINT, PAIRING, PHASES, SELF_PLAY
from grader.common.schedule import (
    CANONICAL_BUDGET,
    CANONICAL_CHECKPOINTS,
    DEFAULT_GAMES_PER_CHECKPOINT,
    DEFAULT_PAIRING_GAMES,
)
from grader.documents.submission import SubmissionError, agent_methods, load_submission
from grader.play.agent_handle import AgentHandle
from grader.play.match import env_info, outcome_for, play_game
from grader.play.self_play import SELF_PLAY_COLOR
from grader.sandbox.base import LaunchError, Sandbox
from grader.season.screening import Flag, screen

SCHEMA_VERSION = 1
STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 2000


def round_games(field_size: int) -> dict[str, int]:
    """A scored round's session of one environment, phase by phase, in a field of `field_size`,
    for what the gate projects from its few games: 20 games at each canonical checkpoint, the
    budget's self-play, and 20 pairing games against each other entrant."""
    return {
        CHECKPOINT: DEFAULT_GAMES_PER_CHECKPOINT * len(CANONICAL_CHECKPOINTS),
        SELF_PLAY: CANONICAL_BUDGET,
        PAIRING: DEFAULT_PAIRING_GAMES * max(0, field_size - 1),
    }


# The margin under the pace a phase's mean needs here for a scored round to be safe: the
# grader's host times each act from the frame sent to the reply read, and on a shared runner
# that adds time this machine does not see (examples/adaptive measured 0.1 ms a call idle and
# 1.5-2 ms on a busy core; aiming at 80% of the pace it faulted 13 of 56 environments, at
# 60% none). A phase over the pace fails; one inside the margin passes with a warning.
ROUND_MARGIN = 0.25


@dataclass(frozen=True)
class SmokeSettings:
    """How much is played per board. Small: the gate must answer in seconds per board.

    The phases come in a round's order: checkpoint games against random at each of
    `checkpoints` (self-play games used; default before the self-play and after it), the
    self-play between them, freeze, then the frozen games that stand in for the pairings.
    A round's checkpoint games mostly follow self-play, so the gate's must too: an agent whose
    play changes once it has learned is timed there as a round times it."""

    games_vs_random: int = 2  # per checkpoint
    self_play_games: int = 2
    frozen_games: int = 2
    checkpoints: tuple[int, ...] | None = None
    interaction_budget: int = 2000  # what prepare() is told, as in a real round
    early_stop_acts: int = 20
    board_wall_seconds: float = 120.0
    seed: str = "smoke"
    limits: Limits = DEFAULT_LIMITS
    # The field the projection is made for: the next round's when known, else the largest a
    # round plays (the limits' `largest_field`).
    field: int | None = None

    def __post_init__(self) -> None:
        points = self.checkpoint_points()
        if list(points) != sorted(set(points)) or points[0] < 0 or points[-1] > self.self_play_games:
            raise ValueError(f"checkpoints {points}: increasing, from 0 to self_play_games ({self.self_play_games})")

    def round_field(self) -> int:
        """The field size each phase is projected to."""
        return self.field if self.field is not None else self.limits.largest_field

    def checkpoint_points(self) -> tuple[int, ...]:
        """The self-play games used at which the checkpoint games are played."""
        if self.checkpoints is not None:
            return tuple(self.checkpoints)
        return (0, self.self_play_games) if self.self_play_games else (0,)

    def phase_games(self) -> dict[str, int]:
        """The games each phase plays on a board."""
        return {
            CHECKPOINT: self.games_vs_random * len(self.checkpoint_points()),
            SELF_PLAY: self.self_play_games,
            PAIRING: self.frozen_games,
        }

    def describe(self) -> str:
        """The games per board, in words (check.py's header and the kit's README)."""
        points = self.checkpoint_points()
        at = ", ".join(map(str, points))
        return (
            f"{self.games_vs_random} games against the seeded random opponent at each of {len(points)} "
            f"checkpoints (after {at} self-play games), {self.self_play_games} self-play games with an outcome "
            f"after each, freeze, then {self.frozen_games} more games"
        )

    def board_limits(self) -> Limits:
        """The round's limits, with the far-over-pace stop judged early and a short wall ceiling."""
        return dataclasses.replace(
            self.limits,
            pace_min_acts=self.early_stop_acts,
            env_wall_seconds=min(self.limits.env_wall_seconds, self.board_wall_seconds),
        )


# `make check-long` (check.py --long): the budget's self-play up to its second checkpoint, with
# a round's checkpoint games at 0, 100 and 500, and a checkpoint's worth of frozen games per
# board, under the round's own pace stop and wall ceiling, so the play that follows learning,
# and its pace in each phase, run before a scored round does.
LONG_SETTINGS = SmokeSettings(
    games_vs_random=DEFAULT_GAMES_PER_CHECKPOINT,
    self_play_games=500,
    checkpoints=(0, 100, 500),
    frozen_games=DEFAULT_PAIRING_GAMES,
    early_stop_acts=DEFAULT_LIMITS.pace_min_acts,
    board_wall_seconds=DEFAULT_LIMITS.env_wall_seconds,
)


@dataclass
class PhaseResult:
    """One phase of a board (grader.common.policy.PHASES): what it played, its pace and its output."""

    games: int = 0
    acts: int = 0
    mean_act_ms: float | None = None
    output_bytes: int = 0

    def margin(self, pace_ms: float) -> float | None:
        """How far under the pace the phase's mean is, as a share of the pace (negative: over)."""
        return None if self.mean_act_ms is None else round(1.0 - self.mean_act_ms / pace_ms, 3)


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
    phases: dict[str, PhaseResult] = field(default_factory=dict)  # in the order they were played
    output_bytes: int = 0  # stdout and stderr together, prepare's included
    round_field: int = 0  # the field the projections below are for
    round_output_bytes: int | None = None  # the projection to a round's session (round_games)
    round_output_cap: int = 0  # the output cap of that session
    round_act_seconds: float | None = None  # the act time of that session at this board's means
    round_cpu_share: float = 0.0  # the CPU share of that session
    memory_peak_bytes: int | None = None  # the sandbox's peak resident memory (None: not readable)
    stderr_tail: str = ""

    def tight_phases(self) -> list[str]:
        """The phases under the pace but inside the margin a scored round needs (ROUND_MARGIN)."""
        return [
            name
            for name, p in self.phases.items()
            if (m := p.margin(self.pace_ms)) is not None and 0.0 <= m < ROUND_MARGIN
        ]

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data.pop("stderr_tail")  # the report carries one tail, the failing board's (or the last run's)
        for name, phase in self.phases.items():
            data["phases"][name]["margin"] = phase.margin(self.pace_ms)
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
    notes: list[str] = field(default_factory=list)  # what the grader will do that the student may not expect
    boards: list[BoardResult] = field(default_factory=list)
    stderr_tail: str = ""

    @property
    def memory_peak_bytes(self) -> int | None:
        """The largest peak resident memory of a board's sandbox (None when none was read)."""
        peaks = [b.memory_peak_bytes for b in self.boards if b.memory_peak_bytes is not None]
        return max(peaks) if peaks else None

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
        data = {
            "schema_version": SCHEMA_VERSION,
            "result": self.result,
            "reason": self.reason,
            "needs_staff_label": self.needs_staff_label,
        }
        if self.kit_version is not None:
            data["kit_version"] = self.kit_version
        data |= {
            "interpreter": self.interpreter,
            "numpy": self.numpy,
            "sandbox": self.sandbox,
            "image": self.image,
            "submission": {"name": self.submission, "digest": self.digest},
            "flags": [f.to_dict() for f in self.flags],
            "notes": list(self.notes),
            "memory_peak_bytes": self.memory_peak_bytes,
            "boards": [b.to_dict() for b in self.boards],
            "first_failing_board": None if first is None else first.shape,
            "stderr_tail": self.stderr_tail,
        }
        return data


NO_FREEZE = (
    "class Agent has no freeze() method: once the budget's self-play is spent the grader calls freeze(), "
    "and finding none calls nothing: your agent is not told that learning is over, and the pairing games "
    "that follow, against the other entrants, are played with no outcome after them"
)


def submission_notes(folder: Path) -> list[str]:
    """What the grader will do with this agent that passes silently: a missing freeze()."""
    methods = agent_methods(folder)
    return [NO_FREEZE] if methods is not None and "freeze" not in methods else []


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


def run_smoke(
    source: str | Path,
    sandbox: Sandbox,
    settings: SmokeSettings = SmokeSettings(),
    boards: list[EnvSpec] | None = None,
    kit_version: str | None = None,
    log=None,
) -> SmokeReport:
    """Screen and smoke-test the submission at `source`; never raises for anything the agent does."""
    # A zip is unpacked into a folder of our own, removed whatever happens.
    with tempfile.TemporaryDirectory(prefix="arena-smoke-") as unpacked:
        return _run_smoke(source, Path(unpacked), sandbox, settings, boards, kit_version, log)


def _run_smoke(
    source, unpacked: Path, sandbox: Sandbox, settings: SmokeSettings, boards, kit_version, log
) -> SmokeReport:
    report = SmokeReport(submission=Path(source).name, sandbox=sandbox.name, kit_version=kit_version)
    try:
        submission = load_submission(source, extract_to=unpacked / "submission")
    except SubmissionError as exc:
        report.reason = f"not a valid submission: {exc}"
        return report
    report.digest = submission.digest
    report.flags = screen(submission)
    report.notes = submission_notes(submission.path)
    specs = smoke_boards(boards)
    report.boards = [
        BoardResult(
            f"{s.layout.rows}x{s.layout.cols}",
            s.name or s.id,
            s.id,
            pace_ms=round(settings.limits.pace_seconds(s.layout.rows, s.layout.cols) * 1e3, 3),
            round_field=settings.round_field(),
        )
        for s in specs
    ]
    warm_up(specs)
    if log:
        log(f"smoke: each phase projected to a round's session in a field of {settings.round_field()} entrants")
    for board, spec in zip(report.boards, specs):
        if log:
            log(f"smoke: {board.shape} board ({board.env}) ...")
        _play_board(board, spec, submission, sandbox, settings, report)
        if log:
            mean = "-" if board.mean_act_ms is None else f"{board.mean_act_ms} ms"
            log(
                f"smoke: {board.shape}: {board.result}, mean act {mean} (pace {board.pace_ms} ms), {board.seconds:.1f} s"
            )
        report.stderr_tail = board.stderr_tail
        if board.fault is not None and not FaultKind.parse(board.fault["kind"]).is_agents_fault:
            # Nothing is known of the agent: the gate has no verdict, and must not give one.
            report.result = "arena_error"
            report.reason = (
                f"the arena failed on the {board.shape} board, not your agent ({board.reason}); "
                "the smoke test will be re-run"
            )
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


def _play_board(
    board: BoardResult, spec: EnvSpec, submission, sandbox: Sandbox, settings: SmokeSettings, report: SmokeReport
) -> None:
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
        board.output_bytes = output_bytes(handle)
    finally:
        board.stderr_tail = tail(handle.stderr_text())
        handle.close()
    board.memory_peak_bytes = handle.memory_peak_bytes
    board.seconds = round(time.monotonic() - started, 3)
    stats = handle.act_stats
    board.acts = stats.count
    board.mean_act_ms = round(stats.mean_seconds * 1e3, 3) if stats.count else None
    board.illegal_moves = handle.conduct.illegal_total
    for name, phase in board.phases.items():
        s = handle.phase_stats.get(name)
        if s is not None and s.count:
            phase.acts, phase.mean_act_ms = s.count, round(s.mean_seconds * 1e3, 3)
    session = settings.limits.for_session(
        spec.layout.rows, spec.layout.cols, sum(round_games(board.round_field).values())
    )
    board.round_output_bytes = project_output(board)
    board.round_output_cap = session.output_cap_bytes
    board.round_act_seconds = project_act_seconds(board)
    board.round_cpu_share = session.cpu_seconds_per_env
    if handle.fault is not None:
        board.result, board.fault = "fail", handle.fault.to_dict()
        board.reason = f"{handle.fault.kind.value}: {handle.fault.detail}"
    elif stats.count == 0:
        board.result, board.reason = "fail", "act() was never called successfully"
    elif slow := [
        (name, p) for name, p in board.phases.items() if p.mean_act_ms is not None and p.mean_act_ms > board.pace_ms
    ]:
        name, phase = slow[0]
        board.result = "fail"
        board.reason = (
            f"mean act() {phase.mean_act_ms:.3f} ms over {phase.acts} calls in {PHASES[name]} is over "
            f"the {board.shape} pace of {board.pace_ms} ms (each phase is judged on its own mean)"
        )
    elif board.round_act_seconds is not None and board.round_act_seconds > board.round_cpu_share:
        board.result = "fail"
        board.reason = (
            f"its act() time projected to a round's session in a field of {board.round_field} is "
            f"{board.round_act_seconds:,.0f} s, over that session's CPU share of "
            f"{board.round_cpu_share:,.0f} s (fault budget): spend less per move"
        )
    elif board.round_output_bytes is not None and board.round_output_bytes > board.round_output_cap:
        board.result = "fail"
        board.reason = output_reason(board, board.round_output_cap)
    else:
        board.result = "pass"


def output_bytes(handle: AgentHandle) -> int:
    """What the agent has written so far, stdout and stderr together (what the cap counts)."""
    handle.stderr_text()  # reads whatever is waiting in the pipe into the log
    return int(handle.stats()["output_bytes"])


def project_output(board: BoardResult) -> int | None:
    """The output a round's session of this board would write (round_games of its field), at
    this board's rate per game in each phase, plus what prepare wrote; None before every phase
    has played."""
    if not board.phases or any(p.games == 0 for p in board.phases.values()):
        return None
    games = round_games(board.round_field)
    prepare = board.output_bytes - sum(p.output_bytes for p in board.phases.values())
    return prepare + round(sum(p.output_bytes / p.games * games[name] for name, p in board.phases.items()))


def project_act_seconds(board: BoardResult) -> float | None:
    """The act time a round's session of this board would take (round_games of its field), at
    this board's acts per game and mean act time in each phase; None before every phase has
    played."""
    if not board.phases or any(p.games == 0 or p.mean_act_ms is None for p in board.phases.values()):
        return None
    games = round_games(board.round_field)
    return round(
        sum(p.acts / p.games * games[name] * (p.mean_act_ms or 0.0) / 1e3 for name, p in board.phases.items()), 3
    )


def output_reason(board: BoardResult, cap: int) -> str:
    """Why a board fails on its output: the rate, the projection and the cap, with the fix."""
    projected = board.round_output_bytes or 0
    rates = ", ".join(
        f"{p.output_bytes / p.games:,.0f} bytes a game in {PHASES[name]}" for name, p in board.phases.items()
    )
    round_of = round_games(board.round_field)
    games = ", ".join(f"{round_of[name]:,} {PHASES[name].removeprefix('the ')}" for name in board.phases)
    return (
        f"your agent printed {board.output_bytes:,} bytes here ({rates}): over a round's session of this "
        f"environment ({games}, against a field of {board.round_field}) that is about "
        f"{projected / MIB:,.1f} MiB, over the {cap / MIB:,.1f} MiB output cap of that session, and a round kills it "
        "there (fault agent_error). Print less: a line per game at most, or write what you want to keep to a "
        "file in /tmp"
    )


def _session(handle: AgentHandle, spec: EnvSpec, settings: SmokeSettings, board: BoardResult) -> None:
    """A round's session in miniature, each phase paced on its own as in a round (grader.common.policy):
    prepare; at each checkpoint, games vs random (colours alternate, no outcome), with budget
    self-play (outcomes) between them; freeze; frozen games against random for the pairings."""
    if handle.prepare(env_info(spec, settings.interaction_budget)) is not None:
        return
    phases = board.phases
    for name in (CHECKPOINT, SELF_PLAY, PAIRING):
        if settings.phase_games()[name]:
            phases[name] = PhaseResult()
    used = 0
    for point in settings.checkpoint_points():
        if point > used:
            handle.enter_phase(SELF_PLAY)
            before = output_bytes(handle)
            for i in range(used, point):
                record = play_game(spec, handle, handle, derive_seed(settings.seed, spec.id, "self", i))
                board.games += 1
                if not handle.alive or handle.observe_outcome(outcome_for(record, SELF_PLAY_COLOR)) is not None:
                    return
                phases[SELF_PLAY].games += 1
                used += 1
            phases[SELF_PLAY].output_bytes += output_bytes(handle) - before
        if not settings.games_vs_random:
            continue
        handle.enter_phase(CHECKPOINT)
        before = output_bytes(handle)
        for i in range(settings.games_vs_random):
            black, white = (handle, "random") if i % 2 == 0 else ("random", handle)
            play_game(spec, black, white, derive_seed(settings.seed, spec.id, "random", point, i))
            board.games += 1
            if not handle.alive:
                return
            phases[CHECKPOINT].games += 1
        phases[CHECKPOINT].output_bytes += output_bytes(handle) - before
    if handle.freeze() is not None:
        return
    if not settings.frozen_games:
        return
    handle.enter_phase(PAIRING)  # frozen games against random stand in for the pairings
    if handle.begin_pairing() is not None:  # and are played as a pairing is: by a fork of the frozen agent
        return
    before = output_bytes(handle)
    for i in range(settings.frozen_games):
        black, white = ("random", handle) if i % 2 == 0 else (handle, "random")
        play_game(spec, black, white, derive_seed(settings.seed, spec.id, "frozen", i))
        board.games += 1
        if not handle.alive:
            return
        phases[PAIRING].games += 1
    phases[PAIRING].output_bytes += output_bytes(handle) - before
    handle.end_pairing()
