"""What the workflows upload as artifacts (public in a public repository) never holds a round
in plain: each upload is sealed (`*.enc`, an owner's history), or holds no result (the field's
sealed entrants and digests, a pull request's decision and sealed submission), or is the site."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
# name -> what it may hold, and why that is not a private number
ALLOWED = {
    "field": "the field: sealed entrants, handles and digests",
    "staff-record-sealed": "the staff record, sealed with ARENA_RECORD_KEY",
    "owner-history": "an owner's history entry, sealed to the owner's and the arena's keys",
    "decision": "a pull request's decision: its kind and verdict",
    "submission": "a pull request's sealed submission",
    "smoke-report": "the smoke test of a pull request, as its comment shows it: no round",
}


def uploads():
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for job, spec in yaml.safe_load(path.read_text())["jobs"].items():
            for step in spec.get("steps") or []:
                if "upload-artifact" in str(step.get("uses", "")) or "upload-pages-artifact" in str(
                    step.get("uses", "")
                ):
                    yield path.name, job, step["uses"], step.get("with") or {}


def test_no_artifact_holds_a_round_in_plain():
    seen = []
    for workflow, job, uses, given in uploads():
        name, where = str(given.get("name", "")), str(given.get("path", ""))
        seen.append(name)
        if "upload-pages-artifact" in uses:
            assert where == "_site", (workflow, job, where)  # the public site, built from public rounds only
            continue
        assert name in ALLOWED or where.endswith(".enc"), f"{workflow} {job}: artifact {name!r} ({where})"
        assert "requested" not in where and "rounds" not in where and "private" not in where, (workflow, job, where)
    assert "requested-round" not in seen  # the plain requested round, once: gone
