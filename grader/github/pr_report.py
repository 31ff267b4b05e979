"""`arena pr report`: one comment and one commit status from a decision and a smoke report.

The only job that holds a write token runs this; it executes nothing of the pull request and
reads the smoke report as untrusted data (validated, and every string of it escaped before it
reaches Markdown; the agent's own output never reaches it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from grader.common.visible import visible
from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError
from grader.github.api import Repo
from grader.github.pr_check import Decision

MARKER = "<!-- arena:pr-check -->"
FLAG_KINDS = {"import": "import that needs a staff look", "opaque": "data file that cannot be read as text"}
STATUS_CONTEXT = "arena/submission"
BOT_LOGIN = "github-actions[bot]"


@dataclass(frozen=True)
class Outcome:
    """What is posted: the status (state and short description) and the comment body."""

    state: str
    description: str
    body: str  # empty: a status only, no comment


@dataclass(frozen=True)
class Message:
    """One message of the table: the commit status it sets and the comment text it posts.

    `status` and `text` are `str.format` templates; every value put into them that came from the
    pull request or its smoke report is already escaped by `inline`.
    """

    state: str
    status: str
    text: str


# Every message a student or staff member reads on a pull request, one entry per outcome. The
# comment is the heading, then the outcome's text; the passed outcomes start from PASSED.
MESSAGES: dict[str, Message] = {
    "refused": Message(
        "failure", "{reason}", "**Refused**; nothing of this pull request was run:\n\n{reasons}\n{notes}"
    ),
    "accepted": Message(
        "success",
        "account registration is well formed",
        "**Account registration accepted.** Staff will approve it; until then this account can read, and "
        "nothing more.\n{notes}",
    ),
    "arena_failed": Message(
        "error",
        "the arena failed, not your agent: it will be re-run",
        "{where}: **the arena failed, not your agent: it will be re-run.** The smoke test did not reach a "
        "verdict on your submission; staff have been told.\n{notes}",
    ),
    "invalid": Message(
        "failure",
        "{reason}",
        "{where}: **Smoke test failed**: {reason_inline}\n\n{table}\n\n{versions}\n{private}{notes}",
    ),
    "board_failed": Message(
        "failure",
        "refused on the {shape} board",
        "{where}: **Smoke test failed on the {shape} board**: mean act() {mean} against a pace of {pace}. "
        "{reason_inline}\n\n{table}\n\n{versions}\n{private}{notes}",
    ),
    "frozen": Message(
        "failure",
        "smoke passed; the field is frozen, it cannot become active",
        "{passed}\nThe field froze at {freeze_at}: this run was a practice smoke test and this submission "
        "cannot become your active one.\n{private}{notes}",
    ),
    "held": Message(
        "pending",
        "held: needs a staff review of this digest and the '{label}' label",
        "{passed}\n**Held for staff review** before it can be merged and become active:\n\n{flag_lines}\n\n"
        "A member of staff opens this submission (digest {digest}), reads it, comments `/cleared <digest>` "
        "and adds the `{label}` label. A review clears the digest it read: any other push is held again.\n"
        "{private}{notes}",
    ),
    "active": Message(
        "success",
        "smoke test passed; becomes active when merged",
        "{passed}{cleared}\nIt becomes your active submission when merged.\n{private}{notes}",
    ),
}
# The status of a staff member's own change (no comment): what main's rules require to merge it.
STAFF_CHANGE = "a change by staff to the arena, not a submission"
HEADING = MARKER + "\n### Arena check for @{login}, head `{head}`\n\n"
NOTE = "\n> {note}\n"
PASSED = "{where}: **smoke test passed** on every public board shape.\n\n{table}\n\n{versions}\n"
CLEARED = "\nFlags read and cleared by staff ({cleared_by}) for the digest {digest}:\n\n{flag_lines}\n"
BOARD_TABLE = "| board | mean act() | pace | result |\n|---|---|---|---|\n"
BOARD_ROW = "| {shape} | {mean} | {pace} | {result} |"
VERSIONS = "interpreter {interpreter}, numpy {numpy}"
IMAGE = ", image {tag} {id} on {base}"
FLAG_LINE = "- {count} {kind}{plural}"
# The agent's own output is for its owner only (the rules): it is never published, and a pull
# request's comments are public. The owner sees it with the kit's `make check`.
PRIVATE_OUTPUT = (
    "\nYour agent wrote to its own output; that output is yours only and is not published here. "
    "`make check` in the starter kit runs this same gate and shows it.\n"
)


def check_smoke_report(data: Any, source: str = "smoke report") -> dict:
    """The smoke report, checked against grader/documents/data/smoke-report.schema.json (DocumentError otherwise)."""
    problems = problems_of(data, "smoke-report")
    if problems:
        raise DocumentError(source, problems)
    return data


def inline(text: str) -> str:
    """A short untrusted string for a Markdown line, as a code span: no newlines, and inside a
    code span GitHub renders no HTML, no mentions and no links - not even the autolinks it makes
    of bare addresses (`https://...`, `www....`) in plain text."""
    text = re.sub(r"\s+", " ", visible(text, keep_lines=True))[:300].replace("`", "'").strip()
    return f"`{text}`" if text else "`-`"


def compose(decision: Decision, smoke: dict | None) -> Outcome | None:
    """The comment and status for a decision and its smoke report (None: nothing to post)."""
    if decision.verdict == "ignored":
        # Staff's own change to the arena: the status main's ruleset requires, and no comment.
        return Outcome("success", STAFF_CHANGE, "")
    values = {"notes": "".join(NOTE.format(note=inline(n)) for n in decision.notes)}
    if decision.verdict == "refused":
        return _post(
            "refused",
            decision,
            values,
            reason=decision.reasons[0],
            reasons="\n".join(f"- {inline(r)}" for r in decision.reasons),
        )
    if decision.verdict == "accepted":
        return _post("accepted", decision, values)
    values["where"] = f"`submissions/{visible(decision.handle)}/`"
    if smoke is None:
        return _post("arena_failed", decision, values)
    rows = "\n".join(
        BOARD_ROW.format(shape=b["shape"], mean=_ms(b.get("mean_act_ms")), pace=_ms(b["pace_ms"]), result=b["result"])
        for b in smoke["boards"]
    )
    values["table"] = BOARD_TABLE + rows if rows else ""
    values["versions"] = _versions(smoke)
    values["private"] = PRIVATE_OUTPUT if smoke.get("stderr_tail") else ""
    if smoke["result"] == "fail":
        first = next((b for b in smoke["boards"] if b["result"] == "fail"), None)
        if first is None:
            reason = smoke.get("reason") or "not a valid submission"
            return _post("invalid", decision, values, reason=reason, reason_inline=inline(reason))
        return _post(
            "board_failed",
            decision,
            values,
            shape=first["shape"],
            mean=_ms(first.get("mean_act_ms")),
            pace=_ms(first["pace_ms"]),
            reason_inline=inline(first["reason"]) if first.get("reason") else "",
        )
    values["passed"] = PASSED.format(**values)
    if decision.frozen:
        return _post("frozen", decision, values, freeze_at=decision.freeze_at)
    flags = smoke.get("flags") or []
    # Which files and imports were flagged says what the agent does: the public comment gives
    # the kinds only (the owner sees the rest with `make package`, staff with open-submission).
    counts = {k: sum(f["kind"] == k for f in flags) for k in FLAG_KINDS}
    values["flag_lines"] = "\n".join(
        FLAG_LINE.format(count=n, kind=FLAG_KINDS[k], plural="s" if n > 1 else "") for k, n in counts.items() if n
    )
    played = (smoke.get("submission") or {}).get("digest")
    # A review clears the digest it read: the one this smoke test opened and played, no other.
    cleared = decision.flags_cleared and decision.cleared_digest is not None and played == decision.cleared_digest
    if flags and not cleared:
        return _post("held", decision, values, digest=inline(played or "?"), label=decision.review_label)
    values["cleared"] = (
        CLEARED.format(
            cleared_by=inline(decision.cleared_by or ""), digest=inline(played or ""), flag_lines=values["flag_lines"]
        )
        if flags
        else ""
    )
    return _post("active", decision, values)


def _post(key: str, decision: Decision, values: dict, **more: Any) -> Outcome:
    """The outcome of one message of the table, filled with its values under the heading."""
    message = MESSAGES[key]
    values = values | more
    heading = HEADING.format(login=visible(decision.author.login), head=decision.head_sha[:12])
    return Outcome(message.state, _short(message.status.format(**values)), heading + message.text.format(**values))


def _versions(smoke: dict) -> str:
    """The interpreter, numpy and image the smoke test ran on ("" when the agent never started)."""
    # A submission the loader refused never started: there are no versions to name.
    if not smoke.get("interpreter"):
        return ""
    versions = VERSIONS.format(interpreter=inline(smoke["interpreter"]), numpy=inline(smoke.get("numpy") or "?"))
    image = smoke.get("image")
    if image:
        versions += IMAGE.format(tag=inline(image["tag"]), id=inline(image["id"][:19]), base=inline(image["base"]))
    return versions


def _ms(value) -> str:
    return "-" if value is None else f"{value:g} ms"


def _short(text: str) -> str:
    text = re.sub(r"\s+", " ", visible(text, keep_lines=True))
    return text if len(text) <= 140 else text[:137] + "..."


def publish(
    repo: Repo, decision: Decision, outcome: Outcome, bot_login: str = BOT_LOGIN, target_url: str | None = None
) -> int:
    """Post (or update) the one comment, set the status, drop a stale review label; the comment id."""
    if decision.remove_label:
        repo.remove_label(decision.number, decision.review_label)
    comment_id = repo.upsert_comment(decision.number, MARKER, outcome.body, bot_login) if outcome.body else 0
    repo.set_status(decision.head_sha, outcome.state, outcome.description, STATUS_CONTEXT, target_url)
    return comment_id
