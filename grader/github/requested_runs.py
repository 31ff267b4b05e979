"""`arena score request` and `arena score finish`: requested ladder runs by `/score`.

A `/score` comment on a merged pull request of the commenter's own submission queues a
private ladder round of one, within the rolling quota counted from the committed request log
(grader.season.quota). The reply says how many runs are left and when the next one frees.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from grader.documents.yaml_io import format_time
from grader.github.api import Repo
from grader.github.events import CommentEvent
from grader.github.pr_check import classify
from grader.github.pr_report import inline
from grader.season.accounts import NOT_APPROVED, Registry
from grader.season.competition import Competition
from grader.season.quota import Request, RequestLog

COMMAND = "/score"
MARKER = "<!-- arena:score -->"


@dataclass(frozen=True)
class ScoreDecision:
    """What a /score comment gets: a reply, and a queued request or none."""

    reply: str
    request: Request | None = None
    log: RequestLog | None = None  # the log with the request added

    @property
    def queued(self) -> bool:
        return self.request is not None


def command_words(body: str) -> list[str] | None:
    """The words of a `/score` command on the comment's first line (`["/score", ...]`), or None
    when the comment is not one (`/scoreboard` is not)."""
    lines = body.strip().splitlines()
    words = lines[0].split() if lines else []
    return words if words and words[0] == COMMAND else None


def is_score_command(body: str) -> bool:
    """The comment is the command: `/score` alone on its first line."""
    return command_words(body) == [COMMAND]


def decide(
    repo: Repo, event: CommentEvent, registry: Registry, competition: Competition, log: RequestLog, now: dt.datetime
) -> ScoreDecision | None:
    """Decide a /score comment; None when the comment is not a /score on a pull request."""
    words = command_words(event.body)
    if event.action != "created" or not event.is_pull_request or words is None:
        return None
    who = f"@{event.author.login}"

    def refuse(text: str) -> ScoreDecision:
        return ScoreDecision(f"{MARKER}\n{who}: {text}")

    if words != [COMMAND]:
        return refuse(
            f"`{COMMAND}` takes no argument, so {inline(' '.join(words))} was not run. "
            f"Write `{COMMAND}` alone on the first line of a comment to queue a run."
        )

    account = registry.by_id(event.author.id)
    if account is None:
        return refuse("this GitHub account has no arena account, so it cannot ask for a scored run.")
    if not account.approved:
        return refuse(f"{NOT_APPROVED}; nothing runs for it until staff approve it.")
    request_id = f"c-{event.comment_id}"
    if log.get(request_id) is not None:
        return None  # the same comment delivered twice: it was answered the first time
    pull = repo.pull(event.number)
    if not pull.merged or not pull.merge_commit_sha:
        return refuse("only a merged submission can be scored; this pull request is not merged.")
    kind, handle, _ = classify(repo.changed_files(event.number))
    if kind != "submission" or handle is None:
        return refuse("this pull request is not a submission, so there is nothing to score.")
    if handle != account.handle or pull.author.id != event.author.id:
        if account.staff:
            return staff_rerun(event, registry, log, handle, pull.merge_commit_sha, request_id, now, refuse)
        return refuse(
            f"this is the submission of `{handle}`; you can ask for runs of your own (`{account.handle}`) only."
        )
    quota = log.quota(account.github_id, now, competition.runs_per_window, competition.window)
    if quota.left == 0:
        return refuse(f"no requested runs left: {quota.describe()}.")
    request = Request(request_id, account.github_id, account.handle, event.number, pull.merge_commit_sha, now)
    new_log = log.add(request)
    after = new_log.quota(account.github_id, now, competition.runs_per_window, competition.window)
    reply = (
        f"{MARKER}\n{who}: queued a private ladder round of one for `submissions/{handle}/` as merged in "
        f"`{pull.merge_commit_sha[:12]}` (request `{request_id}`). After this one: {after.describe()}. "
        "A run the arena fails on its side is not counted."
    )
    return ScoreDecision(reply, request, new_log)


def staff_rerun(
    event: CommentEvent,
    registry: Registry,
    log: RequestLog,
    handle: str,
    commit: str,
    request_id: str,
    now: dt.datetime,
    refuse,
) -> ScoreDecision:
    """A member of staff's /score on a student's merged submission: a run for the student,
    recorded as a staff re-run (requested_by) and not counted against the student's quota."""
    owner = registry.by_handle(handle)
    if owner is None or not owner.approved:
        return refuse(f"`{handle}` has no approved account, so there is nothing to re-run for it.")
    request = Request(
        request_id, owner.github_id, owner.handle, event.number, commit, now, requested_by=event.author.id
    )
    reply = (
        f"{MARKER}\n@{event.author.login}: queued a staff re-run for `{handle}`: a private ladder round of one "
        f"for `submissions/{handle}/` as merged in `{commit[:12]}` (request `{request_id}`). It is recorded as a "
        f"staff re-run and not counted against {handle}'s requested runs."
    )
    return ScoreDecision(reply, request, log.add(request))


def finish_reply(
    request: Request,
    status: str,
    log: RequestLog,
    competition: Competition,
    now: dt.datetime,
    results_url: str | None,
    owner_login: str | None = None,
) -> str:
    """The reply when a requested run has ended (to its owner, by mention). It carries no number
    of the round: a pull request's comments are public, and a requested run is private (its
    curve, SAE and faults are in the owner's sealed history, which `make history` opens)."""
    quota = log.quota(request.account_id, now, competition.runs_per_window, competition.window)
    who = f"@{owner_login}: " if owner_login else ""
    if status == "published":
        where = (
            f" Its numbers (win rate at each checkpoint, SAE with its window, faults) and your agent's own "
            f"log are in your history, sealed to your key: `make history` in your kit opens them. {results_url}"
            if results_url
            else " Its numbers are in your history, sealed to your key: `make history` in your kit opens them."
        )
        what = (
            "the staff re-run of your submission, ladder round"
            if request.staff_rerun
            else "your requested ladder round"
        )
        text = (
            f"{what} `{request.round_id}` is done. It is a private round: it is not on "
            f"the site and ranks nobody.{where}\n\n"
        )
        if request.staff_rerun:
            text += "A staff re-run is not counted against your requested runs."
    elif status == "agent_refused":
        text = "your submission failed its smoke test when the run started, so nothing was scored (not counted)."
    else:
        text = "the arena failed this run on its side; it is not counted against you, and staff have been told."
    return (
        f"{MARKER}\n{who}request `{request.id}` ({format_time(request.requested_at)}): {text} Now: {quota.describe()}."
    )
