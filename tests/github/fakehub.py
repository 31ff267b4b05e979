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
from collections.abc import Callable
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
    branch: str | None = None  # a pull request of a branch of the origin (open_pull_from_branch)


@dataclass
class Recorded:
    method: str
    path: str
    body: object


ZERO = "0" * 40
ACTIONS_BOT = (41898282, "github-actions[bot]")
ACTIONS_APP_ID = 15368


@dataclass(frozen=True)
class Identity:
    """Who a token (or a push's credential) is: `role` admin, write or read; an app's id."""

    login: str
    id: int
    role: str = "write"
    app_id: int | None = None


@dataclass
class RepoSettings:
    """What `arena github setup` configures, as GitHub stores it; secrets by value, as a
    runner would receive them, though the API only ever answers their names."""

    labels: dict[str, dict] = field(default_factory=dict)
    environments: dict[str, dict] = field(default_factory=dict)  # name -> {policy, branch_policies, secrets}
    rulesets: dict[int, dict] = field(default_factory=dict)
    workflow_permissions: dict = field(
        default_factory=lambda: {"default_workflow_permissions": "write", "can_approve_pull_request_reviews": True}
    )
    fork_approval: dict = field(default_factory=lambda: {"approval_policy": "first_time_contributors"})
    pages: dict | None = None
    secrets: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    deploy_keys: list[dict] = field(default_factory=list)  # {id, title, key, read_only}
    runners: list[dict] = field(default_factory=list)  # {id, name, labels}


PRE_RECEIVE = """#!/usr/bin/env python3
# The fake GitHub's gate on this bare repository (tests/github/fakehub.py, FakeGitHub.receive):
# the push's credential (a push option, as the checkout stand-in or a test sets it) and its
# ref updates go to the fake hub, which refuses what GitHub would.
import json, os, sys, urllib.request
options = [os.environ.get(f"GIT_PUSH_OPTION_{i}", "") for i in range(int(os.environ.get("GIT_PUSH_OPTION_COUNT", "0")))]
credential = next((o.split("=", 1)[1] for o in options if o.startswith("arena-credential=")), "")
updates = [line.split() for line in sys.stdin.read().splitlines() if line.strip()]
request = urllib.request.Request("{api}/_fakehub/receive", data=json.dumps({{"credential": credential,
                                 "updates": updates}}).encode(), headers={{"Content-Type": "application/json"}})
answer = json.loads(urllib.request.urlopen(request, timeout=60).read())
if not answer["allowed"]:
    sys.stderr.write(answer["message"] + "\\n")
    sys.exit(1)
"""


def git_in(repo: Path, *args: str, check: bool = True) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


class GitHubRules:
    """The part of the fake that holds a repository's settings and enforces them: the
    endpoints `arena github setup` calls, the pushes a bare repository receives, merges."""

    settings: RepoSettings
    tokens: dict[str, Identity]
    origin: Path | None

    # -- tokens ------------------------------------------------------------------------
    def add_token(self, token: str, login: str, user_id: int, role: str = "write", app_id: int | None = None) -> str:
        self.tokens[token] = Identity(login, user_id, role, app_id)
        return token

    def identity(self, token: str) -> Identity:
        """Who holds `token`: registered ones as registered; an installation token (`ghs_...`)
        is GitHub Actions' app; any other unregistered token a writer, as the older tests expect."""
        if token in self.tokens:
            return self.tokens[token]
        if token.startswith("ghs_"):
            return Identity(ACTIONS_BOT[1], ACTIONS_BOT[0], "write", ACTIONS_APP_ID)
        return Identity("token-holder", 0, "write")

    # -- settings endpoints ----------------------------------------------------------------
    def route_settings(self, method: str, rest: str, body, who: Identity | None):
        st = self.settings
        admin_paths = (
            "/environments",
            "/rulesets",
            "/actions/permissions",
            "/pages",
            "/actions/secrets",
            "/actions/variables",
            "/keys",
            "/actions/runners",
            "/labels",
        )
        if not rest.startswith(admin_paths):
            return None
        if rest.startswith("/labels"):
            return self._labels_route(method, rest, body, who)
        if who is None or who.role != "admin":
            return 403, {
                "message": "Must have admin rights to Repository.",
                "documentation_url": "https://docs.github.com/rest",
            }
        if m := re.fullmatch(r"/environments/([^/]+)", rest):
            env = urllib.parse.unquote(m.group(1))
            if method == "GET":
                if env not in st.environments:
                    return 404, {"message": "Not Found"}
                return 200, self._render_env(env)
            if method == "PUT":
                e = st.environments.setdefault(env, {"policy": None, "branch_policies": [], "secrets": {}})
                e["policy"] = (body or {}).get("deployment_branch_policy")
                return 200, self._render_env(env)
        if m := re.fullmatch(r"/environments/([^/]+)/deployment-branch-policies", rest):
            e = st.environments.get(urllib.parse.unquote(m.group(1)))
            if e is None:
                return 404, {"message": "Not Found"}
            if method == "GET":
                return 200, {"total_count": len(e["branch_policies"]), "branch_policies": e["branch_policies"]}
            if method == "POST":
                if not (e["policy"] or {}).get("custom_branch_policies"):
                    return 404, {"message": "Custom branch policies are not enabled for this environment"}
                policy = {"id": self.next_id(), "name": body["name"], "type": body.get("type", "branch")}
                e["branch_policies"].append(policy)
                return 200, policy
        if m := re.fullmatch(r"/environments/([^/]+)/secrets", rest):
            e = st.environments.get(urllib.parse.unquote(m.group(1)))
            if e is None:
                return 404, {"message": "Not Found"}
            return 200, {"total_count": len(e["secrets"]), "secrets": [{"name": n} for n in sorted(e["secrets"])]}
        if rest == "/rulesets":
            if method == "GET":
                return 200, [
                    {"id": i, "name": r["name"], "target": r["target"], "enforcement": r["enforcement"]}
                    for i, r in st.rulesets.items()
                ]
            if method == "POST":
                ruleset_id = self.next_id()
                st.rulesets[ruleset_id] = json.loads(json.dumps(body))
                return 201, {"id": ruleset_id, **st.rulesets[ruleset_id]}
        if m := re.fullmatch(r"/rulesets/(\d+)", rest):
            ruleset_id = int(m.group(1))
            if ruleset_id not in st.rulesets:
                return 404, {"message": "Not Found"}
            if method == "PUT":
                st.rulesets[ruleset_id] = json.loads(json.dumps(body))
            return 200, {"id": ruleset_id, **st.rulesets[ruleset_id]}
        if rest == "/actions/permissions/workflow":
            if method == "PUT":
                st.workflow_permissions = dict(body)
                return 204, None
            return 200, st.workflow_permissions
        if rest == "/actions/permissions/fork-pr-contributor-approval":
            if method == "PUT":
                st.fork_approval = dict(body)
                return 204, None
            return 200, st.fork_approval
        if rest == "/pages":
            if method == "GET":
                return (404, {"message": "Not Found"}) if st.pages is None else (200, st.pages)
            if method == "POST" and st.pages is not None:
                return 409, {"message": "GitHub Pages is already enabled."}
            st.pages = {
                "url": f"{self.api}/repos/{self.owner}/{self.repo}/pages",
                "build_type": body["build_type"],
                "html_url": f"https://{self.owner}.github.io/{self.repo}/",
            }
            return (201, st.pages) if method == "POST" else (204, None)
        if rest == "/actions/secrets":
            return 200, {"total_count": len(st.secrets), "secrets": [{"name": n} for n in sorted(st.secrets)]}
        if rest == "/actions/variables":
            if method == "POST":
                if body["name"] in st.variables:
                    return 409, {"message": "Already exists"}
                st.variables[body["name"]] = body["value"]
                return 201, {}
            return 200, {
                "total_count": len(st.variables),
                "variables": [{"name": n, "value": v} for n, v in sorted(st.variables.items())],
            }
        if rest == "/keys":
            if method == "POST":
                key = {
                    "id": self.next_id(),
                    "title": body["title"],
                    "key": body["key"].strip(),
                    "read_only": bool(body.get("read_only", True)),
                    "verified": True,
                }
                st.deploy_keys.append(key)
                return 201, key | {
                    "url": f"{self.api}/repos/{self.owner}/{self.repo}/keys/{key['id']}",
                    "created_at": "2026-09-01T10:00:00Z",
                }
            return 200, [
                k
                | {
                    "url": f"{self.api}/repos/{self.owner}/{self.repo}/keys/{k['id']}",
                    "created_at": "2026-09-01T10:00:00Z",
                }
                for k in st.deploy_keys
            ]
        if rest == "/actions/runners":
            return 200, {
                "total_count": len(st.runners),
                "runners": [
                    {
                        "id": r["id"],
                        "name": r["name"],
                        "os": "linux",
                        "status": "online",
                        "busy": False,
                        "labels": [
                            {
                                "id": i,
                                "name": n,
                                "type": "read-only" if n in ("self-hosted", "Linux", "X64") else "custom",
                            }
                            for i, n in enumerate(r["labels"])
                        ],
                    }
                    for r in st.runners
                ],
            }
        return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}

    def _labels_route(self, method: str, rest: str, body, who: Identity | None):
        st = self.settings
        if rest == "/labels" and method == "POST":
            if body["name"] in st.labels:
                return 422, {"message": "Validation Failed", "errors": [{"code": "already_exists"}]}
            st.labels[body["name"]] = {"color": body.get("color", "ededed"), "description": body.get("description")}
            return 201, self._label_json(body["name"])
        if m := re.fullmatch(r"/labels/(.+)", rest):
            name = urllib.parse.unquote(m.group(1))
            if method == "GET":
                return (200, self._label_json(name)) if name in st.labels else (404, {"message": "Not Found"})
        if rest == "/labels" and method == "GET":
            return 200, [self._label_json(n) for n in st.labels]
        return 404, {"message": "Not Found"}

    def _label_json(self, name: str) -> dict:
        label = self.settings.labels[name]
        return {
            "id": 1,
            "node_id": "LA",
            "url": f"{self.api}/repos/{self.owner}/{self.repo}/labels/{urllib.parse.quote(name)}",
            "name": name,
            "color": label["color"],
            "description": label["description"],
            "default": False,
        }

    def _render_env(self, env: str) -> dict:
        e = self.settings.environments[env]
        return {
            "id": 1,
            "name": env,
            "url": f"{self.api}/repos/{self.owner}/{self.repo}/environments/{env}",
            "protection_rules": [],
            "deployment_branch_policy": e["policy"],
        }

    # -- what the staff do with `gh` (secrets: values the API never returns) and runners -------
    def set_secret(self, name: str, value: str, environment: str | None = None) -> None:
        """`gh secret set NAME [--env ENV]`: an environment's must exist first, as on GitHub."""
        if environment is None:
            self.settings.secrets[name] = value
        else:
            self.settings.environments[environment]["secrets"][name] = value

    def register_runner(self, name: str, labels: tuple[str, ...]) -> None:
        """A runner as `config.sh --labels ...` registers it: its default labels and the custom ones."""
        self.settings.runners.append({"id": self.next_id(), "name": name, "labels": list(labels)})

    def secrets_for(self, environment: str | None) -> dict[str, str]:
        """What a job of that environment (None: none) receives: repository secrets, and its
        environment's, which override them."""
        out = dict(self.settings.secrets)
        if environment is not None:
            out |= self.settings.environments.get(environment, {"secrets": {}})["secrets"]
        return out

    def environment_allows(self, environment: str, ref: str) -> bool:
        """Whether a job on `ref` (refs/heads/NAME) may deploy to `environment`."""
        e = self.settings.environments.get(environment)
        if e is None:
            return True  # GitHub makes an environment named by a job, with no rules
        policy = e["policy"]
        if not policy:
            return True
        branch = ref.removeprefix("refs/heads/")
        return any(p["type"] == "branch" and p["name"] == branch for p in e["branch_policies"])

    # -- the rules on refs ------------------------------------------------------------------
    def rules_for(self, ref: str) -> list[tuple[dict, dict]]:
        """(ruleset, rule) of every active ruleset whose conditions take `ref`."""
        out = []
        for rs in self.settings.rulesets.values():
            if rs.get("enforcement") != "active" or rs.get("target", "branch") != "branch":
                continue
            names = rs.get("conditions", {}).get("ref_name", {})
            include = ["refs/heads/main" if n == "~DEFAULT_BRANCH" else n for n in names.get("include", [])]
            exclude = ["refs/heads/main" if n == "~DEFAULT_BRANCH" else n for n in names.get("exclude", [])]
            if ("~ALL" in include or ref in include) and ref not in exclude:
                out += [(rs, rule) for rule in rs.get("rules", [])]
        return out

    @staticmethod
    def bypasses(rs: dict, actor: Identity | dict, pull_request: bool = False) -> bool:
        for b in rs.get("bypass_actors", []):
            if b.get("bypass_mode") == "pull_request" and not pull_request:
                continue
            kind = b.get("actor_type")
            if isinstance(actor, dict):  # a deploy key
                if kind == "DeployKey":
                    return True
                continue
            if kind == "RepositoryRole" and b.get("actor_id") == 5 and actor.role == "admin":
                return True
            if kind == "Integration" and actor.app_id is not None and b.get("actor_id") == actor.app_id:
                return True
        return False

    def receive(self, credential: str, updates: list[tuple[str, str, str]]) -> dict:
        """A push to the bare repository: allowed, or refused with what GitHub says."""
        repo = f"{self.owner}/{self.repo}"
        if not credential:
            return {
                "allowed": False,
                "message": "fatal: could not read Username for 'https://github.com': "
                "terminal prompts disabled (no credentials were persisted)",
            }
        kind, _, value = credential.partition(":")
        actor: Identity | dict
        if kind == "ssh":
            key = next((k for k in self.settings.deploy_keys if k["key"].split()[:2] == value.split()[:2]), None)
            if key is None:
                return {"allowed": False, "message": "git@github.com: Permission denied (publickey)."}
            if key["read_only"]:
                return {
                    "allowed": False,
                    "message": "ERROR: The key you are authenticating with has been marked as read only.",
                }
            actor = key
        else:
            actor = self.identity(value)
            if actor.role == "read":
                return {"allowed": False, "message": f"Permission to {repo}.git denied to {actor.login}."}
        problems = []
        for old, new, ref in updates:
            violations = []
            for rs, rule in self.rules_for(ref):
                if self.bypasses(rs, actor):
                    continue
                kind = rule["type"]
                if kind == "deletion" and new == ZERO:
                    violations.append("Cannot delete this branch")
                elif kind == "non_fast_forward" and ZERO not in (old, new) and not self._ancestor(old, new):
                    violations.append("Cannot force-push to this branch")
                elif kind == "pull_request":
                    violations.append("Changes must be made through a pull request.")
                elif kind == "required_status_checks":
                    for check in rule["parameters"]["required_status_checks"]:
                        violations.append(f'Required status check "{check["context"]}" is expected.')
            if violations:
                problems.append(
                    f"error: GH013: Repository rule violations found for {ref}.\n"
                    f"Review all repository rules at https://github.com/{repo}/rules?ref="
                    f"{urllib.parse.quote(ref, safe='')}\n\n" + "\n\n".join(f"- {v}" for v in dict.fromkeys(violations))
                )
        if problems:
            return {"allowed": False, "message": "\n".join(problems)}
        return {"allowed": True, "message": ""}

    def _ancestor(self, old: str, new: str) -> bool:
        import subprocess

        return (
            subprocess.run(
                ["git", "-C", str(self.origin), "merge-base", "--is-ancestor", old, new],
                capture_output=True,
                timeout=60,
            ).returncode
            == 0
        )

    def attach_origin(self, origin: Path) -> None:
        """Make `origin` (a bare repository) GitHub's copy: every push to it is asked of this hub."""
        self.origin = origin
        git_in(origin, "config", "receive.advertisePushOptions", "true")
        hook = origin / "hooks" / "pre-receive"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(PRE_RECEIVE.replace("{api}", self.api).replace("{{", "{").replace("}}", "}"))
        hook.chmod(0o755)

    # -- pull requests from branches of the repository, and their merge ----------------------------
    def open_pull_from_branch(self, number: int, author: tuple[int, str], branch: str) -> Pull:
        """A pull request of `branch` (pushed to the origin) into main, its files served by the API."""
        assert self.origin is not None, "attach_origin first"
        head = git_in(self.origin, "rev-parse", branch if branch.startswith("refs/") else f"refs/heads/{branch}")
        base = git_in(self.origin, "merge-base", "refs/heads/main", head)
        changed = []
        for line in git_in(self.origin, "diff", "--name-status", "--no-renames", base, head).splitlines():
            status, path = line.split("\t", 1)
            changed.append((path, {"A": "added", "D": "removed"}.get(status, "modified")))
        # The API serves the head's whole tree, and the bytes of the files the pull request
        # changes (what the arena fetches of it); the rest of the repository is not its content.
        wanted = {path for path, status in changed if status != "removed"}
        files = {path: git_in_bytes(self.origin, "cat-file", "blob", f"{head}:{path}") for path in wanted}
        pull = self.add_pull(
            number, author, files, changed=sorted(wanted), removed=[p for p, st in changed if st == "removed"]
        )
        del self.trees[pull.head_sha]
        entries, dirs = [], set()
        for line in git_in(self.origin, "ls-tree", "-r", "-l", head).splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, sha, size = meta.split()
            entries.append(
                {"path": path, "mode": mode, "type": kind, "sha": sha, "size": None if size == "-" else int(size)}
            )
            parts = path.split("/")
            dirs |= {"/".join(parts[:i]) for i in range(1, len(parts))}
        for d in sorted(dirs):
            entries.append(
                {"path": d, "mode": "040000", "type": "tree", "sha": git_sha("tree", d.encode()), "size": None}
            )
        self.trees[head] = sorted(entries, key=lambda e: e["path"])
        pull.head_sha, pull.branch = head, branch
        return pull

    def merge_pull(self, number: int, who: Identity | None) -> tuple[int, object]:
        """PUT /pulls/{n}/merge: refused unless the rules on main are met; a merge commit on main."""
        pull = self.pulls.get(number)
        if pull is None:
            return 404, {"message": "Not Found"}
        if who is None or who.role not in ("write", "admin") or who.login == "token-holder":
            return 403, {"message": "Resource not accessible by integration"}
        if pull.merged:
            return 405, {"message": "Pull Request is not mergeable"}
        missing = []
        for rs, rule in self.rules_for("refs/heads/main"):
            if rule["type"] != "required_status_checks" or self.bypasses(rs, who, pull_request=True):
                continue
            for check in rule["parameters"]["required_status_checks"]:
                latest = [
                    s
                    for s, creator in zip(self.statuses, self.status_creators)
                    if s["sha"] == pull.head_sha
                    and s.get("context") == check["context"]
                    and (check.get("integration_id") != ACTIONS_APP_ID or creator == ACTIONS_BOT[1])
                ]
                if not latest or latest[-1]["state"] != "success":
                    missing.append(f'Required status check "{check["context"]}" is expected.')
        if missing:
            return 405, {
                "message": "Repository rule violations found\n\n" + "\n".join(missing),
                "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request",
            }
        if getattr(pull, "branch", None) and self.origin is not None:
            main = git_in(self.origin, "rev-parse", "refs/heads/main")
            if not self._ancestor(main, pull.head_sha):
                return 405, {"message": "Pull Request is not mergeable"}
            import os
            import subprocess

            # The fake's clock is the pull request's: the merge is dated as its head commit.
            when = git_in(self.origin, "log", "-1", "--format=%cI", pull.head_sha)
            env = os.environ | {
                "GIT_AUTHOR_NAME": who.login,
                "GIT_AUTHOR_EMAIL": f"{who.login}@users.noreply.github.com",
                "GIT_COMMITTER_NAME": "GitHub",
                "GIT_COMMITTER_EMAIL": "noreply@github.com",
                "GIT_AUTHOR_DATE": when,
                "GIT_COMMITTER_DATE": when,
            }
            sha = subprocess.run(
                [
                    "git",
                    "-C",
                    str(self.origin),
                    "commit-tree",
                    f"{pull.head_sha}^{{tree}}",
                    "-p",
                    main,
                    "-p",
                    pull.head_sha,
                    "-m",
                    f"Merge pull request #{number} from {pull.branch}",
                ],
                capture_output=True,
                text=True,
                check=True,
                env=env,
                timeout=60,
            ).stdout.strip()
            # Server side, as GitHub's merge: no pre-receive hook.
            git_in(self.origin, "update-ref", "refs/heads/main", sha, main)
            pull.merge_commit_sha = sha
        pull.merged = True
        return 200, {"sha": pull.merge_commit_sha, "merged": True, "message": "Pull Request successfully merged"}


def git_in_bytes(repo: Path, *args: str) -> bytes:
    import subprocess

    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, timeout=120).stdout


class FakeGitHub(GitHubRules):
    """The server's state: users, pulls, trees, blobs, events, comments, statuses."""

    def __init__(self, full_name: str = f"{OWNER}/{REPO}") -> None:
        self.owner, self.repo = full_name.split("/")
        self.users: dict[int, str] = {}
        self.pulls: dict[int, Pull] = {}
        self.trees: dict[str, list[dict]] = {}
        self.blobs: dict[str, bytes] = {}
        self.events: dict[int, list[dict]] = {}
        self.comments: dict[int, list[dict]] = {}
        self.statuses: list[dict] = []
        self.status_creators: list[str | None] = []  # who posted each of `statuses` (a token's identity)
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
        self.settings = RepoSettings()
        self.tokens: dict[str, Identity] = {}
        self.origin: Path | None = None  # the bare repository pushes reach (attach_origin)

    # -- life cycle ----------------------------------------------------------
    def __enter__(self) -> FakeGitHub:
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
            entries.append(
                {"path": d, "mode": "040000", "type": "tree", "sha": git_sha("tree", d.encode()), "size": None}
            )
        sha = git_sha("commit", json.dumps(entries, sort_keys=True).encode())
        self.trees[sha] = sorted(entries, key=lambda e: e["path"])
        return sha

    def add_pull(
        self,
        number: int,
        author: tuple[int, str],
        files: dict[str, bytes],
        changed: list[str] | None = None,
        labels: list[str] | None = None,
        merged: bool = False,
        modes: dict[str, str] | None = None,
        removed: list[str] | None = None,
    ) -> Pull:
        """A pull request whose head holds `files`; `changed` (default: all of them) are its changes."""
        head = self.add_commit(files, modes)
        self.users[author[0]] = author[1]
        changed_files = [
            {"filename": p, "status": "modified", "sha": git_sha("blob", files[p])}
            for p in (changed if changed is not None else sorted(files))
        ]
        changed_files += [{"filename": p, "status": "removed", "sha": "0" * 40} for p in removed or ()]
        pull = Pull(
            number, author, head, changed_files, list(labels or ()), merged, self.add_commit(files) if merged else None
        )
        if merged:
            pull.merge_commit_sha = hashlib.sha1(f"merge {number}".encode()).hexdigest()
        self.pulls[number] = pull
        return pull

    def add_label_event(self, number: int, event: str, label: str, actor: tuple[int, str], created_at: str) -> None:
        self.users[actor[0]] = actor[1]
        self.events.setdefault(number, []).append(
            {"id": self.next_id(), "event": event, "label": label, "actor": actor, "created_at": created_at}
        )

    def add_comment(self, number: int, author: tuple[int, str], body: str) -> int:
        comment_id = self.next_id()
        self.comments.setdefault(number, []).append(
            {"id": comment_id, "user": author, "body": body, "created_at": "2026-10-01T10:00:00Z"}
        )
        return comment_id

    # -- rendering -------------------------------------------------------------
    def _values(self, **extra) -> dict:
        return {"api": self.api, "owner": self.owner, "repo": self.repo} | extra

    def user(self, user_id: int, login: str) -> dict:
        kind = "Bot" if login.endswith("[bot]") else "User"
        return fill(fixture("user"), self._values(user_id=user_id, login=login, user_type=kind))

    def _labels(self, names: list[str]) -> list[dict]:
        return [fill(fixture("label"), self._values(name=n, name_quoted=urllib.parse.quote(n))) for n in names]

    def render_pull(self, pull: Pull) -> dict:
        return fill(
            fixture("pull_request"),
            self._values(
                number=pull.number,
                state="closed" if pull.merged else "open",
                login=pull.author[1],
                user=self.user(*pull.author),
                labels=self._labels(pull.labels),
                head_sha=pull.head_sha,
                merged=pull.merged,
                merged_at="2026-10-02T10:00:00Z" if pull.merged else None,
                merge_commit_sha=pull.merge_commit_sha,
                owner_user=self.user(1, self.owner),
                base_repo=self.render_repository(),
                head_repo=self.render_repository(),
            ),
        )

    def render_repository(self) -> dict:
        return fill(fixture("repository"), self._values(user=self.user(1, self.owner)))

    def render_issue(self, pull: Pull) -> dict:
        return fill(
            fixture("issue"),
            self._values(
                number=pull.number,
                state="closed" if pull.merged else "open",
                login=pull.author[1],
                user=self.user(*pull.author),
                labels=self._labels(pull.labels),
            ),
        )

    def render_comment(self, number: int, c: dict) -> dict:
        assoc = "NONE" if c["user"] == self.bot else "CONTRIBUTOR"
        return fill(
            fixture("issue_comment"),
            self._values(
                id=c["id"],
                number=number,
                body=c["body"],
                body_html=html.escape(c["body"]),
                user=self.user(*c["user"]),
                created_at=c["created_at"],
                association=assoc,
            ),
        )

    # -- routing ---------------------------------------------------------------
    def route(
        self, method: str, path: str, body: object, authed: bool, who: Identity | None = None
    ) -> tuple[int, object]:
        base = f"/repos/{self.owner}/{self.repo}"
        if path == "/_fakehub/receive" and method == "POST":
            return 200, self.receive(body["credential"], [tuple(u) for u in body["updates"]])
        if (m := re.fullmatch(r"/users/([^/]+)", path)) and method == "GET":
            login = urllib.parse.unquote(m.group(1))
            found = next((i for i, name in self.users.items() if name == login), None)
            return (200, self.user(found, login)) if found is not None else (404, {"message": "Not Found"})
        if not path.startswith(base):
            return 404, {"message": "Not Found"}
        rest = path[len(base) :]
        if method != "GET" and not authed:
            return 401, {"message": "Requires authentication"}
        if method == "GET" and rest == "":
            return 200, self.render_repository()
        if method != "GET" and who is not None and who.role == "read":
            return 403, {
                "message": "Resource not accessible by integration",
                "documentation_url": "https://docs.github.com/rest",
            }
        settled = self.route_settings(method, rest, body, who)
        if settled is not None:
            return settled
        if (m := re.fullmatch(r"/pulls/(\d+)/merge", rest)) and method == "PUT":
            return self.merge_pull(int(m.group(1)), who)
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pull = self.pulls.get(int(m.group(1)))
            return (200, self.render_pull(pull)) if pull else (404, {"message": "Not Found"})
        if m := re.fullmatch(r"/pulls/(\d+)/files", rest):
            pull = self.pulls[int(m.group(1))]
            return 200, [
                fill(
                    fixture("pull_request_file"),
                    self._values(sha=f["sha"], filename=f["filename"], status=f["status"], head_sha=pull.head_sha),
                )
                for f in pull.changed
            ]
        if m := re.fullmatch(r"/git/trees/(\w+)", rest):
            entries = self.trees.get(m.group(1))
            if entries is None:
                return 404, {"message": "Not Found"}
            return 200, fill(
                fixture("git_tree"),
                self._values(
                    sha=m.group(1), entries=[fill(fixture("git_tree_entry"), self._values(**e)) for e in entries]
                ),
            )
        if m := re.fullmatch(r"/git/blobs/(\w+)", rest):
            data = self.blobs.get(m.group(1))
            if data is None:
                return 404, {"message": "Not Found"}
            return 200, fill(
                fixture("git_blob"),
                self._values(sha=m.group(1), size=len(data), content=base64.encodebytes(data).decode()),
            )
        if m := re.fullmatch(r"/issues/(\d+)", rest):
            pull = self.pulls.get(int(m.group(1)))
            return (200, self.render_issue(pull)) if pull else (404, {"message": "Not Found"})
        if m := re.fullmatch(r"/issues/(\d+)/events", rest):
            return 200, [
                fill(
                    fixture("issue_event"),
                    self._values(
                        id=e["id"],
                        event=e["event"],
                        label=e["label"],
                        user=self.user(*e["actor"]),
                        created_at=e["created_at"],
                    ),
                )
                for e in self.events.get(int(m.group(1)), [])
            ]
        if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "GET":
            number = int(m.group(1))
            return 200, [self.render_comment(number, c) for c in self.comments.get(number, [])]
        if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "POST":
            number = int(m.group(1))
            comment = {
                "id": self.next_id(),
                "user": self.bot,
                "body": body["body"],
                "created_at": "2026-10-03T10:00:00Z",
            }
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
            self.status_creators.append(who.login if who else None)
            return 201, fill(
                fixture("status"),
                self._values(
                    sha=m.group(1),
                    id=self.next_id(),
                    state=body["state"],
                    description=body.get("description"),
                    target_url=body.get("target_url"),
                    context=body.get("context"),
                    created_at="2026-10-03T10:00:00Z",
                    user=self.user(*self.bot),
                ),
            )
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
                    auth = self.headers.get("Authorization") or ""
                    who = hub.identity(auth.split(" ", 1)[-1]) if auth else None
                    status, data = hub.route(self.command, path, body, bool(auth), who)
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

        return Handler

    # -- assertions --------------------------------------------------------------
    def posted(self, method: str, pattern: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]
