"""What a command needs from the GitHub Actions job it runs in: token, API URL, outputs, clock."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from grader.documents import parse_time, utc_now
from grader.github.api import DEFAULT_API_URL, Repo, connect

OUTPUT_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


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
            raise ValueError(f"step output {key!r}: keys are identifiers and values one line")
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
        raise ValueError(problems[0])
    return moment
