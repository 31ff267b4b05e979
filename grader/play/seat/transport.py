"""How a request reaches an agent and its reply comes back, and where the agent's output goes.

Two transports answer the same calls: `PipeTransport`, the wire to the runner in a sandbox
(grader/sandboxed/, docs/protocol.md), and `InProcessTransport`, a trusted Python object in this
process (tests and benchmarks). A call returns the reply's header as the runner would send it
(`{"op": "ok"}`, `{"op": "error", "error": ...}`, ...), an `act` the cell as an int when the
reply is a plain action; a transport's own failure is a `Fault`, and a call the deadline cut
short is `EXPIRED` (the handle knows which limit that was). Nothing raises out of a call.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import io
import os
import select
import threading
import time
from typing import Any, Final

import numpy as np

from grader.common import protocol
from grader.common.faults import Fault, FaultKind
from grader.common.limits import Limits, size_text
from grader.sandbox import schedstat
from grader.sandbox.base import SandboxProcess

_POLLIN = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


class Expired:
    """A call whose deadline passed before its reply."""

    def __repr__(self) -> str:
        return "EXPIRED"


EXPIRED: Final = Expired()
Reply = dict[str, Any] | Fault | Expired  # what a call returns
ActReply = int | dict[str, Any] | Fault | Expired  # what an act returns: the cell of a plain action, else as Reply


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


class ActFrame:
    """What an `act` frame of one board shape needs, built once: its constant head (prefix and
    header; the observation and mask follow it as they are) and its length."""

    __slots__ = ("shape", "head", "length")

    def __init__(self, shape: tuple[int, int]):
        rows, cols = self.shape = shape
        cells = rows * cols
        header = protocol.act_header(rows, cols)
        self.head = protocol.PREFIX.pack(len(header), 3 * cells * 4 + cells) + header
        self.length = len(self.head) + 13 * cells


class PipeTransport:
    """The wire to one runner in a sandbox: frames to its stdin, replies from its stdout, its
    stderr into the output log (past the output cap, a fault)."""

    def __init__(self, process: SandboxProcess, limits: Limits):
        self.process: SandboxProcess | None = process
        self.limits = limits
        self.log = OutputLog(limits.log_keep_bytes)
        self._reader = protocol.FrameReader(
            protocol.REPLY_MAX_HEADER,
            protocol.REPLY_MAX_BODY,
            cached_ops=frozenset({protocol.OP_ACTION, protocol.OP_OK}),
        )
        for fd in (process.stdin_fd, process.stdout_fd, process.stderr_fd):
            os.set_blocking(fd, False)
        self._stdin, self._stdout, self._stderr = process.stdin_fd, process.stdout_fd, process.stderr_fd
        self._poll = select.poll()
        self._poll.register(self._stdout, _POLLIN)
        self._poll.register(self._stderr, _POLLIN)
        self._stderr_open = True
        # The run-queue delay the pace does not charge (None: this kernel keeps no schedstat).
        self.sched = schedstat.SchedClock(process.pids) if schedstat.available() else None

    # -- calls --------------------------------------------------------------
    def act(self, frame: ActFrame, obs: np.ndarray, mask: np.ndarray, deadline: float, now: float) -> ActReply:
        """Send an act frame (its head, then `obs` and `mask` as they are) and wait for the
        reply until `deadline`; `now` is the monotonic time the caller read as the call began.

        The hot path of a round: the frame goes out in one writev from the caller's arrays, and
        the reply that is almost always there, one `action` frame, is recognised by its bytes;
        anything else (a partial write, the agent's output, another reply, no reply yet) takes
        the general path of every call, with the same deadline. The first wait is timed from
        `now`, not from a fresh read of the clock: a write the pipe has room for takes
        microseconds, against a millisecond of slack (a write that had to wait reads the clock
        again), and the general path reads the clock against the deadline itself.
        """
        try:
            sent = os.writev(self._stdin, (frame.head, obs, mask))  # type: ignore[arg-type]  # arrays are buffers
        except OSError:
            sent = 0  # `_send` tells the kinds of error apart
        if sent != frame.length:
            failed = self._send(b"".join((frame.head, obs.tobytes(), mask.tobytes()))[sent:], deadline, "act")
            if failed is not None:
                return failed
            now = time.monotonic()  # the write may have waited for room
        reader = self._reader
        if not reader.buffer:
            # Never a negative timeout (poll would wait for ever): past the deadline, look and go.
            wait = (deadline - now) * 1000 + 1
            ready = self._poll.poll(wait if wait > 0 else 0)
            if len(ready) == 1 and ready[0][0] == self._stdout:
                try:
                    data = os.read(self._stdout, 1 << 16)
                except OSError:
                    data = b""  # `receive` reads again and says what failed
                action = protocol.ACTION_OF.get(data)
                if action is not None:
                    return action
                reader.feed(data)
        return self.receive(deadline, "act")

    def call(self, header: dict[str, Any], deadline: float, what: str) -> Reply:
        """Send one request (`prepare`, `outcome`, `freeze`) and wait for its reply."""
        failed = self._send(protocol.encode(header), deadline, what)
        return failed if failed is not None else self.receive(deadline, what)

    def receive(self, deadline: float, what: str, before_start: bool = False) -> Reply:
        """The next reply from the runner, draining its output meanwhile."""
        reader = self._reader
        stdout_fd = self._stdout
        while True:
            try:
                frame = reader.pop()
            except protocol.WireError as exc:
                return Fault(FaultKind.PROTOCOL, f"bad frame from the agent during {what}: {exc}")
            if frame is not None:
                return frame[0]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return EXPIRED
            for fd, _ in self._poll.poll(remaining * 1000 + 1):
                if fd == stdout_fd:
                    try:
                        data = os.read(stdout_fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    except OSError as exc:
                        return Fault(FaultKind.PIPE, f"reading from the sandbox during {what}: {exc}")
                    if not data:
                        return self._died(what, before_start)
                    reader.feed(data)
                else:
                    failed = self.drain_output()
                    if failed is not None:
                        return failed

    def _send(self, frame: bytes, deadline: float, what: str) -> Fault | Expired | None:
        fd = self._stdin
        written = 0
        try:
            written = os.write(fd, frame)
            if written == len(frame):  # the usual case: the pipe has room
                return None
        except OSError:
            pass  # the loop below tells the kinds of error apart
        view = memoryview(frame)[written:]
        while view:
            try:
                view = view[os.write(fd, view) :]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                return self._died(what)
            except OSError as exc:
                return Fault(FaultKind.PIPE, f"writing to the sandbox during {what}: {exc}")
            # The runner is not reading (its pipe is full): wait, draining its output.
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return EXPIRED
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            poller.register(self._stderr, _POLLIN)
            for rfd, _ in poller.poll(min(remaining, 0.1) * 1000):
                if rfd == self._stderr:
                    failed = self.drain_output()
                    if failed is not None:
                        return failed
        return None

    # -- output and accounting -----------------------------------------------
    def drain_output(self) -> Fault | None:
        """Read whatever output is waiting into the log; a fault past the output cap."""
        if self.process is None or not self._stderr_open:
            return None
        fd = self._stderr
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return None
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    return None
                return Fault(FaultKind.PIPE, f"reading the agent's output: {exc}")
            if not chunk:
                self._stderr_open = False
                self._poll.unregister(fd)
                return None
            self.log.add(chunk)
            if self.log.total > self.limits.output_cap_bytes:
                return Fault(
                    FaultKind.AGENT_ERROR,
                    f"wrote more than the output cap of {size_text(self.limits.output_cap_bytes)} to stdout/"
                    "stderr: print less (write what you want to keep to a file in /tmp)",
                )

    def cpu_seconds(self) -> float | None:
        """The CPU time the sandbox's processes used (None: not readable, or closed)."""
        return None if self.process is None else self.process.cpu_seconds()

    def suspend(self) -> None:
        """Stop the sandbox's processes while the round turns to others."""
        if self.process is not None:
            self.process.suspend()

    def resume(self) -> None:
        """Let them run again."""
        if self.process is not None:
            self.process.resume()

    def turn(self, running: bool) -> None:
        """A pairing's turns: the sandbox runs while its agent is to move (SandboxProcess.turn)."""
        if self.process is not None:
            self.process.turn(running)

    def pin(self, core: int) -> None:
        """Move the sandbox to `core`."""
        if self.process is not None:
            self.process.pin(core)

    def _died(self, what: str, before_start: bool = False) -> Fault:
        """The runner's output closed: find out why and say which kind of fault it is (an
        `eof`, or `launch_failed` before the runner started, may still be the CPU share's)."""
        process = self.process
        assert process is not None
        status = None
        for _ in range(100):  # the process is exiting; give it up to 0.5 s to be reaped
            status = process.exit_status()
            if status is not None:
                break
            time.sleep(0.005)
        failed = self.drain_output()
        if failed is not None:
            return failed
        memory_kill = process.memory_kill()
        if memory_kill == "limit":
            return Fault(
                FaultKind.AGENT_ERROR,
                f"over its memory limit of {self.limits.memory_bytes >> 20} MiB "
                f"during {what}: the kernel killed a process of the agent for memory",
            )
        if memory_kill == "host":
            return Fault(
                FaultKind.OOM,
                f"killed for memory during {what} below its limit of "
                f"{self.limits.memory_bytes >> 20} MiB: the host ran short of memory",
            )
        lost = process.lost()
        if lost is not None:
            return Fault(FaultKind.INFRASTRUCTURE, f"during {what}: {lost}")
        if before_start:
            # The runner never said 'started': the sandbox itself failed (bwrap's message is in the log).
            first = self.log.text().strip().splitlines()[:1]
            return Fault(
                FaultKind.LAUNCH_FAILED,
                f"sandbox exited with status {status} before the runner started"
                + (f": {first[0][:200]}" if first else ""),
            )
        return Fault(FaultKind.EOF, f"agent process ended during {what} (exit status {status})")

    # -- life cycle -----------------------------------------------------------
    def kill(self) -> None:
        """Kill the sandbox now (its accounting stays readable until `close`)."""
        if self.process is not None:
            try:
                self.process.kill()
            except OSError:
                pass  # close() kills and reaps again

    def close(self) -> None:
        """Kill the sandbox and reap it; safe to call twice."""
        if self.process is not None:
            self.process.close()
            self.process = None
        if self.sched is not None:
            self.sched.close()


_IN_PROCESS = threading.Lock()


class InProcessTransport:
    """A trusted Python agent object in this process, answering as the runner would: its
    exceptions become `error` replies, a move that is not an integer `bad_action`. There is no
    deadline to enforce and no CPU share to read; its prints are its output, kept for its owner."""

    sched = None  # its time is this process's own: nothing to tell apart

    def __init__(self, agent: Any, limits: Limits):
        self.agent = agent
        self.frozen_agent: Any = None  # the frozen agent while a copy of it plays a pairing
        self.process = None
        self.log = OutputLog(limits.log_keep_bytes)

    def _invoke(self, what: str, *args: Any) -> tuple[Any, dict[str, Any] | None]:
        output = io.StringIO()
        try:
            # sys.stdout is the process's: one in-process agent at a time may have it redirected.
            with _IN_PROCESS, contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                return getattr(self.agent, what)(*args), None
        except Exception as exc:  # whatever the agent raises is the agent's fault
            return None, {"op": protocol.OP_ERROR, "error": f"{type(exc).__name__}: {exc}"}
        finally:
            if output.tell():
                self.log.add(output.getvalue().encode())

    def act(self, frame: ActFrame, obs: np.ndarray, mask: np.ndarray, deadline: float, now: float) -> ActReply:
        """Call act() on copies (obs and mask may be a game's own view arrays, rewritten for
        every move, and an agent may keep what it is given: a sandboxed one gets fresh arrays)."""
        action, error = self._invoke("act", obs.copy(), mask.copy())
        if error is not None:
            return error
        if isinstance(action, np.integer):
            action = int(action)
        if type(action) is int:
            return action if action >= 0 else {"op": protocol.OP_ACTION, "action": action}
        return {"op": protocol.OP_BAD_ACTION, "type": type(action).__name__, "repr": repr(action)[:100]}

    def call(self, header: dict[str, Any], deadline: float, what: str) -> Reply:
        op = header["op"]
        if op == protocol.OP_PREPARE:
            error = self._invoke("prepare", dict(header["env_info"]))[1]
        elif op == protocol.OP_OUTCOME:
            error = self._invoke("observe_outcome", dict(header["outcome"]))[1]
        elif op == protocol.OP_FREEZE:
            error = self._invoke("freeze")[1] if hasattr(self.agent, "freeze") else None
        elif op == protocol.OP_PAIRING and self.frozen_agent is None:
            # As the runner's fork: the pairing is played by a copy, the frozen agent is kept.
            try:
                self.frozen_agent, self.agent = self.agent, copy.deepcopy(self.agent)
                error = None
            except Exception as exc:
                error = {"op": protocol.OP_ERROR, "error": f"copying the frozen agent: {type(exc).__name__}: {exc}"}
        elif op == protocol.OP_END_PAIRING and self.frozen_agent is not None:
            self.agent, self.frozen_agent = self.frozen_agent, None
            error = None
        else:
            return {"op": protocol.OP_REFUSED, "detail": f"unknown op {op!r}"}
        return error if error is not None else {"op": protocol.OP_OK}

    def drain_output(self) -> Fault | None:
        return None

    def cpu_seconds(self) -> float | None:
        return None

    def suspend(self) -> None:
        pass  # a trusted object runs only when called

    def resume(self) -> None:
        pass

    def turn(self, running: bool) -> None:
        pass

    def pin(self, core: int) -> None:
        pass  # it runs in the round's own thread

    def kill(self) -> None:
        pass

    def close(self) -> None:
        pass
