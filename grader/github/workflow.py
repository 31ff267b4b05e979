"""What a command needs from the GitHub Actions job it runs in: token, API URL, outputs, clock."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from grader.common.errors import OptionError
from grader.documents.yaml_io import parse_time, utc_now
from grader.github.api import DEFAULT_API_URL, Repo, connect, user_id

OUTPUT_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class StepOutputError(ValueError):
    """A step output $GITHUB_OUTPUT cannot hold as one `key=value` line: `key` and `value`
    (the text that would be written) are what was given."""

    def __init__(self, key: str, value: str, message: str):
        super().__init__(message)
        self.key, self.value = key, value


def token() -> str | None:
    """The job's token (GITHUB_TOKEN), if it has one."""
    return os.environ.get("GITHUB_TOKEN") or None


def api_url(option: str | None) -> str:
    return option or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL


def repo(full_name: str, api_url_option: str | None) -> Repo:
    """`full_name` through the job's token, at --api-url or the job's API."""
    return Repo(connect(token(), api_url(api_url_option)), full_name)


def write_outputs(values: dict[str, object], path: str | None = None) -> None:
    """Append step outputs to $GITHUB_OUTPUT (nothing outside a workflow)."""
    target = path or os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    lines = []
    for key, value in values.items():
        text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        if not OUTPUT_KEY_RE.match(key) or "\n" in text or "\r" in text:
            raise StepOutputError(key, text, f"step output {key!r}: keys are identifiers and values one line")
        lines.append(f"{key}={text}\n")
    with Path(target).open("a", encoding="utf-8") as fh:
        fh.writelines(lines)


def now(option: str | None) -> dt.datetime:
    """--now (for tests and re-runs), else the clock."""
    if option is None:
        return utc_now()
    problems: list[str] = []
    moment = parse_time(option, "--now", problems)
    if problems:
        raise OptionError("--now", option, problems[0])
    assert moment is not None  # parse_time gives a time whenever it adds no problem
    return moment


def staff_problem(
    registry, actor_id: int, triggering_actor: str | None, api_url_option: str | None = None
) -> str | None:
    """Why a run may not act for staff, or None. `actor_id` (GITHUB_ACTOR_ID) is whoever started
    the run, and a re-run keeps it; `triggering_actor` (GITHUB_TRIGGERING_ACTOR, a login) is
    whoever started this attempt, resolved to its id through the API: both must be staff."""
    if not registry.is_staff(actor_id):
        return f"GitHub account {actor_id}, who started this run, is not staff"
    if triggering_actor is None:
        return None
    if not triggering_actor.strip():
        return "the run's triggering actor is empty (GITHUB_TRIGGERING_ACTOR): cannot tell who re-ran it"
    actor = registry.by_id(actor_id)
    found = user_id(connect(token(), api_url(api_url_option)), triggering_actor)
    if found is None:
        return f"the triggering actor {triggering_actor!r} is no GitHub account"
    if found != actor_id and not registry.is_staff(found):
        return (
            f"this attempt was started by {triggering_actor} (id {found}), who is not staff; "
            f"the run was first started by {actor.login if actor else actor_id}"
        )
    return None
