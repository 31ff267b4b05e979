"""The illegal-move and time policy, in one place.

Illegal moves (docs/rules.md §7). A submitted cell is *illegal* when it is
on the board (0 <= cell < rows*cols) but the legal-move mask has 0 there
(occupied, an obstacle, or it flips nothing). Anything that is not such a cell
- a non-integer, or an integer off the board - is a `protocol` fault, decided
by the agent handle, because it breaks the wire contract rather than the game.

- An illegal move costs the turn: the engine's `lose_turn()`, recorded "lost".
- The `illegal_moves_per_game`-th (3rd) illegal move by one seat in one game
  forfeits that game for that seat.
- "Never makes a legal move": when an agent's first `never_legal_attempts`
  (10) moves in an environment session are all illegal, it forfeits at once:
  the current game is forfeited and the session ends with a `forfeit` fault.
  One legal move anywhere in the session clears the rule for good.

Time. Per call, a reply slower than `act_soft_seconds` is an overrun (counted,
not punished); no reply by `act_hard_seconds` is a `timeout` fault. Within each
phase of a session (`PHASES`: the budget's self-play, the checkpoint games, the
pairings) the mean act time must keep the board's pace, each phase judged on its
own mean, so that time saved in one phase (cheap self-play, which an agent can
tell apart: it holds both seats) cannot be spent in another (the measured games).
A phase is judged once `pace_min_acts` of its replies have been timed; an agent
over `pace_stop_factor` times the pace in the phase under way is stopped early
(`pace_stop_fault`, checked by the handle after every reply), and at the end of a
session one over the pace in any phase faults (`pace_fault`, checked by whoever
closes the session). The environment wall ceiling and the CPU share end the
session with `timeout` and `budget`.

The agent's own time. An act is charged its wall time less what the host's contention took
from it: the run-queue delay of the sandbox's threads (and of the arena's thread awaiting the
reply) since the agent's previous act of a run of them, read on the host
(grader.sandbox.schedstat), but never less than the CPU time the sandbox's threads used in that
span nor more than the wall time (`own_act_seconds`): a delay an agent makes for itself
(threads of its own queued behind each other on its core, or pondering while its opponent is
to move) credits nothing it could compute with. The pace, the soft limit
and the early stop judge that time. The hard limit is on the wall clock, extended by the
run-queue delay of the call so far, at most once more the hard limit (`hard_extension`): an
agent that hangs, asleep or spinning, is stopped by twice the hard limit whatever the host.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from grader.common.faults import Fault, FaultKind
from grader.common.limits import Limits


class Verdict(enum.Enum):
    """What happens after an agent submits a cell."""

    PLAY = "play"  # legal: the move is played
    LOSE_TURN = "lose_turn"  # illegal: the turn is lost
    FORFEIT_GAME = "forfeit_game"  # illegal, and the last one this game allows
    FORFEIT_ENV = "forfeit_env"  # illegal, and the agent has never played a legal move


@dataclass
class Conduct:
    """One agent's record in one environment session, for the illegal-move rules."""

    limits: Limits
    attempts: int = 0
    illegal_total: int = 0
    legal_seen: bool = False

    def judge(self, legal: bool, illegal_this_game: int) -> Verdict:
        """Count one submitted cell; `illegal_this_game` = this seat's illegal moves so far in this game."""
        self.attempts += 1
        if legal:
            self.legal_seen = True
            return Verdict.PLAY
        self.illegal_total += 1
        if not self.legal_seen and self.attempts >= self.limits.never_legal_attempts:
            return Verdict.FORFEIT_ENV
        if illegal_this_game + 1 >= self.limits.illegal_moves_per_game:
            return Verdict.FORFEIT_GAME
        return Verdict.LOSE_TURN

    def played_legal(self, moves: int) -> None:
        """Count `moves` legal moves judged elsewhere (`judge(True, ...)` each, at once)."""
        if moves:
            self.attempts += moves
            self.legal_seen = True

    def never_legal_fault(self) -> Fault:
        return Fault(FaultKind.FORFEIT, f"the first {self.attempts} moves in this environment were all illegal")


# The phases of a session the pace judges apart, and how a message names each. A session
# outside a round (a game of `arena play`, a test) has one phase, SESSION.
SELF_PLAY, CHECKPOINT, PAIRING, SESSION = "self-play", "checkpoint", "pairing", "session"
PHASES = {
    SELF_PLAY: "the self-play games",
    CHECKPOINT: "the checkpoint games",
    PAIRING: "the pairing games",
    SESSION: "the session",
}

# The faults a session can be given at its end, after its last game: the CPU share read then
# (`budget`) and the pace of a phase judged on its whole mean (`timeout`). An entrant with one
# of these may have played its whole schedule with no game ended by its fault (grader.verification.verify).
SESSION_END_KINDS = frozenset({FaultKind.BUDGET, FaultKind.TIMEOUT})


# The most the run-queue delay may extend an act's hard limit, as a multiple of that limit.
HARD_EXTENSION_FACTOR = 1.0


def own_act_seconds(elapsed: float, ran: float, queued: float) -> float:
    """The time an act is charged: its wall time `elapsed` less the run-queue delay `queued`,
    but not less than the CPU time `ran` its sandbox used meanwhile, nor more than `elapsed`."""
    own = elapsed - queued
    if own < ran:
        own = ran
    return own if own < elapsed else elapsed


def hard_extension(queued: float, limits: Limits) -> float:
    """How far past the hard limit an act may run: the run-queue delay it met so far, at most
    HARD_EXTENSION_FACTOR times the hard limit."""
    cap = HARD_EXTENSION_FACTOR * limits.act_hard_seconds
    return max(0.0, queued if queued < cap else cap)


def _phase_text(phase: str) -> str:
    return "" if phase == SESSION else f" in {PHASES[phase]}"


def pace_stop_fault(stats, shape: tuple[int, int], limits: Limits, phase: str = SESSION) -> Fault | None:
    """A `timeout` fault when the mean act time of `phase` is far over the board's pace
    (early stop)."""
    if stats.count < limits.pace_min_acts:
        return None
    pace = limits.pace_seconds(*shape)
    mean = stats.total_seconds / stats.count
    if mean > limits.pace_stop_factor * pace:
        return Fault(
            FaultKind.TIMEOUT,
            f"mean act() {mean * 1e3:.1f} ms over {stats.count} calls{_phase_text(phase)} "
            f"is more than {limits.pace_stop_factor:g}x the {shape[0]}x{shape[1]} pace "
            f"of {pace * 1e3:.1f} ms",
        )
    return None


def pace_fault(stats, shape: tuple[int, int], limits: Limits, phase: str = SESSION) -> Fault | None:
    """At the end of a session: a `timeout` fault when the mean act time of `phase` is over
    the pace."""
    if stats.count < limits.pace_min_acts:
        return None
    pace = limits.pace_seconds(*shape)
    mean = stats.total_seconds / stats.count
    if mean > pace:
        return Fault(
            FaultKind.TIMEOUT,
            f"mean act() {mean * 1e3:.2f} ms over {stats.count} calls{_phase_text(phase)}; "
            f"the {shape[0]}x{shape[1]} pace is {pace * 1e3:.2f} ms (each phase of an "
            "environment is judged on its own mean)",
        )
    return None


def not_an_int(type_name: str, text: str) -> str:
    """The fault detail for an act() that returned something other than an int, with the fix."""
    hint = (
        "a missing `return` in act()?"
        if type_name == "NoneType"
        else "return the cell's index as a Python int, e.g. int(row * cols + col)"
    )
    return f"act() returned {type_name} {text}, not an int: {hint}"
