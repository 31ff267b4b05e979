"""The accounts registry: who may submit, under which handle, and who is staff.

Accounts are GitHub identities. The registry (`accounts.yaml`) is keyed by the GitHub numeric
id, never by login: a login can be renamed or re-registered by somebody else, an id cannot.

    schema_version: 1
    accounts:
      12345678:            # GitHub numeric id
        login: octocat     # as last seen; informational, a rename is harmless
        handle: octo       # chosen once, never changes; names submissions/<handle>/
        approved: false    # staff approve; until then nothing runs for the account
        staff: false

`check_change` is the guard a pull request that edits the registry must pass: a handle never
changes, an account is never removed (so its handle is never reused), and a student may only
add their own account, unapproved.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError, dump_yaml, load_yaml, read_yaml

SCHEMA_VERSION = 1
FIELDS = ("login", "handle", "approved", "staff")
NOT_APPROVED = "this account has not been approved yet"


@dataclass(frozen=True)
class Account:
    """One arena account: a GitHub identity and its handle."""

    github_id: int
    login: str
    handle: str
    approved: bool
    staff: bool

    def to_dict(self) -> dict:
        return {"login": self.login, "handle": self.handle, "approved": self.approved, "staff": self.staff}


@dataclass(frozen=True)
class Registry:
    """A validated registry; lookups by GitHub id and by handle."""

    accounts: tuple[Account, ...]

    def by_id(self, github_id: int) -> Account | None:
        return next((a for a in self.accounts if a.github_id == github_id), None)

    def by_handle(self, handle: str) -> Account | None:
        return next((a for a in self.accounts if a.handle == handle), None)

    def is_staff(self, github_id: int) -> bool:
        account = self.by_id(github_id)
        return account is not None and account.staff

    def approved(self) -> list[Account]:
        return [a for a in self.accounts if a.approved]

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "accounts": {a.github_id: a.to_dict() for a in self.accounts}}


def parse_registry(data: Any, source: str = "accounts.yaml") -> Registry:
    """A Registry from parsed YAML (grader/documents/data/accounts.schema.json); raise DocumentError
    listing every problem by path."""
    problems = problems_of(data, "accounts")
    if not isinstance(data, dict):
        raise DocumentError(source, problems)
    entries = data.get("accounts")
    if not isinstance(entries, dict):
        entries = {}
    handles: dict[str, int] = {}
    for key, entry in entries.items():
        where = f"accounts.{key}"
        if isinstance(key, bool) or not isinstance(key, int) or key <= 0:
            problems.append(f"{where}: the key must be a GitHub numeric account id (a positive integer), got {key!r}")
            continue
        handle = entry.get("handle") if isinstance(entry, dict) else None
        if isinstance(handle, str):
            if handle in handles:
                problems.append(f"{where}.handle: {handle!r} is already the handle of account {handles[handle]}")
            handles.setdefault(handle, key)
    if problems:
        raise DocumentError(source, problems)
    accounts = [Account(key, e["login"], e["handle"], e["approved"], e["staff"]) for key, e in entries.items()]
    return Registry(tuple(sorted(accounts, key=lambda a: a.github_id)))


def load_registry(path: Path) -> Registry:
    """Read and validate a registry file."""
    return parse_registry(read_yaml(path), str(path))


def registry_from_text(text: str, source: str) -> Registry:
    return parse_registry(load_yaml(text, source), source)


def check_change(base: Registry, head: Registry, author_id: int | None) -> list[str]:
    """Every reason the change from `base` (the registry on main) to `head` is refused.

    For everybody: no account removed, no handle changed. For an author who is not staff on
    `base` (None means a change of unknown authorship, judged as a student's): the only change
    allowed is adding their own account, unapproved and not staff.
    """
    problems: list[str] = []
    for old in base.accounts:
        new = head.by_id(old.github_id)
        if new is None:
            problems.append(
                f"accounts.{old.github_id}: removed; an account is never removed "
                "(set approved: false instead), so its handle can never be taken by another"
            )
        elif new.handle != old.handle:
            problems.append(
                f"accounts.{old.github_id}.handle: changed from {old.handle!r} to {new.handle!r}; "
                "a handle is chosen once and never changes"
            )
    if author_id is not None and base.is_staff(author_id):
        return problems
    for new in head.accounts:
        old = base.by_id(new.github_id)
        where = f"accounts.{new.github_id}"
        if old is None:
            if new.github_id != author_id:
                problems.append(
                    f"{where}: only staff may add an account for somebody else "
                    f"(the pull request's author is {author_id})"
                )
                continue
            if new.approved:
                problems.append(f"{where}.approved: a new account starts unapproved; staff approve it")
            if new.staff:
                problems.append(f"{where}.staff: only staff may make an account staff")
        elif new != old:
            changed = [f for f in FIELDS if getattr(new, f) != getattr(old, f)]
            problems.append(f"{where}: {', '.join(changed)} changed; only staff may edit an existing account")
    return problems


class AccountError(ValueError):
    """A staff edit of the registry that cannot be made; the message names the account and why."""


def approve(registry: Registry, handle: str) -> tuple[Registry, Account]:
    """The registry with the account of `handle` approved (an error if there is none, or it is already)."""
    account = registry.by_handle(handle)
    if account is None:
        known = ", ".join(a.handle for a in registry.accounts) or "none yet"
        raise AccountError(
            f"no account has the handle {handle!r} (handles: {known}); the student adds their "
            "account by a pull request first"
        )
    if account.approved:
        raise AccountError(f"{handle} (GitHub id {account.github_id}, {account.login}) is already approved")
    approved = dataclasses.replace(account, approved=True)
    return Registry(tuple(approved if a is account else a for a in registry.accounts)), approved


def add_account(
    registry: Registry, github_id: int, login: str, handle: str, staff: bool = False, approved: bool = False
) -> tuple[Registry, Account]:
    """The registry with a new account, validated as a registry entry is (the first staff account is made so)."""
    if registry.by_id(github_id) is not None:
        raise AccountError(f"GitHub id {github_id} already has an account ({registry.by_id(github_id).handle})")
    data = registry.to_dict()
    data["accounts"][github_id] = {"login": login, "handle": handle, "approved": approved, "staff": staff}
    new = parse_registry(data, "the new account")
    return new, new.by_id(github_id)


def write_registry(path: Path, registry: Registry) -> None:
    """Write `registry` to `path`, keeping the comment block at the top of the file as it was."""
    header = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            header.append(line + "\n")
    data = registry.to_dict()
    text = "".join(header) + dump_yaml(data)
    parse_registry(load_yaml(text, str(path)), str(path))  # what is written must read back as the same registry
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
