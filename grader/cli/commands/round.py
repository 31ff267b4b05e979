"""arena round: play a round over a tier and a field of agents, and publish its results.

Per environment, a fresh session per agent: checkpoint games against the seeded `random`,
budget self-play with an outcome after each game, freeze, then every pair of agents plays
its pairing games (docs/architecture.md, "A round"). Results go to --out (the public
projection) and the staff record to --private-out. Run again with the same arguments to resume after a crash.
A public or paper round without --seed draws a fresh round seed (so the seeded `random`
opponent's moves cannot be known beforehand), prints it and records it in the results and in
the command they name: give that --seed to resume or replay the round. A sharded round needs
--seed, so that every shard plays the same round.
Secrets (--seed of a ladder/final round, --tier-seed) may come from ARENA_ROUND_SEED and
ARENA_TIER_SEED instead, and never appear in any file written to --out.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import sys
from pathlib import Path

from grader.cli.commands.doctor import checks_for, missing_required
from grader.cli.main import ARENA_FAILED, UsageError
from grader.common.schedule import (
    CANONICAL_BUDGET,
    DEFAULT_GAMES_PER_CHECKPOINT,
    DEFAULT_PAIRING_GAMES,
    parse_checkpoints,
    parse_shard,
    sae_warning,
)
from grader.play.field import read_field_measures
from grader.play.session import REFERENCE_NAMES, parse_entrant
from grader.rounds.capacity import host_memory, plan_of_round
from grader.rounds.orchestrate import HIDDEN_TIERS, make_plan, public_round_baseline, run_round
from grader.rounds.plan import MAX_ARENA_FAULTS
from grader.sandbox import ISOLATING
from grader.sandbox.pinning import available_cores

DEFAULT_PRIVATE = ".arena-private"
SECRET = "<secret>"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "round",
        help="play a round and publish its results",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tier", required=True, choices=("public", "paper", "ladder", "final"))
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help=f"submission folders or zips, NAME=PATH, or reference players ({', '.join(REFERENCE_NAMES)})",
    )
    p.add_argument("--envs", help="N (the tier's first N) or ids/names separated by commas (default: the whole tier)")
    p.add_argument(
        "--budget", type=int, default=CANONICAL_BUDGET, help="self-play games per environment (default 2000)"
    )
    p.add_argument(
        "--checkpoints",
        help="games used at which win rate is measured, e.g. 0,100,500,1000,2000 "
        "(default: the canonical ones below the budget, then the budget)",
    )
    p.add_argument("--games-per-checkpoint", type=int, default=DEFAULT_GAMES_PER_CHECKPOINT)
    p.add_argument(
        "--pairing-games", type=int, default=DEFAULT_PAIRING_GAMES, help="games per pair (even; half per colour)"
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="cores to play on: an environment's entrants play at once, one core each, and small "
        "fields' environments share the cores out (default: every core this machine gives)",
    )
    p.add_argument(
        "--seed",
        help="round seed (default on public and paper: drawn fresh, printed and recorded; "
        "required, or ARENA_ROUND_SEED, on ladder and final and for a shard)",
    )
    p.add_argument("--tier-seed", help="generation seed of a ladder or final tier (secret; or ARENA_TIER_SEED)")
    p.add_argument("--sandbox", choices=ISOLATING, default="local", help="where submissions run (default local)")
    p.add_argument(
        "--shard", metavar="I/N", help="play only the I-th of N shares of the environments; join with arena merge"
    )
    p.add_argument("--out", required=True, type=Path, help="folder of public results (rounds/)")
    p.add_argument(
        "--private-out",
        type=Path,
        help="staff folder for the full record (default $ARENA_PRIVATE_OUT, "
        f"or {DEFAULT_PRIVATE}/ on public and paper)",
    )
    p.add_argument(
        "--ladder-rules",
        choices=("staff", "public"),
        default="staff",
        help="the ladder tier's disclosure setting (default staff: rules withheld from rounds/)",
    )
    p.add_argument(
        "--public-round", type=Path, help="a public-tier results file of the same agents, for the generalisation gap"
    )
    p.add_argument(
        "--requested",
        action="store_true",
        help="a requested run (/score): a private round for its entrant, whatever its size",
    )
    p.add_argument(
        "--field",
        type=Path,
        metavar="FIELD.yaml",
        help="the field document `arena field` wrote: its entrants' measured peak memory, which the "
        "round's capacity plan adds up before it starts (refused when this host cannot hold it)",
    )
    p.add_argument(
        "--max-arena-faults",
        type=int,
        default=MAX_ARENA_FAULTS,
        help=f"arena faults tolerated before the round is held (default {MAX_ARENA_FAULTS})",
    )
    p.set_defaults(func=run, parser=p)


def public_word(value: object) -> str:
    """A command word fit to publish, and to re-run the round with (published files name no
    machine paths): an absolute path becomes relative to the working folder when it lies inside
    it, else relative to the git checkout that holds it (`examples/random` from anywhere: re-run
    from that checkout's top), else its last component (its digest is in the field).
    `NAME=PATH` agent entries keep their name."""
    text = str(value)
    name, sep, rest = text.partition("=")
    if sep and not os.path.isabs(text) and os.path.isabs(rest):
        return name + "=" + public_word(rest)
    if not os.path.isabs(text):
        return text
    path = Path(text).resolve()
    for top in (Path.cwd().resolve(), checkout_top(path)):
        if top is not None and path.is_relative_to(top):
            return str(path.relative_to(top)) or "."
    return path.name


def checkout_top(path: Path) -> Path | None:
    """The top folder of the git checkout (a `.git` folder or file) holding `path`, if any."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def command_of(args: argparse.Namespace, hidden: bool) -> str:
    """The command that re-runs this one: every option with its value as parsed, in the
    parser's order, with secrets replaced (the tier seed always, the round seed on hidden tiers).
    Rebuilt from the parsed arguments, so it is the same however the options were typed."""
    secret = {"tier_seed"} | ({"seed"} if hidden else set())
    words = ["arena", args.command]
    for action in args.parser._actions:
        if action.dest == "help":
            continue
        value = getattr(args, action.dest, None)
        if not action.option_strings:  # a positional: its words alone
            if value is not None:
                words += [public_word(v) for v in (value if isinstance(value, list) else [value])]
            continue
        if value is None or value is False:
            continue
        flag = action.option_strings[-1]
        if action.dest in secret:
            words += [flag, SECRET]
        elif value is True:
            words.append(flag)
        elif isinstance(value, list):
            words += [flag] + [public_word(v) for v in value]
        else:
            words += [flag, public_word(value)]
    return shlex.join([utf8_word(w) for w in words])


def utf8_word(word: str) -> str:
    """A command word that every UTF-8 writer takes: an argument's bytes that are not UTF-8
    (the surrogate escapes Python reads them as) are written as backslash escapes."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(word).decode("utf-8", "backslashreplace")
    return word


def private_folder(option: Path | None, tier: str) -> Path:
    if option is not None:
        return option
    if os.environ.get("ARENA_PRIVATE_OUT"):
        return Path(os.environ["ARENA_PRIVATE_OUT"])
    if tier in HIDDEN_TIERS:
        raise UsageError(f"a {tier} round needs --private-out (or ARENA_PRIVATE_OUT): its full record is staff-only")
    return Path(DEFAULT_PRIVATE)


SCORED_TIERS = ("ladder", "final")


def protections_allow(tier: str, sandbox: str, field: list) -> bool:
    """Check the sandbox's required protections before any submission runs. A scored tier
    refuses a host that lacks one (False, after naming it); other tiers go on, warned loudly."""
    if not any(entrant.kind == "submission" for entrant in field):
        return True  # reference players run in-process: nothing to isolate
    missing = missing_required(checks_for(sandbox))
    if not missing:
        return True
    names = "; ".join(f"{c.name} ({c.detail})" for c in missing)
    if tier in SCORED_TIERS:
        print(
            f"arena round: refusing a scored {tier} round: missing protection(s): {names} (see `arena doctor`)",
            file=sys.stderr,
        )
        return False
    print(
        f"arena round: WARNING: missing sandbox protection(s): {names}; this {tier} round is not "
        "scored and goes on, but its agents are less isolated than a scored round requires",
        file=sys.stderr,
    )
    return True


def fresh_seed() -> str:
    """A round seed no one knows before the round: 64 bits from the system's secure source.
    Public and paper rounds publish it with their results; the commitment binds it as before."""
    return secrets.token_hex(8)


def field_memory(path: Path | None, names: list[str]) -> list[int | None] | None:
    """Each entrant's measured peak memory from the field document at `path`, by name, in the
    field's order (None for an entrant it does not measure); None without a document."""
    if path is None:
        return None
    measured = {m.handle: m.memory_bytes for m in read_field_measures(path)}
    return [measured.get(name) for name in names]


def run(args: argparse.Namespace) -> int:
    hidden = args.tier in HIDDEN_TIERS
    seed = args.seed or os.environ.get("ARENA_ROUND_SEED")
    if seed is None and hidden:
        raise UsageError(f"a {args.tier} round needs a secret round seed: --seed or ARENA_ROUND_SEED")
    if seed is None and parse_shard(args.shard) is not None:  # a bad --shard is named first
        raise UsageError("a sharded round needs --seed (or ARENA_ROUND_SEED): every shard must play the same round")
    if seed is None:
        seed = args.seed = fresh_seed()
        print(
            f"arena round: round seed {seed} (drawn fresh; --seed {seed} resumes or replays this round)",
            file=sys.stderr,
        )
    tier_seed = args.tier_seed or (os.environ.get("ARENA_TIER_SEED") if hidden else None)
    if args.jobs is None:
        args.jobs = len(available_cores())
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    field = [parse_entrant(text) for text in args.agents]
    if not protections_allow(args.tier, args.sandbox, field):
        return ARENA_FAILED  # this host cannot isolate agents as a scored round needs
    checkpoints = parse_checkpoints(args.checkpoints, args.budget)
    if (warning := sae_warning(checkpoints)) is not None:
        print(f"arena round: warning: {warning}", file=sys.stderr)
    plan = make_plan(
        args.tier,
        field,
        args.envs,
        args.budget,
        checkpoints,
        args.games_per_checkpoint,
        args.pairing_games,
        seed,
        tier_seed,
        args.sandbox,
        ladder_rules=args.ladder_rules,
        public_round=public_round_baseline(args.public_round) if args.public_round else None,
        max_arena_faults=args.max_arena_faults,
        requested=args.requested,
    )
    shard = parse_shard(args.shard)
    # What the round costs, before it plays: on the shards' runners, of this one's --jobs cores
    # and the memory this host has free, with the field's measured peaks when given.
    capacity = plan_of_round(
        plan, shard[1] if shard else 1, args.jobs, field_memory(args.field, plan.names), host_memory("MemAvailable")
    )
    print("arena round: " + "\n".join(capacity.lines()), file=sys.stderr)
    outcome = run_round(
        plan,
        args.out,
        private_folder(args.private_out, args.tier),
        args.jobs,
        parse_shard(args.shard),
        command_of(args, hidden),
        capacity=capacity,
    )
    if outcome.status == "published":
        print(outcome.public_path)
    return ARENA_FAILED if outcome.status == "held" else 0  # held: the arena failed its environments
