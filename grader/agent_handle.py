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
import select
import time
from dataclasses import dataclass

import numpy as np

from grader import native_turns as native
from grader import protocol
from grader.faults import Fault, FaultKind, clean_text
from grader.limits import DEFAULT_LIMITS, Limits, size_text
from grader.policy import Conduct, import_failed, not_an_int, pace_fault, pace_stop_fault
from grader.sandbox.base import LaunchError, Network, Sandbox, SandboxProcess
from grader.submission import Submission

# The CPU share is read from the cgroup at most this often (a file read per act would cost).
CPU_CHECK_INTERVAL = 0.5
VERSION_MAX = 40  # characters kept of each version the runner reports
_POLLIN = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


class ActFrame:
    """The `act` frame of one board shape, built once: its constant head (prefix and header),
    the pace threshold, and a buffer whose body the engine fills in place (see
    `AgentHandle.view_buffers`), so a move is sent without building the frame anew."""

    __slots__ = ("shape", "head", "pace_stop", "frame", "obs", "mask")

    def __init__(self, shape: tuple[int, int], limits: Limits):
        rows, cols = self.shape = shape
        cells = rows * cols
        header = protocol.act_header(rows, cols)
        self.head = protocol.PREFIX.pack(len(header), 3 * cells * 4 + cells) + header
        self.pace_stop = limits.pace_stop_factor * limits.pace_seconds(rows, cols)
        size = len(self.head) + 13 * cells
        raw = np.zeros(size + 4, dtype=np.uint8)
        # Start the frame so that the float32 observation after the head is 4-byte aligned.
        start = -(raw.ctypes.data + len(self.head)) % 4
        self.frame = raw[start:start + size]
        self.frame[:len(self.head)] = np.frombuffer(self.head, dtype=np.uint8)
        body = len(self.head)
        self.obs = self.frame[body:body + 12 * cells].view(np.float32).reshape(3, rows, cols)
        self.mask = self.frame[body + 12 * cells:].view(np.int8)


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

    def __init__(self, process: SandboxProcess | None, limits: Limits = DEFAULT_LIMITS, label: str = "agent"):
        self.process = process
        self.limits = limits
        self.label = label
        self.fault: Fault | None = None
        self.versions: dict[str, str] = {}
        self.act_stats = ActStats()
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
        self._act_frames: dict[tuple[int, int], ActFrame] = {}  # per board shape
        self._filled: ActFrame | None = None  # the frame whose views `view_buffers` handed out last
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
        """The end of the session on a rows x cols board: over the pace (the mean act time of
        the whole session, judged once enough acts were timed) is a `timeout` fault."""
        if self.fault is None:
            fault = pace_fault(self.act_stats, (rows, cols), self.limits)
            if fault is not None:
                self._fail(fault.kind, fault.detail)
        return self.fault

    def view_buffers(self, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
        """(obs, mask) of a rows x cols board, float32 (3, rows, cols) and int8 (rows*cols,):
        views into this handle's prebuilt act frame. Whoever fills them in place and passes
        these very arrays to `act` saves building the frame for every move; their contents
        change with every move."""
        act_frame = self._act_frame((rows, cols))
        self._filled = act_frame
        return act_frame.obs, act_frame.mask

    def _act_frame(self, shape: tuple[int, int]) -> ActFrame:
        act_frame = self._act_frames.get(shape)
        if act_frame is None:
            act_frame = self._act_frames[shape] = ActFrame(shape, self.limits)
        return act_frame

    def act(self, obs: np.ndarray, mask: np.ndarray) -> tuple[int | None, Fault | None]:
        """Ask for a move: (cell, None), or (None, fault). The cell is an int in
        range(mask.size) but not necessarily legal: that is the policy's call.

        This is the hot path of a round (hundreds of thousands of calls per
        environment), hence the prebuilt frame and the inlined checks.
        """
        if self.fault is not None:
            return None, self.fault
        act_frame = self._filled
        if act_frame is not None and obs is act_frame.obs and mask is act_frame.mask:
            frame = act_frame.frame  # filled in place: nothing to build
        else:
            act_frame = self._act_frame(obs.shape[1:])
            if obs.dtype != np.float32:
                obs = obs.astype(np.float32)
            if mask.dtype != np.int8:
                mask = mask.astype(np.int8)
            frame = act_frame.head + obs.tobytes() + mask.tobytes()
        start = time.perf_counter()
        header = self._call(frame, self.limits.act_hard_seconds, "act")
        elapsed = time.perf_counter() - start
        if header is None:
            return None, self.fault
        self._count_act(elapsed)
        return self._act_reply(header, act_frame, mask.size)

    def _count_act(self, elapsed: float) -> None:
        stats = self.act_stats
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
        """The pace (an agent far over it is stopped early) and the CPU share, after a reply."""
        stats = self.act_stats
        if stats.total_seconds > act_frame.pace_stop * stats.count and stats.count >= self.limits.pace_min_acts:
            fault = pace_stop_fault(stats, act_frame.shape, self.limits)
            if fault is not None:
                return None, self._fail(fault.kind, fault.detail)
        if time.monotonic() >= self._next_cpu_check and self._check_cpu():
            return None, self.fault
        return action, None

    # -- native turns (grader.native_turns) -----------------------------------------
    @property
    def plays_natively(self) -> bool:
        """Whether grader.native_turns may play this agent's moves (a live sandboxed agent)."""
        return self.process is not None and self.fault is None

    def native_load(self, row: np.ndarray, obs: np.ndarray) -> np.ndarray | None:
        """Fill `row` (a seat's row of native_turns' io) so that the kernel may play this
        agent's moves, and return the act frame it sends; None (and the kernel leaves this
        agent to `act`) when the handle is dead or has no process, when bytes from the agent
        are already waiting, or when `obs` is not the view buffer this handle handed out."""
        act_frame = self._filled
        if (not self.plays_natively or act_frame is None or obs is not act_frame.obs
                or self._reader.pending() or self._paused_at is not None):
            return None
        process, limits, stats = self.process, self.limits, self.act_stats
        row[native.NATIVE] = 1
        row[native.STDIN], row[native.STDOUT] = process.stdin_fd, process.stdout_fd
        row[native.STDERR] = process.stderr_fd if self._stderr_open else -1
        row[native.FRAME_LEN] = len(act_frame.frame)
        row[native.HARD_NS] = round(limits.act_hard_seconds * 1e9)
        row[native.ENV_DEADLINE_NS] = round(self.env_deadline * 1e9)
        row[native.SOFT_NS] = round(limits.act_soft_seconds * 1e9)
        row[native.PACE_STOP_NS] = round(act_frame.pace_stop * 1e9)
        row[native.PACE_MIN] = limits.pace_min_acts
        row[native.NEXT_CPU_NS] = round(self._next_cpu_check * 1e9)
        row[native.COUNT] = stats.count
        row[native.TOTAL_NS] = round(stats.total_seconds * 1e9)
        row[native.MAX_NS] = round(stats.max_seconds * 1e9)
        row[native.SOFT_OVERRUNS] = stats.soft_overruns
        row[native.CALL_HARD_NS] = round(limits.prepare_seconds * 1e9)
        return act_frame.frame

    def native_store(self, row: np.ndarray) -> None:
        """Take back the accounting of the acts the kernel played: timings and legal moves."""
        stats = self.act_stats
        stats.count = int(row[native.COUNT])
        stats.total_seconds = int(row[native.TOTAL_NS]) * 1e-9
        stats.max_seconds = int(row[native.MAX_NS]) * 1e-9
        stats.soft_overruns = int(row[native.SOFT_OVERRUNS])
        self.call_seconds += int(row[native.CALL_NS]) * 1e-9
        self.conduct.played_legal(int(row[native.LEGAL]))

    def after_native_act(self, cell: int) -> tuple[int | None, Fault | None]:
        """Finish an act the kernel timed and read (`cell`, on the board): the checks after
        every reply, as `act` makes them."""
        return self._after_act(cell, self._filled)

    def resume_act(self, sent: int, pending: bytes, started_ns: int) -> tuple[int | None, Fault | None, float]:
        """Finish an act the kernel began at `started_ns` (time.monotonic_ns) and stopped: the
        rest of its frame after `sent` bytes, then the reply after the `pending` bytes already
        read, exactly as `act` would have. Returns (cell, fault, seconds the act took)."""
        act_frame = self._filled
        header = self._resume_call(act_frame.frame, sent, pending, started_ns, self.limits.act_hard_seconds, "act")
        elapsed = (time.monotonic_ns() - started_ns) * 1e-9
        if header is None:
            return None, self.fault, elapsed
        self._count_act(elapsed)
        action, fault = self._act_reply(header, act_frame, act_frame.mask.size)
        return action, fault, elapsed

    def resume_outcome(self, frame: bytes, sent: int, pending: bytes, started_ns: int) -> Fault | None:
        """Finish an observe_outcome call the kernel began at `started_ns` and stopped
        (`native_turns.self_play_turns`): the rest of `frame` after `sent` bytes, then the
        reply after the `pending` bytes already read, exactly as `observe_outcome` would have."""
        reply = self._resume_call(frame, sent, pending, started_ns, self.limits.prepare_seconds, "observe_outcome")
        self.call_seconds += (time.monotonic_ns() - started_ns) * 1e-9
        return self._call_reply(reply, "observe_outcome")

    def _resume_call(self, frame, sent: int, pending: bytes, started_ns: int, limit: float, what: str) -> dict | None:
        """The reply header of a call a kernel began at `started_ns` and stopped, as `_call`
        would have read it: the rest of `frame` after `sent` bytes, then the reply after the
        `pending` bytes already read, within `limit` of the start and the environment's
        deadline; None (the fault recorded) if there is none."""
        deadline = min(started_ns * 1e-9 + limit, self.env_deadline)
        if sent == len(frame) or self._send(frame[sent:], deadline, what):
            self._reader.feed(pending)
            return self._receive(deadline, what)
        return None

    def after_native_outcome(self) -> Fault | None:
        """The check after an outcome the kernel heard answered `ok` (the CPU share, when due),
        as `observe_outcome` makes it."""
        self._check_cpu()
        return self.fault

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
        return {"act": self.act_stats.to_dict(), "wall_seconds": round(time.monotonic() - self.started, 3),
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
