"""Requested runs (`/score`): the committed request log and the rolling quota over it.

The log (`requests/score.yaml`) is committed by the workflow that accepts a request, so the
quota is counted from the repository's history, not from anything a runner remembers:

    schema_version: 1
    requests:
      - id: c-1234567          # the /score comment's id: one comment, one request
        account_id: 12345678
        handle: octo
        pull_request: 42
        commit: 0123abcd...    # the merge commit whose submissions/<handle>/ is scored
        requested_at: "2026-11-02T10:00:00Z"
        status: queued         # queued -> published | agent_refused | arena_failed
        round_id: null
        requested_by: 87654321 # only on a staff re-run: the member of staff who asked for it

A request counts against its account for `window` after `requested_at` unless nothing was
scored: the arena failed it (`arena_failed`; the rules do not charge a student for the arena's
failures) or the smoke test refused the submission before the round began (`agent_refused`).
A staff re-run (`/score` by staff on a student's merged submission; `requested_by` names the
member of staff) is recorded under the student's account and never counted against it: the
rules say a run staff re-ran for a student does not use the student's quota.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from grader.common.errors import OptionError
from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError, dump_yaml, format_time, parse_time, read_yaml

SCHEMA_VERSION = 1
STATUSES = ("queued", "published", "agent_refused", "arena_failed")
# Nothing was scored for these: the arena failed, or the submission no longer passed its smoke
# test when the run started (the round never began).
NOT_COUNTED = ("arena_failed", "agent_refused")


class RequestStateError(ValueError):
    """A change to the request log that its requests do not allow; `request_id` names the one."""

    def __init__(self, request_id: str, message: str):
        super().__init__(message)
        self.request_id = request_id


@dataclass(frozen=True)
class Request:
    id: str
    account_id: int
    handle: str
    pull_request: int
    commit: str
    requested_at: dt.datetime
    status: str = "queued"
    round_id: str | None = None
    requested_by: int | None = None  # the staff account of a staff re-run; None for the owner's own request

    @property
    def staff_rerun(self) -> bool:
        return self.requested_by is not None

    @property
    def counted(self) -> bool:
        return self.status not in NOT_COUNTED and not self.staff_rerun

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "account_id": self.account_id,
            "handle": self.handle,
            "pull_request": self.pull_request,
            "commit": self.commit,
            "requested_at": format_time(self.requested_at),
            "status": self.status,
            "round_id": self.round_id,
        }
        if self.requested_by is not None:
            out["requested_by"] = self.requested_by
        return out


@dataclass(frozen=True)
class Quota:
    """An account's standing at a moment: runs used in the window, left, and when the next frees."""

    limit: int
    used: int
    next_frees_at: dt.datetime | None  # when the oldest counted run leaves the window

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)

    def describe(self) -> str:
        text = f"{self.left} of {self.limit} requested runs left in the rolling window"
        if self.next_frees_at is not None:
            text += f"; the next one frees at {format_time(self.next_frees_at)}"
        return text


@dataclass(frozen=True)
class RequestLog:
    requests: tuple[Request, ...] = ()

    def get(self, request_id: str) -> Request | None:
        return next((r for r in self.requests if r.id == request_id), None)

    def quota(self, account_id: int, now: dt.datetime, limit: int, window: dt.timedelta) -> Quota:
        """Counted runs of `account_id` with now - window < requested_at <= now."""
        times = sorted(
            r.requested_at
            for r in self.requests
            if r.account_id == account_id and r.counted and now - window < r.requested_at <= now
        )
        return Quota(limit, len(times), times[0] + window if times else None)

    def add(self, request: Request) -> RequestLog:
        if self.get(request.id) is not None:
            raise RequestStateError(request.id, f"request {request.id} is already in the log")
        return RequestLog(self.requests + (request,))

    def finish(self, request_id: str, status: str, round_id: str | None) -> RequestLog:
        """Record how a queued request ended."""
        if status not in STATUSES or status == "queued":
            raise OptionError(
                "--status",
                status,
                f"a finished request is one of {[s for s in STATUSES if s != 'queued']}, not {status!r}",
            )
        old = self.get(request_id)
        if old is None:
            raise RequestStateError(request_id, f"no request {request_id} in the log")
        if old.status != "queued":
            raise RequestStateError(request_id, f"request {request_id} already finished as {old.status}")
        return RequestLog(
            tuple(replace(r, status=status, round_id=round_id) if r.id == request_id else r for r in self.requests)
        )

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "requests": [r.to_dict() for r in self.requests]}


def parse_log(data: Any, source: str = "requests/score.yaml") -> RequestLog:
    """A RequestLog from parsed YAML (grader/documents/data/requests.schema.json), each id once; raise
    DocumentError listing every problem by path."""
    problems = problems_of(data, "requests")
    if not isinstance(data, dict):
        raise DocumentError(source, problems)
    items: list[Any] = data["requests"] if isinstance(data.get("requests"), list) else []
    seen: set[Any] = set()
    times: list[Any] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        rid = item.get("id")
        if isinstance(rid, str) and rid in seen:
            problems.append(f"requests[{i}].id: {rid} appears twice")
        seen.add(rid)
        if "requested_at" in item:
            times.append(parse_time(item["requested_at"], f"requests[{i}].requested_at", problems))
    if problems:
        raise DocumentError(source, problems)
    return RequestLog(
        tuple(
            Request(
                item["id"],
                item["account_id"],
                item["handle"],
                item["pull_request"],
                item["commit"],
                when,
                item["status"],
                item["round_id"],
                item.get("requested_by"),
            )
            for item, when in zip(items, times)
        )
    )


def load_log(path: Path) -> RequestLog:
    """The log at `path`; an absent file is an empty log (no request was ever made)."""
    path = Path(path)
    if not path.exists():
        return RequestLog()
    return parse_log(read_yaml(path), str(path))


def write_log(path: Path, log: RequestLog) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Requested runs (/score). Written by the score workflow; see grader/season/quota.py.\n"
        + dump_yaml(log.to_dict()),
        encoding="utf-8",
    )
