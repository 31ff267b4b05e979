"""arena disclose: keep a private round's numbers off main (docs/rules.md, "Rounds").

`arena disclose RESULTS` reads a round just written to rounds/ (by `arena merge` or `arena
round`): a public round stays; a private one (a requested run, fewer than 8 environments, a
field under 8, or a final until staff publish it) is sealed to the arena's public key
(`ARENA_SUBMISSION_PUBLIC_KEY`, else this user's key) into `withheld/<round-id>.sealed` and its
plain files are removed from rounds/, so that nothing of it is committed in plain. Its entrants
read it in their sealed histories; staff open it with the arena's key:
`arena disclose --release ROUND-ID` writes it back into rounds/ (what `arena competition
publish-final` does for the final).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.documents.sealing import PUBLIC_KEY_ENV, SealError, encode_key, private_key, public_key_text
from grader.documents.yaml_io import read_yaml
from grader.rounds.publish import WITHHELD, WithheldError, release, withhold
from grader.season.competition import load_competition
from grader.season.disclosure import private_reasons


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "disclose",
        help="seal a private round out of rounds/ (or release one, staff)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("results", nargs="?", type=Path, help="the round's results file in rounds/")
    p.add_argument("--release", metavar="ROUND-ID", help="open a withheld round into rounds/ (the arena's key)")
    p.add_argument("--rounds", type=Path, default=Path("rounds"), help="with --release: where to (default rounds/)")
    p.add_argument("--withheld", type=Path, default=WITHHELD, help=f"the sealed rounds (default {WITHHELD}/)")
    p.add_argument(
        "--config",
        type=Path,
        default=Path("config/competition.yaml"),
        help="the competition (which final is published)",
    )
    p.set_defaults(func=run)


def arena_recipient() -> str:
    """The arena's public key, never one made up here: a round sealed to a key nobody keeps
    would be lost. `ARENA_SUBMISSION_PUBLIC_KEY`, else the public half of the arena's key
    (`ARENA_SUBMISSION_KEY` or this user's key file)."""
    if os.environ.get(PUBLIC_KEY_ENV):
        return public_key_text()
    try:
        return encode_key(bytes(private_key().public_key))
    except SealError as exc:
        raise SealError(
            f"{exc}; a private round is sealed to the arena's public key: set {PUBLIC_KEY_ENV} (the "
            "repository variable round.yml passes)"
        ) from None


def run(args: argparse.Namespace) -> int:
    if (args.results is None) == (args.release is None):
        print("arena disclose: give a results file, or --release ROUND-ID", file=sys.stderr)
        return 1
    try:
        if args.release:
            written = release(args.withheld, args.release, args.rounds, private_key())
            print(f"released {args.release} into {args.rounds}/ ({len(written)} files); commit them to publish it")
            return 0
        data = read_yaml(args.results)
        published = None
        if args.config.exists():
            final = load_competition(args.config).final
            published = final.round_id if final.status == "published" else None
        reasons = private_reasons(data, published)
        round_id = data["round"]["id"]
        if not reasons:
            print(f"{round_id}: public; it stays in {args.results.parent}/")
            return 0
        out = withhold(args.results.parent, round_id, args.withheld, arena_recipient())
        print(
            f"{round_id}: private ({'; '.join(reasons)}): sealed to the arena's key into {out}; "
            f"nothing of it stays in {args.results.parent}/"
        )
        return 0
    except (WithheldError, SealError, OSError) as exc:
        print(f"arena disclose: {exc}", file=sys.stderr)
        return 1
