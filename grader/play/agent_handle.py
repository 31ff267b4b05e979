"""The host side of one agent for one environment session: calls with deadlines, faults as data.

`AgentHandle` is composed of a transport (the wire to a runner in a sandbox, or a trusted
object in this process: grader/play/seat/transport.py), a clock (the environment's wall ceiling:
grader/play/seat/clock.py) and a ledger (act time per phase, CPU time: grader/play/seat/ledger.py); it
holds the policy between them. Every call returns normally: a failure becomes a `Fault`
(recorded on the handle, which is then dead and its sandbox killed), never an exception that
escapes a game. It enforces per call the hard deadline (soft overruns are only counted), the
environment wall ceiling, the CPU share, the pace (an agent far over it is stopped early) and
the output cap, and keeps the start of the agent's output for its owner.
"""

from __future__ import annotations

import importlib
import math
import re
import time
from typing import Any

import numpy as np

from grader.common import protocol
from grader.common.faults import Fault, FaultKind, clean_text
from grader.common.limits import DEFAULT_LIMITS, Limits
from grader.common.policy import Conduct, hard_extension, not_an_int, own_act_seconds
from grader.documents.submission import Submission
from grader.play.seat.clock import SessionClock
from grader.play.seat.ledger import ActStats, Ledger
from grader.play.seat.transport import EXPIRED, ActFrame, ActReply, Expired, InProcessTransport, PipeTransport
from grader.sandbox.base import LaunchError, Network, Sandbox, SandboxProcess
from grader.sandbox.frozen import HoldError
from grader.sandbox.image import NUMPY_VERSION
from grader.sandbox.schedstat import Sample

VERSION_MAX = 40  # characters kept of each version the runner reports
Transport = PipeTransport | InProcessTransport


MISSING_MODULE_RE = re.compile(r"^ModuleNotFoundError: No module named '([^']{1,100})'")


def import_failed(where: str, error: str) -> str:
    """The fault detail for an agent whose code raised during `where`; for a module the grader's
    image lacks, it names the module and what the image holds, with the way out."""
    detail = f"{'import of agent.py' if where == 'import' else where} failed: {error}"
    missing = MISSING_MODULE_RE.match(error)
    if missing:
        detail += (
            f" - the grader's image has only Python's standard library and numpy {NUMPY_VERSION}, so "
            f"{missing.group(1)!r} cannot be imported there: do without it, or ship its pure-Python "
            "code beside agent.py"
        )
    return detail


class AgentHandle:
    """One agent's seat for one environment session: a transport, a clock and a ledger, and
    the policy of what each reply means. `transport` is None for a session that never started
    (its fault says why)."""

    # `act` sends the arrays it is given at once and keeps nothing: a game may hand it its
    # own view arrays, rewritten for every move (grader.play.match.AgentSeat).
    reads_views_in_place = True
    # Whether a pairing's agents take turns (the one not to move stopped). Only the benchmark's
    # baseline turns it off (benchmarks/bench_lanes.py), to measure what the turns cost.
    take_turns = True

    def __init__(self, transport: Transport | None, limits: Limits = DEFAULT_LIMITS, label: str = "agent"):
        self.transport = transport
        self.limits = limits
        self.label = label
        self.fault: Fault | None = None
        self.versions: dict[str, str] = {}
        self.clock = SessionClock(limits.env_wall_seconds)
        self.ledger = Ledger(limits)
        self.conduct = Conduct(limits)
        self.frozen = False
        self.turns = False  # in a pairing: the sandbox runs only while its agent is to move
        self._boards: dict[tuple, tuple[ActFrame, float]] = {}  # per obs shape (3, rows, cols): frame, pace stop
        self._checked_obs: np.ndarray | None = None  # the arrays `act` last found fit to send
        self._checked_mask: np.ndarray | None = None
        self._checked_board: tuple[ActFrame, float] | None = None
        self._extended = 0.0  # the run-queue delay the last act's hard limit was extended by
        self._sched_mark: Sample | None = None  # the schedstat sample at the end of the last act of a run
        self.memory_peak_bytes: int | None = None  # the sandbox's peak memory, read as it closes
        self._reply: object = None  # the last reply to a simple call (freeze's names the frozen process)
        self.hold_seconds = 0.0  # the host's time holding the frozen sandbox (grader/sandbox/frozen.py)

    # -- life cycle ---------------------------------------------------------
    @classmethod
    def launch(
        cls,
        sandbox: Sandbox,
        submission: Submission,
        limits: Limits = DEFAULT_LIMITS,
        network: Network = "none",
        label: str | None = None,
    ) -> AgentHandle:
        """Start `submission` in `sandbox` and wait for its runner to be ready.

        Always returns a handle; if the sandbox could not start or the agent
        could not be imported, the handle carries the fault and is dead.
        """
        label = label or submission.path.name
        try:
            process = sandbox.start(submission, limits, network)
        except LaunchError as exc:
            return cls.failed(Fault(FaultKind.LAUNCH_FAILED, str(exc)), limits, label)
        handle = cls(PipeTransport(process, limits), limits, label)
        handle._await_ready()
        return handle

    @classmethod
    def in_process(cls, agent: Any, limits: Limits = DEFAULT_LIMITS, label: str = "agent") -> AgentHandle:
        """A seat for a trusted Python agent object in this process. It goes through the same
        policy and fault paths as a sandboxed agent, so a round can be tested whole without a
        sandbox; nothing bounds its time or memory."""
        return cls(InProcessTransport(agent, limits), limits, label)

    @classmethod
    def import_in_process(cls, target: str, limits: Limits, label: str) -> AgentHandle:
        """`in_process` of a new `module:Class` object; an import or constructor that raises
        is the agent's fault, on the handle."""
        module, _, name = target.partition(":")
        try:
            agent = getattr(importlib.import_module(module), name)()
        except Exception as exc:  # the agent's own import or constructor failed: its fault
            return cls.failed(
                Fault(FaultKind.AGENT_ERROR, f"import of {target} failed: {type(exc).__name__}: {exc}"), limits, label
            )
        return cls.in_process(agent, limits, label)

    @classmethod
    def failed(cls, fault: Fault, limits: Limits = DEFAULT_LIMITS, label: str = "agent") -> AgentHandle:
        """A session that never started: `fault` says why."""
        handle = cls(None, limits, label)
        handle.fault = fault
        return handle

    def _await_ready(self) -> None:
        transport = self.transport
        assert isinstance(transport, PipeTransport)
        deadline = self.clock.deadline(time.monotonic(), self.limits.prepare_seconds)
        header = transport.receive(deadline, "start", before_start=True)
        if not isinstance(header, dict):
            self._failed(header, "start", deadline)
            return
        if header["op"] != protocol.OP_STARTED:
            self._fail(FaultKind.PROTOCOL, f"runner said {header['op']!r} before 'started'")
            return
        header = transport.receive(deadline, "import of agent.py")
        if not isinstance(header, dict):
            self._failed(header, "import of agent.py", deadline)
            return
        if header["op"] == protocol.OP_READY:
            # The runner's frame, but the agent's module ran before it and could have sent its own.
            self.versions = {k: clean_text(header[k], VERSION_MAX) for k in ("python", "numpy") if k in header}
        elif header["op"] == protocol.OP_ERROR:
            self._fail(
                FaultKind.AGENT_ERROR, import_failed(str(header.get("where", "import")), str(header.get("error", "")))
            )
        else:
            self._fail(FaultKind.PROTOCOL, f"unexpected {header['op']!r} instead of 'ready'")

    @property
    def alive(self) -> bool:
        return self.fault is None

    @property
    def process(self) -> SandboxProcess | None:
        """The sandboxed runner, while it is open (None in-process, never started, or closed)."""
        return None if self.transport is None else self.transport.process

    def close(self) -> None:
        """Kill the sandbox and keep its accounting; safe to call twice."""
        if self.transport is None or self.transport.process is None:
            return
        self._drain_output()
        self._check_cpu(force=True)
        self.memory_peak_bytes = self.transport.process.memory_peak()
        self.transport.close()

    def __enter__(self) -> AgentHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- calls --------------------------------------------------------------
    def pause(self) -> None:
        """The round turns to other entrants: their time must not use up this agent's ceiling,
        and none of its processes may take their CPU (the sandbox is stopped until `resume`)."""
        self.clock.pause()
        if self.transport is not None:
            self.transport.suspend()

    def resume(self) -> None:
        """The round turns back to this agent: its processes run again and the pause is added
        back to its ceiling."""
        if self.transport is not None:
            self.transport.resume()
        self.clock.resume()
        self._sched_mark = None  # the next act starts a run of its own

    def pin(self, core: int) -> None:
        """Move the agent's sandbox to `core` (the round gives it another between phases)."""
        if self.transport is not None:
            self.transport.pin(core)

    def enter_phase(self, phase: str) -> None:
        """The acts from now on belong to `phase` (grader.common.policy.PHASES), whose pace is
        judged on its own mean."""
        self.ledger.enter_phase(phase)

    def prepare(self, env_info: dict) -> Fault | None:
        """Send prepare(env_info); None on success, else the fault."""
        return self._simple_call({"op": protocol.OP_PREPARE, "env_info": env_info}, "prepare")

    def observe_outcome(self, outcome: dict) -> Fault | None:
        """Send observe_outcome(outcome); refused on the host side after freeze()."""
        if self.frozen:
            raise ValueError("observe_outcome after freeze: no feedback once an agent is frozen")
        return self._simple_call({"op": protocol.OP_OUTCOME, "outcome": outcome}, "observe_outcome")

    def freeze(self) -> Fault | None:
        """End feedback: after this the runner refuses outcomes. The sandbox is then held as
        it is when freeze() returns (grader/sandbox/frozen.py): its other processes end, and
        the frozen process is checked from the host."""
        self.frozen = True
        fault = self._simple_call({"op": protocol.OP_FREEZE}, "freeze")
        if fault is None:
            pid = self._reply.get("pid") if isinstance(self._reply, dict) else None
            fault = self._held("hold_frozen", pid)
        return fault

    def begin_pairing(self) -> Fault | None:
        """Start a pairing from the frozen agent: the runner forks it, and the pairing's games
        are played by the fork, which ends with `end_pairing`; nothing it does reaches the
        next pairing."""
        if not self.frozen:
            raise ValueError("begin_pairing before freeze: a pairing starts from the frozen agent")
        fault = self._simple_call({"op": protocol.OP_PAIRING}, "the pairing's fork")
        if fault is None and self.take_turns:
            # From here to `end_pairing` the agent computes only on its own turns, so the two
            # agents of a game can share one core (docs/rules.md, "Your sandbox runs ...").
            self.turns = True
            self.transport.turn(False)  # type: ignore[union-attr]
        return fault

    def end_pairing(self) -> Fault | None:
        """End the pairing begun by `begin_pairing`: its fork exits, the frozen agent is back."""
        fault = self._simple_call({"op": protocol.OP_END_PAIRING}, "the end of a pairing")
        self.turns = False
        if fault is None:
            fault = self._held("back_to_frozen")
        return fault

    def _held(self, step: str, *args) -> Fault | None:
        """The host's hold on the frozen sandbox (`step` of the sandbox process: at freeze, or
        after a pairing): a finding is the agent's fault, a host that cannot hold it the
        arena's. The time it takes is kept (`hold_seconds`)."""
        hold = getattr(self.process, step, None)
        if hold is None:  # in-process, or a sandbox that holds nothing (the unsafe backend)
            return self.fault
        start = time.perf_counter()
        try:
            found = hold(*args)
        except (HoldError, PermissionError) as exc:  # the host's side: a doctor check says so beforehand
            return self._fail(FaultKind.INFRASTRUCTURE, f"cannot hold the frozen agent: {exc}")
        finally:
            self.hold_seconds += time.perf_counter() - start
        if found:
            return self._fail(
                FaultKind.AGENT_ERROR, f"{found}: nothing may outlive a pairing (docs/rules.md, section 4)"
            )
        return self.fault

    def end_session(self, rows: int, cols: int) -> Fault | None:
        """The end of the session on a rows x cols board: over the CPU share (read now, so
        that CPU burnt since the last check is charged while the round still records it) is
        a `budget` fault; over the pace in any phase (its mean act time, judged once enough of
        its acts were timed) a `timeout` fault. These are the kinds `SESSION_END_KINDS` names."""
        if self.fault is None and not self._check_cpu(force=True):
            fault = self.ledger.over_pace((rows, cols))
            if fault is not None:
                self._fail(fault.kind, fault.detail)
        return self.fault

    def act(self, obs: np.ndarray, mask: np.ndarray) -> tuple[int | None, Fault | None]:
        """Ask for a move: (cell, None), or (None, fault). The cell is an int in
        range(mask.size) but not necessarily legal: that is the policy's call. `obs` and
        `mask` are sent as they are and not kept (`reads_views_in_place`); this is the hot
        path of a round (hundreds of thousands of calls per environment)."""
        if self.fault is not None:
            return None, self.fault
        if obs is self._checked_obs and mask is self._checked_mask:
            board = self._checked_board
        else:
            obs, mask, board = self._checked_views(obs, mask)
        frame, pace_stop = board  # type: ignore[misc]
        transport = self.transport
        sched = transport.sched  # type: ignore[union-attr]
        # The run-queue delay is read from the end of the last act (the opponent's turn between
        # costs this agent nothing it could use: the time charged is never less than its CPU).
        mark = self._sched_mark
        own_start = None
        if sched is not None:
            if mark is None:
                mark = sched.sample()
            own_start = sched.own()  # the arena's own thread: its delay counts only during the call
        if self.turns:
            transport.turn(True)  # type: ignore[union-attr]
        start = time.monotonic()
        deadline = self.clock.deadline(start, self.limits.act_hard_seconds)
        reply = transport.act(frame, obs, mask, deadline, start)  # type: ignore[union-attr]
        if reply is EXPIRED and mark is not None:
            reply, deadline = self._act_extended(mark, own_start, start, deadline)
        if self.turns:
            transport.turn(False)  # type: ignore[union-attr]
        now = time.monotonic()
        # The time charged is the agent's own: the host's contention (run-queue delay) is not.
        elapsed = charged = now - start
        if mark is not None:
            after = self._sched_mark = sched.sample()  # type: ignore[union-attr]
            charged = own_act_seconds(elapsed, *sched.delta(mark, after, own_start))  # type: ignore[union-attr]
        if type(reply) is int and reply < mask.size:
            stats = self.ledger.count_act(charged, elapsed - charged)
            # The pace's early stop and the CPU check run only when one may be due: this is every move.
            if stats.total_seconds > pace_stop * stats.count or now >= self.ledger.next_cpu_check:
                return self._after_act(reply, frame.shape)
            return reply, None
        if not isinstance(reply, dict):
            if isinstance(reply, int):  # the plain action of a cell off the board
                self.ledger.count_act(charged, elapsed - charged)
                return None, self._bad_act_reply({"op": protocol.OP_ACTION, "action": reply}, mask.size)
            return None, self._failed(reply, "act", deadline)
        self.ledger.count_act(charged, elapsed - charged)
        action = reply.get("action")
        if reply["op"] != protocol.OP_ACTION or type(action) is not int or not 0 <= action < mask.size:
            return None, self._bad_act_reply(reply, mask.size)
        return self._after_act(action, frame.shape)

    def _act_extended(
        self, mark: Sample, own_start: tuple[int, int] | None, start: float, deadline: float
    ) -> tuple[ActReply, float]:
        """An act with no reply by its hard limit: waited for longer by the run-queue delay it
        met meanwhile (grader.common.policy.hard_extension: at most once more the hard limit), so that
        the host's contention does not cost the agent the move; (the reply or EXPIRED, the
        deadline it last had). An agent that hangs meets no delay of the host's and is
        stopped at the hard limit, or, spinning on a busy host, by twice it."""
        transport = self.transport
        sched = transport.sched  # type: ignore[union-attr]
        assert sched is not None  # `act` extends only where it sampled the delay
        reply: ActReply = EXPIRED
        extended = self._extended = 0.0
        while reply is EXPIRED and not self.clock.at_ceiling(deadline):
            extension = hard_extension(sched.delta(mark, sched.sample(), own_start)[1], self.limits)
            if extension <= extended:
                break
            extended = extension
            self._extended = extension
            deadline = self.clock.deadline(start, self.limits.act_hard_seconds + extension)
            reply = transport.receive(deadline, "act")  # type: ignore[union-attr]
        return reply, deadline

    def _board(self, shape: tuple) -> tuple[ActFrame, float]:
        """The act frame of an observation of `shape` (3, rows, cols), and its pace stop (the
        mean act time, in seconds, that stops a phase early)."""
        board = self._boards.get(shape)
        if board is None:
            rows, cols = shape[1:]
            board = self._boards[shape] = (
                ActFrame((rows, cols)),
                self.limits.pace_stop_factor * self.limits.pace_seconds(rows, cols),
            )
        return board

    def _checked_views(
        self, obs: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, tuple[ActFrame, float]]:
        """obs as C-contiguous float32 (3, rows, cols), mask as int8 (rows * cols,), and the
        board of their shape; the arrays are remembered when they needed no copy (a game's
        own views are given for every move), so that the next move skips this."""
        board = self._board(obs.shape)
        fit = obs.dtype == np.float32 and obs.flags.c_contiguous and mask.dtype == np.int8 and mask.flags.c_contiguous
        if not fit:
            return np.ascontiguousarray(obs, dtype=np.float32), np.ascontiguousarray(mask, dtype=np.int8), board
        self._checked_obs, self._checked_mask, self._checked_board = obs, mask, board
        return obs, mask, board

    @property
    def phase(self) -> str:
        return self.ledger.phase

    @property
    def phase_stats(self) -> dict[str, ActStats]:
        """Act timing per phase (grader.common.policy.PHASES), each judged on its own."""
        return self.ledger.phase_stats

    @property
    def act_stats(self) -> ActStats:
        """Every act of the session: its phases' together."""
        return self.ledger.act_stats

    @property
    def call_seconds(self) -> float:
        """Seconds waiting on prepare, observe_outcome and freeze."""
        return self.ledger.call_seconds

    def _after_act(self, action: int, shape: tuple[int, int]) -> tuple[int | None, Fault | None]:
        """The pace of the phase under way (an agent far over it is stopped early) and the CPU
        share, after a reply."""
        fault = self.ledger.far_over_pace(shape)
        if fault is not None:
            return None, self._fail(fault.kind, fault.detail)
        if self._check_cpu():
            return None, self.fault
        return action, None

    def _bad_act_reply(self, header: dict, cells: int) -> Fault:
        op = header["op"]
        if op == protocol.OP_ACTION:
            action = header.get("action")
            if type(action) is not int:
                return self._fail(FaultKind.PROTOCOL, f"action {action!r} is not an integer")
            return self._fail(FaultKind.PROTOCOL, f"action {action} is outside the board (0..{cells - 1})")
        if op == protocol.OP_BAD_ACTION:
            kind, text = str(header.get("type")), str(header.get("repr"))
            if kind == "int":  # an int the wire cannot carry (past 64 bits): off the board all the same
                return self._fail(FaultKind.PROTOCOL, f"action {text} is outside the board (0..{cells - 1})")
            return self._fail(FaultKind.PROTOCOL, not_an_int(kind, text))
        if op == protocol.OP_ERROR:
            return self._fail(FaultKind.AGENT_ERROR, f"act() raised {header.get('error', '')}")
        return self._fail(FaultKind.PROTOCOL, f"unexpected reply {op!r} to act")

    def fail(self, fault: Fault) -> Fault:
        """Record a fault decided outside the handle (e.g. the never-legal forfeit) and kill the sandbox."""
        return self._fail(fault.kind, fault.detail)

    def stderr_text(self) -> str:
        """The agent's captured output (truncated), for its owner only."""
        if self.transport is None:
            return ""
        self._drain_output()
        return self.transport.log.text()

    def stats(self) -> dict:
        """Accounting of this session: act timing, wall and CPU time, output size."""
        self._check_cpu(force=True)
        ledger = self.ledger.to_dict()
        return {
            "act": ledger["act"],
            "phases": ledger["phases"],
            "wall_seconds": round(self.clock.elapsed(), 3),
            "cpu_seconds": ledger["cpu_seconds"],
            "output_bytes": 0 if self.transport is None else self.transport.log.total,
            "illegal_moves": self.conduct.illegal_total,
        }

    # -- machinery ----------------------------------------------------------
    def _simple_call(self, header: dict, what: str) -> Fault | None:
        """A request that is answered `ok` (prepare, observe_outcome, freeze): None, or its fault."""
        if self.fault is not None:
            return self.fault
        self._sched_mark = None  # what the agent computes in this call is no act's
        if self.turns:
            self.transport.turn(True)  # type: ignore[union-attr]
        start = time.perf_counter()
        deadline = self.clock.deadline(time.monotonic(), self.limits.prepare_seconds)
        reply = self.transport.call(header, deadline, what)  # type: ignore[union-attr]
        if self.turns and header["op"] != protocol.OP_END_PAIRING:
            self.transport.turn(False)  # type: ignore[union-attr]
        self._reply = reply
        self.ledger.call_seconds += time.perf_counter() - start
        if not isinstance(reply, dict):
            return self._failed(reply, what, deadline)
        op = reply["op"]
        if op == protocol.OP_OK:
            self._check_cpu()  # a no-op until the next check is due
            return self.fault
        if op == protocol.OP_ERROR:
            return self._fail(FaultKind.AGENT_ERROR, f"{what}() raised {reply.get('error', '')}")
        return self._fail(FaultKind.PROTOCOL, f"unexpected reply {op!r} to {what}")

    def _failed(self, reply: Fault | Expired, what: str, deadline: float) -> Fault:
        """The fault of a call the transport could not complete: out of time, or its own
        failure (an agent that ended over its CPU share ended for that)."""
        if reply is EXPIRED:
            if self.clock.at_ceiling(deadline):
                return self._fail(
                    FaultKind.TIMEOUT,
                    f"environment wall ceiling of {self.limits.env_wall_seconds:g} s reached during {what}",
                )
            if what == "act":
                extended = (
                    f", extended by {self._extended:.2f} s of run-queue delay (the host's contention)"
                    if self._extended
                    else ""
                )
                return self._fail(
                    FaultKind.TIMEOUT,
                    f"no reply to act within the hard limit of {self.limits.act_hard_seconds:g} s{extended}",
                )
            return self._fail(FaultKind.TIMEOUT, f"no reply to {what} within {self.limits.prepare_seconds:g} s")
        assert isinstance(reply, Fault)
        if reply.kind in (FaultKind.EOF, FaultKind.LAUNCH_FAILED) and self._check_cpu(force=True):
            return self.fault  # type: ignore[return-value]
        return self._fail(reply.kind, reply.detail)

    def _drain_output(self) -> None:
        """Read the agent's waiting output into its log; past the output cap, the fault."""
        failed = None if self.transport is None else self.transport.drain_output()
        if failed is not None:
            self._fail(failed.kind, failed.detail)

    def _check_cpu(self, force: bool = False) -> bool:
        """Update the CPU time used; True (and a `budget` fault) when over the share."""
        if self.transport is None or self.transport.process is None:
            self.ledger.next_cpu_check = math.inf  # no process to read: `act` need not ask again
            return False
        if not (force or self.ledger.cpu_due()):
            return False
        fault = self.ledger.record_cpu(self.transport.cpu_seconds())
        if fault is not None and self.fault is None:
            self._fail(fault.kind, fault.detail)
            return True
        return False

    def _fail(self, kind: FaultKind, detail: str) -> Fault:
        """Record the first fault, kill the sandbox; later faults do not overwrite it."""
        if self.fault is None:
            self.fault = Fault(kind, detail)
        if self.transport is not None:
            self.transport.kill()
        return self.fault
