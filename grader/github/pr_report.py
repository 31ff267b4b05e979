"""`arena pr report`: turn the collect job's decision and the smoke report into one comment
and one commit status on the pull request.

The only job that holds a write token runs this; it executes nothing of the pull request and
reads the smoke report as untrusted data (validated, and every string of it escaped before it
reaches Markdown; the agent's own output never reaches it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from grader.documents import DocumentError
from grader.github.api import Repo
from grader.github.pr_check import Decision
from grader.schema import validate

MARKER = "<!-- arena:pr-check -->"
FLAG_KINDS = {"import": "import that needs a staff look", "opaque": "data file that cannot be read as text"}
STATUS_CONTEXT = "arena/submission"
BOT_LOGIN = "github-actions[bot]"
PRIVATE_OUTPUT = ("\nYour agent wrote to its own output; that output is yours only and is not published here. "
                  "`make check` in the starter kit runs this same gate and shows it.\n")

SMOKE_SCHEMA = {
    "type": "object",
    "required": ["schema_version", "result", "needs_staff_label", "boards", "first_failing_board", "stderr_tail"],
    "properties": {
        "schema_version": {"const": 1},
        "result": {"enum": ["pass", "fail"]},
        "reason": {"type": ["string", "null"]},
        "needs_staff_label": {"type": "boolean"},
        "kit_version": {"type": ["string", "null"]},
        "interpreter": {"type": ["string", "null"]},
        "numpy": {"type": ["string", "null"]},
        "image": {"type": ["object", "null"], "required": ["tag", "id", "base", "stand_in"],
                  "properties": {"tag": {"type": "string"}, "id": {"type": "string"}, "base": {"type": "string"},
                                 "stand_in": {"type": "boolean"}}},
        "flags": {"type": "array", "items": {"type": "object", "required": ["kind", "file", "detail"],
                                             "properties": {"kind": {"enum": ["import", "opaque"]},
                                                            "file": {"type": "string"},
                                                            "line": {"type": ["integer", "null"]},
                                                            "detail": {"type": "string"}}}},
        "boards": {"type": "array", "items": {
            "type": "object", "required": ["shape", "result", "pace_ms", "mean_act_ms"],
            "properties": {"shape": {"type": "string", "pattern": r"^[0-9]{1,2}x[0-9]{1,2}$"},
                           "result": {"enum": ["pass", "fail", "not_run"]},
                           "reason": {"type": ["string", "null"]},
                           "mean_act_ms": {"type": ["number", "null"]},
                           "pace_ms": {"type": "number"}}}},
        "first_failing_board": {"type": ["string", "null"]},
        "stderr_tail": {"type": "string"},
    },
}


@dataclass(frozen=True)
class Outcome:
    """What is posted: the status (state and short description) and the comment body."""

    state: str
    description: str
    body: str  # empty: a status only, no comment


def check_smoke_report(data: Any, source: str = "smoke report") -> dict:
    problems = validate(data, SMOKE_SCHEMA)
    if problems:
        raise DocumentError(source, problems)
    return data


def inline(text: str) -> str:
    """A short untrusted string for a Markdown line, as a code span: no newlines, and inside a
    code span GitHub renders no HTML, no mentions and no links - not even the autolinks it makes
    of bare addresses (`https://...`, `www....`) in plain text."""
    text = re.sub(r"\s+", " ", str(text))[:300].replace("`", "'").strip()
    return f"`{text}`" if text else "`-`"


def compose(decision: Decision, smoke: dict | None) -> Outcome | None:
    """The comment and status for a decision and its smoke report (None: nothing to post)."""
    if decision.verdict == "ignored":
        # Staff's own change to the arena: the status main's ruleset requires, and no comment.
        return Outcome("success", "a change by staff to the arena, not a submission", "")
    who = f"@{decision.author.login}"
    head = f"{MARKER}\n### Arena check for {who}, head `{decision.head_sha[:12]}`\n\n"
    notes = "".join(f"\n> {inline(n)}\n" for n in decision.notes)
    if decision.verdict == "refused":
        reasons = "\n".join(f"- {inline(r)}" for r in decision.reasons)
        return Outcome("failure", _short(decision.reasons[0]),
                       head + f"**Refused**; nothing of this pull request was run:\n\n{reasons}\n{notes}")
    if decision.verdict == "accepted":
        return Outcome("success", "account registration is well formed",
                       head + "**Account registration accepted.** Staff will approve it; until then this account can "
                              f"read, and nothing more.\n{notes}")
    where = f"`submissions/{decision.handle}/`"
    if smoke is None:
        return Outcome("error", "the arena failed, not your agent: it will be re-run",
                       head + f"{where}: **the arena failed, not your agent: it will be re-run.** The smoke test "
                              f"did not reach a verdict on your submission; staff have been told.\n{notes}")
    board_lines = "\n".join(
        f"| {b['shape']} | {_ms(b.get('mean_act_ms'))} | {_ms(b['pace_ms'])} | {b['result']} |"
        for b in smoke["boards"])
    table = "| board | mean act() | pace | result |\n|---|---|---|---|\n" + board_lines if board_lines else ""
    # A submission the loader refused never started: there are no versions to name.
    versions = ""
    if smoke.get("interpreter"):
        versions = f"interpreter {inline(smoke['interpreter'])}, numpy {inline(smoke.get('numpy') or '?')}"
        image = smoke.get("image")
        if image:
            versions += f", image {inline(image['tag'])} {inline(image['id'][:19])} on {inline(image['base'])}"
    # The agent's own output is for its owner only (the rules): it is never published, and a
    # pull request's comments are public. The owner sees it with the kit's `make check`.
    tail_block = (PRIVATE_OUTPUT if smoke.get("stderr_tail") else "")
    if smoke["result"] == "fail":
        first = next((b for b in smoke["boards"] if b["result"] == "fail"), None)
        if first is None:
            line = f"**Smoke test failed**: {inline(smoke.get('reason') or 'not a valid submission')}"
            short = smoke.get("reason") or "not a valid submission"
        else:
            line = (f"**Smoke test failed on the {first['shape']} board**: mean act() {_ms(first.get('mean_act_ms'))} "
                    f"against a pace of {_ms(first['pace_ms'])}. {inline(first['reason']) if first.get('reason') else ''}")
            short = f"refused on the {first['shape']} board"
        return Outcome("failure", _short(short),
                       head + f"{where}: {line}\n\n{table}\n\n{versions}\n{tail_block}{notes}")
    flags = smoke.get("flags") or []
    # Which files and imports were flagged says what the agent does: the public comment gives
    # the kinds only (the owner sees the rest with `make package`, staff with open-submission).
    kinds = {k: sum(f["kind"] == k for f in flags) for k in FLAG_KINDS}
    flag_lines = "\n".join(f"- {n} {FLAG_KINDS[k]}{'s' if n > 1 else ''}" for k, n in kinds.items() if n)
    body = head + f"{where}: **smoke test passed** on every public board shape.\n\n{table}\n\n{versions}\n"
    if decision.frozen:
        return Outcome("failure", "smoke passed; the field is frozen, it cannot become active",
                       body + f"\nThe field froze at {decision.freeze_at}: this run was a practice smoke test and "
                              "this submission cannot become your active one.\n" + tail_block + notes)
    played = (smoke.get("submission") or {}).get("digest")
    # A review clears the digest it read: the one this smoke test opened and played, no other.
    cleared = decision.flags_cleared and decision.cleared_digest is not None and played == decision.cleared_digest
    if flags and not cleared:
        return Outcome("pending", f"held: needs a staff review of this digest and the '{decision.review_label}' label",
                       body + f"\n**Held for staff review** before it can be merged and become active:\n\n{flag_lines}"
                              f"\n\nA member of staff opens this submission (digest {inline(played or '?')}), reads "
                              f"it, comments `/cleared <digest>` and adds the `{decision.review_label}` label. A "
                              "review clears the digest it read: any other push is held again.\n"
                       + tail_block + notes)
    cleared_text = (f"\nFlags read and cleared by staff ({inline(decision.cleared_by or '')}) for the digest "
                    f"{inline(played or '')}:\n\n{flag_lines}\n") if flags else ""
    return Outcome("success", "smoke test passed; becomes active when merged",
                   body + cleared_text + "\nIt becomes your active submission when merged.\n" + tail_block + notes)


def _ms(value) -> str:
    return "-" if value is None else f"{value:g} ms"


def _short(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= 140 else text[:137] + "..."


def publish(repo: Repo, decision: Decision, outcome: Outcome, bot_login: str = BOT_LOGIN,
            target_url: str | None = None) -> int:
    """Post (or update) the one comment, set the status, drop a stale review label; the comment id."""
    if decision.remove_label:
        repo.remove_label(decision.number, decision.review_label)
    comment_id = repo.upsert_comment(decision.number, MARKER, outcome.body, bot_login) if outcome.body else 0
    repo.set_status(decision.head_sha, outcome.state, outcome.description, STATUS_CONTEXT, target_url)
    return comment_id
