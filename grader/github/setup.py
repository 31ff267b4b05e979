"""What a course's GitHub repository must be for the workflows to work, and making it so.

`arena github setup` (grader/cli/commands/github.py) compares the repository with `desired(...)`
item by item and changes what differs, so a second run changes nothing. The route by which
the workflows' own commits reach a protected `main` is a deploy key that the ruleset on
`main` lets bypass it, held as an environment secret that only jobs on `main` receive
(docs/deploy.md says why this and not the workflow token, a GitHub App or self-merging pull
requests). Secrets are checked by name only: the API never returns a secret's value.

Endpoints github3.py has are used through it (the repository, labels, deploy keys); those it
lacks (rulesets, environments, Actions permissions, Pages, secrets' and variables' names) are
raw requests through its session:

    GET/POST        /repos/{o}/{r}/labels                       the review label
    GET             /repos/{o}/{r}/keys                         deploy keys (the arena's push key)
    GET/PUT         /repos/{o}/{r}/environments/{env}
    GET/POST        /repos/{o}/{r}/environments/{env}/deployment-branch-policies
    GET             /repos/{o}/{r}/environments/{env}/secrets   names only
    GET/POST/PUT    /repos/{o}/{r}/rulesets[/{id}]              the rules on main
    GET/PUT         /repos/{o}/{r}/actions/permissions/workflow
    GET/PUT         /repos/{o}/{r}/actions/permissions/fork-pr-contributor-approval
    GET/POST/PUT    /repos/{o}/{r}/pages                        Pages built by a workflow
    GET             /repos/{o}/{r}/actions/secrets              names only
    GET/POST        /repos/{o}/{r}/actions/variables
    GET             /repos/{o}/{r}/actions/runners              who would take the jobs
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.tiers import DEFAULT_GENERATED_COUNT
from grader.documents.yaml_io import load_yaml
from grader.github.api import GitHubArgumentError, GitHubCallError

REQUIRED_STATUS = "arena/submission"
# GitHub Actions' own app: the required status counts only when a workflow posted it.
ACTIONS_APP_ID = 15368
RULESET_NAME = "arena: main"
PUSH_KEY_TITLE = "arena-push"
PUSH_KEY_SECRET = "ARENA_PUSH_KEY"
MAIN_ONLY = "main"

# Repository secrets: every job of a workflow on main may read them. Only the submission key is
# one: the smoke test and the round's field job open submissions and have no environment.
REPOSITORY_SECRETS = ("ARENA_SUBMISSION_KEY",)
# Environments, each deployable from main only, and the secrets only their jobs receive: a
# workflow file on another branch (or a pull request's) never sees a seed or the push key.
ENVIRONMENTS: dict[str, tuple[str, ...]] = {
    "arena-rounds": ("ARENA_LADDER_SEED", "ARENA_ROUND_SEED_BASE", "ARENA_RECORD_KEY", PUSH_KEY_SECRET),
    "arena-final": (
        "ARENA_FINAL_SEED",
        "ARENA_LADDER_SEED",
        "ARENA_ROUND_SEED_BASE",
        "ARENA_RECORD_KEY",
        PUSH_KEY_SECRET,
    ),
    "arena-publish": (PUSH_KEY_SECRET,),
}
# Repository variables (not secret) and the value setup gives one that is missing.
VARIABLES: dict[str, str | None] = {
    "ARENA_SUBMISSION_PUBLIC_KEY": None,  # the public half of the submission key (docs/deploy.md)
    "ARENA_REQUESTED_BUDGET": "2000",
    "ARENA_REQUESTED_ENVS": str(DEFAULT_GENERATED_COUNT),  # the whole ladder
}

# The runners the arena registers: the labels given with --labels. A self-hosted runner also
# carries `self-hosted`, its OS and its architecture; `--ephemeral` is a mode (one job, then
# the runner is removed), never a label.
RUNNER_DEFAULT_LABELS = ("self-hosted", "linux", "x64")
RUNNER_KINDS: dict[str, str] = {
    "arena-smoke": "smoke tests of pull requests (a stranger's code before anyone read it)",
    "arena-round": "requested runs and the professor's rounds",
}
GITHUB_HOSTED = re.compile(r"^(ubuntu|windows|macos)-[\w.-]+$")


class SetupError(ValueError):
    """The repository or the checkout cannot be made what the workflows need; says why."""


# -- the workflows' runs-on ---------------------------------------------------------------


def jobs_runs_on(workflows: Path) -> dict[str, tuple[str, ...]]:
    """`file:job` -> its `runs-on` labels, for every job of every workflow under `workflows`
    (a job that calls a reusable workflow has none and is left out)."""
    out = {}
    for path in sorted(workflows.glob("*.yml")):
        data = load_yaml(path.read_text(), str(path)) or {}
        for name, job in (data.get("jobs") or {}).items():
            runs_on = job.get("runs-on")
            if runs_on is None:
                continue
            if isinstance(runs_on, dict):
                runs_on = runs_on.get("labels", [])
            labels = (runs_on,) if isinstance(runs_on, str) else tuple(runs_on)
            out[f"{path.name}:{name}"] = tuple(str(label) for label in labels)
    return out


def runner_labels(custom: str) -> tuple[str, ...]:
    """Every label a Linux x64 runner registered with `--labels custom` carries."""
    return RUNNER_DEFAULT_LABELS + tuple(label for label in custom.split(",") if label)


def can_take(runner: tuple[str, ...], runs_on: tuple[str, ...]) -> bool:
    """A runner takes a job when it has every label the job asks for (case-insensitively)."""
    have = {label.lower() for label in runner}
    return all(label.lower() in have for label in runs_on)


def untaken_jobs(workflows: Path, runners: list[tuple[str, ...]]) -> list[str]:
    """`file:job (labels)` of each self-hosted job that none of `runners` would take."""
    out = []
    for job, labels in jobs_runs_on(workflows).items():
        if len(labels) == 1 and GITHUB_HOSTED.match(labels[0]):
            continue
        if not any(can_take(runner, labels) for runner in runners):
            out.append(f"{job} ({', '.join(labels)})")
    return out


def registration_commands(html_url: str, full_name: str) -> list[str]:
    """The runner application's `config.sh` line of each kind of runner (a fresh registration
    token each time: one is valid for an hour)."""
    token = f'"$(gh api -X POST repos/{full_name}/actions/runners/registration-token --jq .token)"'
    return [
        f'./config.sh --unattended --url {html_url} --token {token} --name "{kind}-$(hostname)" '
        f"--labels {kind} --ephemeral"
        for kind in RUNNER_KINDS
    ]


def commands_labels(text: str) -> list[tuple[str, ...]]:
    """The labels of every runner a text (a page, setup's output) registers with `config.sh`."""
    out = []
    for line in re.findall(r"config\.sh(?:[^\n\\]|\\\n|\\(?!\n))*", text):
        m = re.search(r"--labels[ =](\S+)", line)
        out.append(runner_labels(m.group(1).strip("'\"") if m else ""))
    return out


# -- the desired state ------------------------------------------------------------------


def ruleset() -> dict:
    """The ruleset on the default branch: changes arrive by pull request with the arena's
    status; only the arena's push key (a deploy key) goes around it."""
    return {
        "name": RULESET_NAME,
        "target": "branch",
        "enforcement": "active",
        "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
        "bypass_actors": [{"actor_id": None, "actor_type": "DeployKey", "bypass_mode": "always"}],
        "rules": [
            {"type": "deletion"},
            {"type": "non_fast_forward"},
            {
                "type": "pull_request",
                "parameters": {
                    "required_approving_review_count": 0,
                    "dismiss_stale_reviews_on_push": True,
                    "require_code_owner_review": False,
                    "require_last_push_approval": False,
                    "required_review_thread_resolution": False,
                },
            },
            {
                "type": "required_status_checks",
                "parameters": {
                    "strict_required_status_checks_policy": False,
                    "required_status_checks": [{"context": REQUIRED_STATUS, "integration_id": ACTIONS_APP_ID}],
                },
            },
        ],
    }


WORKFLOW_PERMISSIONS = {"default_workflow_permissions": "read", "can_approve_pull_request_reviews": False}
FORK_APPROVAL = {"approval_policy": "all_external_contributors"}
PAGES = {"build_type": "workflow"}


@dataclass
class Report:
    """What setup found and did, one line each, and what staff must still do."""

    lines: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)

    def ok(self, what: str) -> None:
        self.lines.append(f"ok       {what}")

    def changed(self, what: str) -> None:
        self.lines.append(f"changed  {what}")

    def missing(self, what: str, *commands: str) -> None:
        self.lines.append(f"MISSING  {what}")
        self.todo.extend(commands)


class Rest:
    """Raw calls through a github3 session, for the endpoints github3 lacks."""

    def __init__(self, gh, full_name: str, dry_run: bool = False):
        self.gh, self.base = gh, f"{gh.session.base_url}/repos/{full_name}"
        self.dry_run = dry_run

    def call(
        self,
        method: str,
        path: str,
        body: object = None,
        ok: tuple[int, ...] = (200, 201, 204),
        missing_ok: bool = False,
    ) -> Any:
        """The JSON answer, of any shape (None for 204, or a 404 when `missing_ok`); GitHubCallError otherwise."""
        url = self.base + path
        try:
            response = self.gh.session.request(method, url, json=body)
        except Exception as exc:  # requests' connection errors
            raise GitHubCallError(f"{method} {path}: {exc}") from None
        if missing_ok and response.status_code == 404:
            return None
        if response.status_code not in ok:
            try:
                message = response.json().get("message", "")
            except ValueError:
                message = response.text[:200]
            raise GitHubCallError(f"GitHub refused {method} {path}: HTTP {response.status_code} {message}")
        return response.json() if response.content else None


def _subset(want: object, have: object) -> bool:
    """`have` says at least what `want` says (GitHub adds fields of its own to every answer)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_subset(v, have.get(k)) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(_subset(w, h) for w, h in zip(want, have))
    return want == have


class Setup:
    """One repository made what the workflows need (`apply`), or the plan of it (`plan`)."""

    def __init__(self, full_name: str, review_label: str, checkout: Path, gh=None):
        owner, sep, name = full_name.partition("/")
        if not sep or not owner or not name or "/" in name:
            raise GitHubArgumentError("repository", full_name, f"--repo {full_name!r} is not OWNER/NAME")
        self.full_name, self.review_label, self.checkout, self.gh = full_name, review_label, checkout, gh
        self.workflows = checkout / ".github" / "workflows"
        if not self.workflows.is_dir():
            raise SetupError(f"{checkout}: no .github/workflows here; run setup from a clone of the arena")

    # -- the plan, without a call --------------------------------------------------------
    def plan(self, html_url: str | None = None) -> list[str]:
        """Every item setup makes sure of, as lines; no call to GitHub."""
        html_url = html_url or f"https://github.com/{self.full_name}"
        lines = [
            f"repository {self.full_name} ({html_url}): the plan; nothing was called",
            f"label      {self.review_label!r}",
        ]
        for env, secrets in ENVIRONMENTS.items():
            lines.append(f"environment {env}: deployable from branch {MAIN_ONLY} only; secrets {', '.join(secrets)}")
        rules = ruleset()
        lines.append(
            f"ruleset    {RULESET_NAME!r} on the default branch: no deletion, no force push, changes by "
            f"pull request with status {REQUIRED_STATUS!r} from GitHub Actions; bypass: deploy keys "
            f"(only {PUSH_KEY_TITLE!r}, with write access)"
        )
        assert rules["bypass_actors"][0]["actor_type"] == "DeployKey"
        lines.append(f"deploy key {PUSH_KEY_TITLE!r} with write access, the only one with write access")
        lines.append("actions    default workflow token read-only, cannot approve pull requests")
        lines.append("actions    workflows of pull requests from all outside contributors wait for approval")
        lines.append("pages      built and deployed by a workflow (site.yml)")
        lines.append(f"secrets    repository: {', '.join(REPOSITORY_SECRETS)} (checked by name)")
        for name, default in VARIABLES.items():
            lines.append(f"variable   {name}" + (f" (made {default!r} when missing)" if default else " (must exist)"))
        lines.append(f"site.yaml  kit.repository: {html_url}")
        lines += self._runner_lines(html_url)
        return lines

    def _runner_lines(self, html_url: str) -> list[str]:
        commands = registration_commands(html_url, self.full_name)
        untaken = untaken_jobs(self.workflows, commands_labels("\n".join(commands)))
        if untaken:
            raise SetupError("no runner this setup registers would take: " + "; ".join(untaken))
        lines = [
            "",
            "Register the runners (on each runner machine, in the runner application's folder; "
            "register again after each job, as an ephemeral runner takes one):",
        ]
        for kind, command in zip(RUNNER_KINDS, commands):
            lines += [f"  # {kind}: {RUNNER_KINDS[kind]}", f"  {command}"]
        return lines

    # -- making it so ----------------------------------------------------------------------
    def apply(self, log: Callable[[str], None] = print) -> Report:
        """Make each item what it must be; a Report of what was found, changed and missing."""
        from grader.github.api import Repo

        report = Report()
        repo = Repo(self.gh, self.full_name)._repo
        html_url = str(repo.html_url)
        rest = Rest(self.gh, self.full_name)
        self._label(repo, report)
        self._environments(rest, report)
        self._push_key(repo, report)
        self._ruleset(rest, report)
        self._put_setting(
            rest,
            "/actions/permissions/workflow",
            WORKFLOW_PERMISSIONS,
            report,
            "actions: default workflow token read-only",
        )
        self._put_setting(
            rest,
            "/actions/permissions/fork-pr-contributor-approval",
            FORK_APPROVAL,
            report,
            "actions: outside contributors' pull requests wait for approval",
        )
        self._pages(rest, report)
        self._secrets(rest, report)
        self._variables(rest, report)
        self._kit_repository(html_url, report)
        self._runners(rest, report)
        for line in report.lines:
            log(line)
        if report.todo:
            log("")
            log("Still to do (then run setup again):")
            for command in report.todo:
                log(f"  {command}")
        for line in self._runner_lines(html_url):
            log(line)
        return report

    def _label(self, repo, report: Report) -> None:
        from github3.exceptions import NotFoundError

        try:
            label = repo.label(self.review_label)
        except NotFoundError:
            label = None
        if label is not None:
            report.ok(f"label {self.review_label!r}")
            return
        if repo.create_label(self.review_label, "5319e7", "staff read this submission (docs/staff.md)") is None:
            raise GitHubCallError(f"could not create the label {self.review_label!r}")
        report.changed(f"label {self.review_label!r} created")

    def _environments(self, rest: Rest, report: Report) -> None:
        policy = {"deployment_branch_policy": {"protected_branches": False, "custom_branch_policies": True}}
        for env, secrets in ENVIRONMENTS.items():
            have = rest.call("GET", f"/environments/{env}", missing_ok=True)
            if have is None or have.get("deployment_branch_policy") != policy["deployment_branch_policy"]:
                rest.call("PUT", f"/environments/{env}", policy)
                report.changed(f"environment {env}: {'created' if have is None else 'branch policy set'}")
            policies = rest.call("GET", f"/environments/{env}/deployment-branch-policies") or {}
            names = {(p.get("name"), p.get("type", "branch")) for p in policies.get("branch_policies", [])}
            extra = sorted(n for n, t in names if (n, t) != (MAIN_ONLY, "branch"))
            if (MAIN_ONLY, "branch") not in names:
                rest.call(
                    "POST", f"/environments/{env}/deployment-branch-policies", {"name": MAIN_ONLY, "type": "branch"}
                )
                report.changed(f"environment {env}: deployable from {MAIN_ONLY}")
            if extra:
                report.missing(
                    f"environment {env} is also deployable from {', '.join(extra)}: its secrets would "
                    "reach a workflow on that branch",
                    f"gh api repos/{self.full_name}/environments/{env}/deployment-branch-policies "
                    "# then DELETE each policy but main's",
                )
            else:
                report.ok(f"environment {env}: deployable from {MAIN_ONLY} only")
            listed = rest.call("GET", f"/environments/{env}/secrets") or {}
            have_names = {s["name"] for s in listed.get("secrets", [])}
            for secret in secrets:
                if secret in have_names:
                    report.ok(f"environment {env}: secret {secret}")
                else:
                    report.missing(
                        f"environment {env}: secret {secret}",
                        f"gh secret set {secret} --env {env} --repo {self.full_name} < {_source(secret)}",
                    )

    def _push_key(self, repo, report: Report) -> None:
        keys = [k.as_dict() for k in repo.keys()]
        writers = [k for k in keys if not k.get("read_only", True)]
        ours = [k for k in writers if k.get("title") == PUSH_KEY_TITLE]
        others = [k for k in writers if k.get("title") != PUSH_KEY_TITLE]
        if ours:
            report.ok(f"deploy key {PUSH_KEY_TITLE!r} with write access")
        else:
            report.missing(
                f"deploy key {PUSH_KEY_TITLE!r} with write access (the workflows push with it)",
                f"ssh-keygen -q -t ed25519 -N '' -C {PUSH_KEY_TITLE} -f {PUSH_KEY_TITLE}",
                f"gh repo deploy-key add {PUSH_KEY_TITLE}.pub --allow-write --title {PUSH_KEY_TITLE} "
                f"--repo {self.full_name}",
            )
        for key in others:
            report.missing(
                f"deploy key {key.get('title')!r} (id {key.get('id')}) has write access: every deploy key "
                "bypasses the rules on main, so only the arena's may write",
                f"gh repo deploy-key delete {key.get('id')} --repo {self.full_name}",
            )

    def _ruleset(self, rest: Rest, report: Report) -> None:
        want = ruleset()
        found = [r for r in rest.call("GET", "/rulesets") or [] if r.get("name") == RULESET_NAME]
        if not found:
            rest.call("POST", "/rulesets", want)
            report.changed(f"ruleset {RULESET_NAME!r} created")
            return
        have = rest.call("GET", f"/rulesets/{found[0]['id']}") or {}
        # GitHub keeps the rules in an order of its own: compared by type.
        by_type = {rule.get("type"): rule for rule in have.get("rules", [])}
        have = have | {
            "rules": [by_type.get(rule["type"], {}) for rule in want["rules"]]
            if len(by_type) == len(want["rules"])
            else have.get("rules")
        }
        if _subset(want, have):
            report.ok(f"ruleset {RULESET_NAME!r}")
        else:
            rest.call("PUT", f"/rulesets/{found[0]['id']}", want)
            report.changed(f"ruleset {RULESET_NAME!r} updated")

    def _put_setting(self, rest: Rest, path: str, want: dict, report: Report, what: str) -> None:
        if _subset(want, rest.call("GET", path)):
            report.ok(what)
        else:
            rest.call("PUT", path, want)
            report.changed(what)

    def _pages(self, rest: Rest, report: Report) -> None:
        have = rest.call("GET", "/pages", missing_ok=True)
        if have is None:
            rest.call("POST", "/pages", PAGES)
            report.changed("pages: built by a workflow (enabled)")
        elif have.get("build_type") != "workflow":
            rest.call("PUT", "/pages", PAGES)
            report.changed("pages: built by a workflow (was built from a branch)")
        else:
            report.ok("pages: built by a workflow")

    def _secrets(self, rest: Rest, report: Report) -> None:
        listed = rest.call("GET", "/actions/secrets") or {}
        have = {s["name"] for s in listed.get("secrets", [])}
        for secret in REPOSITORY_SECRETS:
            if secret in have:
                report.ok(f"secret {secret}")
            else:
                report.missing(
                    f"secret {secret}", f"gh secret set {secret} --repo {self.full_name} < {_source(secret)}"
                )

    def _variables(self, rest: Rest, report: Report) -> None:
        listed = rest.call("GET", "/actions/variables") or {}
        have = {v["name"] for v in listed.get("variables", [])}
        for name, default in VARIABLES.items():
            if name in have:
                report.ok(f"variable {name}")
            elif default is not None:
                rest.call("POST", "/actions/variables", {"name": name, "value": default})
                report.changed(f"variable {name} = {default!r}")
            else:
                report.missing(
                    f"variable {name}",
                    f'gh variable set {name} --repo {self.full_name} --body "$(tail -n 1 submission.pair)"',
                )

    def _kit_repository(self, html_url: str, report: Report) -> None:
        path = self.checkout / "site.yaml"
        if set_kit_repository(path, html_url):
            report.changed(f"site.yaml: kit.repository = {html_url} (merge it to main by pull request)")
        else:
            report.ok(f"site.yaml: kit.repository = {html_url}")

    def _runners(self, rest: Rest, report: Report) -> None:
        listed = rest.call("GET", "/actions/runners") or {}
        runners = [tuple(label["name"] for label in r.get("labels", [])) for r in listed.get("runners", [])]
        untaken = untaken_jobs(self.workflows, runners)
        if untaken:
            report.lines.append(f"note     no registered runner takes yet: {'; '.join(untaken)}")
        else:
            report.ok("runners: every job has a registered runner")


def _source(secret: str) -> str:
    """Where a secret's value comes from, in the commands setup prints (docs/deploy.md)."""
    return {
        PUSH_KEY_SECRET: PUSH_KEY_TITLE,
        "ARENA_SUBMISSION_KEY": "submission.key",
        "ARENA_RECORD_KEY": "record.key",
        "ARENA_ROUND_SEED_BASE": "round-seed-base",
        "ARENA_LADDER_SEED": "ladder.seed",
        "ARENA_FINAL_SEED": "final.seed",
    }.get(secret, secret.lower())


KIT_REPOSITORY_RE = re.compile(
    r"^(kit:\s*\n(?:[ \t]+.*\n|[ \t]*#.*\n|\s*\n)*?[ \t]+repository:)[ \t]*([^\n#]*?)[ \t]*(#.*)?$", re.M
)


def set_kit_repository(path: Path, url: str) -> bool:
    """Set `kit.repository` in site.yaml to `url`, keeping every comment; True when it changed."""
    text = path.read_text()
    data = load_yaml(text, str(path)) or {}
    if (data.get("kit") or {}).get("repository") == url:
        return False
    m = KIT_REPOSITORY_RE.search(text)
    if m is None:
        raise SetupError(f"{path}: no `repository:` under `kit:` to set")
    new = text[: m.start(2)] + url + text[m.end(2) :]
    if (load_yaml(new, str(path)).get("kit") or {}).get("repository") != url:
        raise SetupError(f"{path}: could not set kit.repository")
    path.write_text(new)
    return True
