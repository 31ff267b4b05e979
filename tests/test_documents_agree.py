"""The documents say one thing, and what the code does: no tier is given network egress (the
rules' ladder egress is a stated departure), and the scored tiers' seeds are published once the
competition has ended (grader.rounds.seeds), which no page may deny."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.rounds.seeds import DEFAULT_PATH

ROOT = Path(__file__).resolve().parent.parent


def read(path: str) -> str:
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())  # one line: wrapping is not wording


def test_no_round_or_smoke_test_asks_for_egress():
    """The code's side of the statement: nothing that plays agents passes a network but "none"."""
    for path in [
        *(ROOT / "grader" / "rounds").glob("*.py"),
        ROOT / "grader" / "play" / "smoke.py",
        ROOT / "grader" / "play" / "self_play.py",
        ROOT / "grader" / "play" / "session.py",
        ROOT / "grader" / "play" / "match.py",
    ]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "network":
                assert isinstance(node.value, ast.Constant) and node.value.value == "none", f"{path}:{node.lineno}"


def test_the_rules_state_the_network_departure_and_security_agrees():
    rules = read("docs/rules.md")
    assert "No network, on every tier." in rules and "This arena departs from that" in rules
    assert "Network access inside the sandbox is a tier setting" not in rules
    security = read("docs/security.md")
    assert "Ladder rounds give agents network egress" not in security
    assert "No round gives agents network egress, the ladder included" in security
    assert "may have network egress" not in read(".github/workflows/round.yml")


def test_the_pages_say_the_seeds_are_published_after_the_end():
    for path in ("docs/rules.md", "docs/benchmark-spec.md", "site_templates/round.html"):
        text = read(path)
        assert "seed of a scored tier is never published" not in text and "seed itself is never published" not in text
    assert f"`{DEFAULT_PATH.as_posix()}`" in read("docs/rules.md")
    assert "published once the competition has ended" in read("site_templates/round.html")


def test_the_kit_readme_says_no_network_on_any_tier_and_speaks_of_no_api_key():
    readme = read("kit/README.md")
    assert "no network: not in any round of any tier, nor in the checks" in readme
    assert "no network on the final" not in readme
    for path in ("kit/README.md", "docs/security.md", "docs/rules.md", "kit/agent.py"):
        assert "API key" not in read(path), f"{path} speaks of an API key an agent could use: no agent has a network"


def test_the_protocol_judges_the_pace_per_phase_as_the_code_does():
    protocol = read("docs/protocol.md")
    pace = next(
        line for line in (ROOT / "docs" / "protocol.md").read_text().splitlines() if line.startswith("| pace |")
    )
    assert "mean over each phase" in pace and "over the session" not in pace
    assert "judged on its own mean" in protocol
    policy = (ROOT / "grader" / "common" / "policy.py").read_text()
    assert "environment is judged on its own mean" in policy  # the fault's own words


def test_the_documents_state_one_rule_of_privacy():
    rules, staff, results = read("docs/rules.md"), read("docs/staff.md"), read("docs/results.md")
    assert "nor on the site, in a comment, a status, an artifact or a log" in rules
    assert "a public-tier round is practice and never leads it" in rules
    assert "grader.season.disclosure.private_reasons" in results
    assert "arena competition rerun-final --reason" in staff and "arena competition invalidate" in staff
    assert "upload time) is shown on your page from the freeze on" in rules
