"""arena history: owners' histories, their rounds and logs sealed to them (grader.history.owner_history).

`seal` adds a finished round to the history of every entrant whose submission's manifest
carries the owner's key: the round's results document and that entrant's own log (its agent's
output in each environment, from the staff record), sealed to the owner and to the arena's key,
in `OUT/history/<handle>.yaml`; for a ladder or final round also that entrant's replays (its
games' moves and the boards its agent saw, grader.history.replays), locked with the tier's seed
(--tier-seed or ARENA_TIER_SEED) until the seed is published at the end, in
`OUT/history/<handle>/<round-id>.replays`. `merge` adds the entries of such a folder to the repository's
`history/` (what `arena score finish --history` does before it commits) and stores the replays
as refs of their own, `refs/replays/<handle>/<round-id>`, outside every branch; `--push REMOTE`
also pushes those refs there. `open` is staff's
view: an owner's entries opened with the arena's key (`ARENA_SUBMISSION_KEY`, else this user's
key file), and with --replays DIR an entry's replays written there as text (the tier's seed from
the repository's seeds/published.yaml, else --tier-seed or ARENA_TIER_SEED).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from engine import parse_spec
from grader.documents.sealing import MANIFEST_NAME, Manifest, private_key
from grader.documents.yaml_io import format_time, utc_now
from grader.history import replays
from grader.history.owner_history import (
    HistoryError,
    history_path,
    load_history,
    merge,
    open_replays,
    push_replays,
    replays_path,
    replays_ref,
    seal_entry,
    summary,
    write_history,
)
from grader.rounds.plan import commitment
from grader.rounds.records import read_record
from grader.rounds.results import load_results
from grader.rounds.seeds import published_seeds, replay_boards


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "history",
        help="owners' histories: seal a round to its entrants, merge, open (staff)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = actions.add_parser("seal", help="seal a finished round and each entrant's log to its owner")
    s.add_argument("--results", type=Path, required=True, help="the round's results file, as its entrants read it")
    s.add_argument(
        "--private",
        type=Path,
        required=True,
        help="the round's staff folder (its --private-out): the entrants' logs are read from it",
    )
    s.add_argument(
        "--field",
        type=Path,
        required=True,
        help="the folder of the entrants' submissions (<handle>/manifest.yaml): the owners' keys",
    )
    s.add_argument("--request", help="the request id, for a requested run")
    s.add_argument(
        "--tier-seed",
        help="a ladder or final round's tier seed (secret; or ARENA_TIER_SEED): it locks "
        "the replays until it is published",
    )
    s.add_argument("--out", type=Path, required=True, help="the folder to write history/<handle>.yaml under")
    s.set_defaults(func=run_seal)
    m = actions.add_parser("merge", help="add the entries of a sealed folder's history/ to the repository's")
    m.add_argument("source", type=Path, help="a folder holding history/<handle>.yaml files (`seal`'s --out)")
    m.add_argument("--into", type=Path, default=Path("."), help="the repository's top folder (default .)")
    m.add_argument("--push", metavar="REMOTE", help="then push the replays refs (refs/replays/*) to REMOTE")
    m.set_defaults(func=run_merge)
    o = actions.add_parser("open", help="staff: list an owner's entries, or open one, with the arena's key")
    o.add_argument("--handle", required=True)
    o.add_argument("--root", type=Path, default=Path("."), help="the repository's top folder (default .)")
    o.add_argument("--round", dest="round_id", help="print this round's results and log")
    o.add_argument(
        "--replays", type=Path, help="with --round: write its replays into this folder, one text file per environment"
    )
    o.add_argument(
        "--tier-seed",
        help="the round's tier seed, when seeds/published.yaml does not carry it yet (or ARENA_TIER_SEED)",
    )
    o.set_defaults(func=run_open)


def read_round(
    private: Path, round_id: str, names: list[str], packer: replays.Packer | None
) -> dict[str, dict[str, str]]:
    """Each of `names`' logs (environment label -> its agent's output there) from the round's
    staff folder; with `packer`, each environment's games are packed into the owners' replays
    on the way (its spec from the staff results file). One record read at a time: a final's
    records do not fit in memory together."""
    folder = private / round_id / "envs"
    paths = sorted(folder.glob("env-*.json.gz"))
    if not paths:
        raise FileNotFoundError(f"{folder}: no environment records (give the round's --private-out)")
    specs = {}
    if packer is not None:
        staff_path = private / f"{round_id}.yaml"
        specs = {env["label"]: env["spec"] for env in load_results(staff_path)["environments"]}
    logs: dict[str, dict[str, str]] = {name: {} for name in names}
    for path in paths:
        record = read_record(path)
        for name in names:
            logs[name][record.label] = record.stderr.get(name, "")
        if packer is not None:
            if specs.get(record.label) is None:
                raise HistoryError(f"{staff_path}: no spec of environment {record.label}")
            packer.add(record.label, parse_spec(specs[record.label]), record.games)
    return {name: dict(sorted(mine.items())) for name, mine in logs.items()}


def tier_seed_of(results: dict, given: str | None) -> str:
    """The tier seed a ladder or final round's replays are locked with, checked against the
    round's commitment (a wrong one would lock them for good)."""
    tier = results["round"]["tier"]
    seed = given or os.environ.get("ARENA_TIER_SEED") or None
    if seed is None:
        raise HistoryError(
            f"a {tier} round's replays are locked with its tier seed: give --tier-seed or ARENA_TIER_SEED"
        )
    stated = results["provenance"].get("tier_seed_commitment")
    if stated != commitment("tier", seed):
        raise HistoryError(
            f"--tier-seed: not the seed round {results['round']['id']} was generated from (it commits to {stated})"
        )
    return seed


def owners(results: dict, field: Path) -> dict[str, Manifest]:
    """The entrants of a round that get a history entry: those whose manifest in `field` is the
    digest the round played and carries the owner's key."""
    found = {}
    for entrant in results["field"]:
        name = entrant["name"]
        manifest_path = field / name / MANIFEST_NAME
        if not manifest_path.is_file():
            continue  # a reference player, or an entrant played from a plain folder
        manifest = Manifest.from_bytes(manifest_path.read_bytes(), str(manifest_path))
        if manifest.digest != entrant.get("digest"):
            raise HistoryError(
                f"{manifest_path}: the digest {manifest.digest} is not the one round "
                f"{results['round']['id']} played for {name} ({entrant.get('digest')})"
            )
        if manifest.owner_key is None:
            print(
                f"{name}: its manifest carries no owner key (packaged by an older kit): no history entry",
                file=sys.stderr,
            )
            continue
        found[name] = manifest
    return found


def run_seal(args: argparse.Namespace) -> int:
    results = load_results(args.results)
    round_id, tier = results["round"]["id"], results["round"]["tier"]
    kind = "requested" if results["provenance"]["config"].get("requested") else "round"
    now = utc_now()
    tier_seed = tier_seed_of(results, args.tier_seed) if tier in replays.TIERS else None
    manifests = owners(results, args.field)
    with tempfile.TemporaryDirectory(prefix="arena-replays-") as work:
        pool = results["provenance"]["config"].get("pool")
        packer = replays.Packer(round_id, tier, list(manifests), Path(work), pool) if tier_seed is not None else None
        logs = read_round(args.private, round_id, list(manifests), packer)
        for name, manifest in manifests.items():
            assert manifest.owner_key is not None  # owners() keeps only manifests with one
            file_lock = None
            if packer is not None and tier_seed is not None:
                blob, file_lock = replays.lock(packer.finish(name), round_id, name, tier_seed)
                target = replays_path(args.out, name, round_id)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(blob)
                print(target)
            entry = seal_entry(
                results, logs[name], kind, manifest.owner_key, manifest.recipient, now, args.request, file_lock
            )
            path = history_path(args.out, name)
            write_history(path, load_history(path, name).add(entry))
            print(path)
    print(
        f"round {round_id}: sealed to {len(manifests)} owner(s) at {format_time(now)}"
        + (" with their replays" if tier_seed is not None else ""),
        file=sys.stderr,
    )
    return 0


def run_merge(args: argparse.Namespace) -> int:
    for path in merge(args.source, args.into):
        print(path)
    if args.push:
        push_replays(args.into, args.push)
    return 0


def run_open(args: argparse.Namespace) -> int:
    history = load_history(history_path(args.root, args.handle))
    key = private_key()
    if args.round_id is None:
        for entry in history.entries:
            payload = entry.open(key)
            print(
                f"{entry.round}  {entry.kind}  {entry.tier}  {format_time(entry.finished_at)}  "
                f"{summary(payload, history.handle)}"
            )
        return 0
    found = history.get(args.round_id)
    if found is None:
        raise HistoryError(f"{args.handle} has no round {args.round_id} in its history")
    payload = found.open(key)
    print(summary(payload, history.handle))
    for label, text in payload["log"].items():
        print(f"--- {label} ---")
        print(text, end="" if text.endswith("\n") or not text else "\n")
    if args.replays is None:
        if "replays" in payload:
            print(f"replays: {replays_ref(history.handle, found.round)} (--replays DIR writes them)", file=sys.stderr)
        return 0
    seed = published_seeds(args.root).get(found.tier) or args.tier_seed or os.environ.get("ARENA_TIER_SEED") or None
    document = open_replays(args.root, history.handle, found, payload, seed)
    if document is None:
        raise HistoryError(f"round {found.round} left no replays ({found.tier} tier)")
    assert seed is not None  # open_replays raised ReplaysLocked without it
    written = replays.write_readable(replay_boards(document, seed), args.replays)
    print(f"replays: {len(written)} environment(s) written into {args.replays}", file=sys.stderr)
    return 0
