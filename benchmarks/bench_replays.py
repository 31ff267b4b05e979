"""Owners' replays: their packed size per game and the time to build them, scaled to a final.

    python -m benchmarks replays

Plays a real final round, small (the whole 28-environment final tier, three example agents, a
budget of 4 with checkpoints at 0, 2 and 4, 20 games per checkpoint and per pairing), packs each
entrant's replays as `arena history seal` does, and prints the bytes per game of each (the
random agent's games are all distinct, so its figure is the one to scale), the bytes per
self-play game had they been kept, the time to pack them and to open one owner's (the engine
making the boards from the moves), and those scaled to a realistic final: a field of 120, 5
checkpoints of 20 games, 20 games per pairing, a budget of 2000.
Not a test: the figures docs/rules.md (section 8) and docs/staff.md quote come from here.
"""

from __future__ import annotations

import contextlib
import io
import json
import lzma
import tempfile
import time
from pathlib import Path

from engine import parse_spec
from grader.cli.commands.history import read_round
from grader.cli.main import main as arena
from grader.history import replays
from grader.history.owner_history import MAX_FILE_BYTES
from grader.rounds.records import read_record
from grader.rounds.results import load_results

AGENTS = ("random", "greedy", "positional")
FIELD, ENVS, CHECKPOINTS, PER_GAMES, BUDGET = 120, 28, 5, 20, 2000


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="bench-replays-") as tmp:
        work = Path(tmp)
        with contextlib.redirect_stdout(io.StringIO()):
            code = arena(
                [
                    "round",
                    "--tier",
                    "final",
                    "--agents",
                    *(f"{a}={root / 'examples' / a}" for a in AGENTS),
                    "--envs",
                    str(ENVS),
                    "--budget",
                    "4",
                    "--checkpoints",
                    "0,2,4",
                    "--games-per-checkpoint",
                    str(PER_GAMES),
                    "--pairing-games",
                    str(PER_GAMES),
                    "--seed",
                    "bench-replays",
                    "--tier-seed",
                    "bench-tier",
                    "--sandbox",
                    "local",
                    "--out",
                    str(work / "out"),
                    "--private-out",
                    str(work / "private"),
                ]
            )
        if code != 0:
            print(f"the round failed ({code})")
            return 1
        private = work / "private"
        round_id = next(private.glob("*.yaml")).stem
        start = time.perf_counter()
        packer = replays.Packer(round_id, "final", list(AGENTS), work / "pack")
        read_round(private, round_id, list(AGENTS), packer)
        seconds = time.perf_counter() - start
        sizes, locks = {}, {}
        for name in AGENTS:
            blob, locks[name] = replays.lock(packer.finish(name), round_id, name, "bench-tier")
            sizes[name] = len(blob)
            if name == "random":
                opened = replays.unlock(blob, locks[name], round_id, "final", "bench-tier")
        games = sum(len(read_record(p).games) for p in (private / round_id / "envs").glob("env-*.json.gz"))
        per_owner_games = ENVS * (3 * PER_GAMES + (len(AGENTS) - 1) * PER_GAMES)
        for name in AGENTS:
            print(
                f"{name:>10}: {per_owner_games} games, {sizes[name]} bytes sealed, "
                f"{sizes[name] / per_owner_games:.0f} bytes a game"
            )
        print(f"packing: {games} games in {seconds:.1f} s, {1000 * seconds / games:.3f} ms a game")
        start = time.perf_counter()
        specs = [parse_spec(e["spec"]) for e in load_results(private / f"{round_id}.yaml")["environments"]]
        replays.with_boards(opened, specs)
        opening = (time.perf_counter() - start) / per_owner_games
        print(f"opening (the engine makes the boards): {1000 * opening:.2f} ms a game")
        self_play = self_play_bytes(private, round_id, "random")
        per_game = sizes["random"] / per_owner_games
        owner_games = ENVS * (CHECKPOINTS * PER_GAMES + (FIELD - 1) * PER_GAMES)
        without = owner_games * per_game
        with_self = without + ENVS * BUDGET * self_play
        round_games = ENVS * (FIELD * CHECKPOINTS * PER_GAMES + FIELD * (FIELD - 1) // 2 * PER_GAMES)
        print(f"self-play: {self_play:.0f} bytes a game")
        print(
            f"a final of {FIELD} on {ENVS} environments: {owner_games} games an owner, "
            f"{without / 1e6:.1f} MB an owner without self-play ({FIELD * without / 1e9:.1f} GB the field), "
            f"{with_self / 1e6:.1f} MB with it ({FIELD * with_self / 1e9:.1f} GB); a history file may take "
            f"{MAX_FILE_BYTES / 1e6:.1f} MB"
        )
        print(
            f"packing them: {round_games} games, about {round_games * seconds / games / 60:.1f} CPU minutes; "
            f"an owner opening theirs: about {owner_games * opening / 60:.1f} minutes"
        )
    return 0


def self_play_bytes(private: Path, round_id: str, name: str) -> float:
    """Packed bytes per self-play game of `name`, had they been kept: their moves."""
    kept, count = [], 0
    for path in sorted((private / round_id / "envs").glob("env-*.json.gz")):
        record = read_record(path)
        for game in record.entrants[name].self_play_games:
            kept.append({"phase": "self_play", "index": count, "moves": game["moves"]})
            count += 1
    return len(lzma.compress(json.dumps(kept, separators=(",", ":")).encode(), preset=1)) / max(count, 1)


if __name__ == "__main__":
    raise SystemExit(main())
