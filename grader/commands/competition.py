"""arena competition: the calendar and the final's state in config/competition.yaml.

`status` prints the phase (open, frozen, final-pending-review, appeals, ended) and the dates.
`final-pending --round ID`: the final was merged into rounds/ and waits for review.
`publish-final --actor-id N`: a staff member publishes it (the appeal window opens).
`close`: marks the competition ended once the appeal window has closed (no change before).
`check-frozen`: exit 1 from the freeze on (a workflow step that must not change the field).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.accounts import load_registry
from grader.competition import load_competition, write_competition
from grader.documents import dump_yaml
from grader.github import workflow


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("competition", help="the freeze, the final's review and the end", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, default=Path("config/competition.yaml"))
    p.add_argument("--now", help="the time to act at (ISO 8601; default now)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("status", help="print the phase and the dates").set_defaults(func=run_status)
    actions.add_parser("check-frozen", help="exit 1 once the field has frozen").set_defaults(func=run_check_frozen)
    f = actions.add_parser("final-pending", help="record the merged final as pending review")
    f.add_argument("--round", required=True, dest="round_id")
    f.set_defaults(func=run_final_pending)
    pub = actions.add_parser("publish-final", help="publish the reviewed final (staff)")
    pub.add_argument("--actor-id", type=int, required=True, help="GitHub numeric id of the member of staff")
    pub.add_argument("--accounts", type=Path, default=Path("accounts.yaml"))
    pub.set_defaults(func=run_publish)
    actions.add_parser("close", help="mark the competition ended once appeals have closed").set_defaults(func=run_close)


def run_status(args: argparse.Namespace) -> int:
    sys.stdout.write(dump_yaml(load_competition(args.config).status(workflow.now(args.now))))
    return 0


def run_check_frozen(args: argparse.Namespace) -> int:
    competition = load_competition(args.config)
    now = workflow.now(args.now)
    if competition.frozen(now):
        print(f"the field is frozen (since {competition.status(now)['freeze_at']})", file=sys.stderr)
        return 1
    return 0


def run_final_pending(args: argparse.Namespace) -> int:
    competition = load_competition(args.config).final_committed(args.round_id)
    write_competition(args.config, competition)
    print(f"final {args.round_id}: pending review")
    return 0


def run_publish(args: argparse.Namespace) -> int:
    registry = load_registry(args.accounts)
    if not registry.is_staff(args.actor_id):
        print(f"arena competition: GitHub account {args.actor_id} is not staff; only staff publish the final",
              file=sys.stderr)
        return 1
    now = workflow.now(args.now)
    competition = load_competition(args.config).final_published(now, args.actor_id)
    write_competition(args.config, competition)
    print(f"final {competition.final.round_id}: published; appeals close at {competition.status(now)['appeals_close_at']}")
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
