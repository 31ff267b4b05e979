"""Regenerate the site's fixture rounds with the real `arena round`, then the goldens.

    python -m tests.site.make_fixtures        (from the repository root; takes a few minutes)

Writes tests/site/fixtures/:
- rounds/      the public projections, as `arena round --out` writes them;
- private/     the staff records (`--private-out`), which the leak test reads for what must
               never reach the site: hidden rules, seeds, agents' stderr, fault details;
- accounts.yaml, competition-*.yaml, site-*.yaml: the registry, the competition state while
               the final is pending review and after the competition ended, and the site
               settings for each.

The rounds: a public round on 2 environments (private: never on the site); a public round on
8 environments with a field of 8 (practice: listed, never leading; its replays open at once); the professor's
ladder round (rules withheld) with 10 entrants, agents' faults and an injected arena fault
that was re-run; a requested ladder run of one (private); the final with the same field.
Every command runs from the repository root with relative paths, so no machine path is
recorded in a fixture. The arena fault is injected the way tests/rounds/test_arena_faults.py
does it (the first launch of one entrant fails with `launch_failed`); the rest is the CLI.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path("tests/site/fixtures")
ROUNDS, PRIVATE = FIXTURES / "rounds", FIXTURES / "private"
LADDER_SEED, LADDER_TIER_SEED = "site-fixture-ladder-round-seed", "8301"
FINAL_SEED, FINAL_TIER_SEED = "site-fixture-final-round-seed", "9412"
SMALL = ["--budget", "10", "--checkpoints", "0,5,10", "--games-per-checkpoint", "2", "--pairing-games", "2"]
FIELD = [
    "random",
    "greedy",
    "minimax",
    "alice=tests/agents/random_agent",
    "bob=examples/random",
    "carol=examples/greedy",
    "dave=tests/site/agents/chatty",
    "erin=tests/agents/crash_mid_game",
    "frank=tests/agents/always_illegal",
    "grace=tests/agents/random_agent",
]
# The practice round: 8 entrants, so that it is public (a field under 8 is private) and its
# replays (rules public) are on the site at once.
PUBLIC8 = [
    "random",
    "greedy",
    "minimax",
    "carol=examples/greedy",
    "alice=tests/agents/random_agent",
    "bob=examples/random",
    "grace=tests/agents/random_agent",
    "dave=tests/site/agents/chatty",
]
INJECT = """
import sys
import grader.rounds.play as play
from grader.play.agent_handle import AgentHandle
from grader.cli.main import main
from grader.common.faults import Fault, FaultKind
from grader.common.limits import DEFAULT_LIMITS
from grader.play.session import HandleSession, open_session

left = {"n": 1}

def opener(entrant, spec, limits, sandbox=None):
    if entrant.name == "alice" and left["n"] > 0:  # the arena's fault, once: the environment is re-run
        left["n"] -= 1
        handle = AgentHandle(None, DEFAULT_LIMITS, "alice")
        handle.fault = Fault(FaultKind.LAUNCH_FAILED, "SITE-LEAK-CANARY-arena-detail")
        return HandleSession("alice", handle)
    return open_session(entrant, spec, limits, sandbox)

play.open_session = opener
sys.exit(main(sys.argv[1:]))
"""


def arena(args: list[str], inject: bool = False) -> str:
    """Run `arena ARGS` from the repository root; the round id it published."""
    head = [sys.executable, "-c", INJECT] if inject else [sys.executable, "-m", "grader.cli.main"]
    print("$ arena " + " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run(head + args, cwd=REPO, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"arena {args[0]} failed ({done.returncode})")
    return Path(done.stdout.strip().splitlines()[-1]).stem


def play_rounds() -> dict[str, str]:
    out = ["--out", str(ROUNDS), "--private-out", str(PRIVATE)]
    ids = {}
    ids["public"] = arena(
        [
            "round",
            "--tier",
            "public",
            "--agents",
            "random",
            "greedy",
            "alice=tests/agents/random_agent",
            "--envs",
            "random-2 most/standard,random-2 fewest/short-1",
            *SMALL,
            *out,
        ]
    )
    ids["public8"] = arena(["round", "--tier", "public", "--agents", *PUBLIC8, "--envs", "8", *SMALL, *out])
    ids["ladder"] = arena(
        [
            "round",
            "--tier",
            "ladder",
            "--agents",
            *FIELD,
            "--envs",
            "8",
            "--seed",
            LADDER_SEED,
            "--tier-seed",
            LADDER_TIER_SEED,
            *SMALL,
            *out,
        ],
        inject=True,
    )
    ids["requested"] = arena(
        [
            "round",
            "--tier",
            "ladder",
            "--agents",
            "alice=tests/agents/random_agent",
            "--envs",
            "8",
            "--seed",
            LADDER_SEED + "-alice",
            "--tier-seed",
            LADDER_TIER_SEED,
            "--requested",
            *SMALL,
            *out,
        ]
    )
    ids["final"] = arena(
        [
            "round",
            "--tier",
            "final",
            "--agents",
            *FIELD,
            "--envs",
            "8",
            "--seed",
            FINAL_SEED,
            "--tier-seed",
            FINAL_TIER_SEED,
            *SMALL,
            *out,
        ]
    )
    return ids


def write_settings(ids: dict[str, str]) -> None:
    from grader.season.competition import Competition, write_competition

    base = Competition(final_at=dt.datetime(2026, 12, 14, 9, tzinfo=dt.UTC))
    pending = base.final_committed(ids["final"])
    published = pending.final_published(dt.datetime(2026, 12, 18, 12, tzinfo=dt.UTC), 1000001)
    ended = published.closed_if_due(dt.datetime(2026, 12, 26, tzinfo=dt.UTC))
    header = "# A fixture of the site's tests (tests/site/make_fixtures.py writes it).\n"
    write_competition(REPO / FIXTURES / "competition-running.yaml", pending, header)
    write_competition(REPO / FIXTURES / "competition-ended.yaml", ended, header)
    accounts = {
        1000001: ("prof-x", "prof", True, True),
        1000002: ("alice-gh", "alice", True, False),
        1000003: ("bob-gh", "bob", True, False),
        1000004: ("carol-gh", "carol", True, False),
        1000005: ("dave-gh", "dave", True, False),
        1000006: ("erin-gh", "erin", True, False),
        1000007: ("frank-gh", "frank", True, False),
        1000008: ("grace-gh", "grace", True, False),
        1000009: ("heidi-gh", "heidi", False, False),
    }
    lines = [header, "schema_version: 1\naccounts:\n"]
    for gid, (login, handle, approved, staff) in accounts.items():
        lines.append(
            f"  {gid}:\n    login: {login}\n    handle: {handle}\n"
            f"    approved: {str(approved).lower()}\n    staff: {str(staff).lower()}\n"
        )
    (REPO / FIXTURES / "accounts.yaml").write_text("".join(lines), encoding="utf-8")
    for state, banner in (
        ("running", "The final is under review; standings follow once staff publish them."),
        ("ended", None),
    ):
        # Every public round is dated here, so the goldens do not depend on when git saw the files.
        text = (
            f'{header}schema_version: 1\nseries:\n  name: "Fixture course, autumn term"\n  rounds:\n'
            f'    - {{id: {ids["public8"]}, date: 2026-10-20, title: "Practice round"}}\n'
            f'    - {{id: {ids["ladder"]}, date: 2026-11-02, title: "Round 1"}}\n'
            f'    - {{id: {ids["final"]}, date: 2026-12-14, title: "Final"}}\n'
            f"announcement: {'null' if banner is None else repr(banner)}\n"
            f"competition: competition-{state}.yaml\n"
            "kit: {zip: kit/othello-arena-kit.zip, version: kit/version}\n"
        )
        (REPO / FIXTURES / f"site-{state}.yaml").write_text(text, encoding="utf-8")


def main() -> int:
    for folder in (ROUNDS, PRIVATE):
        shutil.rmtree(REPO / folder, ignore_errors=True)
    ids = play_rounds()
    # The staff plan is the round's resume state and names each submission by its absolute
    # path on this machine; the site's tests do not read it, so it is not kept as a fixture.
    for plan in (REPO / PRIVATE).glob("*/plan.json"):
        plan.unlink()
    # The rounds are kept as their YAML alone, as rounds written before JSON twins are: the
    # site's tests write twins themselves to check that both read the same.
    for folder in (ROUNDS, PRIVATE):
        for twin in (REPO / folder).glob("*.json"):
            twin.unlink()
    write_settings(ids)
    print(f"fixtures: {ids}", file=sys.stderr)
    from tests.site.goldens import main as goldens

    return goldens(["--update"])


if __name__ == "__main__":
    sys.exit(main())
