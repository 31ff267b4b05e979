"""arena competition: the calendar and the final's state in config/competition.yaml.

`status` prints the phase (open, frozen, final-pending-review, appeals, ended) and the dates.
`set --final-at T`: staff set the final's date (validated; refused once the field has frozen).
`final-pending --round ID`: the final was merged into rounds/ and waits for review.
`publish-final --actor-id N`: a staff member publishes it (the appeal window opens); a final that
is private (under 8 environments) or has no standing (a field under 8) is refused without --force.
`close`: marks the competition ended once the appeal window has closed (no change before).
`check-frozen`: exit 1 from the freeze on (a workflow step that must not change the field).
`publish-seeds`: once the competition has ended, write the ladder and final seeds (from
$ARENA_LADDER_SEED and $ARENA_FINAL_SEED) to seeds/published.yaml (grader.rounds.seeds), so that
`arena verify` can check every round's seed commitment; before the end it refuses.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from grader.common.errors import OptionError
from grader.documents.yaml_io import dump_yaml, format_time, parse_time, read_yaml
from grader.github import workflow
from grader.play.field import GitError, build_field, commit_at, export_tree
from grader.rounds.seeds import DEFAULT_PATH as DEFAULT_SEEDS_PATH
from grader.season.accounts import load_registry
from grader.season.competition import (
    INVALIDATIONS_PATH,
    Competition,
    FinalStateError,
    Invalidation,
    load_competition,
    load_invalidations,
    write_competition,
    write_invalidations,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "competition",
        help="the freeze, the final's review and the end",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", type=Path, default=Path("config/competition.yaml"))
    p.add_argument("--now", help="the time to act at (ISO 8601; default now)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("status", help="print the phase and the dates").set_defaults(func=run_status)
    dated = actions.add_parser("set", help="set the final's date (staff; commit the file to main)")
    dated.add_argument(
        "--final-at", required=True, help="when the final starts: ISO 8601 with its zone, e.g. 2026-12-14T09:00:00Z"
    )
    dated.set_defaults(func=run_set)
    actions.add_parser("check-frozen", help="exit 1 once the field has frozen").set_defaults(func=run_check_frozen)
    f = actions.add_parser("final-pending", help="record the merged final as pending review")
    f.add_argument("--round", required=True, dest="round_id")
    f.add_argument("--rounds", type=Path, default=Path("rounds"), help="the folder holding the round (default rounds/)")
    f.add_argument(
        "--repo-dir", type=Path, default=Path("."), help="the clone of main, to read the frozen field (default .)"
    )
    f.set_defaults(func=run_final_pending)
    pub = actions.add_parser("publish-final", help="publish the reviewed final (staff)")
    pub.add_argument("--actor-id", type=int, required=True, help="GitHub numeric id of the member of staff")
    pub.add_argument("--accounts", type=Path, default=Path("accounts.yaml"))
    pub.add_argument(
        "--rounds", type=Path, default=Path("rounds"), help="the folder holding the round (default rounds/)"
    )
    pub.add_argument(
        "--triggering-actor", help="login of whoever started this attempt (GITHUB_TRIGGERING_ACTOR): must be staff too"
    )
    pub.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    pub.add_argument(
        "--force",
        action="store_true",
        help="publish a final that is private or has no standing (the reason is printed)",
    )
    pub.set_defaults(func=run_publish)
    rerun = actions.add_parser("rerun-final", help="set aside a failed final pending review, with a reason (staff)")
    rerun.add_argument("--reason", required=True, help="why the final is played again (recorded in the config)")
    rerun.add_argument("--actor-id", type=int, required=True, help="GitHub numeric id of the member of staff")
    rerun.add_argument("--accounts", type=Path, default=Path("accounts.yaml"))
    rerun.add_argument("--triggering-actor", help="login of whoever started this attempt: must be staff too")
    rerun.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    rerun.set_defaults(func=run_rerun_final)
    inval = actions.add_parser("invalidate", help="invalidate one entrant's result in a round, with a reason (staff)")
    inval.add_argument("--round", required=True, dest="round_id")
    inval.add_argument("--handle", required=True, help="the entrant whose result is invalidated")
    inval.add_argument("--reason", required=True, help="why (recorded, shown on the site and in `arena grades`)")
    inval.add_argument("--actor-id", type=int, required=True, help="GitHub numeric id of the member of staff")
    inval.add_argument("--accounts", type=Path, default=Path("accounts.yaml"))
    inval.add_argument("--rounds", type=Path, default=Path("rounds"), help="the folder holding the round")
    inval.add_argument(
        "--invalidations", type=Path, default=INVALIDATIONS_PATH, help=f"the record (default {INVALIDATIONS_PATH})"
    )
    inval.add_argument("--triggering-actor", help="login of whoever started this attempt: must be staff too")
    inval.add_argument("--api-url", help="GitHub API base URL (default $GITHUB_API_URL)")
    inval.set_defaults(func=run_invalidate)
    actions.add_parser("close", help="mark the competition ended once appeals have closed").set_defaults(func=run_close)
    seeds = actions.add_parser("publish-seeds", help="publish the ladder and final seeds once the competition ended")
    seeds.add_argument("--out", type=Path, default=DEFAULT_SEEDS_PATH, help=f"default {DEFAULT_SEEDS_PATH}")
    seeds.add_argument(
        "--if-ended",
        action="store_true",
        help="before the end, say so and exit 0 (the daily workflow step) instead of refusing",
    )
    seeds.set_defaults(func=run_publish_seeds)


def run_status(args: argparse.Namespace) -> int:
    sys.stdout.write(dump_yaml(load_competition(args.config).status(workflow.now(args.now))))
    return 0


def run_set(args: argparse.Namespace) -> int:
    problems: list[str] = []
    final_at = parse_time(args.final_at, "--final-at", problems)
    if problems or final_at is None:
        raise OptionError("--final-at", args.final_at, problems[0] if problems else "--final-at: expected a time")
    now = workflow.now(args.now)
    competition = load_competition(args.config).final_dated(final_at, now)
    write_competition(args.config, competition)
    status = competition.status(now)
    print(
        f"final_at: {status['final_at']} in {args.config}; the field freezes at {status['freeze_at']}; "
        "commit it to main"
    )
    return 0


def run_check_frozen(args: argparse.Namespace) -> int:
    competition = load_competition(args.config)
    now = workflow.now(args.now)
    if competition.frozen(now):
        print(f"the field is frozen (since {competition.status(now)['freeze_at']})", file=sys.stderr)
        return 1
    return 0


def run_final_pending(args: argparse.Namespace) -> int:
    before = load_competition(args.config)
    problems = final_problems(before, args.rounds, args.round_id, workflow.now(args.now), args.repo_dir)
    if problems:
        for problem in problems:
            print(f"arena competition: not the final: {problem}", file=sys.stderr)
        return 1
    competition = before.final_committed(args.round_id)
    write_competition(args.config, competition)
    print(f"final {args.round_id}: pending review")
    return 0


def run_publish(args: argparse.Namespace) -> int:
    registry = load_registry(args.accounts)
    problem = workflow.staff_problem(registry, args.actor_id, args.triggering_actor, args.api_url)
    if problem is not None:
        print(f"arena competition: {problem}; only staff publish the final", file=sys.stderr)
        return 1
    now = workflow.now(args.now)
    before = load_competition(args.config)
    if before.final.status == "pending_review" and not (args.rounds / f"{before.final.round_id}.yaml").exists():
        # The pending final is sealed to the arena's key (withheld/): publishing opens it into rounds/.
        from grader.documents.sealing import SealError, private_key
        from grader.rounds.publish import WITHHELD, WithheldError, release

        try:
            assert before.final.round_id is not None  # a pending final names its round (competition.yaml's rule)
            release(args.rounds.parent / WITHHELD, before.final.round_id, args.rounds, private_key())
        except (WithheldError, SealError) as exc:
            print(f"arena competition: the pending final cannot be opened: {exc}", file=sys.stderr)
            return 1
    problems = final_problems(before, args.rounds, before.final.round_id, now, None) if before.final.round_id else []
    if problems:
        for problem in problems:
            print(f"arena competition: the pending final cannot be published: {problem}", file=sys.stderr)
        return 1
    unranked = unranked_problems(args.rounds, before.final.round_id) if before.final.round_id else []
    if unranked and not args.force:
        for problem in unranked:
            print(f"arena competition: the pending final ranks nobody: {problem}", file=sys.stderr)
        print(
            "arena competition: not published; publish it anyway with --force (the competition.yml input force)",
            file=sys.stderr,
        )
        return 1
    for problem in unranked:
        print(f"arena competition: publishing with --force although {problem}", file=sys.stderr)
    competition = before.final_published(now, args.actor_id)
    write_competition(args.config, competition)
    print(
        f"final {competition.final.round_id}: published; appeals close at {competition.status(now)['appeals_close_at']}"
    )
    return 0


def run_rerun_final(args: argparse.Namespace) -> int:
    registry = load_registry(args.accounts)
    problem = workflow.staff_problem(registry, args.actor_id, args.triggering_actor, args.api_url)
    if problem is not None:
        print(f"arena competition: {problem}; only staff set a final aside", file=sys.stderr)
        return 1
    now = workflow.now(args.now)
    before = load_competition(args.config)
    try:
        after = before.final_set_aside(args.reason, now, args.actor_id)
    except FinalStateError as exc:
        print(f"arena competition: {exc}", file=sys.stderr)
        return 1
    write_competition(args.config, after)
    print(
        f"final {before.final.round_id}: set aside ({args.reason.strip()}); recorded in {args.config}. Commit it, "
        "then dispatch round.yml with tier=final to play the final again"
    )
    return 0


def run_invalidate(args: argparse.Namespace) -> int:
    registry = load_registry(args.accounts)
    problem = workflow.staff_problem(registry, args.actor_id, args.triggering_actor, args.api_url)
    if problem is not None:
        print(f"arena competition: {problem}; only staff invalidate a result", file=sys.stderr)
        return 1
    if not args.reason.strip():
        print("arena competition: --reason: say why the result is invalidated (it is shown beside it)", file=sys.stderr)
        return 1
    path = args.rounds / f"{args.round_id}.yaml"
    withheld = args.rounds.parent / "withheld" / f"{args.round_id}.sealed"
    if path.exists():
        names = [e.get("name") for e in (read_yaml(path).get("field") or [])]
        if args.handle not in names:
            print(
                f"arena competition: {args.handle!r} is not an entrant of {args.round_id} "
                f"(its field: {', '.join(map(str, names))})",
                file=sys.stderr,
            )
            return 1
    elif not withheld.exists():
        print(f"arena competition: no round {args.round_id} in {args.rounds}/ or withheld/", file=sys.stderr)
        return 1
    items = load_invalidations(args.invalidations)
    if any(i.round == args.round_id and i.handle == args.handle for i in items):
        print(f"arena competition: {args.handle}'s result in {args.round_id} is already invalidated", file=sys.stderr)
        return 1
    items.append(Invalidation(args.round_id, args.handle, args.reason.strip(), args.actor_id, workflow.now(args.now)))
    write_invalidations(args.invalidations, items)
    print(
        f"{args.handle} in {args.round_id}: invalidated ({args.reason.strip()}); recorded in {args.invalidations}; "
        "commit it: the site strikes the result through and `arena grades` carries it"
    )
    return 0


def run_close(args: argparse.Namespace) -> int:
    now = workflow.now(args.now)
    before = load_competition(args.config)
    after = before.closed_if_due(now)
    if after is before:
        print(f"not closed: phase {before.phase(now)}, appeals close at {before.status(now)['appeals_close_at']}")
        return 0
    write_competition(args.config, after)
    print("the appeal window has closed: the competition is marked ended")
    return 0


def final_problems(competition: Competition, rounds: Path, round_id: str, now, repo_dir: Path | None) -> list[str]:
    """Why `round_id` is not the competition's final: it must be a final-tier round in `rounds`,
    played from the final's date on, whose entrants are the field as it stood at the freeze
    (read from `repo_dir`'s history when given; each entrant's account and submission digest)."""
    if competition.final_at is None:
        return ["the competition has no final date (final_at is null)"]
    if now < competition.final_at:
        return [f"the final is at {format_time(competition.final_at)}; it is {format_time(now)}"]
    path = Path(rounds) / f"{round_id}.yaml"
    if not path.is_file():
        return [f"no round {round_id} in {rounds}/"]
    data = read_yaml(path)
    info = data.get("round") or {} if isinstance(data, dict) else {}
    if info.get("tier") != "final":
        return [f"round {round_id} is a {info.get('tier')!r}-tier round, not a final-tier one"]
    if repo_dir is None:
        return []
    try:
        frozen = frozen_field(Path(repo_dir), competition.freeze_at)
    except GitError as exc:
        return [f"cannot read the field at the freeze: {exc}"]
    problems = []
    for entry in data.get("field") or []:
        account = entry.get("account")
        if account not in frozen:
            problems.append(f"entrant {entry.get('name')!r} was not in the field at the freeze")
        elif frozen[account] != entry.get("digest"):
            problems.append(f"entrant {account!r} plays a submission other than its one at the freeze")
    if not data.get("field"):
        problems.append(f"round {round_id} has no field")
    return problems


def unranked_problems(rounds: Path, round_id: str) -> list[str]:
    """Why a final round cannot make the final standings: a round on fewer than 8 environments
    is private and one with a field under 8 publishes no standing (the rules, section 8)."""
    data = read_yaml(Path(rounds) / f"{round_id}.yaml")
    info = data.get("round") or {} if isinstance(data, dict) else {}
    envs, field = len(data.get("environments") or []), len(data.get("field") or [])
    problems = []
    if info.get("private"):
        problems.append(f"round {round_id} is private (played on {envs} environments; a public round has 8 or more)")
    if not info.get("standing_published"):
        problems.append(f"round {round_id} has no standing (a field of {field}; a standing needs 8 or more)")
    return problems


def frozen_field(repo_dir: Path, freeze_at) -> dict[str, str]:
    """handle -> submission digest of every approved account's submission on main at the freeze."""
    commit = commit_at(repo_dir, freeze_at)
    with tempfile.TemporaryDirectory(prefix="arena-freeze-") as scratch:
        root = Path(scratch)
        export_tree(repo_dir, commit, root)
        field = build_field(root, "final", None)
    return {e.handle: e.digest for e in field.entrants}


def run_publish_seeds(args: argparse.Namespace) -> int:
    import os

    from grader.rounds import seeds

    if args.out.exists():
        print(f"seeds: {args.out} is already published; nothing to do", file=sys.stderr)
        return 0
    competition = load_competition(args.config)
    if args.if_ended and not competition.ended:
        print("seeds: not published: the competition has not ended", file=sys.stderr)
        return 0
    try:
        published = seeds.publish(competition, workflow.now(args.now), os.environ)
    except seeds.SeedsError as exc:
        print(f"seeds: {exc}", file=sys.stderr)
        return 1
    seeds.write(args.out, published)
    print(
        f"seeds: published the {' and '.join(sorted(published.tier_seeds))} seeds to {args.out}; "
        "`arena verify` now checks every round's seed commitment against them"
    )
    return 0
