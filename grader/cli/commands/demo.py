"""arena demo --out DIR --site DIR: play a small ladder round, verify it, and build the site.

The field is the example agents (examples/*/agent.py, in the embedded sandbox) and the
reference players random, greedy and minimax: 5 and 3, a field of 8, the least for which a
round publishes a standing. 8 ladder environments (the least for a round that is not private)
drawn from a seed the demo names, with their rules shown, at a reduced budget: a practice
(public-tier) round never leads a board, a ladder round of the series does. The round goes to
DIR/rounds (public) and DIR/private (staff), never into the repository's own rounds/. With
--site, the site is built from DIR/rounds into that folder, the demo round on its board.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from dataclasses import replace
from pathlib import Path

import yaml

from grader.cli.main import ARENA_FAILED, UsageError
from grader.common.schedule import parse_checkpoints
from grader.play.session import REFERENCE_NAMES, Entrant, parse_entrant
from grader.rounds.aggregates import MIN_ENVS_FOR_PUBLIC, MIN_FIELD_FOR_STANDING
from grader.rounds.orchestrate import make_plan, run_round
from grader.sandbox import ISOLATING
from grader.sandbox.pinning import available_cores
from grader.verification.verify import Difference, verify

REPO = Path(__file__).resolve().parents[3]
DEMO_ENVS = str(MIN_ENVS_FOR_PUBLIC)  # a round that is not private: the public site lists it and builds its pages
DEMO_BUDGET = 100
DEMO_CHECKPOINTS = "0,20,50,100"
DEMO_GAMES = 10
# The demo's ladder seed is no secret: a course's ladder seed is its own and never published
# while the competition runs.
DEMO_TIER = "ladder"
DEMO_TIER_SEED = "28"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="play, verify and publish a small demonstration round",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, type=Path, help="folder for the demo round (git-ignored; not rounds/)")
    p.add_argument("--site", type=Path, help="folder to build the site into, if the site builder exists")
    p.add_argument("--jobs", type=int, default=None, help="cores to play on (default: every core this machine gives)")
    p.add_argument("--sandbox", choices=ISOLATING, default="local")
    p.set_defaults(func=run)


def example_agents() -> list[Entrant]:
    """Every examples/<name>/ with an agent.py, as a sandboxed submission."""
    folder = REPO / "examples"
    if not folder.is_dir():
        return []
    entrants = [parse_entrant(str(d)) for d in sorted(folder.iterdir()) if (d / "agent.py").is_file()]
    # An example called like a reference player (examples/random) is renamed, not dropped.
    return [replace(e, name=f"example-{e.name}") if e.name in REFERENCE_NAMES else e for e in entrants]


def demo_field() -> list[Entrant]:
    """The demo's field: the example agents, then the reference players."""
    return example_agents() + [parse_entrant(name) for name in REFERENCE_NAMES]


def demo_site_config(out: Path, round_id: str) -> Path:
    """A site.yaml naming the demo round as the series' only round, with a banner saying so."""
    path = out / "site.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "series": {
                    "name": "Demonstration",
                    "rounds": [{"id": round_id, "date": datetime.date.today().isoformat(), "title": "Demo round"}],
                },
                "announcement": "A demonstration build: the example agents and the reference players "
                "on a few ladder environments at a reduced budget (make demo).",
            },
            sort_keys=False,
        )
    )
    return path


def build_site(rounds: Path, site: Path, config: Path) -> str:
    """Build the site from the demo's rounds; a line saying where to open it."""
    from grader.site import build

    build(rounds, site, config=config)
    return f"site built: open {site / 'index.html'}"


def run(args: argparse.Namespace) -> int:
    out = args.out.resolve()
    repo_rounds = REPO / "rounds"
    if out == repo_rounds or repo_rounds in out.parents or out == REPO:
        raise UsageError(f"--out {args.out}: the demo never writes into the repository's own rounds/")
    start = time.monotonic()
    field = demo_field()
    examples = len(field) - len(REFERENCE_NAMES)
    print(
        f"demo: {examples} example agent(s) and {len(REFERENCE_NAMES)} reference players on "
        f"{DEMO_ENVS} {DEMO_TIER} environments (tier seed {DEMO_TIER_SEED}, rules shown), budget {DEMO_BUDGET}",
        file=sys.stderr,
    )
    if not examples:
        print("demo: no examples/ folder with agents: the field is the reference players only", file=sys.stderr)
    if len(field) < MIN_FIELD_FOR_STANDING:
        print(
            f"demo: a field of {len(field)}, fewer than {MIN_FIELD_FOR_STANDING}: the round publishes no "
            "standing, so the site's board stays empty",
            file=sys.stderr,
        )
    plan = make_plan(
        DEMO_TIER,
        field,
        DEMO_ENVS,
        DEMO_BUDGET,
        parse_checkpoints(DEMO_CHECKPOINTS, DEMO_BUDGET),
        DEMO_GAMES,
        DEMO_GAMES,
        "0",
        DEMO_TIER_SEED,
        args.sandbox,
        ladder_rules="public",
    )
    jobs = args.jobs or len(available_cores())
    outcome = run_round(plan, out / "rounds", out / "private", jobs, None, f"arena demo --out {args.out} --jobs {jobs}")
    if outcome.status != "published" or outcome.public_path is None:
        return ARENA_FAILED  # the bundled agents' round: only the arena can fail it
    try:
        report = verify(outcome.public_path, out / "private")
    except Difference as exc:
        print(f"demo: verify found a difference: {exc}", file=sys.stderr)
        return ARENA_FAILED
    print(
        f"demo: verified: {report.games} games, {report.replayed} replayed, {report.numbers} numbers recomputed",
        file=sys.stderr,
    )
    if args.site is not None:
        config = demo_site_config(out, outcome.public_path.stem)
        print(f"demo: {build_site(out / 'rounds', args.site.resolve(), config)}", file=sys.stderr)
    print(f"demo: done in {time.monotonic() - start:.0f} s; results in {outcome.public_path}", file=sys.stderr)
    print(outcome.public_path)
    return 0
