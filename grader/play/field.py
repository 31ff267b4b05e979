"""The field of a round, taken when the round starts: `arena field`.

The field is every approved account's active submission (`submissions/<handle>/` as merged on
main: merging is activation, and only a pull request the arena's check passed can be merged)
whose smoke test passes now, when the round starts - not when it was dispatched. For the final,
the field is read from main as it stood at the freeze, so nothing merged after the freeze can
change which submission is active.

Submissions are read from main's blobs (`git ls-tree`, `git cat-file`), never through
`git archive` or a checkout, which would apply a submission's own `.gitattributes`
(export-subst, filters, line endings) to what is played. They are sealed (grader.documents.sealing): the
field checks each package against its manifest and records the manifest's digest; the smoke
test opens it (with the arena's key) and fails unless the opened files have that digest, and
`--copy-to` copies the sealed package, so that the field's artifact holds no plain agent.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
import subprocess
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from grader.documents.sealing import REPACKAGE, SealError, is_package, read_package, sha256
from grader.documents.yaml_io import DocumentError, check_envelope, format_time, read_yaml, utc_now
from grader.play.smoke import SmokeSettings, run_smoke
from grader.sandbox.base import Sandbox
from grader.season.accounts import load_registry

SCHEMA_VERSION = 1
REGISTRY = "accounts.yaml"
SUBMISSIONS = "submissions"


class GitError(RuntimeError):
    """git could not answer; the message names the command."""


class ArenaSmokeError(RuntimeError):
    """The arena failed (not the entrant) while smoke-testing an entrant: no field can be taken."""


@dataclass
class FieldEntry:
    handle: str
    account_id: int
    digest: str
    path: str
    flags: list[str] = field(default_factory=list)
    # Its smoke test's mean act() time as a fraction of the pace, over the boards (None: not
    # smoke-tested): the field's measured speed in the round's capacity plan.
    pace_fraction: float | None = None
    # Its smoke test's peak resident memory in bytes, the largest of its boards' sandboxes
    # (None: not smoke-tested, or not readable there): the capacity plan adds the field's up.
    memory_bytes: int | None = None


@dataclass
class Field:
    tier: str
    source_commit: str | None
    taken_at: str
    frozen_at: str | None = None
    entrants: list[FieldEntry] = field(default_factory=list)
    excluded: list[dict] = field(default_factory=list)

    def agents(self) -> list[str]:
        """`arena round --agents` arguments: HANDLE=PATH."""
        return [f"{e.handle}={e.path}" for e in self.entrants]

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION} | asdict(self)


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from None
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def commit_at(repo: Path, moment: dt.datetime, ref: str = "HEAD") -> str:
    """The commit of `ref`'s first-parent history that was current at `moment`."""
    sha = _git(repo, "rev-list", "-1", "--first-parent", f"--before={format_time(moment)}", ref).decode().strip()
    if not sha:
        raise GitError(f"{ref} has no commit before {format_time(moment)}")
    return sha


FILE_MODES = ("100644", "100755")


def export_tree(repo: Path, commit: str, dest: Path, paths: tuple[str, ...] = (REGISTRY, SUBMISSIONS)) -> None:
    """Write `paths` as they are at `commit` into `dest` as plain files, from their blobs: no
    attributes, filters or export-subst apply, and links and submodules are left out."""
    present = _git(repo, "ls-tree", "--name-only", commit, "--", *paths).decode().split()
    if REGISTRY in paths and REGISTRY not in present:
        raise GitError(f"{commit[:12]} has no {REGISTRY}")
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths).split(b"\0")
    dest.mkdir(parents=True, exist_ok=True)
    for line in filter(None, listing):
        meta, _, raw = line.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        rel = raw.decode("utf-8", errors="surrogateescape")
        parts = rel.split("/")
        if kind != "blob" or mode not in FILE_MODES or any(p in ("", ".", "..", ".git") for p in parts):
            continue  # a link, a submodule or a name no file may have: never written
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_git(repo, "cat-file", "blob", sha))


def build_field(
    root: Path,
    tier: str,
    sandbox: Sandbox | None,
    copy_to: Path | None = None,
    settings: SmokeSettings = SmokeSettings(),
    source_commit: str | None = None,
    frozen_at: dt.datetime | None = None,
    now: dt.datetime | None = None,
    log=None,
) -> Field:
    """The field from `root` (holding accounts.yaml and submissions/), smoke-tested when `sandbox` is given."""
    now = now or utc_now()
    registry = load_registry(root / REGISTRY)
    if settings.field is None:
        # The next round's field is at most the approved accounts with a submission: each
        # phase is projected to it (limits that grow with the field are checked at its size).
        candidates = sum((root / SUBMISSIONS / a.handle).is_dir() for a in registry.approved())
        settings = dataclasses.replace(settings, field=max(2, min(candidates, settings.limits.largest_field)))
    result = Field(tier, source_commit, format_time(now), None if frozen_at is None else format_time(frozen_at))
    for account in sorted(registry.approved(), key=lambda a: a.handle):
        folder = root / SUBMISSIONS / account.handle
        if not folder.is_dir():
            result.excluded.append({"handle": account.handle, "reason": "no submission"})
            continue
        if not is_package(folder):
            result.excluded.append({"handle": account.handle, "reason": f"not a sealed submission: {REPACKAGE}"})
            continue
        try:
            manifest, sealed = read_package(folder)
            if manifest.handle != account.handle or sha256(sealed) != manifest.sealed:
                raise SealError("its manifest names another handle or other sealed bytes")
        except (SealError, OSError) as exc:
            result.excluded.append({"handle": account.handle, "reason": f"not a valid submission: {exc}"})
            continue
        flags: list[str] = []
        if sandbox is not None:
            if log:
                log(f"field: smoke test of {account.handle} ...")
            # The smoke test opens the package and plays it only if its files have the manifest's digest.
            report = run_smoke(folder, sandbox, settings)
            if report.result == "arena_error":
                # The arena's failure, not the entrant's: dropping it would charge the student.
                raise ArenaSmokeError(
                    f"the arena failed while smoke-testing {account.handle} (not the agent's fault): {report.reason}"
                )
            if not report.passed:
                result.excluded.append({"handle": account.handle, "reason": f"smoke test failed: {report.reason}"})
                continue
            flags = [f.describe() for f in report.flags]
        path = folder
        if copy_to is not None:
            path = copy_to / account.handle
            shutil.copytree(folder, path, dirs_exist_ok=False)
        result.entrants.append(
            FieldEntry(
                account.handle,
                account.github_id,
                manifest.digest,
                str(path),
                flags,
                None if sandbox is None else pace_fraction(report),
                None if sandbox is None else report.memory_peak_bytes,
            )
        )
    result.excluded += unapproved_submissions(root, registry)
    result.excluded.sort(key=lambda item: item["handle"])
    return result


def pace_fraction(report) -> float | None:
    """A smoke report's mean act() time as a fraction of each board's pace, over its boards
    (None when no board timed an act)."""
    timed = [b.mean_act_ms / b.pace_ms for b in report.boards if b.mean_act_ms is not None and b.pace_ms > 0]
    return round(sum(timed) / len(timed), 4) if timed else None


@dataclass(frozen=True)
class Measured:
    """What the capacity plan reads of one entrant of a field document."""

    handle: str
    pace_fraction: float | None
    memory_bytes: int | None


def read_field_measures(path: Path) -> list[Measured]:
    """Each entrant's handle, `pace_fraction` and `memory_bytes` from a field document `arena
    field` wrote; DocumentError naming what is wrong with it."""
    data = read_yaml(path)
    problems = check_envelope(data, str(path), SCHEMA_VERSION, [f.name for f in fields(Field)] + ["schema_version"])
    entrants = data.get("entrants")
    if not isinstance(entrants, list):
        problems.append(f"entrants: expected a list, got {type(entrants).__name__}")
        entrants = []
    out: list[Measured] = []
    for i, entry in enumerate(entrants):
        if not isinstance(entry, dict):
            problems.append(f"entrants[{i}]: expected a mapping, got {type(entry).__name__}")
            out.append(Measured(f"entrants[{i}]", None, None))
            continue
        value = entry.get("pace_fraction")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            problems.append(f"entrants[{i}].pace_fraction: expected a number >= 0 or null, got {value!r}")
            value = None
        memory = entry.get("memory_bytes")
        if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory < 0):
            problems.append(f"entrants[{i}].memory_bytes: expected an integer >= 0 or null, got {memory!r}")
            memory = None
        handle = entry.get("handle")
        out.append(Measured(handle if isinstance(handle, str) else f"entrants[{i}]", value, memory))
    if problems:
        raise DocumentError(str(path), problems)
    return out


def read_field_speeds(path: Path) -> list[float | None]:
    """Each entrant's `pace_fraction` from a field document (`read_field_measures`)."""
    return [m.pace_fraction for m in read_field_measures(path)]


def unapproved_submissions(root: Path, registry) -> list[dict]:
    """The folders of submissions/ left out for their account: not approved, or no account at all."""
    folder = root / SUBMISSIONS
    out = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        account = registry.by_handle(sub.name)
        if account is None:
            out.append({"handle": sub.name, "reason": "no account has this handle"})
        elif not account.approved:
            out.append(
                {
                    "handle": sub.name,
                    "reason": f"account not approved: staff approve it with `arena accounts approve {sub.name}`",
                }
            )
    return out


def head_commit(repo: Path) -> str | None:
    """The commit `repo` has checked out, or None when it is not a git checkout."""
    try:
        return _git(repo, "rev-parse", "--verify", "HEAD").decode().strip()
    except GitError:
        return None
