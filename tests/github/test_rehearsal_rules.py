"""The act runs meet GitHub's rules as the fake applies them (tests/github/act_harness.py's
`as_github_runs`): which jobs a registered runner takes, and which secrets each job reads."""

from __future__ import annotations

from pathlib import Path

import yaml

from grader.github.setup import ENVIRONMENTS, commands_labels
from tests.github.act_harness import as_github_runs
from tests.github.fakehub import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"

WORKFLOW = """name: x
on:
  pull_request:
jobs:
  hosted:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ secrets.ARENA_SUBMISSION_KEY }}"
  smoke:
    runs-on: [self-hosted, linux, arena-smoke, ephemeral]
    steps:
      - run: echo hi
  final:
    runs-on: [self-hosted, linux, arena-round]
    environment: ${{ inputs.tier == 'final' && 'arena-final' || 'arena-rounds' }}
    steps:
      - run: echo "${{ secrets.ARENA_FINAL_SEED }} ${{ secrets.ARENA_LADDER_SEED }} ${{ secrets.GITHUB_TOKEN }}"
"""


def hub_with_settings() -> FakeGitHub:
    hub = FakeGitHub()
    hub.set_secret("ARENA_SUBMISSION_KEY", "s")
    for env, names in ENVIRONMENTS.items():
        hub.settings.environments[env] = {
            "policy": {"protected_branches": False, "custom_branch_policies": True},
            "branch_policies": [{"id": 1, "name": "main", "type": "branch"}],
            "secrets": {n: f"{n}@{env}" for n in names},
        }
    for labels in commands_labels((ROOT / "docs" / "runners.md").read_text()):
        hub.register_runner("r", labels)
    return hub


def jobs(text: str) -> dict:
    return yaml.safe_load(text)["jobs"]


def test_the_documented_runners_take_every_job_of_the_workflows():
    hub = hub_with_settings()
    for path in WORKFLOWS.glob("*.yml"):
        text, untaken = as_github_runs(path.read_text(), hub, {"tier": "final"}, fork=False)
        assert untaken == [], f"{path.name}: {untaken}"
        assert yaml.safe_load(text) == yaml.safe_load(path.read_text())  # the final tier's jobs see their secrets


def test_a_job_no_runner_takes_never_starts_and_secrets_follow_the_environment():
    hub = hub_with_settings()
    text, untaken = as_github_runs(WORKFLOW, hub, {"tier": "ladder"}, fork=False)
    assert untaken == ["smoke"]  # `ephemeral` is no runner's label
    got = jobs(text)
    assert got["smoke"]["runs-on"] == "no-registered-runner-has-these-labels"
    assert "secrets.ARENA_SUBMISSION_KEY" in got["hosted"]["steps"][0]["run"]
    run = got["final"]["steps"][0]["run"]
    assert "NOT_GIVEN_TO_THIS_JOB_ARENA_FINAL_SEED" in run  # a ladder round: arena-rounds has no final seed
    assert "secrets.ARENA_LADDER_SEED" in run and "secrets.GITHUB_TOKEN" in run
    final = jobs(as_github_runs(WORKFLOW, hub, {"tier": "final"}, fork=False)[0])["final"]["steps"][0]["run"]
    assert "secrets.ARENA_FINAL_SEED" in final and "NOT_GIVEN" not in final


def test_a_fork_pull_request_gets_no_secrets_and_an_environment_off_main_none_of_its_own():
    hub = hub_with_settings()
    text, _ = as_github_runs(WORKFLOW, hub, {"tier": "final"}, fork=True)
    got = jobs(text)
    assert "NOT_GIVEN_TO_THIS_JOB_ARENA_SUBMISSION_KEY" in got["hosted"]["steps"][0]["run"]
    assert "secrets.GITHUB_TOKEN" in got["final"]["steps"][0]["run"]  # the token stays: read-only (Act.run)
    hub.settings.environments["arena-final"]["branch_policies"] = [{"id": 2, "name": "dev", "type": "branch"}]
    final = jobs(as_github_runs(WORKFLOW, hub, {"tier": "final"}, fork=False)[0])["final"]["steps"][0]["run"]
    assert "NOT_GIVEN_TO_THIS_JOB_ARENA_FINAL_SEED" in final


def test_a_read_only_token_cannot_write():
    import urllib.error
    import urllib.request

    with FakeGitHub() as hub:
        hub.add_token("ghs_fork", "github-actions[bot]", 41898282, role="read")
        req = urllib.request.Request(
            f"{hub.api}/repos/arena-org/arena/statuses/{'a' * 40}",
            method="POST",
            data=b'{"state": "success", "context": "arena/submission"}',
            headers={"Authorization": "token ghs_fork"},
        )
        try:
            urllib.request.urlopen(req, timeout=30)
            raise AssertionError("a read-only token wrote a status")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403 and b"Resource not accessible by integration" in exc.read()
        assert hub.statuses == []
