"""One entrant in one environment: the seam between a round and whatever plays for an entrant.

A round sees every entrant through `Session`: `prepare`, `seat` (what `grader.play.match.play_game`
gets for one colour of one game), `observe_outcome`, `freeze`, `close`, and `fault`. Three kinds:

- `submission`: a student's folder or zip, run in a sandbox through `AgentHandle`;
- `reference`: an engine opponent by name (`random`, `greedy`, `minimax`), run in-process and
  seeded per game; it learns nothing, but plays its budget like anyone (it is a baseline);
- `python`: a trusted `module:Class` agent run in-process (tests and benchmarks; never a
  submission: nothing bounds its time or memory).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import Color, EnvSpec
from engine.opponents import Meter, Opponent, play_reference_games, seated_opponent
from grader.common.faults import Fault, FaultKind
from grader.common.limits import Limits
from grader.documents.submission import SubmissionError, load_submission
from grader.play.agent_handle import AgentHandle
from grader.play.match import WINNER_LABELS
from grader.play.self_play import SelfPlayGame, heard, play_self_play

REFERENCE_NAMES = ("random", "greedy", "minimax")
KINDS = ("submission", "reference", "python")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class EntrantError(ValueError):
    """An `--agents` entry that names no playable entrant; the message says which and why."""


@dataclass(frozen=True)
class Entrant:
    """A member of the field. `source` is a folder/zip, a reference name or `module:Class`;
    it is never published (it may be a path on the machine), `digest` is."""

    name: str
    kind: str
    source: str
    digest: str
    account: str | None = None

    def public(self) -> dict:
        """The field entry of a results file."""
        return {"name": self.name, "kind": self.kind, "account": self.account, "digest": self.digest}


def parse_entrant(text: str) -> Entrant:
    """An `--agents` entry: a reference name, a submission folder or zip, or `NAME=PATH`
    (NAME is then the entrant's name and account, as a workflow names a student's entry)."""
    account = None
    name, sep, source = text.partition("=")
    if not sep:
        name, source = "", text
    if source in REFERENCE_NAMES and not sep:
        return Entrant(source, "reference", source, f"reference:{source}")
    path = Path(source)
    if not path.exists():
        hint = f" (reference players: {', '.join(REFERENCE_NAMES)})"
        raise EntrantError(
            f"--agents {text!r}: {source!r} is neither a submission folder or zip nor a reference name{hint}"
        )
    submission = load_submission(path)  # raises SubmissionError (a ValueError) naming the problem
    if sep:
        account = name
    else:
        name = path.stem if path.is_file() else path.resolve().name
    check_name(name, text)
    # A zip is extracted once, here; every session then starts from the same folder.
    return Entrant(name, "submission", str(submission.path), submission.digest, account)


def python_entrant(name: str, target: str) -> Entrant:
    """A trusted in-process agent `module:Class` (for tests and benchmarks)."""
    check_name(name, target)
    module, _, cls = target.partition(":")
    if not module or not cls:
        raise EntrantError(f"{target!r}: an in-process agent is named module:Class")
    return Entrant(name, "python", target, f"python:{target}")


def check_name(name: str, source: str) -> None:
    if not NAME_RE.match(name):
        raise EntrantError(
            f"{source!r}: entrant name {name!r} must be 1-64 of letters, digits, _ . - "
            "(starting with a letter or digit)"
        )


def check_field(entrants: list[Entrant]) -> list[Entrant]:
    """The field sorted by name; raises EntrantError on a repeated name."""
    seen: dict[str, Entrant] = {}
    for e in entrants:
        if e.name in seen:
            raise EntrantError(f"two entrants are called {e.name!r}; name one of them with NAME=PATH")
        seen[e.name] = e
    if not entrants:
        raise EntrantError("--agents: the field is empty")
    return sorted(entrants, key=lambda e: e.name)


class Session(ABC):
    """An entrant's session in one environment (fresh for every environment)."""

    learns = True  # it is sent the outcome of each self-play game (whose games are then kept)

    name: str

    @property
    @abstractmethod
    def fault(self) -> Fault | None: ...

    @property
    def alive(self) -> bool:
        return self.fault is None

    @abstractmethod
    def prepare(self, env_info: dict) -> Fault | None: ...

    @abstractmethod
    def seat(self, color: Color, seed: int) -> Any:
        """What `play_game` is given for `color` in the game seeded `seed`."""

    @abstractmethod
    def observe_outcome(self, outcome: dict) -> Fault | None: ...

    def self_play(self, spec: EnvSpec, seeds: list[int]) -> Iterator[SelfPlayGame]:
        """The entrant's budget self-play games seeded `seeds`, one at a time: the caller
        checks the session after each game and after it calls the game's `hear()` (its
        outcome), and stops iterating when the entrant died."""
        return play_self_play(spec, self.seat, self.observe_outcome, seeds)

    @abstractmethod
    def freeze(self) -> Fault | None: ...

    def begin_pairing(self) -> Fault | None:
        """A pairing starts: it is played from the frozen entrant, and nothing of it reaches
        the next pairing (a sandboxed agent's runner forks for it)."""
        return None

    def end_pairing(self) -> Fault | None:
        """The pairing begun by `begin_pairing` is over: the frozen entrant is back."""
        return None

    def enter_phase(self, phase: str) -> None:
        """The entrant's moves from now on belong to `phase` (grader.common.policy.PHASES), whose
        pace is judged on its own."""

    def idle(self) -> None:
        """The round stops asking this entrant for a while (others learn or play)."""

    def resume(self) -> None:
        """The round turns back to this entrant."""

    def pin(self, core: int) -> None:
        """The entrant's sandbox moves to `core` (a pairing plays on the cores it is given)."""

    def end(self, spec: EnvSpec) -> Fault | None:
        """Apply the end-of-session rules (the pace of each phase); the fault, which
        the session then carries, or None."""
        return None

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def agent_seconds(self) -> float:
        """Time the host spent waiting on this entrant: its moves, and its replies to prepare,
        observe_outcome and freeze."""

    def stderr_text(self) -> str:
        """The entrant's own output, for its owner only (never published)."""
        return ""


class HandleSession(Session):
    """A sandboxed submission, or an in-process python agent, behind an AgentHandle."""

    def __init__(self, name: str, handle: AgentHandle):
        self.name = name
        self.handle = handle

    @property
    def fault(self) -> Fault | None:
        return self.handle.fault

    def prepare(self, env_info: dict) -> Fault | None:
        return self.handle.prepare(env_info)

    def seat(self, color: Color, seed: int) -> AgentHandle:
        return self.handle

    def observe_outcome(self, outcome: dict) -> Fault | None:
        return self.handle.observe_outcome(outcome)

    def freeze(self) -> Fault | None:
        return self.handle.freeze()

    def begin_pairing(self) -> Fault | None:
        return self.handle.begin_pairing()

    def end_pairing(self) -> Fault | None:
        return self.handle.end_pairing()

    def enter_phase(self, phase: str) -> None:
        self.handle.enter_phase(phase)

    def idle(self) -> None:
        self.handle.pause()

    def resume(self) -> None:
        self.handle.resume()

    def pin(self, core: int) -> None:
        self.handle.pin(core)

    def end(self, spec: EnvSpec) -> Fault | None:
        return self.handle.end_session(spec.layout.rows, spec.layout.cols)

    def close(self) -> None:
        self.handle.close()

    def agent_seconds(self) -> float:
        return self.handle.act_stats.total_seconds + self.handle.call_seconds

    def stderr_text(self) -> str:
        return self.handle.stderr_text()


class ReferenceSession(Session):
    """An engine reference player: seeded per game and colour as `play_game` seeds a named one."""

    learns = False

    def __init__(self, name: str, opponent: str, spec: EnvSpec):
        self.name = name
        self.opponent = opponent
        self.spec = spec
        self.meter = Meter()  # every seat's thinking time, charged by the engine

    @property
    def fault(self) -> Fault | None:
        return None

    def prepare(self, env_info: dict) -> Fault | None:
        return None

    def seat(self, color: Color, seed: int) -> Opponent:
        return seated_opponent(self.opponent, self.spec, seed, color.label, self.meter)

    def self_play(self, spec: EnvSpec, seeds: list[int]) -> Iterator[SelfPlayGame]:
        """A reference player learns nothing: its self-play is played in one kernel call,
        each game the one `play_game` plays with the same seed, and no outcome is sent."""
        return (
            SelfPlayGame(WINNER_LABELS[w], p, heard)
            for w, p in play_reference_games(self.opponent, spec, seeds, self.meter).tolist()
        )

    def observe_outcome(self, outcome: dict) -> Fault | None:
        return None

    def freeze(self) -> Fault | None:
        return None

    def close(self) -> None:
        pass

    def agent_seconds(self) -> float:
        return self.meter.seconds


def open_session(entrant: Entrant, spec: EnvSpec, limits: Limits, sandbox=None) -> Session:
    """A fresh session of `entrant` for `spec`. A launch failure is a fault on the session
    (the arena's `launch_failed`), never an exception."""
    if entrant.kind == "reference":
        return ReferenceSession(entrant.name, entrant.source, spec)
    if entrant.kind == "python":
        return HandleSession(entrant.name, AgentHandle.import_in_process(entrant.source, limits, entrant.name))
    if entrant.kind == "submission":
        if sandbox is None:
            raise EntrantError(f"{entrant.name}: a submission needs a sandbox to run in")
        try:
            submission = load_submission(entrant.source)
            if submission.digest != entrant.digest:
                raise SubmissionError(f"its digest changed during the round ({submission.digest})")
        except ValueError as exc:
            fault = Fault(FaultKind.LAUNCH_FAILED, f"submission unusable at launch: {exc}")
            return HandleSession(entrant.name, AgentHandle.failed(fault, limits, entrant.name))
        return HandleSession(entrant.name, AgentHandle.launch(sandbox, submission, limits, label=entrant.name))
    raise EntrantError(f"{entrant.name}: unknown entrant kind {entrant.kind!r} (one of {', '.join(KINDS)})")
