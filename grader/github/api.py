"""The GitHub REST calls the arena makes, through github3.py, as small typed results.

Everything else in grader.github works on these dataclasses, never on github3 objects, so
the decisions are testable and the set of endpoints used is visible in one place:

    GET    /users/{login}                         an account's numeric id (who re-ran a workflow)
    GET    /repos/{o}/{r}                         repository
    GET    /repos/{o}/{r}/pulls/{n}               pull request (author, head, merged)
    GET    /repos/{o}/{r}/pulls/{n}/files         files a pull request changes
    GET    /repos/{o}/{r}/git/trees/{sha}?recursive=1
    GET    /repos/{o}/{r}/git/blobs/{sha}         a file's bytes, fetched as data
    GET    /repos/{o}/{r}/issues/{n}/events       who applied a label
    GET    /repos/{o}/{r}/issues/{n}/comments     the arena's earlier comment
    POST   /repos/{o}/{r}/issues/{n}/comments     a new comment
    PATCH  /repos/{o}/{r}/issues/comments/{id}    the arena's comment, updated
    DELETE /repos/{o}/{r}/issues/{n}/labels/{name}
    POST   /repos/{o}/{r}/statuses/{sha}          the commit status branch protection requires

`connect` takes the API's base URL (a workflow's GITHUB_API_URL; tests give a local server).
"""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass

import github3
from github3.exceptions import GitHubError, NotFoundError

from grader.common.visible import visible

DEFAULT_API_URL = "https://api.github.com"
STATUS_STATES = ("pending", "success", "failure", "error")


class GitHubCallError(RuntimeError):
    """A GitHub call failed; the message names the call."""


class GitHubArgumentError(ValueError):
    """A value a GitHub call does not take, refused before the call: `argument` names it
    ("repository", "state"), `value` is what was given."""

    def __init__(self, argument: str, value: object, message: str):
        super().__init__(message)
        self.argument, self.value = argument, value


@dataclass(frozen=True)
class User:
    id: int
    login: str


@dataclass(frozen=True)
class PullInfo:
    number: int
    author: User
    head_sha: str
    state: str
    merged: bool
    merge_commit_sha: str | None
    labels: tuple[str, ...]


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str  # added, modified, removed, renamed, ...
    previous_path: str | None = None


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    type: str
    sha: str
    size: int | None


@dataclass(frozen=True)
class LabelEvent:
    event: str  # labeled or unlabeled
    label: str
    actor: User
    created_at: dt.datetime


def connect(token: str | None, api_url: str = DEFAULT_API_URL) -> github3.GitHub:
    """A github3 client for the API at `api_url`, logged in with `token` when one is given."""
    gh = github3.GitHub(token=token) if token else github3.GitHub()
    gh.session.base_url = api_url.rstrip("/")
    return gh


def user_id(gh: github3.GitHub, login: str) -> int | None:
    """GET /users/{login}: the numeric id of the account that has `login` now (None: no such account)."""
    # The raw call: github3's User wants the full profile, and only the id is needed.
    if not login or "/" in login:
        return None
    try:
        response = gh.session.get(f"{gh.session.base_url}/users/{login}")
    except Exception as exc:  # requests' connection errors
        raise GitHubCallError(f"could not look up the account {login!r}: {exc}") from None
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise GitHubCallError(f"GitHub refused to look up the account {login!r}: HTTP {response.status_code}")
    return int(response.json()["id"])


def _user(data) -> User:
    return User(int(data.id), str(data.login))


class Repo:
    """One repository's endpoints, as used by the arena."""

    def __init__(self, gh: github3.GitHub, full_name: str):
        owner, sep, name = full_name.partition("/")
        if not sep or not owner or not name or "/" in name:
            raise GitHubArgumentError("repository", full_name, f"repository {full_name!r} is not OWNER/NAME")
        self.full_name = full_name
        self._repo = self._call("get the repository", gh.repository, owner, name)
        if self._repo is None:
            raise GitHubCallError(f"repository {full_name} not found")
        # A command reads one pull request or issue more than once (its head, then its files;
        # a label removed, then the comment): each is fetched once per Repo.
        self._pulls: dict[int, object] = {}
        self._issues: dict[int, object] = {}

    @staticmethod
    def _call(what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NotFoundError:
            return None
        except GitHubError as exc:
            raise GitHubCallError(f"GitHub refused to {what}: {exc}") from None

    def _pull(self, number: int):
        if number not in self._pulls:
            pr = self._call(f"get pull request #{number}", self._repo.pull_request, number)
            if pr is None:
                raise GitHubCallError(f"{self.full_name}: no pull request #{number}")
            self._pulls[number] = pr
        return self._pulls[number]

    def _issue(self, number: int):
        if number not in self._issues:
            issue = self._call(f"get issue #{number}", self._repo.issue, number)
            if issue is None:
                raise GitHubCallError(f"{self.full_name}: no issue #{number}")
            self._issues[number] = issue
        return self._issues[number]

    def pull(self, number: int) -> PullInfo:
        pr = self._pull(number)
        data = pr.as_dict()
        return PullInfo(
            number=pr.number,
            author=_user(pr.user),
            head_sha=pr.head.sha,
            state=pr.state,
            merged=bool(data.get("merged")),
            merge_commit_sha=data.get("merge_commit_sha"),
            labels=tuple(label["name"] for label in data.get("labels") or ()),
        )

    def changed_files(self, number: int) -> list[ChangedFile]:
        pr = self._pull(number)
        files = self._call(f"list the files of #{number}", lambda: list(pr.files()))
        return [ChangedFile(f.filename, f.status, f.as_dict().get("previous_filename")) for f in files or ()]

    def tree(self, sha: str) -> list[TreeEntry]:
        tree = self._call(f"read the tree of {sha}", self._repo.tree, sha, recursive=True)
        if tree is None:
            raise GitHubCallError(f"{self.full_name}: no tree {sha}")
        if tree.as_dict().get("truncated"):
            raise GitHubCallError(f"{self.full_name}: the tree of {sha} is too large to list")
        return [TreeEntry(h.path, h.mode, h.type, h.sha, h.as_dict().get("size")) for h in tree.tree]

    def blob(self, sha: str) -> bytes:
        blob = self._call(f"read blob {sha}", self._repo.blob, sha)
        if blob is None:
            raise GitHubCallError(f"{self.full_name}: no blob {sha}")
        # github3's decode_content() returns text; a blob is bytes (an .npz is not UTF-8).
        return base64.b64decode(blob.content) if blob.encoding == "base64" else blob.content.encode()

    def label_events(self, number: int) -> list[LabelEvent]:
        """labeled/unlabeled events of an issue or pull request, oldest first."""
        issue = self._issue(number)
        events = self._call(f"list the events of #{number}", lambda: list(issue.events()))
        out = []
        for e in events or ():
            label = (e.as_dict().get("label") or {}).get("name")
            if e.event in ("labeled", "unlabeled") and label:
                out.append(LabelEvent(e.event, label, _user(e.actor), e.created_at))
        return sorted(out, key=lambda e: e.created_at)

    def comments(self, number: int) -> list[tuple[User, str]]:
        """(author, body) of every comment of an issue or pull request, oldest first."""
        issue = self._issue(number)
        found = self._call(f"list the comments of #{number}", lambda: list(issue.comments()))
        return [(_user(c.user), c.body or "") for c in found or ()]

    def post_comment(self, number: int, body: str) -> int:
        issue = self._issue(number)
        comment = self._call(f"comment on #{number}", issue.create_comment, visible(body, keep_lines=True))
        if comment is None:
            raise GitHubCallError(f"{self.full_name}: could not comment on #{number}")
        return comment.id

    def upsert_comment(self, number: int, marker: str, body: str, bot_login: str) -> int:
        """Edit the arena's earlier comment carrying `marker`, or post one: one comment per PR.

        Only a comment written by `bot_login` is edited: anyone can paste the marker."""
        issue = self._issue(number)
        for comment in self._call(f"list the comments of #{number}", lambda: list(issue.comments())) or ():
            if comment.user.login == bot_login and marker in (comment.body or ""):
                if not self._call(f"edit comment {comment.id}", comment.edit, visible(body, keep_lines=True)):
                    raise GitHubCallError(f"{self.full_name}: could not edit comment {comment.id}")
                return comment.id
        return self.post_comment(number, body)

    def remove_label(self, number: int, label: str) -> None:
        issue = self._issue(number)
        self._call(f"remove label {label!r} from #{number}", issue.remove_label, label)

    def set_status(self, sha: str, state: str, description: str, context: str, target_url: str | None = None) -> None:
        if state not in STATUS_STATES:
            raise GitHubArgumentError("state", state, f"status state {state!r} is not one of {STATUS_STATES}")
        status = self._call(
            f"set the status of {sha}",
            self._repo.create_status,
            sha,
            state,
            target_url,
            visible(description)[:140],
            context,
        )
        if status is None:
            raise GitHubCallError(f"{self.full_name}: could not set the status of {sha}")
