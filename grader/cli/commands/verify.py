"""arena verify rounds/<round-id>.yaml [--private DIR]: re-verify a published round.

Every stored game is replayed through the engine and every number of the results file
recomputed; exit 1 naming the first difference.

Once the ladder and final seeds are published (`seeds/published.yaml`, after the competition
ended: grader.rounds.seeds), the round's tier seed commitment is checked against them too; --seeds
names another copy of that file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.documents.yaml_io import read_yaml
from grader.rounds.seeds import DEFAULT_PATH, SeedsError, check_commitment, load
from grader.verification.verify import Difference, check_published_seed_tier, verify


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="replay a round's games and recompute its numbers", description=__doc__)
    p.add_argument("results", type=Path, help="a results file, rounds/<round-id>.yaml")
    p.add_argument(
        "--private",
        type=Path,
        metavar="DIR",
        help="the staff folder holding the full record (needed to replay a tier whose rules are withheld)",
    )
    p.add_argument(
        "--write-twin",
        action="store_true",
        help="once it verifies, (re)write the results file's JSON twin (for a file written "
        "before twins, or a stale twin after a hand edit)",
    )
    p.add_argument(
        "--seeds",
        type=Path,
        metavar="FILE",
        help="the published seeds (default: seeds/published.yaml beside rounds/, when it exists)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.results.exists():
        raise FileNotFoundError(f"{args.results}: no such results file")
    try:
        if args.write_twin:
            from grader.rounds.results import twin_path

            twin_path(args.results).unlink(missing_ok=True)  # the stale twin is what is being replaced
        report = verify(args.results, args.private)
    except Difference as exc:
        print(f"verify {args.results}: DIFFERENT: {exc}", file=sys.stderr)
        return 1
    seeds_path = args.seeds or args.results.resolve().parent.parent / DEFAULT_PATH
    if args.seeds is not None and not seeds_path.exists():
        raise FileNotFoundError(f"--seeds {seeds_path}: no such file")
    if seeds_path.exists():
        data = read_yaml(args.results)
        try:
            seeds = load(seeds_path)
            report.notes.append(check_commitment(data, seeds))
            tier = data["provenance"]["config"]["tier"]
            if data["provenance"]["tier_seed_commitment"] is not None and tier in seeds.tier_seeds:
                report.notes.append(check_published_seed_tier(data, seeds.tier_seeds[tier]))
        except (SeedsError, Difference) as exc:
            print(f"verify {args.results}: DIFFERENT: {exc} ({seeds_path})", file=sys.stderr)
            return 1
    for note in report.notes:
        print(f"verify: note: {note}", file=sys.stderr)
    if args.write_twin:
        from grader.rounds.results import write_twin

        print(f"verify: wrote {write_twin(args.results)}", file=sys.stderr)
    kept = f", {report.self_play_checked} self-play outcomes replayed and checked" if report.self_play_checked else ""
    print(
        f"verify {args.results}: OK: {report.games} games, {report.replayed} replayed{kept}, "
        f"{report.numbers} numbers recomputed, all match"
    )
    return 0
