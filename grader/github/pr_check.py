"""`arena pr collect`: decide what a pull request is and whether its submission may run.

Runs from main, before anything of the pull request executes, with a read-only token. It reads
the pull request through the API (never checking it out), decides from the registry on main
and the competition config, and for a submission fetches the folder's files as data (blobs)
for the smoke job. The decision is a versioned document the report job reads.

A submission is sealed (grader.documents.sealing): its folder holds a plain manifest and the sealed
zip, which collect cannot open and does not need to; it checks the manifest and the sealed
bytes' digest. A staff review clears one digest: a staff comment `/cleared sha256:...` naming
the submission's digest (what `arena open-submission` prints), with the review label on.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from grader.documents.schema import problems_of
from grader.documents.sealing import MANIFEST_NAME, PACKAGE_FILES, REPACKAGE, SEALED_NAME, Manifest, SealError, sha256
from grader.documents.submission import MAX_FILES, MAX_TOTAL_BYTES
from grader.documents.yaml_io import DocumentError, format_time
from grader.github.api import ChangedFile, Repo, User
from grader.github.events import PullRequestEvent
from grader.season.accounts import NOT_APPROVED, Account, Registry, check_change, registry_from_text
from grader.season.competition import Competition

SCHEMA_VERSION = 1
REGISTRY_PATH = "accounts.yaml"
SUBMISSIONS = "submissions"
KINDS = ("submission", "registration", "other")
VERDICTS = ("smoke", "refused", "accepted", "ignored")
FILE_MODES = ("100644", "100755")
SUBMISSION_RE = re.compile(r"^submissions/([^/]+)/.+")
REVIEW_COMMAND = "/cleared"
REVIEW_RE = re.compile(r"^/cleared\s+(sha256:[0-9a-f]{64})\s*$")


@dataclass
class Decision:
    """What the collect job decided about one pull request at one head."""

    repository: str
    number: int
    head_sha: str
    action: str
    author: User
    kind: str
    verdict: str
    handle: str | None = None
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    frozen: bool = False
    freeze_at: str | None = None
    flags_cleared: bool = False
    cleared_by: str | None = None
    review_label: str = ""
    remove_label: bool = False
    digest: str | None = None  # the plain submission's, as its manifest names it (smoke checks it)
    sealed_digest: str | None = None
    cleared_digest: str | None = None  # the digest a staff review cleared, when it is this one

    def to_dict(self) -> dict:
        data = asdict(self)
        return {"schema_version": SCHEMA_VERSION} | data

    @classmethod
    def from_dict(cls, data: dict, source: str = "decision") -> Decision:
        """A decision document read back (grader/documents/data/decision.schema.json); DocumentError otherwise."""
        problems = problems_of(data, "decision")
        if problems:
            raise DocumentError(source, problems)
        body = {k: v for k, v in data.items() if k != "schema_version"}
        body["author"] = User(**body["author"])
        return cls(**body)


def classify(files: list[ChangedFile]) -> tuple[str, str | None, list[str]]:
    """(kind, handle, reasons): a submission of one handle, a registration, or other.

    A rename counts at both ends, so a file cannot be moved into someone's folder unseen."""
    paths = sorted({p for f in files for p in (f.path, f.previous_path) if p})
    # A control character (a newline, say) in a path would break every line-based tool
    # downstream, from the job's outputs to the comment: refused before anything reads it.
    odd = [p for p in paths if any(ord(ch) < 32 or ord(ch) == 127 for ch in p)]
    if odd:
        return (
            "other",
            None,
            [
                f"{len(odd)} path(s) hold a control character (a newline, a tab ...), such as "
                f"{odd[0]!r}: a submission's folders and files have printable names"
            ],
        )
    handles = {m.group(1) for p in paths if (m := SUBMISSION_RE.match(p))}
    others = [p for p in paths if not SUBMISSION_RE.match(p)]
    if paths == [REGISTRY_PATH]:
        return "registration", None, []
    if handles and not others:
        if len(handles) > 1:
            return (
                "submission",
                None,
                [
                    f"it changes the folders of {len(handles)} handles "
                    f"({', '.join(sorted(handles))}); a pull request carries one submission"
                ],
            )
        return "submission", handles.pop(), []
    return (
        "other",
        None,
        [
            f"it changes {', '.join(others[:5])}{' ...' if len(others) > 5 else ''}: a student's pull "
            f"request may change only submissions/<handle>/, or only add an account to {REGISTRY_PATH}"
        ],
    )


def collect(
    repo: Repo,
    event: PullRequestEvent,
    registry: Registry,
    competition: Competition,
    now: dt.datetime,
    out: Path | None,
) -> Decision:
    """Decide about the pull request of `event`; for a submission to smoke, write its files under `out`."""
    decision = Decision(
        event.repository,
        event.number,
        event.head_sha,
        event.action,
        event.author,
        kind="other",
        verdict="refused",
        review_label=competition.review_label,
    )
    account = registry.by_id(event.author.id)
    if account is not None and account.login != event.author.login:
        decision.notes.append(
            f"GitHub login {event.author.login!r} differs from {account.login!r} in the registry: "
            "accounts are matched by id, so a rename is harmless"
        )
    kind, handle, reasons = classify(repo.changed_files(event.number))
    decision.kind, decision.handle = kind, handle
    if kind == "other" and account is not None and account.staff:
        decision.verdict = "ignored"  # staff's own changes to the arena are not submissions
        return decision
    if reasons:
        decision.reasons = reasons
        return decision
    if kind == "registration":
        return _registration(repo, event, registry, decision)
    assert handle is not None  # classify names the handle of every submission or registration
    decision.reasons = _ownership(event.author, account, registry, handle)
    if decision.reasons:
        return decision
    decision.frozen = competition.frozen(now)
    if competition.freeze_at is not None:
        decision.freeze_at = format_time(competition.freeze_at)
    problems = fetch_folder(repo, event.head_sha, handle, out)
    if problems:
        decision.reasons = problems
        return decision
    try:
        manifest = check_package(repo, event.head_sha, handle)
    except SealError as exc:
        decision.reasons = [str(exc)]
        return decision
    decision.digest, decision.sealed_digest = manifest.digest, manifest.sealed
    _review(repo, event, registry, competition.review_label, decision)
    decision.verdict = "smoke"
    return decision


def _ownership(author: User, account: Account | None, registry: Registry, handle: str) -> list[str]:
    if account is None:
        return [
            f"this GitHub account ({author.login}, id {author.id}) has no arena account: open a pull request "
            f"that adds it to {REGISTRY_PATH}, and wait for staff to approve it"
        ]
    if not account.approved:
        return [f"{NOT_APPROVED}: nothing runs for it until staff approve it"]
    owner = registry.by_handle(handle)
    if owner is None:
        return [
            f"no account has the handle {handle!r}; yours is {account.handle!r}: submit in submissions/{account.handle}/"
        ]
    if owner.github_id != author.id:
        return [f"submissions/{handle}/ belongs to another account; yours is submissions/{account.handle}/"]
    return []


def _registration(repo: Repo, event: PullRequestEvent, registry: Registry, decision: Decision) -> Decision:
    entry = next((e for e in repo.tree(event.head_sha) if e.path == REGISTRY_PATH), None)
    if entry is None:
        decision.reasons = [f"it deletes {REGISTRY_PATH}"]
        return decision
    try:
        head = registry_from_text(repo.blob(entry.sha).decode("utf-8"), REGISTRY_PATH)
    except (DocumentError, UnicodeDecodeError) as exc:
        decision.reasons = list(getattr(exc, "problems", [str(exc)]))
        return decision
    decision.reasons = check_change(registry, head, event.author.id)
    decision.verdict = "refused" if decision.reasons else "accepted"
    return decision


def fetch_folder(repo: Repo, sha: str, handle: str, out: Path | None) -> list[str]:
    """Write submissions/<handle>/ at `sha` under `out` as plain files; the problems found, if any.

    The files come from blobs: no checkout, no attributes, no hooks, no links. Sizes are
    checked against the loader's limits before a byte is downloaded."""
    prefix = f"{SUBMISSIONS}/{handle}/"
    entries = [e for e in repo.tree(sha) if e.path.startswith(prefix)]
    files = [e for e in entries if e.type == "blob"]
    problems = []
    if not files:
        return [f"{prefix} is empty or removed at {sha[:12]}: a pull request may not delete a submission"]
    for e in entries:
        rel = e.path[len(prefix) :]
        if e.type == "commit" or e.mode == "160000":
            problems.append(f"{e.path}: a git submodule; a submission is plain files")
        elif e.type == "blob" and e.mode not in FILE_MODES:
            problems.append(
                f"{e.path}: {'a symbolic link' if e.mode == '120000' else f'mode {e.mode}'}; "
                "a submission is plain files"
            )
        elif any(part in ("", ".", "..", ".git") for part in PurePosixPath(rel).parts) or rel.startswith("/"):
            problems.append(f"{e.path}: a path a submission may not use")
    if len(files) > MAX_FILES:
        problems.append(f"{prefix}: {len(files)} files, more than {MAX_FILES}")
    total = sum(e.size or 0 for e in files)
    if total > MAX_TOTAL_BYTES:
        problems.append(f"{prefix}: {total} bytes, more than {MAX_TOTAL_BYTES // 2**20} MiB")
    if problems or out is None:
        return problems
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for e in files:
        path = target / e.path[len(prefix) :]
        path.parent.mkdir(parents=True, exist_ok=True)
        data = repo.blob(e.sha)
        if e.size is not None and len(data) != e.size:
            return [f"{e.path}: the blob is {len(data)} bytes, the tree says {e.size}"]
        path.write_bytes(data)
    return []


def check_package(repo: Repo, sha: str, handle: str) -> Manifest:
    """The manifest of submissions/<handle>/ at `sha`, a sealed package whose sealed bytes are
    the ones the manifest names; SealError naming what is wrong (plain files: how to re-package)."""
    prefix = f"{SUBMISSIONS}/{handle}/"
    blobs = {e.path[len(prefix) :]: e for e in repo.tree(sha) if e.path.startswith(prefix) and e.type == "blob"}
    if "agent.py" in blobs or sorted(blobs) != sorted(PACKAGE_FILES):
        folders = {p.rsplit("/", 1)[0] for p in blobs if "/" in p and p.rsplit("/", 1)[1] in PACKAGE_FILES}
        if len(folders) == 1 and not set(blobs) & set(PACKAGE_FILES):
            # The package committed one folder too deep (a kit or `submission/` folder copied in whole).
            (folder,) = folders
            raise SealError(
                f"{prefix} holds the sealed package in {folder}/: move {MANIFEST_NAME} and "
                f"{SEALED_NAME} up into {prefix} itself"
            )
        what = "plain files" if "agent.py" in blobs else ", ".join(sorted(blobs)[:5])
        raise SealError(f"{prefix} holds {what}, not a sealed submission: {REPACKAGE}")
    manifest = Manifest.from_bytes(repo.blob(blobs[MANIFEST_NAME].sha), prefix + MANIFEST_NAME)
    if manifest.handle != handle:
        raise SealError(
            f"{prefix}{MANIFEST_NAME}: made for the handle {manifest.handle!r}, in the folder of "
            f"{handle!r}: package it with `make package HANDLE={handle}`"
        )
    sealed = sha256(repo.blob(blobs[SEALED_NAME].sha))
    if sealed != manifest.sealed:
        raise SealError(
            f"{prefix}{SEALED_NAME}: its digest is {sealed}, the manifest says {manifest.sealed}: "
            "commit the two files `make package` wrote together"
        )
    return manifest


def _review(repo: Repo, event: PullRequestEvent, registry: Registry, label: str, decision: Decision) -> None:
    """Has staff cleared exactly this submission: the review label on, put there by staff since
    the last push, and a staff comment `/cleared <digest>` naming this submission's digest?

    The label alone clears nothing: a review is bound to the bytes it read, so a push after it
    is held again whatever the order of events (a reopen that cancels the synchronize run
    which would remove the label, say). A push (synchronize) also removes the label."""
    if label not in event.labels:
        return
    if event.action == "synchronize":
        decision.remove_label = True
        decision.notes.append(f"new commits since the review: the {label!r} label is removed; staff review again")
        return
    last = [e for e in repo.label_events(event.number) if e.label == label]
    if not last or last[-1].event != "labeled":
        return
    actor = last[-1].actor
    if not registry.is_staff(actor.id):
        decision.notes.append(f"the {label!r} label was applied by {actor.login}, who is not staff: it does not count")
        return
    reviews = [
        (author, m.group(1))
        for author, body in repo.comments(event.number)
        if (m := REVIEW_RE.match(body.strip())) and registry.is_staff(author.id)
    ]
    reviewer = next((author for author, digest in reversed(reviews) if digest == decision.digest), None)
    if reviewer is None:
        named = f" (the reviews name {', '.join(sorted({d[:19] for _, d in reviews}))}...)" if reviews else ""
        decision.notes.append(
            f"the {label!r} label is on, but no staff review names this submission's digest "
            f"{decision.digest}{named}: a review clears the bytes it read, so staff open this "
            f"one (`arena open-submission`) and comment `{REVIEW_COMMAND} <digest>`"
        )
        return
    decision.flags_cleared, decision.cleared_by, decision.cleared_digest = True, reviewer.login, decision.digest
