"""The competition's calendar and the state of its final: config/competition.yaml.

    schema_version: 1
    final_at: "2026-12-14T09:00:00Z"  # when the final round starts; null while unscheduled
    freeze_hours: 48                   # the field freezes this long before final_at
    appeal_days: 7                     # appeals close this long after the final is published
    requested_runs: {per_window: 3, window_days: 7}
    review_label: "arena: staff reviewed"
    final: {status: not_run, round_id: null, published_at: null, published_by: null}
    ended: false                       # set when the appeal window has closed

The site reads `final` and `ended`. Staff actions change them through `arena competition`,
so the transitions (not_run -> pending_review -> published, then ended) are checked once, here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from grader.common.errors import OptionError
from grader.common.patterns import ROUND_ID_RE
from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError, dump_yaml, format_time, parse_time, read_yaml

SCHEMA_VERSION = 1
FINAL_STATUSES = ("not_run", "pending_review", "published")


def _time(moment: dt.datetime | None) -> str | None:
    return None if moment is None else format_time(moment)


class FinalStateError(ValueError):
    """A staff step the final's state does not allow; `status` is the state it is in."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class FinalState:
    status: str = "not_run"
    round_id: str | None = None
    published_at: dt.datetime | None = None
    published_by: int | None = None
    # Finals staff set aside to play again, each {round_id, reason, by, at}: the record that
    # the final was run more than once, and why.
    reruns: tuple = ()

    def to_dict(self) -> dict:
        out = {
            "status": self.status,
            "round_id": self.round_id,
            "published_at": _time(self.published_at),
            "published_by": self.published_by,
        }
        if self.reruns:
            out["reruns"] = [dict(r) for r in self.reruns]
        return out


@dataclass(frozen=True)
class Competition:
    """The validated config."""

    final_at: dt.datetime | None
    freeze_hours: float = 48
    appeal_days: float = 7
    runs_per_window: int = 3
    window_days: float = 7
    review_label: str = "arena: staff reviewed"
    final: FinalState = FinalState()
    ended: bool = False

    @property
    def freeze_at(self) -> dt.datetime | None:
        return None if self.final_at is None else self.final_at - dt.timedelta(hours=self.freeze_hours)

    @property
    def appeals_close_at(self) -> dt.datetime | None:
        published = self.final.published_at
        return None if published is None else published + dt.timedelta(days=self.appeal_days)

    @property
    def window(self) -> dt.timedelta:
        return dt.timedelta(days=self.window_days)

    def frozen(self, now: dt.datetime) -> bool:
        """True from the freeze on: nothing may change which submission is active."""
        return self.ended or (self.freeze_at is not None and now >= self.freeze_at)

    def phase(self, now: dt.datetime) -> str:
        """open, frozen, final-pending-review, appeals or ended."""
        if self.ended:
            return "ended"
        if self.final.status == "published":
            return "appeals"
        if self.final.status == "pending_review":
            return "final-pending-review"
        return "frozen" if self.frozen(now) else "open"

    def status(self, now: dt.datetime) -> dict:
        """What `arena competition status` prints and a workflow reads."""
        return {
            "phase": self.phase(now),
            "now": _time(now),
            "final_at": _time(self.final_at),
            "freeze_at": _time(self.freeze_at),
            "frozen": self.frozen(now),
            "final": self.final.to_dict(),
            "appeals_close_at": _time(self.appeals_close_at),
            "ended": self.ended,
        }

    # -- staff transitions ---------------------------------------------------
    def final_dated(self, final_at: dt.datetime, now: dt.datetime) -> Competition:
        """Staff set (or move) the final's date: only before a final has been played, and only
        to a date whose freeze is still ahead (a freeze in the past would change the field of
        students who could still upload a moment ago)."""
        if self.final.status != "not_run":
            raise FinalStateError(
                self.final.status,
                f"the final has been played (status {self.final.status}, round "
                f"{self.final.round_id}): its date no longer changes",
            )
        if self.ended:
            raise FinalStateError(self.final.status, "the competition has ended")
        freeze_at = final_at - dt.timedelta(hours=self.freeze_hours)
        if freeze_at <= now:
            raise OptionError(
                "--final-at",
                format_time(final_at),
                f"--final-at {format_time(final_at)}: the field would freeze at {format_time(freeze_at)} "
                f"({self.freeze_hours:g} hours before), which is not after now ({format_time(now)})",
            )
        if self.frozen(now):
            raise FinalStateError(
                self.final.status,
                f"the field froze at {format_time(self.freeze_at)}: the final's date no longer changes",
            )
        return replace(self, final_at=final_at)

    def final_committed(self, round_id: str) -> Competition:
        """The final round was merged into rounds/: it waits for review."""
        if not ROUND_ID_RE.match(round_id):
            raise OptionError("--round", round_id, f"{round_id!r} is not a round id")
        if self.final.status == "published":
            raise FinalStateError(
                self.final.status, f"the final is already published (round {self.final.round_id}); it is run once"
            )
        if self.final.status == "pending_review" and self.final.round_id != round_id:
            raise FinalStateError(
                self.final.status,
                f"the final has been played: round {self.final.round_id} is pending "
                f"review, so {round_id} is not recorded; it is run once (staff set "
                "a failed final aside with `arena competition rerun-final --reason`)",
            )
        return replace(self, final=FinalState("pending_review", round_id, reruns=self.final.reruns))

    def final_set_aside(self, reason: str, now: dt.datetime, staff_id: int) -> Competition:
        """Staff set aside a final pending review that failed, with a reason, so that it may be
        dispatched again; the set-aside round is recorded in `final.reruns`."""
        if self.final.status != "pending_review":
            raise FinalStateError(
                self.final.status,
                f"there is no final pending review to set aside (final status: "
                f"{self.final.status}); a published final is never run again",
            )
        if not reason.strip():
            raise OptionError("--reason", reason, "--reason: say why the final is played again (it is recorded)")
        record = {"round_id": self.final.round_id, "reason": reason.strip(), "by": staff_id, "at": format_time(now)}
        return replace(self, final=FinalState("not_run", reruns=self.final.reruns + (record,)))

    def final_published(self, now: dt.datetime, staff_id: int) -> Competition:
        """A staff member publishes the reviewed final; the appeal window opens."""
        if self.final.status != "pending_review":
            raise FinalStateError(
                self.final.status, f"there is no final pending review (final status: {self.final.status})"
            )
        return replace(self, final=replace(self.final, status="published", published_at=now, published_by=staff_id))

    def closed_if_due(self, now: dt.datetime) -> Competition:
        """Mark the competition ended once the appeal window has closed; unchanged otherwise."""
        close = self.appeals_close_at
        if self.ended or close is None or now < close:
            return self
        return replace(self, ended=True)

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "final_at": _time(self.final_at),
            "freeze_hours": self.freeze_hours,
            "appeal_days": self.appeal_days,
            "requested_runs": {"per_window": self.runs_per_window, "window_days": self.window_days},
            "review_label": self.review_label,
            "final": self.final.to_dict(),
            "ended": self.ended,
        }


def parse_competition(data: Any, source: str = "config/competition.yaml") -> Competition:
    """A Competition from parsed YAML (grader/documents/data/competition.schema.json), and the rules between
    its fields; raise DocumentError listing every problem by path."""
    problems = problems_of(data, "competition")
    if not isinstance(data, dict):
        raise DocumentError(source, problems)
    final = data.get("final") if isinstance(data.get("final"), dict) else {}
    final_at = None if data.get("final_at") is None else parse_time(data["final_at"], "final_at", problems)
    published_at = (
        None if final.get("published_at") is None else parse_time(final["published_at"], "final.published_at", problems)
    )
    status, round_id = final.get("status"), final.get("round_id")
    if status in ("pending_review", "published") and round_id is None:
        problems.append(f"final.round_id: a final that is {status} names its round")
    if status == "published" and (published_at is None or final.get("published_by") is None):
        problems.append("final: a published final records published_at and published_by")
    if data.get("ended") is True and status != "published":
        problems.append("ended: the competition can only end after its final is published")
    if problems:
        raise DocumentError(source, problems)
    runs = data["requested_runs"]
    reruns = tuple(dict(r) for r in final.get("reruns", []))
    return Competition(
        final_at,
        data["freeze_hours"],
        data["appeal_days"],
        runs["per_window"],
        runs["window_days"],
        data["review_label"],
        FinalState(status, round_id, published_at, final["published_by"], reruns),
        data["ended"],
    )


def load_competition(path: Path) -> Competition:
    return parse_competition(read_yaml(path), str(path))


def write_competition(path: Path, competition: Competition, header: str = "") -> None:
    """Write the config back (the leading comment block of the file is kept)."""
    path = Path(path)
    if not header and path.exists():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        header = "".join(line for line in _leading_comments(lines))
    path.write_text(header + dump_yaml(competition.to_dict()), encoding="utf-8")


def _leading_comments(lines: list[str]):
    for line in lines:
        if line.startswith("#") or not line.strip():
            yield line
        else:
            return


# -- Invalidated results: config/invalidations.yaml ---------------------------------------------
#     schema_version: 1
#     invalidated:
#       - {round: ladder-..., handle: bob, reason: "...", by: 1001, at: "2026-12-16T10:00:00Z"}
# Staff invalidate one entrant's result in one round with a reason (`arena competition
# invalidate`); the site strikes it through and `arena grades` carries it (docs/rules.md).
INVALIDATIONS_PATH = Path("config/invalidations.yaml")
INVALIDATION_FIELDS = ("round", "handle", "reason", "by", "at")


@dataclass(frozen=True)
class Invalidation:
    """One entrant's result in one round, invalidated by a member of staff."""

    round: str
    handle: str
    reason: str
    by: int
    at: dt.datetime

    def to_dict(self) -> dict:
        return {
            "round": self.round,
            "handle": self.handle,
            "reason": self.reason,
            "by": self.by,
            "at": format_time(self.at),
        }


def parse_invalidations(data: Any, source: str = str(INVALIDATIONS_PATH)) -> list[Invalidation]:
    """The invalidations of a parsed document (grader/documents/data/invalidations.schema.json);
    raise DocumentError listing every problem."""
    problems = problems_of(data, "invalidations")
    if problems:
        raise DocumentError(source, problems)
    out = []
    for i, item in enumerate(data["invalidated"]):
        at = parse_time(item["at"], f"invalidated[{i}].at", problems)
        if at is not None:
            out.append(Invalidation(item["round"], item["handle"], item["reason"], item["by"], at))
    if problems:
        raise DocumentError(source, problems)
    return out


def load_invalidations(path: Path = INVALIDATIONS_PATH) -> list[Invalidation]:
    """The invalidations recorded at `path` (none when the file does not exist)."""
    path = Path(path)
    return parse_invalidations(read_yaml(path), str(path)) if path.exists() else []


def write_invalidations(path: Path, items: list[Invalidation]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Results invalidated by staff (`arena competition invalidate`): struck through on the site.\n"
        + dump_yaml({"schema_version": SCHEMA_VERSION, "invalidated": [i.to_dict() for i in items]}),
        encoding="utf-8",
    )


def invalidated_in(items: list[Invalidation], round_id: str) -> dict[str, str]:
    """handle -> reason, for the results of `round_id` that staff invalidated."""
    return {i.handle: i.reason for i in items if i.round == round_id}
