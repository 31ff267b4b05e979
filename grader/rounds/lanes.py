"""An environment's work on its cores: its sessions at once, then its pairings.

The entrants' sessions run at once, one core each, then the pairings as many at once as there
are free cores (both agents of a game on one core).

Threads of the round's host process do it: the host's side of a move is about ten
microseconds against the agent's milliseconds, and a thread waiting on a sandbox's pipe
holds no lock, so one process keeps many sandboxes busy (`benchmarks/bench_lanes.py`
measures it). Every game is seeded by its place, and the environment's record is put
together in the canonical order afterwards, so the results are the bytes that playing one
thing after another gives, whatever finishes first.

The one order that can matter is each agent's own: an agent that dies in a pairing plays
none of its later ones. So an agent's pairings are played in the canonical order
(`grader.common.schedule.pairs`), one at a time: a pairing starts only when it is the next one of
both its agents (`PairQueue`).
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from grader.sandbox import pinning

T = TypeVar("T")


class Stop(Exception):
    """Raised in a lane when another lane failed: the lanes stop taking work."""


class Lanes:
    """Threads, each on a core of its own, that stop together when one of them raises."""

    def __init__(self) -> None:
        self.failure: BaseException | None = None
        self.lock = threading.Lock()

    def check(self) -> None:
        """Raise `Stop` in a lane once another lane failed."""
        if self.failure is not None:
            raise Stop()

    def run(self, cores: Sequence, work: Callable[[int, object], None]) -> None:
        """Call `work(i, cores[i])` in a thread per core (in this thread when there is one
        core), with the thread's sandboxes pinned to `cores[i]` when it is a core (an int);
        re-raise the first failure once every thread is back."""

        def lane(i: int, core: object) -> None:
            if isinstance(core, int):
                pinning.set_core(core)
            try:
                work(i, core)
            except Stop:
                pass
            except BaseException as exc:  # handed to the caller's thread below
                with self.lock:
                    if self.failure is None:
                        self.failure = exc

        if len(cores) == 1:
            previous = pinning.core()
            try:
                lane(0, cores[0])
            finally:
                pinning.set_core(previous)
        else:
            threads = [
                threading.Thread(target=lane, args=(i, c), name=f"arena-lane-{i}", daemon=True)
                for i, c in enumerate(cores)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        if self.failure is not None:
            raise self.failure


def each_on_a_core(lanes: Lanes, cores: list[int], items: Iterable[T], work: Callable[[T], None]) -> None:
    """`work(item)` for every item, in order of taking, on as many cores at once as there are."""
    queue = iter(list(items))
    lock = threading.Lock()

    def lane(_: int, __: object) -> None:
        while True:
            lanes.check()
            with lock:
                item = next(queue, None)
            if item is None:
                return
            work(item)

    lanes.run(cores, lane)


class PairQueue:
    """The pairings of a field, handed out as they become ready: a pairing is ready when it is
    the next unplayed one (in canonical order) of both its agents. `take` blocks until one is
    ready (None when all are done); `done` marks one played. A pairing with an agent that is no
    longer alive (`alive(name)`) is done without being handed out: void, as in sequential play."""

    def __init__(self, pairs: list[tuple[str, str]], alive: Callable[[str], bool]):
        self.pairs = pairs
        self.alive = alive
        self.of: dict[str, list[int]] = {}  # each agent's pairings, by canonical index
        for index, (a, b) in enumerate(pairs):
            self.of.setdefault(a, []).append(index)
            self.of.setdefault(b, []).append(index)
        self.next = {name: 0 for name in self.of}  # position in its list of its next pairing
        self.ready: list[int] = []
        self.queued: set[int] = set()  # handed to `ready` once
        self.left = len(pairs)
        self.cond = threading.Condition()
        self.stopped = False
        self._offer(*self.of)

    def _head(self, name: str) -> int | None:
        position = self.next[name]
        mine = self.of[name]
        return mine[position] if position < len(mine) else None

    def _offer(self, *names: str) -> None:
        """Make each agent's next pairing ready if it is its opponent's next too; one with an
        agent that died is done at once, which may make the next ones ready in turn."""
        todo = list(names)
        while todo:
            index = self._head(todo.pop())
            if index is None:
                continue
            a, b = self.pairs[index]
            if self._head(a) != index or self._head(b) != index or index in self.queued:
                continue
            if self.alive(a) and self.alive(b):
                self.queued.add(index)
                heapq.heappush(self.ready, index)
            else:
                self._advance(index)
                todo += [a, b]

    def _advance(self, index: int) -> None:
        a, b = self.pairs[index]
        self.next[a] += 1
        self.next[b] += 1
        self.left -= 1

    def take(self) -> int | None:
        """The canonical index of a ready pairing (the first of them), or None when none is left."""
        with self.cond:
            while not self.ready and self.left and not self.stopped:
                self.cond.wait(0.5)
            if self.stopped or not self.ready:
                return None
            return heapq.heappop(self.ready)

    def done(self, index: int) -> None:
        """Pairing `index` is over: its agents' next pairings may be ready."""
        with self.cond:
            self._advance(index)
            self._offer(*self.pairs[index])
            self.cond.notify_all()

    def stop(self) -> None:
        """Hand out nothing more (another lane failed)."""
        with self.cond:
            self.stopped = True
            self.cond.notify_all()


def pairing_cores(cores: list[int]) -> list[tuple[int, int]]:
    """The cores pairings are played on: one pairing per core, both its agents on it. They
    take turns, and the one not to move is stopped (AgentHandle.turns), so a game holds one
    core and an opponent that would spin takes nothing from the mover."""
    return [(core, core) for core in cores]
