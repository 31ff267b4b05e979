"""An act's deadline holds when its frame had to wait for room in the agent's input pipe.

The transport times its first wait for the reply from the clock its caller read as the call
began; a write that had to wait (an agent that reads its input slowly) must not move the
deadline on by that wait. Pipes stand in for a sandbox here: the deadline is the
transport's alone.
"""

from __future__ import annotations

import os
import threading
import time

from grader.common.limits import DEFAULT_LIMITS
from grader.play.seat.transport import EXPIRED, ActFrame, PipeTransport

from .conftest import board


class PipesOnly:
    """A process's three pipes, as a sandbox hands them over; nothing else is asked of it."""

    def __init__(self) -> None:
        self.agent_stdin, self.stdin_fd = os.pipe()
        self.stdout_fd, self.agent_stdout = os.pipe()
        self.stderr_fd, self.agent_stderr = os.pipe()

    def pids(self) -> list[int]:
        return []  # no process of its own: no run-queue delay to read

    def close(self) -> None:
        for fd in (
            self.agent_stdin,
            self.stdin_fd,
            self.stdout_fd,
            self.agent_stdout,
            self.stderr_fd,
            self.agent_stderr,
        ):
            os.close(fd)


class RecordedPoll:
    """The transport's poll, with the timeout of each wait it asks for recorded (ms)."""

    def __init__(self, transport: PipeTransport):
        self.poll_object = transport._poll
        self.timeouts: list[float] = []
        transport._poll = self  # type: ignore[assignment]

    def poll(self, timeout: float):
        self.timeouts.append(timeout)
        return self.poll_object.poll(timeout)

    def register(self, *args):
        return self.poll_object.register(*args)

    def unregister(self, fd):
        return self.poll_object.unregister(fd)


def test_an_act_whose_write_waited_for_room_still_ends_at_its_deadline():
    process = PipesOnly()
    transport = PipeTransport(process, DEFAULT_LIMITS)  # type: ignore[arg-type]  # the pipes are all it reads
    try:
        # Fill the agent's input so that the act frame goes out in part, then drain it after a
        # while and never reply: the write waits `drained_at`, the reply never comes.
        filler = b"\0" * 4096
        while True:
            try:
                os.write(process.stdin_fd, filler)
            except BlockingIOError:
                break
        drained_at, limit = 0.5, 3.0  # a drain late by seconds on a busy host still comes in time
        drained: list[float] = []  # when the reader began to drain: the write cannot end before

        def slow_reader() -> None:
            time.sleep(drained_at)
            os.set_blocking(process.agent_stdin, False)
            drained.append(time.monotonic())
            end = time.monotonic() + 3 * limit
            while time.monotonic() < end:
                try:
                    if not os.read(process.agent_stdin, 1 << 16):
                        return
                except BlockingIOError:
                    time.sleep(0.01)
                except OSError:
                    return

        waits = RecordedPoll(transport)
        reader = threading.Thread(target=slow_reader, daemon=True)
        reader.start()
        obs, mask = board(12, 12)
        now = time.monotonic()
        deadline = now + limit
        reply = transport.act(ActFrame((12, 12)), obs, mask.reshape(-1), deadline, now)
        assert reply is EXPIRED
        # The first wait for the reply began once the write ended, after the drain began: timed
        # to the deadline it is at most what was left of it then (timed from the write's end,
        # it would be the whole limit). Judged on the wait asked for, not on the wall clock.
        assert drained and waits.timeouts, (drained, waits.timeouts)
        assert waits.timeouts[0] <= (deadline - drained[0]) * 1000 + 1, (waits.timeouts, deadline - drained[0])
    finally:
        process.close()
        reader.join(timeout=5)
