"""A local HTTP server on 127.0.0.1 that speaks the GitHub REST endpoints the arena uses.

Responses are the shapes of fixtures/*.json (GitHub's documented bodies) filled in from the
server's state; every request is recorded so a test can assert what was posted. Writes need an
`Authorization` header, as on GitHub.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import threading
import urllib.parse
from typing import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
OWNER, REPO = "arena-org", "arena"
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def fixture(name: str) -> object:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def fill(template: object, values: dict) -> object:
    """Fill `{{name}}` placeholders: a string that is only a placeholder takes the value as is
    (an int, a list, an object); one inside a longer string is replaced by its text."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole:
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
    return template


def git_sha(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


@dataclass
class Pull:
    number: int
    author: tuple[int, str]
    head_sha: str
    changed: list[dict]
    labels: list[str] = field(default_factory=list)
    merged: bool = False
    merge_commit_sha: str | None = None


@dataclass
class Recorded:
    method: str
    path: str
    body: object


class FakeGitHub:
    """The server's state: users, pulls, trees, blobs, events, comments, statuses."""

    def __init__(self) -> None:
        self.users: dict[int, str] = {}
        self.pulls: dict[int, Pull] = {}
        self.trees: dict[str, list[dict]] = {}
        self.blobs: dict[str, bytes] = {}
        self.events: dict[int, list[dict]] = {}
        self.comments: dict[int, list[dict]] = {}
        self.statuses: list[dict] = []
        self.requests: list[Recorded] = []
        self.bot = (41898282, "github-actions[bot]")
        # Called with (method, path) before a request is answered: a test makes something happen
        # elsewhere at that moment (a push to main while a job decides, say).
        self.on_request: Callable[[str, str], None] | None = None
        self._next_id = 1000
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.api = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    # -- life cycle ----------------------------------------------------------
    def __enter__(self) -> "FakeGitHub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- state set-up ----------------------------------------------------------
    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_commit(self, files: dict[str, bytes], modes: dict[str, str] | None = None) -> str:
        """A commit whose tree holds `files` (path -> bytes); returns its sha."""
        modes = modes or {}
        entries, dirs = [], set()
        for path, data in sorted(files.items()):
            sha = git_sha("blob", data)
            self.blobs[sha] = data
            mode = modes.get(path, "100644")
            kind = "commit" if mode == "160000" else "blob"
            entries.append({"path": path, "mode": mode, "type": kind, "sha": sha, "size": len(data)})
            parts = path.split("/")
            dirs |= {"/".join(parts[:i]) for i in range(1, len(parts))}
        for d in sorted(dirs):
            entries.append({"path": d, "mode": "040000", "type": "tree", "sha": git_sha("tree", d.encode()), "size": None})
        sha = git_sha("commit", json.dumps(entries, sort_keys=True).encode())
        self.trees[sha] = sorted(entries, key=lambda e: e["path"])
        return sha

    def add_pull(self, number: int, author: tuple[int, str], files: dict[str, bytes], changed: list[str] | None = None,
                 labels: list[str] | None = None, merged: bool = False, modes: dict[str, str] | None = None,
                 removed: list[str] | None = None) -> Pull:
        """A pull request whose head holds `files`; `changed` (default: all of them) are its changes."""
        head = self.add_commit(files, modes)
        self.users[author[0]] = author[1]
        changed_files = [{"filename": p, "status": "modified", "sha": git_sha("blob", files[p])}
                         for p in (changed if changed is not None else sorted(files))]
        changed_files += [{"filename": p, "status": "removed", "sha": "0" * 40} for p in removed or ()]
        pull = Pull(number, author, head, changed_files, list(labels or ()), merged,
                    self.add_commit(files) if merged else None)
        if merged:
            pull.merge_commit_sha = hashlib.sha1(f"merge {number}".encode()).hexdigest()
        self.pulls[number] = pull
        return pull

    def add_label_event(self, number: int, event: str, label: str, actor: tuple[int, str], created_at: str) -> None:
        self.users[actor[0]] = actor[1]
        self.events.setdefault(number, []).append({"id": self.next_id(), "event": event, "label": label,
                                                   "actor": actor, "created_at": created_at})

    def add_comment(self, number: int, author: tuple[int, str], body: str) -> int:
        comment_id = self.next_id()
        self.comments.setdefault(number, []).append({"id": comment_id, "user": author, "body": body,
                                                     "created_at": "2026-10-01T10:00:00Z"})
        return comment_id

    # -- rendering -------------------------------------------------------------
    def _values(self, **extra) -> dict:
        return {"api": self.api, "owner": OWNER, "repo": REPO} | extra

    def user(self, user_id: int, login: str) -> dict:
        kind = "Bot" if login.endswith("[bot]") else "User"
        return fill(fixture("user"), self._values(user_id=user_id, login=login, user_type=kind))

    def _labels(self, names: list[str]) -> list[dict]:
        return [fill(fixture("label"), self._values(name=n, name_quoted=urllib.parse.quote(n))) for n in names]

    def render_pull(self, pull: Pull) -> dict:
        return fill(fixture("pull_request"), self._values(
            number=pull.number, state="closed" if pull.merged else "open", login=pull.author[1],
            user=self.user(*pull.author), labels=self._labels(pull.labels), head_sha=pull.head_sha,
            merged=pull.merged, merged_at="2026-10-02T10:00:00Z" if pull.merged else None,
            merge_commit_sha=pull.merge_commit_sha, owner_user=self.user(1, OWNER),
            base_repo=self.render_repository(), head_repo=self.render_repository()))

    def render_repository(self) -> dict:
        return fill(fixture("repository"), self._values(user=self.user(1, OWNER)))

    def render_issue(self, pull: Pull) -> dict:
        return fill(fixture("issue"), self._values(number=pull.number, state="closed" if pull.merged else "open",
                                                   login=pull.author[1], user=self.user(*pull.author),
                                                   labels=self._labels(pull.labels)))

    def render_comment(self, number: int, c: dict) -> dict:
        assoc = "NONE" if c["user"] == self.bot else "CONTRIBUTOR"
        return fill(fixture("issue_comment"), self._values(id=c["id"], number=number, body=c["body"],
                                                           body_html=html.escape(c["body"]),
                                                           user=self.user(*c["user"]), created_at=c["created_at"],
                                                           association=assoc))

    # -- routing ---------------------------------------------------------------
    def route(self, method: str, path: str, body: object, authed: bool) -> tuple[int, object]:
        base = f"/repos/{OWNER}/{REPO}"
        if (m := re.fullmatch(r"/users/([^/]+)", path)) and method == "GET":
            login = urllib.parse.unquote(m.group(1))
            found = next((i for i, name in self.users.items() if name == login), None)
            return (200, self.user(found, login)) if found is not None else (404, {"message": "Not Found"})
        if not path.startswith(base):
            return 404, {"message": "Not Found"}
        rest = path[len(base):]
        if method != "GET" and not authed:
            return 401, {"message": "Requires authentication"}
        if method == "GET" and rest == "":
            return 200, self.render_repository()
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pull = self.pulls.get(int(m.group(1)))
            return (200, self.render_pull(pull)) if pull else (404, {"message": "Not Found"})
        if m := re.fullmatch(r"/pulls/(\d+)/files", rest):
            pull = self.pulls[int(m.group(1))]
            return 200, [fill(fixture("pull_request_file"), self._values(sha=f["sha"], filename=f["filename"],
                                                                         status=f["status"], head_sha=pull.head_sha))
                         for f in pull.changed]
        if m := re.fullmatch(r"/git/trees/(\w+)", rest):
            entries = self.trees.get(m.group(1))
            if entries is None:
                return 404, {"message": "Not Found"}
            return 200, fill(fixture("git_tree"), self._values(
                sha=m.group(1), entries=[fill(fixture("git_tree_entry"), self._values(**e)) for e in entries]))
        if m := re.fullmatch(r"/git/blobs/(\w+)", rest):
            data = self.blobs.get(m.group(1))
            if data is None:
                return 404, {"message": "Not Found"}
            return 200, fill(fixture("git_blob"), self._values(sha=m.group(1), size=len(data),
                                                               content=base64.encodebytes(data).decode()))
        if m := re.fullmatch(r"/issues/(\d+)", rest):
            pull = self.pulls.get(int(m.group(1)))
            return (200, self.render_issue(pull)) if pull else (404, {"message": "Not Found"})
        if m := re.fullmatch(r"/issues/(\d+)/events", rest):
            return 200, [fill(fixture("issue_event"), self._values(id=e["id"], event=e["event"], label=e["label"],
                                                                   user=self.user(*e["actor"]), created_at=e["created_at"]))
                         for e in self.events.get(int(m.group(1)), [])]
        if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "GET":
            number = int(m.group(1))
            return 200, [self.render_comment(number, c) for c in self.comments.get(number, [])]
        if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "POST":
            number = int(m.group(1))
            comment = {"id": self.next_id(), "user": self.bot, "body": body["body"], "created_at": "2026-10-03T10:00:00Z"}
            self.comments.setdefault(number, []).append(comment)
            return 201, self.render_comment(number, comment)
        if (m := re.fullmatch(r"/issues/comments/(\d+)", rest)) and method == "PATCH":
            for number, comments in self.comments.items():
                for c in comments:
                    if c["id"] == int(m.group(1)):
                        if c["user"] != self.bot:
                            return 403, {"message": "Must have admin rights to Repository."}
                        c["body"] = body["body"]
                        return 200, self.render_comment(number, c)
            return 404, {"message": "Not Found"}
        if (m := re.fullmatch(r"/issues/(\d+)/labels/(.+)", rest)) and method == "DELETE":
            pull = self.pulls[int(m.group(1))]
            name = urllib.parse.unquote(m.group(2))
            if name not in pull.labels:
                return 404, {"message": "Label does not exist"}
            pull.labels.remove(name)
            self.add_label_event(pull.number, "unlabeled", name, self.bot, "2026-10-03T10:00:00Z")
            return 200, self._labels(pull.labels)
        if (m := re.fullmatch(r"/statuses/(\w+)", rest)) and method == "POST":
            if body.get("state") not in ("pending", "success", "failure", "error"):
                return 422, {"message": "Validation Failed"}
            status = {"sha": m.group(1), **body}
            self.statuses.append(status)
            return 201, fill(fixture("status"), self._values(
                sha=m.group(1), id=self.next_id(), state=body["state"], description=body.get("description"),
                target_url=body.get("target_url"), context=body.get("context"), created_at="2026-10-03T10:00:00Z",
                user=self.user(*self.bot)))
        return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                path = urllib.parse.urlsplit(self.path).path
                if hub.on_request is not None:
                    hub.on_request(self.command, path)
                with hub._lock:
                    hub.requests.append(Recorded(self.command, path, body))
                    status, data = hub.route(self.command, path, body, bool(self.headers.get("Authorization")))
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve

            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

        return Handler

    # -- assertions --------------------------------------------------------------
    def posted(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]
