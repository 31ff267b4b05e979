"""Nothing of the fixtures' private records that the public projection withholds reaches _site/.

Read from the staff records (tests/site/fixtures/private): agents' stderr, fault details (the
agent's and the arena's), the round seeds and game seeds of tiers whose rules are withheld,
the identities of their environments, and their rules next to their labels. Every file of both
builds (running and ended) is searched, compressed data included.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest

from grader.site.model import rules_label, rules_text
from tests.site.conftest import site_text
from tests.site.goldens import FIXTURES
from tests.site.make_fixtures import FINAL_SEED, FINAL_TIER_SEED, LADDER_SEED, LADDER_TIER_SEED

pytestmark = pytest.mark.timeout(120)
PRIVATE = FIXTURES / "private"


def env_records():
    for path in sorted(PRIVATE.glob("*/envs/*.json.gz")):
        yield path.parts[-3], json.loads(gzip.decompress(path.read_bytes()))


def public_profile(round_id: str) -> str:
    text = (FIXTURES / "rounds" / f"{round_id}.yaml").read_text()
    return re.search(r"^disclosure:\n  profile: (\w+)", text, re.M).group(1)


def secrets() -> dict[str, str]:
    """secret text -> where it comes from; none may appear in the site."""
    found: dict[str, str] = {}
    for rid, record in env_records():
        for name, err in record["stderr"].items():
            for line in err.splitlines():
                if len(line.strip()) >= 12:
                    found[line.strip()[:60]] = f"{rid}: stderr of {name}"
        for name, entrant in record["entrants"].items():
            fault = entrant.get("fault")
            if fault and len(fault.get("detail") or "") >= 12:
                found[fault["detail"][:60]] = f"{rid}: fault detail of {name}"
        for fault in record.get("arena_faults", []):
            if len(fault.get("detail") or "") >= 12:
                found[fault["detail"][:60]] = f"{rid}: arena fault detail"
        if public_profile(rid) != "open":
            found[record["env_id"]] = f"{rid}: hidden environment id"
            for game in record["games"]:
                if game.get("seed", 0) >= 10**8:
                    found[str(game["seed"])] = f"{rid}: game seed"
    for seed in (LADDER_SEED, FINAL_SEED):
        found[seed] = "a round seed of a hidden tier"
    found["SITE-LEAK-CANARY"] = "the canaries of the fixture agents and the injected arena fault"
    return found


def test_the_fixtures_have_secrets_to_find():
    found = secrets()
    kinds = " ".join(found.values())
    assert "stderr" in kinds and "fault detail" in kinds and "hidden environment id" in kinds and "game seed" in kinds


@pytest.mark.parametrize("state", ["running", "ended"])
def test_no_private_text_reaches_the_site(state, site_running, site_ended):
    files = site_text(site_running if state == "running" else site_ended)
    found = secrets()
    # One pass per file over a pattern of every secret (as a trie, so a position is tried
    # against all of them at once): the practice round's replays are a thousand pages.
    pattern = trie_pattern(found)
    leaks = [
        f"{rel}: {found[m.group()]}: {m.group()[:40]!r}" for rel, text in files.items() for m in pattern.finditer(text)
    ]
    assert leaks == []


def trie_pattern(words) -> re.Pattern:
    """A regular expression matching exactly the words, longest first where one is a prefix of another."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = True

    def build(node: dict) -> str:
        branches = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return re.compile(build(trie))


def test_the_trie_pattern_finds_every_word_and_only_them():
    words = ["SITE-LEAK-1", "SITE-LEAK-12", "abc", "abd", "x"]
    pattern = trie_pattern(words)
    assert [m.group() for m in pattern.finditer("..SITE-LEAK-12.SITE-LEAK-1 abd ab x")] == [
        "SITE-LEAK-12",
        "SITE-LEAK-1",
        "abd",
        "x",
    ]


@pytest.mark.parametrize("state", ["running", "ended"])
def test_hidden_rules_are_not_printed_beside_their_rounds(state, site_running, site_ended):
    files = site_text(site_running if state == "running" else site_ended)
    for full in sorted(PRIVATE.glob("*.yaml")):
        rid = full.stem
        if public_profile(rid) == "open":
            continue
        text = full.read_text()
        specs = re.findall(r"rules:\n\s+win: (\w+)\n\s+capture: ([\w-]+)", text)
        assert specs, f"{rid}: the staff record should carry its rules"
        pages = {rel: t for rel, t in files.items() if rid in rel}
        for rel, page in pages.items():
            for win, capture in set(specs):
                rules = {"win": win, "capture": capture}
                assert rules_label(rules) not in page, f"{rel} names a hidden rule {rules_label(rules)}"
                assert rules_text(rules) not in page, f"{rel} describes a hidden rule"


def test_tier_seeds_never_appear_as_such(site_running, site_ended):
    for files in (site_text(site_running), site_text(site_ended)):
        for rel, text in files.items():
            for seed in (LADDER_TIER_SEED, FINAL_TIER_SEED):
                assert f"tier-seed {seed}" not in text and f"--tier-seed', '{seed}" not in text, rel
