"""The webhook payload a workflow was started with ($GITHUB_EVENT_PATH), read into dataclasses.

Only the fields the arena decides on are read, and a payload missing one is refused with its
path, so a workflow wired to the wrong event fails loudly instead of deciding on defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.github.api import User


class EventError(ValueError):
    """A payload that is not the event expected; the message names the missing field."""


def _get(data: Any, path: str) -> Any:
    node = data
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            raise EventError(f"event payload has no {path}")
        node = node[key]
    return node


@dataclass(frozen=True)
class PullRequestEvent:
    """pull_request_target: which pull request, by whom, at which head."""

    action: str
    repository: str
    number: int
    author: User
    head_sha: str
    labels: tuple[str, ...]
    label: str | None  # the label just added or removed, for labeled/unlabeled


@dataclass(frozen=True)
class CommentEvent:
    """issue_comment: a comment on an issue or a pull request."""

    action: str
    repository: str
    number: int
    is_pull_request: bool
    comment_id: int
    author: User
    body: str
    created_at: str


def load_event(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such event file") from None
    except json.JSONDecodeError as exc:
        raise EventError(f"{path}: not JSON: {exc}") from None


def pull_request_event(data: dict) -> PullRequestEvent:
    pr = _get(data, "pull_request")
    return PullRequestEvent(
        action=str(_get(data, "action")),
        repository=str(_get(data, "repository.full_name")),
        number=int(_get(pr, "number")),
        author=User(int(_get(pr, "user.id")), str(_get(pr, "user.login"))),
        head_sha=str(_get(pr, "head.sha")),
        labels=tuple(str(x["name"]) for x in pr.get("labels") or ()),
        label=(data.get("label") or {}).get("name"),
    )


def comment_event(data: dict) -> CommentEvent:
    issue = _get(data, "issue")
    return CommentEvent(
        action=str(_get(data, "action")),
        repository=str(_get(data, "repository.full_name")),
        number=int(_get(issue, "number")),
        is_pull_request="pull_request" in issue,
        comment_id=int(_get(data, "comment.id")),
        author=User(int(_get(data, "comment.user.id")), str(_get(data, "comment.user.login"))),
        body=str(_get(data, "comment.body")),
        created_at=str(_get(data, "comment.created_at")),
    )
