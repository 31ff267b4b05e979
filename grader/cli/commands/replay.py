"""arena replay FILE.jsonl: replay game records and check counts and winner; last line `N games, M match`."""

from __future__ import annotations

import argparse
import json
import sys

from engine import ReplayError, SpecError, parse_spec, replay


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay game records and check their results", description=__doc__)
    p.add_argument("file", help="JSON lines: layout, rules, moves, black_discs, white_discs, winner")
    p.set_defaults(func=run)


def check_record(record: dict) -> str | None:
    """None when the record replays to its stated result, else what differs."""
    try:
        spec = parse_spec({"layout": record["layout"], "rules": record["rules"]})
        game = replay(spec, record["moves"])
    except KeyError as exc:
        return f"missing field {exc}"
    except (SpecError, ReplayError) as exc:
        return str(exc)
    except (TypeError, ValueError, IndexError) as exc:  # a record's fields are data: any shape may come
        return f"not a game record: {type(exc).__name__}: {str(exc)[:200]}"
    out = game.outcome()
    found = {"black_discs": out.black_discs, "white_discs": out.white_discs, "winner": out.winner_label}
    if "placements" in record:
        found["placements"] = game.placements
    diffs = [f"{k}: recorded {record[k]!r}, replayed {v!r}" for k, v in found.items() if record.get(k) != v]
    return "; ".join(diffs) or None


def run(args: argparse.Namespace) -> int:
    total = matched = 0
    with open(args.file, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            total += 1
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                print(f"line {lineno}: not UTF-8 (byte {exc.start})", file=sys.stderr)
                continue
            except ValueError as exc:  # JSONDecodeError, or an integer past the conversion limit
                print(f"line {lineno}: not JSON: {exc}", file=sys.stderr)
                continue
            except RecursionError:
                print(f"line {lineno}: nested too deeply to be a game record", file=sys.stderr)
                continue
            problem = check_record(record) if isinstance(record, dict) else "not a JSON object"
            if problem:
                print(f"line {lineno}: {problem}", file=sys.stderr)
            else:
                matched += 1
    print(f"{total} games, {matched} match")
    return 0 if total and matched == total else 1
