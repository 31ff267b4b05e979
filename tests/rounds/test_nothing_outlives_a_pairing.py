"""Nothing outlives a pairing: a field whose agents try to carry a count from one pairing into
the next, each in its own way (files in the sandbox's writable file systems, shared memory with
the frozen process, a pipe it holds, a process still running, the frozen process's memory
written from the fork, a thread or a signal handler of the frozen process,
a System V message queue, the frozen process's nice value or limits), in both sandboxes.
Renaming a third entrant only reorders the pairings: every pairing's games are
byte-identical, and no agent is charged anything (docs/rules.md, section 4). (A frozen
process found changed is charged: tests/sandbox/test_frozen_hold.py.)"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from grader.play.session import parse_entrant
from grader.rounds.orchestrate import make_plan, run_round
from tests.rounds.conftest import read_games

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]
AGENT = Path(__file__).resolve().parent.parent / "agents" / "state_carrier"
ENVS = "random-2 most/standard"
KEPT_OUT = ("files", "shared_memory", "pipe", "process", "memory", "thread", "signal", "ipc", "nice", "limit")


def _play(kind: str, third: str, folder: Path) -> tuple[dict[tuple[str, str], list[str]], dict]:
    """(the pairing games of each pair, with the third's name taken out; each entrant's fault)."""
    entrants = []
    for way in KEPT_OUT + (third,):
        target = folder / "agents" / way
        shutil.copytree(AGENT, target, dirs_exist_ok=True)
        (target / "way.txt").write_text("none" if way == third else way)
        entrants.append(parse_entrant(f"{way}={target}"))
    plan = make_plan("public", entrants, ENVS, 4, [0, 4], 2, 2, "5", None, kind)
    outcome = run_round(plan, folder / "out", folder / "private", jobs=1)
    assert outcome.status == "published", outcome.message
    by_pair: dict[tuple[str, str], list[str]] = {}
    for line in (
        read_games(folder / "out", plan.round_id).replace(plan.round_id.encode(), b"ROUND").decode().splitlines()
    ):
        game = json.loads(line)
        if game.get("phase") != "pairing":
            continue
        pair = tuple(sorted(("X" if n == third else n) for n in (game["black"], game["white"])))
        by_pair.setdefault(pair, []).append(line.replace(f'"{third}"', '"X"'))
    faults = {}
    for env in sorted((folder / "private" / plan.round_id / "envs").glob("*.json.gz")):
        record = json.loads(gzip.decompress(env.read_bytes()))
        for name, entrant in record["entrants"].items():
            faults.setdefault("X" if name == third else name, []).append(entrant.get("fault"))
    return by_pair, faults


@pytest.mark.parametrize("kind", ["local", "docker"])
def test_no_count_outlives_a_pairing(kind, request, tmp_path):
    request.getfixturevalue(f"{kind}_sandbox")
    first, faults = _play(kind, "aaa", tmp_path / "aaa")
    second, again = _play(kind, "zzz", tmp_path / "zzz")
    # The third's own pairings differ (their seeds and colours follow its name); the others'
    # came before the third's in one round and after them in the other.
    field = KEPT_OUT + ("X",)
    for a in KEPT_OUT:
        for b in KEPT_OUT:
            if a < b:
                assert len(first[(a, b)]) == 2 and first[(a, b)] == second[(a, b)], (a, b)
    for found in (faults, again):
        assert all(found[name] == [None] for name in field), found
