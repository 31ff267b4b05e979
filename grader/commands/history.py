"""arena history: owners' histories, their rounds and logs sealed to them (grader.history).

`seal` adds a finished round to the history of every entrant whose submission's manifest
carries the owner's key: the round's results document and that entrant's own log (its agent's
output in each environment, from the staff record), sealed to the owner and to the arena's key,
in `OUT/history/<handle>.yaml`. `merge` adds the entries of such a folder to the repository's
`history/` (what `arena score finish --history` does before it commits). `open` is staff's
view: an owner's entries opened with the arena's key (`ARENA_SUBMISSION_KEY`, else this user's
key file).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.documents import format_time, utc_now
from grader.history import HistoryError, history_path, load_history, merge, seal_entry, summary, write_history
from grader.results import load_results
from grader.rounds.records import read_record
from grader.sealing import MANIFEST_NAME, Manifest, private_key


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="owners' histories: seal a round to its entrants, merge, open (staff)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = actions.add_parser("seal", help="seal a finished round and each entrant's log to its owner")
    s.add_argument("--results", type=Path, required=True, help="the round's results file, as its entrants read it")
    s.add_argument("--private", type=Path, required=True,
                   help="the round's staff folder (its --private-out): the entrants' logs are read from it")
    s.add_argument("--field", type=Path, required=True,
                   help="the folder of the entrants' submissions (<handle>/manifest.yaml): the owners' keys")
    s.add_argument("--request", help="the request id, for a requested run")
    s.add_argument("--out", type=Path, required=True, help="the folder to write history/<handle>.yaml under")
    s.set_defaults(func=run_seal)
    m = actions.add_parser("merge", help="add the entries of a sealed folder's history/ to the repository's")
    m.add_argument("source", type=Path, help="a folder holding history/<handle>.yaml files (`seal`'s --out)")
    m.add_argument("--into", type=Path, default=Path("."), help="the repository's top folder (default .)")
    m.set_defaults(func=run_merge)
    o = actions.add_parser("open", help="staff: list an owner's entries, or open one, with the arena's key")
    o.add_argument("--handle", required=True)
    o.add_argument("--root", type=Path, default=Path("."), help="the repository's top folder (default .)")
    o.add_argument("--round", dest="round_id", help="print this round's results and log")
    o.set_defaults(func=run_open)


def entrant_logs(private: Path, round_id: str, name: str) -> dict[str, str]:
    """Environment label -> `name`'s output there, from the round's staff folder."""
    folder = private / round_id / "envs"
    paths = sorted(folder.glob("env-*.json.gz"))
    if not paths:
        raise FileNotFoundError(f"{folder}: no environment records (give the round's --private-out)")
    logs = {}
    for path in paths:
        record = read_record(path)
        logs[record.label] = record.stderr.get(name, "")
    return dict(sorted(logs.items()))


def run_seal(args: argparse.Namespace) -> int:
    results = load_results(args.results)
    round_id = results["round"]["id"]
    kind = "requested" if results["provenance"]["config"].get("requested") else "round"
    now = utc_now()
    sealed = 0
    for entrant in results["field"]:
        name = entrant["name"]
        manifest_path = args.field / name / MANIFEST_NAME
        if not manifest_path.is_file():
            continue  # a reference player, or an entrant played from a plain folder
        manifest = Manifest.from_bytes(manifest_path.read_bytes(), str(manifest_path))
        if manifest.digest != entrant.get("digest"):
            raise HistoryError(f"{manifest_path}: the digest {manifest.digest} is not the one round {round_id} "
                               f"played for {name} ({entrant.get('digest')})")
        if manifest.owner_key is None:
            print(f"{name}: its manifest carries no owner key (packaged by an older kit): no history entry",
                  file=sys.stderr)
            continue
        entry = seal_entry(results, entrant_logs(args.private, round_id, name), kind, manifest.owner_key,
                           manifest.recipient, now, args.request)
        path = history_path(args.out, name)
        write_history(path, load_history(path, name).add(entry))
        print(path)
        sealed += 1
    print(f"round {round_id}: sealed to {sealed} owner(s) at {format_time(now)}", file=sys.stderr)
    return 0


def run_merge(args: argparse.Namespace) -> int:
    for path in merge(args.source, args.into):
        print(path)
    return 0


def run_open(args: argparse.Namespace) -> int:
    history = load_history(history_path(args.root, args.handle))
    key = private_key()
    if args.round_id is None:
        for entry in history.entries:
            payload = entry.open(key)
            print(f"{entry.round}  {entry.kind}  {entry.tier}  {format_time(entry.finished_at)}  "
                  f"{summary(payload, history.handle)}")
        return 0
    found = history.get(args.round_id)
    if found is None:
        raise HistoryError(f"{args.handle} has no round {args.round_id} in its history")
    payload = found.open(key)
    print(summary(payload, history.handle))
    for label, text in payload["log"].items():
        print(f"--- {label} ---")
        print(text, end="" if text.endswith("\n") or not text else "\n")
    return 0
