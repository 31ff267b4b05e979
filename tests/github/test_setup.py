"""`arena github setup` against the fake GitHub, and the rules it configures as the fake
enforces them: who may push to main, what a merge needs, which runner takes which job."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from grader.github.setup import (
    ENVIRONMENTS,
    PUSH_KEY_SECRET,
    PUSH_KEY_TITLE,
    REPOSITORY_SECRETS,
    RULESET_NAME,
    commands_labels,
    jobs_runs_on,
    runner_labels,
    untaken_jobs,
)
from tests.github.fakehub import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
ADMIN = "ghp_admin_token"
REPO = "course/arena"


def checkout(tmp_path: Path) -> Path:
    """The files setup reads from a clone: the workflows, site.yaml, the competition's config."""
    root = tmp_path / "clone"
    shutil.copytree(WORKFLOWS, root / ".github" / "workflows")
    (root / "config").mkdir()
    shutil.copy(ROOT / "config" / "competition.yaml", root / "config")
    shutil.copy(ROOT / "site.yaml", root / "site.yaml")
    return root


def setup(clone: Path, hub: FakeGitHub, monkeypatch, capsys, *extra: str) -> tuple[int, str]:
    monkeypatch.setenv("GITHUB_TOKEN", ADMIN)
    monkeypatch.setenv("GITHUB_API_URL", hub.api)
    capsys.readouterr()
    code = main(["github", "setup", "--repo", REPO, "--checkout", str(clone), *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


def keypair(tmp_path: Path, name: str = PUSH_KEY_TITLE) -> tuple[str, str]:
    path = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    return path.read_text(), Path(f"{path}.pub").read_text()


def do_what_staff_do(hub: FakeGitHub, tmp_path: Path, push_public: str) -> None:
    """The commands setup lists under "Still to do": the secrets and the deploy key."""
    hub.settings.deploy_keys.append({"id": 7, "title": PUSH_KEY_TITLE, "key": push_public.strip(), "read_only": False})
    for name in REPOSITORY_SECRETS:
        hub.set_secret(name, f"value of {name}")
    for env, names in ENVIRONMENTS.items():
        for name in names:
            hub.set_secret(name, f"value of {name} in {env}", environment=env)


@pytest.fixture
def course():
    with FakeGitHub(REPO) as server:
        server.add_token(ADMIN, "prof-x", 9001, role="admin")
        yield server


def test_dry_run_prints_the_plan_and_calls_nothing(course, tmp_path, monkeypatch, capsys):
    clone = checkout(tmp_path)
    code, out = setup(clone, course, monkeypatch, capsys, "--dry-run")
    assert code == 0, out
    assert course.requests == []
    for item in (
        "arena: staff reviewed",
        "arena-final",
        "ARENA_FINAL_SEED",
        RULESET_NAME,
        "arena/submission",
        "read-only",
        "outside contributors",
        "workflow (site.yml)",
        "ARENA_REQUESTED_BUDGET",
        "ARENA_REQUESTED_ENVS",
        f"https://github.com/{REPO}",
        "--labels arena-smoke --ephemeral",
        "--labels arena-round --ephemeral",
    ):
        assert item in out, item
    assert "repository: null" in (clone / "site.yaml").read_text()  # nothing written either


def test_setup_makes_the_repository_and_a_second_run_changes_nothing(course, tmp_path, monkeypatch, capsys):
    clone = checkout(tmp_path)
    code, out = setup(clone, course, monkeypatch, capsys)
    assert code == 1, out  # the secrets and the push key are staff's to make
    assert "Still to do" in out and f"gh secret set {PUSH_KEY_SECRET} --env arena-final" in out
    assert f"gh repo deploy-key add {PUSH_KEY_TITLE}.pub --allow-write" in out
    st = course.settings
    assert "arena: staff reviewed" in st.labels
    assert set(st.environments) == set(ENVIRONMENTS)
    assert all([p["name"] for p in e["branch_policies"]] == ["main"] for e in st.environments.values())
    (ruleset,) = st.rulesets.values()
    assert ruleset["bypass_actors"] == [{"actor_id": None, "actor_type": "DeployKey", "bypass_mode": "always"}]
    assert st.workflow_permissions["default_workflow_permissions"] == "read"
    assert st.fork_approval == {"approval_policy": "all_external_contributors"}
    assert st.pages["build_type"] == "workflow"
    assert st.variables["ARENA_REQUESTED_BUDGET"] == "2000" and st.variables["ARENA_REQUESTED_ENVS"]
    site = yaml.safe_load((clone / "site.yaml").read_text())
    assert site["kit"]["repository"] == f"https://github.com/{REPO}"
    assert "# The starter kit" in (clone / "site.yaml").read_text()  # comments kept

    _, public = keypair(tmp_path)
    do_what_staff_do(course, tmp_path, public)
    st.variables["ARENA_SUBMISSION_PUBLIC_KEY"] = "k"
    course.requests.clear()
    code, out = setup(clone, course, monkeypatch, capsys)
    assert code == 0 and "changed" not in out and "is ready for the workflows" in out, out
    assert [r for r in course.requests if r.method != "GET"] == []  # nothing left to change
    code, again = setup(clone, course, monkeypatch, capsys)
    assert code == 0 and again == out


def test_setup_refuses_a_second_deploy_key_with_write_access(course, tmp_path, monkeypatch, capsys):
    clone = checkout(tmp_path)
    setup(clone, course, monkeypatch, capsys)
    _, public = keypair(tmp_path)
    do_what_staff_do(course, tmp_path, public)
    course.settings.deploy_keys.append({"id": 8, "title": "someone's", "key": "ssh-ed25519 AAAAx", "read_only": False})
    code, out = setup(clone, course, monkeypatch, capsys)
    assert code == 1 and "(id 8) has write access" in out and "deploy-key delete 8" in out


def test_setup_needs_an_administrators_token(course, tmp_path, monkeypatch, capsys):
    course.add_token("ghp_writer", "ta", 9002, role="write")
    clone = checkout(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_writer")
    monkeypatch.setenv("GITHUB_API_URL", course.api)
    assert main(["github", "setup", "--repo", REPO, "--checkout", str(clone)]) == 1
    assert "Must have admin rights" in capsys.readouterr().err
    assert main(["github", "setup", "--repo", "not-a-repo", "--checkout", str(clone), "--dry-run"]) == 1


# -- runners: every job can be taken ------------------------------------------------------


def documented_runners() -> dict[str, list[tuple[str, ...]]]:
    out = {}
    for page in ("docs/runners.md", "docs/deploy.md"):
        out[page] = commands_labels((ROOT / page).read_text())
    return out


def test_every_job_is_taken_by_the_documented_runners(tmp_path, monkeypatch, capsys):
    jobs = jobs_runs_on(WORKFLOWS)
    assert any("ephemeral" not in labels and "arena-round" in labels for labels in jobs.values())
    for page, runners in documented_runners().items():
        assert runners, f"{page} registers no runner with config.sh"
        assert untaken_jobs(WORKFLOWS, runners) == [], page
        assert all("ephemeral" not in r for r in runners), f"{page}: --ephemeral is a mode, not a label"
    code, out = setup(checkout(tmp_path), FakeGitHub(REPO), monkeypatch, capsys, "--dry-run")
    assert untaken_jobs(WORKFLOWS, commands_labels(out)) == [] and len(commands_labels(out)) == 2
    # round.yml's merge job is a self-hosted job like the others
    assert jobs["round.yml:merge"] == ("self-hosted", "linux", "arena-round")


def test_a_job_asking_for_a_label_no_runner_has_is_reported(tmp_path):
    folder = tmp_path / "workflows"
    folder.mkdir()
    (folder / "x.yml").write_text(
        "jobs:\n  a:\n    runs-on: [self-hosted, linux, arena-round, ephemeral]\n  b:\n    runs-on: ubuntu-latest\n"
    )
    runners = [runner_labels("arena-round")]
    assert untaken_jobs(folder, runners) == ["x.yml:a (self-hosted, linux, arena-round, ephemeral)"]
    assert commands_labels("./config.sh --url u --token t \\\n  --ephemeral --labels arena-smoke") == [
        ("self-hosted", "linux", "x64", "arena-smoke")
    ]


# -- the routes to main ---------------------------------------------------------------------


def git(cwd: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ
        | {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org",
        }
        | (env or {}),
    )
    if check and done.returncode:
        raise AssertionError(done.stderr)
    return done


@pytest.fixture
def protected(course, tmp_path, monkeypatch, capsys):
    """A configured repository with its bare origin attached, and a clone of it."""
    clone = checkout(tmp_path)
    assert setup(clone, course, monkeypatch, capsys)[0] == 1  # the environments exist; their secrets not yet
    private, public = keypair(tmp_path)
    do_what_staff_do(course, tmp_path, public)
    course.settings.variables["ARENA_SUBMISSION_PUBLIC_KEY"] = "k"
    assert setup(clone, course, monkeypatch, capsys)[0] == 0
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("arena\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    git(work, "push", "-q", str(origin), "main")  # before the rules: the repository's first commit
    course.attach_origin(origin)
    git(work, "remote", "add", "origin", str(origin))
    return course, work, private


def push(work: Path, credential: str, ref: str = "main", force: bool = False) -> subprocess.CompletedProcess:
    (work / "notes.md").write_text(f"change {os.urandom(4).hex()}\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "a change")
    return git(
        work,
        "push",
        *(["--force"] if force else []),
        "-o",
        f"arena-credential={credential}",
        "origin",
        f"HEAD:{ref}",
        check=False,
    )


def ssh_credential(private: str, tmp_path: Path) -> str:
    key = tmp_path / "k"
    key.write_text(private)
    key.chmod(0o600)
    return (
        "ssh:"
        + subprocess.run(
            ["ssh-keygen", "-y", "-f", str(key)], capture_output=True, text=True, check=True
        ).stdout.strip()
    )


def test_only_the_arena_push_key_pushes_to_main(protected, tmp_path):
    hub, work, private = protected
    hub.add_token("ghp_staff", "prof-x", 9001, role="admin")
    hub.add_token("ghp_student", "alice-gh", 2001, role="read")
    for credential in ("token:ghp_staff", "token:ghs_workflow_token", ""):
        refused = push(work, credential)
        assert refused.returncode != 0, credential
        git(work, "reset", "-q", "--hard", "HEAD~1")
    refused = push(work, "token:ghp_staff")
    assert "GH013: Repository rule violations found for refs/heads/main" in refused.stderr
    assert "Changes must be made through a pull request." in refused.stderr
    assert 'Required status check "arena/submission" is expected.' in refused.stderr
    assert "pre-receive hook declined" in refused.stderr
    git(work, "reset", "-q", "--hard", "HEAD~1")
    assert "Permission to course/arena.git denied" in push(work, "token:ghp_student").stderr
    git(work, "reset", "-q", "--hard", "HEAD~1")
    assert push(work, ssh_credential(private, tmp_path)).returncode == 0  # the workflows' route
    other, _ = keypair(tmp_path, "stranger")
    assert "Permission denied (publickey)" in push(work, ssh_credential(other, tmp_path)).stderr


def test_staff_changes_merge_by_pull_request_once_the_status_is_green(protected, tmp_path):
    hub, work, _ = protected
    hub.add_token("ghp_staff", "prof-x", 9001, role="admin")
    hub.add_token("ghp_student", "alice-gh", 2001, role="read")
    assert push(work, "token:ghp_staff", ref="docs-change").returncode == 0  # a branch is not protected
    pull = hub.open_pull_from_branch(40, (9001, "prof-x"), "docs-change")
    assert [f["filename"] for f in pull.changed] == ["notes.md"]
    merge = f"/repos/{REPO}/pulls/40/merge"
    assert request(hub, "PUT", merge, "ghp_staff")[0] == 405  # no status yet
    # A status posted by anyone but a workflow (GitHub Actions' app) does not count.
    request(
        hub,
        "POST",
        f"/repos/{REPO}/statuses/{pull.head_sha}",
        "ghp_staff",
        {"state": "success", "context": "arena/submission"},
    )
    assert request(hub, "PUT", merge, "ghp_staff")[0] == 405
    request(
        hub,
        "POST",
        f"/repos/{REPO}/statuses/{pull.head_sha}",
        "ghs_workflow",
        {"state": "success", "context": "arena/submission", "description": "a change by staff"},
    )
    assert request(hub, "PUT", merge, "ghp_student")[0] == 403  # a student cannot merge
    code, body = request(hub, "PUT", merge, "ghp_staff")
    assert code == 200, body
    log = git(work, "--git-dir", str(hub.origin), "log", "--format=%s", "main").stdout.splitlines()
    assert log[0] == "Merge pull request #40 from docs-change"


def request(hub: FakeGitHub, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    import json
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        hub.api + path,
        method=method,
        data=json.dumps(body or {}).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_secrets_reach_a_job_only_in_its_environment(course):
    course.set_secret("ARENA_SUBMISSION_KEY", "s")
    course.settings.environments["arena-final"] = {
        "policy": {"custom_branch_policies": True},
        "branch_policies": [{"name": "main", "type": "branch"}],
        "secrets": {"ARENA_FINAL_SEED": "f"},
    }
    assert "ARENA_FINAL_SEED" not in course.secrets_for(None)
    assert "ARENA_FINAL_SEED" not in course.secrets_for("arena-rounds")
    assert course.secrets_for("arena-final") == {"ARENA_SUBMISSION_KEY": "s", "ARENA_FINAL_SEED": "f"}
    assert course.environment_allows("arena-final", "refs/heads/main")
    assert not course.environment_allows("arena-final", "refs/heads/try-a-workflow")


def test_every_secret_a_job_reads_is_one_its_environment_gives(tmp_path):
    """What setup configures serves the workflows: a job reads only repository secrets and
    those of the environment it names (each `cond && 'a' || 'b'` environment, both ways)."""
    problems = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        data = yaml.safe_load(path.read_text())
        for name, job in data["jobs"].items():
            env = job.get("environment")
            env = env.get("name") if isinstance(env, dict) else env
            envs = re.findall(r"(?:&&|\|\|)\s*'([\w-]+)'", env) if env and "${{" in env else [env]
            text = yaml.safe_dump(job)
            for secret in set(re.findall(r"secrets\.(\w+)", text)) - {"GITHUB_TOKEN"}:
                for e in envs:
                    given = set(REPOSITORY_SECRETS) | set(ENVIRONMENTS.get(e, ()))
                    final_only = secret == "ARENA_FINAL_SEED" and e != "arena-final" and "'final'" in text
                    if secret not in given and not final_only:
                        problems.append(f"{path.name}:{name} reads {secret} in environment {e}")
    assert problems == []


def test_a_push_the_rules_refuse_fails_at_once_and_says_why(protected):
    """A workflow's push with the job's token (not the push key) is refused for good: no retry."""
    from grader.github.push import PushError, commit_and_push

    hub, work, _ = protected
    git(work, "config", "push.pushOption", "arena-credential=token:ghs_workflow_token")

    def change() -> list[str]:
        (work / "requests.txt").write_text("a request\n")
        return ["requests.txt"]

    with pytest.raises(PushError, match="GH013: Repository rule violations found for refs/heads/main"):
        commit_and_push(work, "main", change, "requested run queued")
    assert len(hub.posted("POST", "/_fakehub/receive")) == 1


def test_setup_puts_back_what_was_changed_by_hand(course, tmp_path, monkeypatch, capsys):
    clone = checkout(tmp_path)
    setup(clone, course, monkeypatch, capsys)
    st = course.settings
    (ruleset_id,) = st.rulesets
    st.rulesets[ruleset_id]["rules"].reverse()  # GitHub's own order: not a change
    code, out = setup(clone, course, monkeypatch, capsys)
    assert f"ok       ruleset '{RULESET_NAME}'" in out, out
    st.rulesets[ruleset_id]["enforcement"] = "disabled"
    st.rulesets[ruleset_id]["bypass_actors"].append(
        {"actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"}
    )
    st.workflow_permissions["default_workflow_permissions"] = "write"
    st.pages["build_type"] = "legacy"
    st.environments["arena-final"]["branch_policies"].append({"id": 1, "name": "dev", "type": "branch"})
    code, out = setup(clone, course, monkeypatch, capsys)
    assert f"changed  ruleset '{RULESET_NAME}' updated" in out
    assert st.rulesets[ruleset_id]["enforcement"] == "active" and len(st.rulesets[ruleset_id]["bypass_actors"]) == 1
    assert "changed  actions: default workflow token read-only" in out
    assert st.pages["build_type"] == "workflow"
    assert "environment arena-final is also deployable from dev" in out and code == 1


@pytest.mark.parametrize(
    "author,path,verdicts",
    [
        ((9001, "prof-x"), "grader/x.py", ["success"]),  # staff's code: "a change by staff to the arena"
        ((2001, "alice-gh"), "submissions/alice/manifest.yaml", ["failure", "pending", "success"]),  # a student's
    ],
)
def test_a_pull_request_merges_only_on_a_green_status_from_the_check(protected, author, path, verdicts):
    hub, work, _ = protected
    hub.add_token("ghp_staff", "prof-x", 9001, role="admin")
    (work / path).parent.mkdir(parents=True, exist_ok=True)
    (work / path).write_text("change\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", f"change {path}")
    # A fork's head, as GitHub keeps it in the base repository: no push to any branch of it.
    git(work, "--git-dir", str(hub.origin), "fetch", "-q", str(work), "HEAD:refs/pull/41/head")
    pull = hub.open_pull_from_branch(41, author, "refs/pull/41/head")
    merge = f"/repos/{REPO}/pulls/41/merge"
    for state in verdicts:
        assert request(hub, "PUT", merge, "ghp_staff")[0] == 405
        request(
            hub,
            "POST",
            f"/repos/{REPO}/statuses/{pull.head_sha}",
            "ghs_workflow",
            {"state": state, "context": "arena/submission"},
        )
    assert request(hub, "PUT", merge, "ghp_staff")[0] == 200
    assert git(work, "--git-dir", str(hub.origin), "show", f"main:{path}").stdout == "change\n"


def test_a_read_only_deploy_key_does_not_push(protected, tmp_path):
    hub, work, private = protected
    other, public = keypair(tmp_path, "reader")
    hub.settings.deploy_keys.append({"id": 9, "title": "reader", "key": public.strip(), "read_only": True})
    assert "marked as read only" in push(work, ssh_credential(other, tmp_path)).stderr


def test_every_arena_command_of_the_deploy_page_parses():
    import shlex

    from grader.cli.main import build_parser

    page = (ROOT / "docs" / "deploy.md").read_text()
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", page, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].replace("GITHUB_TOKEN=$(gh auth token) ", "")
            words = shlex.split(re.sub(r'"\$\(gh api users/LOGIN --jq \.id\)"', "583231", line), comments=True)
            if words and words[0] == "arena":
                lines.append(words[1:])
    assert ["github", "setup", "--repo", "ORG/arena", "--dry-run"] in lines
    parser = build_parser()
    for words in lines:
        parser.parse_args(words)
