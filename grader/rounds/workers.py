"""Run a round's environments over worker processes, with resume and progress.

The environment is the unit of work: a worker plays one environment start to finish on a
group of cores of its own (its entrants' sessions at once, one core each: grader.rounds.lanes)
and hands back its record, which the parent writes atomically into the staff folder. A round
started again with the same arguments finds its plan and its finished environments there
and plays only the rest; nothing already recorded is played twice. Progress (environments,
games, elapsed, estimated time left) goes to stderr, naming environments by label only.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import multiprocessing.managers
import os
import queue
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from grader.common.files import atomic_write_bytes
from grader.common.schedule import games_per_env
from grader.common.visible import visible
from grader.rounds.plan import RoundPlan, read_plan
from grader.rounds.play import HeldEnv, play_env
from grader.rounds.records import EnvRecord, read_record, record_path, write_record
from grader.sandbox import pinning

PROGRESS_SECONDS = 2.0
_SANDBOXES: dict = {}  # one sandbox backend per worker process and name


class PlanMismatch(ValueError):
    """The staff folder holds a different round under this round's id."""


def work_dir(private: Path, plan: RoundPlan) -> Path:
    return private / plan.round_id


def prepare_work(private: Path, plan: RoundPlan) -> Path:
    """Create or re-open the round's staff folder; refuse one that holds another plan."""
    work = work_dir(private, plan)
    path = work / "plan.json"
    if path.exists():
        stored = read_plan(path)
        if stored.key() != plan.key():
            raise PlanMismatch(
                f"{path} holds a different plan for round {plan.round_id}; move it away to start that round afresh"
            )
    else:
        atomic_write_bytes(path, json.dumps(plan.to_dict(), indent=1).encode())
    return work


def finished_records(work: Path, plan: RoundPlan, indices: list[int]) -> dict[int, EnvRecord]:
    """The recorded environments among `indices` (a record of another plan is an error)."""
    out = {}
    key = plan.key()
    for i in indices:
        path = record_path(work, i)
        if path.exists():
            record = read_record(path)
            if record.plan_key != key:
                raise PlanMismatch(f"{path} was recorded for a different plan")
            out[i] = record
    return out


@dataclass
class Progress:
    """Throttled progress lines on stderr."""

    round_id: str
    envs_total: int
    games_total: int
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    envs_done: int = 0
    games_done: int = 0
    start: float = field(default_factory=time.monotonic)
    last: float = 0.0

    def games(self, label: str, count: int, what: str, notice: bool = False) -> None:
        """`count` more games done (fewer: an abandoned attempt's taken back); a notice (an
        agent's fault, an attempt abandoned) is printed at once."""
        self.games_done += count
        self._line(f"{label}: {what}", force=notice)

    def env_done(self, label: str, note: str) -> None:
        self.envs_done += 1
        self._line(f"{label}: {note}", force=True)

    def _line(self, note: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_SECONDS:
            return
        self.last = now
        elapsed = now - self.start
        left = "?"
        if self.games_done:
            left = _clock(elapsed * max(self.games_total - self.games_done, 0) / self.games_done)
        print(
            f"round {self.round_id}: envs {self.envs_done}/{self.envs_total}, games "
            f"{self.games_done}/{self.games_total}, elapsed {_clock(elapsed)}, left ~{left} [{visible(note)}]",
            file=self.stream,
            flush=True,
        )


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


def _sandbox(plan: RoundPlan):
    """The plan's sandbox backend, built once per process and name, only if a submission needs it."""
    if not any(e.kind == "submission" for e in plan.field):
        return None
    if plan.sandbox not in _SANDBOXES:
        from grader.sandbox import SandboxNameError, get_sandbox

        try:
            _SANDBOXES[plan.sandbox] = get_sandbox(plan.sandbox)
        except ImportError:
            raise SandboxNameError(
                plan.sandbox, f"the {plan.sandbox!r} sandbox backend is not available in this checkout"
            ) from None
    return _SANDBOXES[plan.sandbox]


def _play(plan: RoundPlan, index: int, report) -> EnvRecord | HeldEnv:
    """Play one environment on this worker's cores, with the host's load over it kept in its record."""
    before = pinning.sample()
    result = play_env(plan, plan.envs[index], report, _sandbox(plan), pinning.group())
    if isinstance(result, EnvRecord):
        result.host = pinning.load_over(before, pinning.sample(), len(pinning.available_cores()))
    return result


def _worker(plan: RoundPlan, index: int, events) -> EnvRecord | HeldEnv:
    def report(label: str, count: int, what: str, notice: bool = False) -> None:
        events.put((label, count, what, notice))

    return _play(plan, index, report)


def _init_worker(parent: int, groups) -> None:
    """A worker's start: die with the round, and take a group of cores of its own for its sandboxes."""
    die_with_parent(parent)
    group = groups.get()
    pinning.set_group(group)
    pinning.set_core(group[0])


def core_groups(cores: list[int], jobs: int, envs: int, entrants: int) -> list[list[int]]:
    """The cores of each worker: `jobs` of `cores` (at most all of them) in groups of as many
    as an environment's entrants can use at once (one each), one group per worker, no more
    workers than environments. A field as large as the cores plays its environments one
    after another on all of them; a small field's environments share the cores out."""
    given = cores[: max(1, jobs)]
    if jobs == 1:
        return [given]
    per = min(len(given), max(1, entrants))
    workers = max(1, min(envs, len(given) // per))
    return [given[i * per : (i + 1) * per] for i in range(workers)]


def run_envs(plan: RoundPlan, indices: list[int], work: Path, jobs: int, stream: TextIO | None = None) -> list[HeldEnv]:
    """Play every environment of `indices` without a record; write each record as it finishes.
    Returns the environments the arena failed on every attempt."""
    stream = stream or sys.stderr
    done = finished_records(work, plan, indices)
    todo = [i for i in indices if i not in done]
    per_env = games_per_env(
        len(plan.field), list(plan.checkpoints), plan.games_per_checkpoint, plan.pairing_games, plan.budget
    )
    progress = Progress(plan.round_id, len(indices), per_env * len(todo), stream, envs_done=len(done))
    if done:
        print(
            f"round {plan.round_id}: resuming; {len(done)} of {len(indices)} environments already recorded",
            file=stream,
            flush=True,
        )
    held: list[HeldEnv] = []

    def finish(result: EnvRecord | HeldEnv) -> None:
        if isinstance(result, HeldEnv):
            held.append(result)
            progress.env_done(result.label, f"held: the arena failed it {len(result.arena_faults)} times")
            return
        write_record(work, result)
        note = "recorded" + (f" after {result.attempts} attempts" if result.attempts > 1 else "")
        progress.env_done(result.label, note)

    cores = pinning.available_cores()
    if jobs > len(cores):
        print(
            f"round {plan.round_id}: {jobs} jobs asked for, {len(cores)} cores to pin them to: "
            f"using {len(cores)} cores, one sandbox each",
            file=stream,
            flush=True,
        )
    if jobs == 1:
        cores = [pinning.current_cpu(cores)]  # several one-core rounds on a host spread out
    groups = core_groups(cores, jobs, len(todo), len(plan.field))
    if len(groups) <= 1:
        previous = pinning.core()
        pinning.set_group(groups[0])
        pinning.set_core(groups[0][0])
        try:
            for i in todo:
                finish(_play(plan, i, progress.games))
        finally:
            pinning.set_group(None)
            pinning.set_core(previous)
        return held
    ctx = multiprocessing.get_context("spawn")
    with SyncManager(ctx=ctx) as manager:
        events = manager.Queue()
        free_groups = manager.Queue()
        for group in groups:
            free_groups.put(group)
        with cf.ProcessPoolExecutor(
            max_workers=len(groups), mp_context=ctx, initializer=_init_worker, initargs=(os.getpid(), free_groups)
        ) as pool:
            pending = {pool.submit(_worker, plan, i, events) for i in todo}
            while pending:
                finished, pending = cf.wait(pending, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                _drain(events, progress)
                for future in finished:
                    finish(future.result())
            _drain(events, progress)
    return held


class SyncManager(multiprocessing.managers.SyncManager):
    """The progress queue's server process, which dies with the round (`die_with_parent`)."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx=ctx)

    def __enter__(self) -> SyncManager:
        self.start(die_with_parent, (os.getpid(),))
        return self


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a worker or the manager: be killed when the round's process dies, even by `kill -9`
    (Linux's parent-death signal), so that a killed round leaves no process running; gone at
    once if it died already. Elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _drain(events, progress: Progress) -> None:
    while True:
        try:
            label, count, what, notice = events.get_nowait()
        except queue.Empty:
            return
        progress.games(label, count, what, notice)
