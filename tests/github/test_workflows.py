"""The workflows: every one parses and passes actionlint, and the security rules of
docs/security.md hold in them (checked structurally, so a later edit cannot quietly break one)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
WRITE = {"write"}


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def actionlint() -> str | None:
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    return found


def test_there_are_the_workflows_of_the_design():
    assert {p.name for p in WORKFLOWS} == {"submission.yml", "score.yml", "round.yml", "site.yml", "competition.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_parses_with_no_default_permissions(path):
    data = load(path)
    assert data["name"] and data["on"] and data["jobs"]
    assert data["permissions"] == {}, "every job must ask for the permissions it needs"
    for name, job in data["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} declares no permissions"


def test_workflows_validate_against_the_workflow_schema():
    """SchemaStore's GitHub workflow schema, vendored by check-jsonschema (a test dependency):
    actionlint itself has no package here that installs without a download at build time."""
    binary = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    assert binary, "check-jsonschema is part of the test set-up (pyproject's test extra)"
    done = subprocess.run(
        [binary, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_passes_where_installed():
    binary = actionlint()
    if binary is None:
        pytest.skip("actionlint is not on PATH: the workflow schema test above stands in for it")
    done = subprocess.run(
        [binary, "-format", "{{json .}}", *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    errors = json.loads(done.stdout or "[]")
    assert not errors, "\n".join(f"{e['filepath']}:{e['line']}: {e['message']}" for e in errors)
    assert done.returncode == 0, done.stderr


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def checkouts(job: dict) -> list[dict]:
    return [s for s in steps(job) if str(s.get("uses", "")).startswith("actions/checkout")]


def writes(job: dict) -> bool:
    perms = job.get("permissions") or {}
    return perms == "write-all" or any(v in WRITE for v in perms.values())


def runs_submission(job: dict) -> bool:
    text = json.dumps(steps(job))
    return any(word in text for word in ('arena\\" smoke', "arena smoke", '\\" round ', '\\" field ', 'smoke \\"'))


def test_no_workflow_trusts_a_pull_request_workflow():
    for path in WORKFLOWS:
        triggers = load(path)["on"]
        assert "pull_request" not in triggers, f"{path.name}: a pull_request workflow can be rewritten by the PR"


def test_every_checkout_is_mains_code():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            for step in checkouts(job):
                ref = (step.get("with") or {}).get("ref", "")
                assert ref in ("${{ github.event.repository.default_branch }}", "${{ needs.field.outputs.commit }}"), (
                    f"{path.name}: job {name} checks out {ref!r}"
                )
                assert "pull_request.head" not in json.dumps(step) and "head_ref" not in json.dumps(step)


def test_submission_code_runs_only_where_nothing_is_writable():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            if runs_submission(job):
                assert not writes(job), f"{path.name}: job {name} runs a submission and holds a write token"
                # The arena's own runners, registered --ephemeral (a mode, not a label: docs/runners.md).
                assert "self-hosted" in job["runs-on"] and {"arena-smoke", "arena-round"} & set(job["runs-on"]), (
                    f"{path.name}: job {name} runs a submission off the arena's self-hosted runners"
                )
                assert "ssh-key" not in json.dumps(job), f"{path.name}: job {name} runs a submission with the push key"


KEY_SECRET = "${{ secrets.ARENA_SUBMISSION_KEY }}"


def key_steps(path) -> list[tuple[str, str]]:
    """(job, step name) of every step of a workflow that is given the submission key."""
    return [
        (name, step.get("name", ""))
        for name, job in load(path)["jobs"].items()
        for step in steps(job)
        if "ARENA_SUBMISSION_KEY" in json.dumps(step)
    ]


def test_the_pull_request_smoke_job_holds_no_secret_but_the_key_in_one_step_and_no_cache():
    data = load(ROOT / ".github" / "workflows" / "submission.yml")
    assert list(data["on"]) == ["pull_request_target"]
    smoke = data["jobs"]["smoke"]
    assert smoke["permissions"] == {} and "environment" not in smoke and "env" not in smoke
    assert "github.token" not in json.dumps(smoke)
    # The submission key: in the env of the one step that opens and plays the submission, no other.
    (opener,) = [s for s in steps(smoke) if "secrets." in json.dumps(s)]
    assert opener["env"] == {"ARENA_SUBMISSION_KEY": KEY_SECRET} and '/arena" smoke ' in opener["run"]
    assert key_steps(ROOT / ".github" / "workflows" / "submission.yml") == [("smoke", opener["name"])]
    for job in data["jobs"].values():
        assert not any("actions/cache" in str(s.get("uses", "")) for s in steps(job))
        if job is not smoke:
            assert "secrets." not in json.dumps(job)
    # Only the report job can write, and it runs nothing of the pull request.
    assert [n for n, j in data["jobs"].items() if writes(j)] == ["report"]
    for step in checkouts(smoke) + checkouts(data["jobs"]["collect"]) + checkouts(data["jobs"]["report"]):
        assert step["with"]["persist-credentials"] is False


def test_untrusted_text_never_reaches_a_shell_line():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            for step in steps(job):
                script = step.get("run", "")
                for field in ("comment.body", "pull_request.title", "pull_request.body", "head_ref", "issue.title"):
                    assert field not in script, f"{path.name}: job {name} puts {field} in a shell line"


def test_rounds_share_one_commit_and_start_from_main_now():
    jobs = load(ROOT / ".github" / "workflows" / "round.yml")["jobs"]
    assert checkouts(jobs["field"])[0]["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    for name in ("shard", "merge"):
        assert checkouts(jobs[name])[0]["with"]["ref"] == "${{ needs.field.outputs.commit }}"
    assert "require-staff" in json.dumps(steps(jobs["field"]))
    assert jobs["site"]["uses"] == "./.github/workflows/site.yml"


def test_zizmor_finds_nothing_above_low_that_is_not_explained():
    """zizmor (a test dependency) audits the workflows offline; an accepted finding carries its
    reason in zizmor's own ignore comment beside the line, so the reason is read with the code."""
    binary = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    assert binary, "zizmor is part of the test set-up (pyproject's test extra)"
    done = subprocess.run(
        [binary, "--offline", "--min-severity", "medium", "--format", "plain", str(ROOT / ".github" / "workflows")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if "zizmor: ignore[" in line:
                reason = line.split("zizmor: ignore[", 1)[1].split("]", 1)[1].strip(" ()-")
                assert len(reason) > 20, f"{path.name}: an ignored finding without its reason: {line.strip()}"


def test_every_action_is_pinned_to_a_commit():
    for path in WORKFLOWS:
        for job in load(path)["jobs"].values():
            for step in steps(job):
                uses = step.get("uses")
                if uses and not uses.startswith("./"):
                    assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses} is not pinned"


def test_no_job_gets_the_whole_secrets_context_and_no_expression_is_expanded_in_a_shell_line():
    for path in WORKFLOWS:
        text = path.read_text()
        assert "secrets[" not in text and "toJSON(secrets" not in text, f"{path.name}: a computed secret name"
        for name, job in load(path)["jobs"].items():
            for step in steps(job):
                assert "${{" not in step.get("run", ""), f"{path.name}: job {name} expands an expression in run:"


def test_no_concurrency_group_can_drop_a_request_or_its_result():
    """A group keeps one pending job and cancels an older pending one: a /score or a played
    round's record lost. The writers of the request log push with a retry instead."""
    data = load(ROOT / ".github" / "workflows" / "score.yml")
    assert "concurrency" not in data, "a workflow-level group lets a newer queued run cancel the pending one"
    for name, job in data["jobs"].items():
        assert "concurrency" not in job, name
    for name in ("request", "finish"):
        text = json.dumps(steps(data["jobs"][name]))
        assert '--push \\"$MAIN\\"' in text, name
        assert "git push" not in text, f"{name}: a push without the retry"


def test_staff_gates_check_the_triggering_actor():
    for path, job in (("round.yml", "field"), ("competition.yml", "update")):
        text = json.dumps(steps(load(ROOT / ".github" / "workflows" / path)["jobs"][job]))
        assert '--triggering-actor \\"$GITHUB_TRIGGERING_ACTOR\\"' in text, path
