"""The host side of one agent in one sandbox: calls with deadlines, faults as data.

`AgentHandle` speaks the wire to the runner. Every call returns normally: a
failure becomes a `Fault` (recorded on the handle, which is then dead and its
sandbox killed), never an exception that escapes a game. It enforces per call
the hard deadline (soft overruns are only counted), the environment wall
ceiling, the CPU share, the pace (an agent far over it is stopped early) and
the output cap, and keeps the start of the agent's output for its owner.
"""

from __future__ import annotations

import errno
import os
import re
import select
import time
from dataclasses import dataclass

import numpy as np

from grader import protocol
from grader.faults import Fault, FaultKind, clean_text
from grader.limits import DEFAULT_LIMITS, Limits, size_text
from grader.policy import PHASES, SESSION, Conduct, not_an_int, pace_fault, pace_stop_fault
from grader.sandbox.base import LaunchError, Network, Sandbox, SandboxProcess
from grader.sandbox.image import NUMPY_VERSION
from grader.submission import Submission

# The CPU share is read from the cgroup at most this often (a file read per act would cost).
CPU_CHECK_INTERVAL = 0.5
VERSION_MAX = 40  # characters kept of each version the runner reports
_POLLIN = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


MISSING_MODULE_RE = re.compile(r"^ModuleNotFoundError: No module named '([^']{1,100})'")


def import_failed(where: str, error: str) -> str:
    """The fault detail for an agent whose code raised during `where`; for a module the grader's
    image lacks, it names the module and what the image holds, with the way out."""
    detail = f"{'import of agent.py' if where == 'import' else where} failed: {error}"
    missing = MISSING_MODULE_RE.match(error)
    if missing:
        detail += (f" - the grader's image has only Python's standard library and numpy {NUMPY_VERSION}, so "
                   f"{missing.group(1)!r} cannot be imported there: do without it, or ship its pure-Python "
                   "code beside agent.py")
    return detail


class ActFrame:
    """What an `act` frame of one board shape needs, built once: its constant head (prefix
    and header; the observation and mask follow it as they are), its length and the pace
    threshold."""

    __slots__ = ("shape", "head", "length", "pace_stop")

    def __init__(self, shape: tuple[int, int], limits: Limits):
        rows, cols = self.shape = shape
        cells = rows * cols
        header = protocol.act_header(rows, cols)
        self.head = protocol.PREFIX.pack(len(header), 3 * cells * 4 + cells) + header
        self.length = len(self.head) + 13 * cells
        self.pace_stop = limits.pace_stop_factor * limits.pace_seconds(rows, cols)


@dataclass
class ActStats:
    """Timing of the agent's act() replies, as the host measured them."""

    count: int = 0
    total_seconds: float = 0.0
    max_seconds: float = 0.0
    soft_overruns: int = 0

    @property
    def mean_seconds(self) -> float:
        return self.total_seconds / self.count if self.count else 0.0

    def to_dict(self) -> dict:
        return {"count": self.count, "total_seconds": round(self.total_seconds, 6),
                "mean_seconds": round(self.mean_seconds, 6), "max_seconds": round(self.max_seconds, 6),
                "soft_overruns": self.soft_overruns}


class OutputLog:
    """The agent's stdout+stderr: the first `keep` bytes kept, all bytes counted."""

    def __init__(self, keep: int):
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    def text(self) -> str:
        """The kept output, with a note of how much was dropped."""
        text = self.data.decode("utf-8", "replace")
        if self.total > len(self.data):
            text += f"\n[arena: {self.total - len(self.data)} more bytes of output dropped]\n"
        return text


class AgentHandle:
    """One agent's runner in one sandbox, for one environment session."""

    # `act` sends the arrays it is given at once and keeps nothing: a game may hand it its
    # own view arrays, rewritten for every move (grader.match.AgentSeat).
    reads_views_in_place = True

    def __init__(self, process: SandboxProcess | None, limits: Limits = DEFAULT_LIMITS, label: str = "agent"):
        self.process = process
        self.limits = limits
        self.label = label
        self.fault: Fault | None = None
        self.versions: dict[str, str] = {}
        self.phase = SESSION
        self.phase_stats: dict[str, ActStats] = {SESSION: ActStats()}  # per phase, judged apart (grader.policy)
        self._phase_stats = self.phase_stats[SESSION]
        self.call_seconds = 0.0  # waiting on prepare, observe_outcome and freeze
        self.conduct = Conduct(limits)
        self.log = OutputLog(limits.log_keep_bytes)
        self.frozen = False
        self.started = time.monotonic()
        self.env_deadline = self.started + limits.env_wall_seconds
        self._paused_at: float | None = None
        self.cpu_seconds_used = 0.0
        self._next_cpu_check = self.started + CPU_CHECK_INTERVAL
        self._reader = protocol.FrameReader(protocol.REPLY_MAX_HEADER, protocol.REPLY_MAX_BODY,
                                            cached_ops=frozenset({protocol.OP_ACTION, protocol.OP_OK}))
        self._act_frames: dict[tuple, ActFrame] = {}  # per obs shape (3, rows, cols)
        self._checked_obs: np.ndarray | None = None  # the arrays `act` last found fit to send
        self._checked_mask: np.ndarray | None = None
        self._checked_frame: ActFrame | None = None
        if process is not None:
            for fd in (process.stdin_fd, process.stdout_fd, process.stderr_fd):
                os.set_blocking(fd, False)
            self._poll = select.poll()
            self._poll.register(process.stdout_fd, _POLLIN)
            self._poll.register(process.stderr_fd, _POLLIN)
            self._stderr_open = True

    # -- life cycle ---------------------------------------------------------
    @classmethod
    def launch(cls, sandbox: Sandbox, submission: Submission, limits: Limits = DEFAULT_LIMITS,
               network: Network = "none", label: str | None = None) -> "AgentHandle":
        """Start `submission` in `sandbox` and wait for its runner to be ready.

        Always returns a handle; if the sandbox could not start or the agent
        could not be imported, the handle carries the fault and is dead.
        """
        label = label or submission.path.name
        try:
            process = sandbox.start(submission, limits, network)
        except LaunchError as exc:
            handle = cls(None, limits, label)
            handle.fault = Fault(FaultKind.LAUNCH_FAILED, str(exc))
            return handle
        handle = cls(process, limits, label)
        handle._await_ready()
        return handle

    def _await_ready(self) -> None:
        deadline = time.monotonic() + self.limits.prepare_seconds
        header = self._receive(deadline, "start", before_start=True)
        if header is None:
            return
        if header["op"] != protocol.OP_STARTED:
            self._fail(FaultKind.PROTOCOL, f"runner said {header['op']!r} before 'started'")
            return
        header = self._receive(deadline, "import of agent.py")
        if header is None:
            return
        if header["op"] == protocol.OP_READY:
            # The runner's frame, but the agent's module ran before it and could have sent its own.
            self.versions = {k: clean_text(header[k], VERSION_MAX) for k in ("python", "numpy") if k in header}
        elif header["op"] == protocol.OP_ERROR:
            self._fail(FaultKind.AGENT_ERROR, import_failed(str(header.get("where", "import")), str(header.get("error", ""))))
        else:
            self._fail(FaultKind.PROTOCOL, f"unexpected {header['op']!r} instead of 'ready'")

    @property
    def alive(self) -> bool:
        return self.fault is None

    def close(self) -> None:
        """Kill the sandbox and keep its accounting; safe to call twice."""
        if self.process is None:
            return
        self._drain_stderr()
        self._check_cpu(force=True)
        self.process.close()
        self.process = None

    def __enter__(self) -> "AgentHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- calls --------------------------------------------------------------
    def pause_clock(self) -> None:
        """The round turns to other entrants: their time must not use up this agent's ceiling."""
        if self._paused_at is None:
            self._paused_at = time.monotonic()

    def resume_clock(self) -> None:
        """The round turns back to this agent: the pause is added back to its ceiling."""
        if self._paused_at is not None:
            self.env_deadline += time.monotonic() - self._paused_at
            self._paused_at = None

    def enter_phase(self, phase: str) -> None:
        """The acts from now on belong to `phase` (grader.policy.PHASES), whose pace is
        judged on its own mean."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r} (one of {', '.join(PHASES)})")
        self.phase = phase
        self._phase_stats = self.phase_stats.setdefault(phase, ActStats())

    def prepare(self, env_info: dict) -> Fault | None:
        """Send prepare(env_info); None on success, else the fault."""
        return self._simple_call({"op": protocol.OP_PREPARE, "env_info": env_info}, self.limits.prepare_seconds, "prepare")

    def observe_outcome(self, outcome: dict) -> Fault | None:
        """Send observe_outcome(outcome); refused on the host side after freeze()."""
        if self.frozen:
            raise ValueError("observe_outcome after freeze: no feedback once an agent is frozen")
        return self._simple_call({"op": protocol.OP_OUTCOME, "outcome": outcome}, self.limits.prepare_seconds, "observe_outcome")

    def freeze(self) -> Fault | None:
        """End feedback: after this the runner refuses outcomes."""
        self.frozen = True
        return self._simple_call({"op": protocol.OP_FREEZE}, self.limits.prepare_seconds, "freeze")

    def end_session(self, rows: int, cols: int) -> Fault | None:
        """The end of the session on a rows x cols board: over the pace in any phase (its
        mean act time, judged once enough of its acts were timed) is a `timeout` fault."""
        for phase, stats in self.phase_stats.items():
            if self.fault is not None:
                break
            fault = pace_fault(stats, (rows, cols), self.limits, phase)
            if fault is not None:
                self._fail(fault.kind, fault.detail)
        return self.fault

    def act(self, obs: np.ndarray, mask: np.ndarray) -> tuple[int | None, Fault | None]:
        """Ask for a move: (cell, None), or (None, fault). The cell is an int in
        range(mask.size) but not necessarily legal: that is the policy's call. `obs` and
        `mask` are sent as they are and not kept (`reads_views_in_place`).

        This is the hot path of a round (hundreds of thousands of calls per environment):
        the frame goes out in one writev from the caller's arrays, and the reply that is
        almost always there, one `action` frame, is recognised by its bytes; anything else
        (a partial write, the agent's output, another reply, no reply yet) takes the general
        path of every call, with the same deadline.
        """
        if self.fault is not None:
            return None, self.fault
        if obs is self._checked_obs and mask is self._checked_mask:
            act_frame = self._checked_frame
        else:
            obs, mask, act_frame = self._checked_views(obs, mask)
        process = self.process
        start = time.monotonic()
        deadline = start + self.limits.act_hard_seconds
        if self.env_deadline < deadline:
            deadline = self.env_deadline
        try:
            sent = os.writev(process.stdin_fd, (act_frame.head, obs, mask))
        except OSError:
            sent = 0  # `_send` tells the kinds of error apart
        if sent != act_frame.length:
            frame = b"".join((act_frame.head, obs.tobytes(), mask.tobytes()))
            if not self._send(frame[sent:], deadline, "act"):
                return None, self.fault
        reader = self._reader
        if not reader.pending():
            # Never a negative timeout (poll would wait for ever): past the deadline, look and go.
            ready = self._poll.poll(max(0.0, (deadline - time.monotonic()) * 1000 + 1))
            if len(ready) == 1 and ready[0][0] == process.stdout_fd:
                try:
                    data = os.read(process.stdout_fd, 1 << 16)
                except OSError:
                    data = b""  # `_receive` reads again and says what failed
                action = protocol.ACTION_OF.get(data)
                if action is not None and action < mask.size:
                    self._count_act(time.monotonic() - start)
                    return self._after_act(action, act_frame)
                reader.feed(data)
        header = self._receive(deadline, "act")
        if header is None:
            return None, self.fault
        self._count_act(time.monotonic() - start)
        return self._act_reply(header, act_frame, mask.size)

    def _frame_for(self, shape: tuple) -> ActFrame:
        """The act frame of an observation of `shape` (3, rows, cols)."""
        act_frame = self._act_frames.get(shape)
        if act_frame is None:
            act_frame = self._act_frames[shape] = ActFrame(shape[1:], self.limits)
        return act_frame

    def _checked_views(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, ActFrame]:
        """obs as C-contiguous float32 (3, rows, cols), mask as int8 (rows * cols,), and the
        act frame of their shape; the arrays are remembered when they needed no copy (a
        game's own views are given for every move), so that the next move skips this."""
        act_frame = self._frame_for(obs.shape)
        fit = obs.dtype == np.float32 and obs.flags.c_contiguous and mask.dtype == np.int8 and mask.flags.c_contiguous
        if not fit:
            return np.ascontiguousarray(obs, dtype=np.float32), np.ascontiguousarray(mask, dtype=np.int8), act_frame
        self._checked_obs, self._checked_mask, self._checked_frame = obs, mask, act_frame
        return obs, mask, act_frame

    @property
    def act_stats(self) -> ActStats:
        """Every act of the session: its phases' together."""
        phases = self.phase_stats.values()
        return ActStats(sum(s.count for s in phases), sum(s.total_seconds for s in phases),
                        max(s.max_seconds for s in phases), sum(s.soft_overruns for s in phases))

    def _count_act(self, elapsed: float) -> None:
        stats = self._phase_stats
        stats.count += 1
        stats.total_seconds += elapsed
        if elapsed > stats.max_seconds:
            stats.max_seconds = elapsed
        if elapsed > self.limits.act_soft_seconds:
            stats.soft_overruns += 1

    def _act_reply(self, header: dict, act_frame: ActFrame, cells: int) -> tuple[int | None, Fault | None]:
        """The move of an act reply, or the fault it is: the reply's form, then the checks
        after every reply (`_after_act`)."""
        action = header.get("action")
        if header["op"] != protocol.OP_ACTION or type(action) is not int or not 0 <= action < cells:
            return None, self._bad_act_reply(header, cells)
        return self._after_act(action, act_frame)

    def _after_act(self, action: int, act_frame: ActFrame) -> tuple[int | None, Fault | None]:
        """The pace of the phase under way (an agent far over it is stopped early) and the CPU
        share, after a reply."""
        stats = self._phase_stats
        if stats.total_seconds > act_frame.pace_stop * stats.count and stats.count >= self.limits.pace_min_acts:
            fault = pace_stop_fault(stats, act_frame.shape, self.limits, self.phase)
            if fault is not None:
                return None, self._fail(fault.kind, fault.detail)
        if time.monotonic() >= self._next_cpu_check and self._check_cpu():
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
            return self._fail(FaultKind.PROTOCOL, not_an_int(str(header.get("type")), str(header.get("repr"))))
        if op == protocol.OP_ERROR:
            return self._fail(FaultKind.AGENT_ERROR, f"act() raised {header.get('error', '')}")
        return self._fail(FaultKind.PROTOCOL, f"unexpected reply {op!r} to act")

    def fail(self, fault: Fault) -> Fault:
        """Record a fault decided outside the handle (e.g. the never-legal forfeit) and kill the sandbox."""
        return self._fail(fault.kind, fault.detail)

    def stderr_text(self) -> str:
        """The agent's captured output (truncated), for its owner only."""
        self._drain_stderr()
        return self.log.text()

    def stats(self) -> dict:
        """Accounting of this session: act timing, wall and CPU time, output size."""
        self._check_cpu(force=True)
        return {"act": self.act_stats.to_dict(),
                "phases": {phase: stats.to_dict() for phase, stats in self.phase_stats.items() if stats.count},
                "wall_seconds": round(time.monotonic() - self.started, 3),
                "cpu_seconds": round(self.cpu_seconds_used, 3), "output_bytes": self.log.total,
                "illegal_moves": self.conduct.illegal_total}

    # -- machinery ----------------------------------------------------------
    def _simple_call(self, header: dict, limit: float, what: str) -> Fault | None:
        if self.fault is not None:
            return self.fault
        start = time.perf_counter()
        reply = self._call(protocol.encode(header), limit, what)
        self.call_seconds += time.perf_counter() - start
        return self._call_reply(reply, what)

    def _call_reply(self, reply: dict | None, what: str) -> Fault | None:
        """The fault a reply to `what` (prepare, observe_outcome, freeze) is, if any."""
        if reply is None:
            return self.fault
        op = reply["op"]
        if op == protocol.OP_OK:
            self._check_cpu()  # a no-op until the next check is due
            return self.fault
        if op == protocol.OP_ERROR:
            return self._fail(FaultKind.AGENT_ERROR, f"{what}() raised {reply.get('error', '')}")
        return self._fail(FaultKind.PROTOCOL, f"unexpected reply {op!r} to {what}")

    def _call(self, frame: bytes, limit: float, what: str) -> dict | None:
        deadline = time.monotonic() + limit
        if self.env_deadline < deadline:
            deadline = self.env_deadline
        if not self._send(frame, deadline, what):
            return None
        return self._receive(deadline, what)

    def _send(self, frame: bytes, deadline: float, what: str) -> bool:
        fd = self.process.stdin_fd
        written = 0
        try:
            written = os.write(fd, frame)
            if written == len(frame):  # the usual case: the pipe has room
                return True
        except OSError:
            pass  # the loop below tells the kinds of error apart
        view = memoryview(frame)[written:]
        while view:
            try:
                view = view[os.write(fd, view):]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                self._died(what)
                return False
            except OSError as exc:
                self._fail(FaultKind.PIPE, f"writing to the sandbox during {what}: {exc}")
                return False
            # The runner is not reading (its pipe is full): wait, draining its output.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._timed_out(what, deadline)
                return False
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            poller.register(self.process.stderr_fd, _POLLIN)
            for rfd, _ in poller.poll(min(remaining, 0.1) * 1000):
                if rfd == self.process.stderr_fd and not self._drain_stderr():
                    return False
        return True

    def _receive(self, deadline: float, what: str, before_start: bool = False) -> dict | None:
        reader = self._reader
        stdout_fd = self.process.stdout_fd
        while True:
            try:
                frame = reader.pop()
            except protocol.WireError as exc:
                self._fail(FaultKind.PROTOCOL, f"bad frame from the agent during {what}: {exc}")
                return None
            if frame is not None:
                return frame[0]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._timed_out(what, deadline)
                return None
            for fd, _ in self._poll.poll(remaining * 1000 + 1):
                if fd == stdout_fd:
                    try:
                        data = os.read(stdout_fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    except OSError as exc:
                        self._fail(FaultKind.PIPE, f"reading from the sandbox during {what}: {exc}")
                        return None
                    if not data:
                        self._died(what, before_start)
                        return None
                    reader.feed(data)
                elif not self._drain_stderr():
                    return None

    def _drain_stderr(self) -> bool:
        """Read whatever output is waiting; False (and a fault) past the output cap."""
        if self.process is None or not self._stderr_open:
            return True
        fd = self.process.stderr_fd
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError as exc:
                if exc.errno != errno.EBADF:
                    self._fail(FaultKind.PIPE, f"reading the agent's output: {exc}")
                return False
            if not chunk:
                self._stderr_open = False
                self._poll.unregister(fd)
                return True
            self.log.add(chunk)
            if self.log.total > self.limits.output_cap_bytes:
                self._fail(FaultKind.AGENT_ERROR,
                           f"wrote more than the output cap of {size_text(self.limits.output_cap_bytes)} to stdout/"
                           "stderr: print less (write what you want to keep to a file in /tmp)")
                return False

    def _check_cpu(self, force: bool = False) -> bool:
        """Update the CPU time used; True (and a `budget` fault) when over the share."""
        now = time.monotonic()
        if self.process is None or (not force and now < self._next_cpu_check):
            return False
        self._next_cpu_check = now + CPU_CHECK_INTERVAL
        seconds = self.process.cpu_seconds()
        if seconds is not None:
            self.cpu_seconds_used = max(self.cpu_seconds_used, seconds)
        if self.cpu_seconds_used > self.limits.cpu_seconds_per_env and self.fault is None:
            self._fail(FaultKind.BUDGET, f"used {self.cpu_seconds_used:.1f} CPU s, over the share of "
                                         f"{self.limits.cpu_seconds_per_env:g} s")
            return True
        return False

    def _timed_out(self, what: str, deadline: float) -> None:
        if deadline >= self.env_deadline:
            self._fail(FaultKind.TIMEOUT, f"environment wall ceiling of {self.limits.env_wall_seconds:g} s reached during {what}")
        elif what == "act":
            self._fail(FaultKind.TIMEOUT, f"no reply to act within the hard limit of {self.limits.act_hard_seconds:g} s")
        else:
            self._fail(FaultKind.TIMEOUT, f"no reply to {what} within {self.limits.prepare_seconds:g} s")

    def _died(self, what: str, before_start: bool = False) -> Fault:
        """The runner's output closed: find out why and record the right kind."""
        process = self.process
        status = None
        for _ in range(100):  # the process is exiting; give it up to 0.5 s to be reaped
            status = process.exit_status()
            if status is not None:
                break
            time.sleep(0.005)
        self._drain_stderr()
        if self.fault is not None:
            return self.fault
        memory_kill = process.memory_kill()
        if memory_kill == "limit":
            return self._fail(FaultKind.AGENT_ERROR, f"over its memory limit of {self.limits.memory_bytes >> 20} MiB "
                              f"during {what}: the kernel killed a process of the agent for memory")
        if memory_kill == "host":
            return self._fail(FaultKind.OOM, f"killed for memory during {what} below its limit of "
                              f"{self.limits.memory_bytes >> 20} MiB: the host ran short of memory")
        lost = process.lost()
        if lost is not None:
            return self._fail(FaultKind.INFRASTRUCTURE, f"during {what}: {lost}")
        if self._check_cpu(force=True):
            return self.fault
        if before_start:
            # The runner never said 'started': the sandbox itself failed (bwrap's message is in the log).
            first = self.log.text().strip().splitlines()[:1]
            return self._fail(FaultKind.LAUNCH_FAILED, f"sandbox exited with status {status} before the runner started"
                              + (f": {first[0][:200]}" if first else ""))
        return self._fail(FaultKind.EOF, f"agent process ended during {what} (exit status {status})")

    def _fail(self, kind: FaultKind, detail: str) -> Fault:
        """Record the first fault, kill the sandbox; later faults do not overwrite it."""
        if self.fault is None:
            self.fault = Fault(kind, detail)
        if self.process is not None:
            try:
                self.process.kill()
            except OSError:
                pass  # the fault is recorded either way; close() kills and reaps again
        return self.fault
