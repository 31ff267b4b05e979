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

from grader.limits import DEFAULT_LIMITS
from grader.seat.transport import EXPIRED, ActFrame, PipeTransport

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
        for fd in (self.agent_stdin, self.stdin_fd, self.stdout_fd, self.agent_stdout, self.stderr_fd,
                   self.agent_stderr):
            os.close(fd)


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
        drained_at, limit = 0.6, 1.0

        def slow_reader() -> None:
            time.sleep(drained_at)
            os.set_blocking(process.agent_stdin, False)
            end = time.monotonic() + 3 * limit
            while time.monotonic() < end:
                try:
                    if not os.read(process.agent_stdin, 1 << 16):
                        return
                except BlockingIOError:
                    time.sleep(0.01)
                except OSError:
                    return

        reader = threading.Thread(target=slow_reader, daemon=True)
        reader.start()
        obs, mask = board(12, 12)
        now = time.monotonic()
        reply = transport.act(ActFrame((12, 12)), obs, mask.reshape(-1), now + limit, now)
        ended = time.monotonic() - now
        assert reply is EXPIRED
        # Timed from the write's end, it would end near drained_at + limit (1.6 s).
        assert ended < limit + (drained_at / 2), f"the act ended {ended:.2f} s after it began, deadline {limit} s"
    finally:
        process.close()
        reader.join(timeout=5)
