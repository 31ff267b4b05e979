"""One definition of each identifier the arena's documents carry, as a regular expression.

The code matches with these; the schemas in grader/documents/data/ carry copies, which
`python -m grader.cli.registries --write` writes from here (tests/test_registries.py names a stale one).
"""

from __future__ import annotations

import re

from engine.tiers import TIERS

# A student's handle: lower case only, because a handle is a folder name, and two handles that
# differ in case would be two folders on Linux but one on a student's laptop.
HANDLE = r"^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$"
HANDLE_RULE = "1-32 lower-case letters, digits and inner hyphens"  # what HANDLE allows, in words
# GitHub's own rule for logins: alphanumerics and single hyphens, at most 39 characters.
LOGIN = r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$"
# A round's id: its tier, then the first ten hex digits of its plan's key (grader/rounds/plan.py).
ROUND_ID = rf"^({'|'.join(TIERS)})-[0-9a-f]{{10}}$"
# A submission's (or any file's) content digest.
DIGEST = r"^sha256:[0-9a-f]{64}$"
# A git commit.
COMMIT = r"^[0-9a-f]{40}$"
# A requested run's id: `c-` and the id of the comment that asked for it.
REQUEST_ID = r"^c-[0-9]+$"

HANDLE_RE = re.compile(HANDLE)
LOGIN_RE = re.compile(LOGIN)
ROUND_ID_RE = re.compile(ROUND_ID)
DIGEST_RE = re.compile(DIGEST)
COMMIT_RE = re.compile(COMMIT)
REQUEST_ID_RE = re.compile(REQUEST_ID)

# Each pattern by the name the schemas give it under `$defs` (grader/cli/registries.py writes them).
BY_NAME = {
    "handle": HANDLE,
    "login": LOGIN,
    "round_id": ROUND_ID,
    "digest": DIGEST,
    "commit": COMMIT,
    "request_id": REQUEST_ID,
}
