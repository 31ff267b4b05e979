"""Your history: your requested runs and your own logs, opened with your key.

    python history.py --from ARENA            (or: make history FROM=ARENA)
    python history.py --from ARENA ROUND_ID   (or: make history FROM=ARENA ROUND=ROUND_ID)

ARENA is your clone of the arena's repository, or of your fork of it (your history, the
published seeds and your replays are then fetched from the arena's repository, whose address
this kit knows), or the file `history/<your handle>.yaml` itself. The arena keeps each of your requested runs (and the
rounds staff ran with your submission) there, sealed to the key `make package` made for you
(`.arena-owner.key`, in this kit folder, never packaged): anyone can read the repository, but
only you (and staff) can open your entries. Keep that key; a lost one cannot open them.

Without ROUND_ID: one line per round (its id, whether you asked for it, the tier, when it
finished, your SAE with its window, your last win rate and faults). With ROUND_ID: that line,
your win rate at each checkpoint, and your agent's own output (stderr and prints) in each
environment, by label. `--save DIR` also writes the round's results file and your logs there.

Ladder and final rounds also keep your replays: every game your agent played there, with its
moves and the boards your agent saw (never the threshold, the winner or the disc counts), under
the ref refs/replays/<handle>/<ROUND_ID> of the repository, which ROUND_ID fetches into the
clone from its `origin` (the boards are made from the moves by the arena's engine). They
open when the competition has ended and the round's tier seed is published in the clone's
`seeds/published.yaml`; until then ROUND_ID says so. Once open, ROUND_ID writes them as text,
one file per environment, into `replays/<ROUND_ID>/` in this kit folder (or `--replays DIR`).

Your handle is read from `submission/manifest.yaml` (what `make package` wrote), or give it
with --handle. Exit status: 0 shown, 1 nothing to open (no history, another key), 2 the kit
could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import kitenv


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="history.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("round", nargs="?", help="a round's id: open it (its curve and your logs)")
    p.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=Path(os.environ["FROM"]) if os.environ.get("FROM") else None,
        help="your clone of the arena's repository, or your history file ($FROM)",
    )
    p.add_argument(
        "--handle",
        default=os.environ.get("HANDLE") or None,
        help="your handle (default: $HANDLE, else submission/manifest.yaml's)",
    )
    p.add_argument("--key", type=Path, default=None, help="your key (default: .arena-owner.key in this kit folder)")
    p.add_argument("--save", type=Path, help="with ROUND: write its results file and your logs into this folder")
    p.add_argument(
        "--replays",
        type=Path,
        help="with ROUND: write its replays into this folder (default: replays/<ROUND> in this kit folder)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data = kitenv.start(__file__) or {}
    except kitenv.KitSetupError as exc:
        return kitenv.fail(exc)

    from grader.documents.sealing import MANIFEST_NAME, OWNER_KEY_FILE, Manifest, SealError, read_key_file
    from grader.documents.yaml_io import DocumentError
    from grader.history.owner_history import HistoryError, history_path, load_history, open_replays, summary
    from grader.history.replays import ReplaysError, ReplaysLocked, write_readable
    from grader.rounds.seeds import published_seeds, replay_boards

    if args.source is None:
        print(
            "say where your history is: python history.py --from <your clone of the arena's repository> "
            "(make history FROM=...); `git pull` it first",
            file=sys.stderr,
        )
        return 1
    key_file = args.key or kitenv.KIT_DIR / OWNER_KEY_FILE
    try:
        handle = args.handle
        if handle is None:
            manifest_path = kitenv.KIT_DIR / "submission" / MANIFEST_NAME
            if not manifest_path.is_file():
                print(
                    "no handle: give --handle (or HANDLE=...), or run `make package HANDLE=<your handle>` first",
                    file=sys.stderr,
                )
                return 1
            handle = Manifest.from_bytes(manifest_path.read_bytes(), str(manifest_path)).handle
        if not key_file.is_file():
            print(
                f"no key at {key_file}: your entries are sealed to the key `make package` made there; "
                "without it they cannot be opened",
                file=sys.stderr,
            )
            return 1
        key = read_key_file(key_file)
        snapshot, remote = None, "origin"
        scratch_dir = tempfile.TemporaryDirectory(prefix="arena-history-")  # removed when the script ends
        scratch = Path(scratch_dir.name)
        if args.source.is_dir():
            try:
                snapshot, remote = arena_snapshot(args.source, data.get("repository"), handle, scratch)
            except FetchError as exc:
                print(f"history: {exc}", file=sys.stderr)
                return 1
        path = args.source if args.source.is_file() else history_path(snapshot or args.source, handle)
        if not path.exists():
            print(
                f"{handle} has no history yet ({path} does not exist): it gets an entry when a run you "
                "asked for with /score has finished; `git pull` your clone of the arena's repository to see a "
                "new one (a fork's clone does not carry it)",
                file=sys.stderr,
            )
            return 1
        history = load_history(path, handle)
        # The replays' inner layer opens with the tier's seed, published in the clone at the end.
        root = path.parent.parent
        published = published_seeds(root)
        if snapshot is not None:
            root = args.source  # the replays are fetched into the clone itself
        if args.round is None:
            print(f"history of {handle}: {len(history.entries)} round(s)")
            for listed in history.entries:
                payload = listed.open(key)
                what = "requested" if listed.kind == "requested" else "staff's round"
                replays = ""
                if "replays" in payload:
                    replays = (
                        "; replays open"
                        if listed.tier in published
                        else "; replays open when the competition has ended"
                    )
                print(
                    f"{listed.round}  {what}  {listed.tier}  {listed.finished_at:%Y-%m-%d %H:%M}Z  "
                    f"{summary(payload, handle)}{replays}"
                )
            return 0
        entry = history.get(args.round)
        if entry is None:
            print(f"{handle} has no round {args.round} in its history", file=sys.stderr)
            return 1
        payload = entry.open(key)
        try:
            document = open_replays(root, handle, entry, payload, published.get(entry.tier), remote)
            locked = None
        except ReplaysLocked as exc:
            document, locked = None, str(exc)
    except (HistoryError, SealError, ReplaysError, DocumentError) as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 1
    print(f"{entry.round} ({entry.tier}, {entry.finished_at:%Y-%m-%d %H:%M}Z): {summary(payload, handle)}")
    agent = next((a for a in payload["results"].get("agents") or () if a.get("name") == handle), None)
    for point in (agent or {}).get("curve") or ():
        print(f"  at {point['games']:>5} games: win rate {point['win_rate']:.3f}, draw rate {point['draw_rate']:.3f}")
    for label, text in payload["log"].items():
        print(f"--- your output in {label} ---")
        print(text if text else "(nothing)", end="" if text.endswith("\n") else "\n")
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / f"{entry.round}.json").write_text(json.dumps(payload["results"], indent=1), encoding="utf-8")
        for label, text in payload["log"].items():
            if not label.replace("-", "").replace("_", "").isalnum():
                continue  # a label is the arena's own short name; anything else is not a file name
            (args.save / f"{entry.round}-{label}.log").write_text(text, encoding="utf-8")
        print(f"saved into {args.save}")
    if locked is not None:
        print(locked)
    elif document is not None:
        folder = args.replays or kitenv.KIT_DIR / "replays" / entry.round
        try:
            # The boards come from the engine replaying the moves on the environments the
            # published seed draws (the rules are public once it is).
            written = write_readable(replay_boards(document, published[entry.tier]), folder)
        except (ReplaysError, OSError) as exc:
            print(f"history: the replays could not be written: {exc}", file=sys.stderr)
            return 1
        games = sum(len(env["games"]) for env in document["environments"])
        print(
            f"replays: {games} game(s) in {len(written)} environment(s) written into {folder} "
            "(one file per environment)"
        )
    return 0


class FetchError(Exception):
    """The arena's repository could not be fetched; the message says what to do."""


def same_repository(a: str, b: str) -> bool:
    """Whether two git addresses name one GitHub repository (https or ssh, with or without .git)."""

    def norm(url: str) -> str:
        url = url.strip().rstrip("/").lower()
        if url.startswith("git@"):
            url = "https://" + url[4:].replace(":", "/", 1)
        return url[:-4] if url.endswith(".git") else url

    return norm(a) == norm(b)


def arena_snapshot(clone: Path, repository: str | None, handle: str, scratch: Path) -> tuple[Path | None, str]:
    """(a folder holding the arena's history and published seeds as they are on its main, or
    None to read `clone` itself; the remote the replays are fetched from). A clone whose origin
    is not the arena's repository (a fork: students clone their fork to submit) has neither
    the history nor the replays: they are fetched from the arena's address this kit knows."""
    import subprocess

    if repository is None or not (clone / ".git").exists():
        return None, "origin"
    origin = subprocess.run(
        ["git", "-C", str(clone), "remote", "get-url", "origin"], capture_output=True, text=True, timeout=30
    )
    if origin.returncode == 0 and same_repository(origin.stdout, repository):
        return None, "origin"
    where = origin.stdout.strip() if origin.returncode == 0 else "no origin"
    print(
        f"your clone's origin is {where} (your fork?), not the arena's repository {repository}: your history, the "
        f"published seeds and your replays are fetched from {repository}"
    )
    fetched = subprocess.run(
        ["git", "-C", str(clone), "fetch", "--quiet", "--no-tags", repository, "HEAD"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if fetched.returncode != 0:
        why = fetched.stderr.strip().splitlines()
        raise FetchError(
            f"could not fetch {repository} into {clone}: {why[-1] if why else 'git fetch failed'}. "
            f"Check your network, or clone the arena's repository itself (git clone {repository}) "
            "and give that clone as FROM"
        )
    for rel in (f"history/{handle}.yaml", "seeds/published.yaml"):
        blob = subprocess.run(["git", "-C", str(clone), "show", f"FETCH_HEAD:{rel}"], capture_output=True, timeout=60)
        if blob.returncode == 0:
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            (scratch / rel).write_bytes(blob.stdout)
    return scratch, repository


if __name__ == "__main__":
    sys.exit(main())
