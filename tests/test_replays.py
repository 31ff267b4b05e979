"""grader.history.replays: an owner's replays of a ladder or final round, the recorded moves locked twice
(the owner's entry key outside, the tier seed inside), the boards made by the engine when they
are opened, and nothing that says who won or by how much."""

from __future__ import annotations

import datetime as dt
import json
import lzma
import random
import subprocess

import pytest
from nacl.public import PrivateKey

from engine import LOST, PASS, Game, tier_specs
from grader.documents.sealing import encode_key
from grader.history import replays
from grader.history.owner_history import (
    History,
    HistoryError,
    history_path,
    merge,
    open_replays,
    push_replays,
    replays_path,
    replays_ref,
    seal_entry,
    store_replays,
    write_history,
)

ROUND = "final-abcdef0123"
SEED = "final-seed-7"
WHEN = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
RESULTS = {"round": {"id": ROUND, "tier": "final"}, "agents": []}


def random_game(spec, rng: random.Random, lose_at: int | None = None) -> list:
    """A finished game's recorded moves on `spec`, passes included, one "lost" turn at ply `lose_at`."""
    game = Game(spec)
    while not game.done:
        if game.plies == lose_at and game.has_legal_move():
            game.lose_turn()
        elif game.has_legal_move():
            game.play(rng.choice(game.legal_cells()))
        else:
            game.pass_turn()
    return list(game.moves)


@pytest.fixture(scope="module")
def sources():
    rng = random.Random(5)
    specs = tier_specs("final", 11, 3)
    out = []
    for e, spec in enumerate(specs):
        label = f"E{e + 1:02d}"
        games = [
            {
                "env": label,
                "phase": "checkpoint",
                "checkpoint": 0,
                "index": 0,
                "black": "alice",
                "white": "@random",
                "moves": random_game(spec, rng, lose_at=4),
            },
            {
                "env": label,
                "phase": "pairing",
                "checkpoint": None,
                "index": 1,
                "black": "bob",
                "white": "alice",
                "moves": random_game(spec, rng),
            },
            {
                "env": label,
                "phase": "pairing",
                "checkpoint": None,
                "index": 0,
                "black": "bob",
                "white": "carol",
                "moves": random_game(spec, rng),
            },
        ]
        out.append((label, spec, games))
    return out


def all_keys(value) -> set:
    if isinstance(value, dict):
        return set(value) | set().union(*(all_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(set(), *(all_keys(v) for v in value))
    return set()


def packed(sources, work, names=("alice",)) -> dict[str, bytes]:
    packer = replays.Packer(ROUND, "final", list(names), work)
    for label, spec, games in sources:
        packer.add(label, spec, games)
    return {name: packer.finish(name) for name in names}


def specs_of(sources):
    return [spec for _, spec, _ in sources]


def test_a_replay_holds_the_owners_games_with_the_boards_the_engine_gives(sources, tmp_path):
    stored = replays.build(ROUND, "final", "alice", sources, tmp_path)
    assert not any("acts" in g for e in stored["environments"] for g in e["games"])  # moves alone are kept
    doc = replays.with_boards(stored, specs_of(sources))
    assert [e["label"] for e in doc["environments"]] == ["E01", "E02", "E03"]
    for (_label, spec, games), env in zip(sources, doc["environments"]):
        assert [(g["phase"], g["index"], g["colour"], g["opponent"]) for g in env["games"]] == [
            ("checkpoint", 0, "black", "@random"),
            ("pairing", 1, "white", "bob"),
        ]
        for game, kept in zip(games, env["games"]):
            assert kept["moves"] == game["moves"]
            colour = 0 if kept["colour"] == "black" else 1
            # Each act's board against the observation and mask the engine gives the agent there.
            board, acts = Game(spec), iter(kept["acts"])
            for ply, move in enumerate(game["moves"]):
                if board.side_to_move == colour and move != PASS:
                    act = next(acts)
                    obs, mask = board.agent_view()
                    want = [
                        "#"
                        if obs[2].flat[i]
                        else "x"
                        if obs[0].flat[i]
                        else "o"
                        if obs[1].flat[i]
                        else "+"
                        if mask[i]
                        else "."
                        for i in range(spec.layout.rows * spec.layout.cols)
                    ]
                    assert (act["ply"], act["move"], act["board"]) == (ply, move, "".join(want))
                (
                    board.pass_turn
                    if move == PASS
                    else board.lose_turn
                    if move == LOST
                    else lambda m=move: board.play(m)
                )()
            assert next(acts, None) is None
    assert any(a["move"] == LOST for a in doc["environments"][0]["games"][0]["acts"])


def test_a_replay_names_no_winner_disc_count_or_rule(sources, tmp_path):
    stored = replays.build(ROUND, "final", "alice", sources, tmp_path)
    doc = replays.with_boards(stored, specs_of(sources))
    keys = all_keys(doc)
    assert not keys & replays.FORBIDDEN_KEYS, keys & replays.FORBIDDEN_KEYS
    assert keys == {
        "schema_version",
        "round",
        "tier",
        "pool",
        "handle",
        "board_chars",
        "own",
        "opponent",
        "obstacle",
        "empty",
        "legal",
        "environments",
        "label",
        "env",
        "rows",
        "cols",
        "games",
        "phase",
        "checkpoint",
        "index",
        "colour",
        "moves",
        "acts",
        "ply",
        "board",
        "move",
    }
    # The environment's id is stored (the boards are made from it once the seed is published,
    # which makes the tier public); its name and rules are not, and the text names only the label.
    text = repr(stored)
    written = "".join(p.read_text() for p in replays.write_readable(doc, tmp_path / "out"))
    for spec in specs_of(sources):
        assert spec.id in text and spec.id not in written
        for t in (text, written):
            assert spec.name not in t and spec.rules.win.value not in t and spec.rules.capture.value not in t


def test_boards_need_the_environments_of_the_published_seed(sources, tmp_path):
    stored = replays.build(ROUND, "final", "alice", sources, tmp_path)
    with pytest.raises(replays.ReplaysError, match="is not an environment of the final tier the published seed draws"):
        replays.with_boards(stored, tier_specs("final", 12, 3))
    # A game whose moves do not play on the environment it names is refused, not drawn.
    broken = json.loads(json.dumps(stored))
    broken["environments"][0]["games"][0]["moves"][0] = 10_000
    with pytest.raises(replays.ReplaysError, match="E01 checkpoint 0: move 0"):
        replays.with_boards(broken, specs_of(sources))


def test_locked_until_the_seed_is_given_and_only_by_the_right_keys(sources, tmp_path):
    doc = replays.build(ROUND, "final", "alice", sources, tmp_path)
    blob, lock = replays.lock(packed(sources, tmp_path)["alice"], ROUND, "alice", SEED)
    assert b"alice" not in blob and b"@random" not in blob
    with pytest.raises(
        replays.ReplaysLocked, match="open when the competition has ended and the final seed is published"
    ):
        replays.unlock(blob, lock, ROUND, "final", None)
    with pytest.raises(replays.ReplaysError, match="does not open with the published final seed"):
        replays.unlock(blob, lock, ROUND, "final", "ladder-seed")
    other = replays.FileLock(lock.file, bytes(32))
    with pytest.raises(replays.ReplaysError, match="does not open with its entry's key"):
        replays.unlock(blob, other, ROUND, "final", SEED)
    assert replays.unlock(blob, lock, ROUND, "final", SEED) == doc
    # One key per round: another round's id under the same seed does not open it.
    with pytest.raises(replays.ReplaysError, match="does not open with the published"):
        replays.unlock(blob, lock, "final-9876543210", "final", SEED)
    tampered = bytearray(blob)
    tampered[len(replays.MAGIC) + 40] ^= 1
    with pytest.raises(replays.ReplaysError, match="damaged"):
        replays.unlock(bytes(tampered), lock, ROUND, "final", SEED)
    with pytest.raises(replays.ReplaysError, match="not a replays file"):
        replays.unlock(b"hello" + blob, lock, ROUND, "final", SEED)


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def test_sealed_into_history_the_owner_opens_them_only_with_the_seed(sources, tmp_path):
    owner, staff, stranger = PrivateKey.generate(), PrivateKey.generate(), PrivateKey.generate()
    blob, lock = replays.lock(packed(sources, tmp_path)["alice"], ROUND, "alice", SEED)
    entry = seal_entry(
        RESULTS, {}, "round", encode_key(bytes(owner.public_key)), encode_key(bytes(staff.public_key)), WHEN, None, lock
    )
    stage, origin, repo = tmp_path / "stage", tmp_path / "origin.git", tmp_path / "repo"
    write_history(history_path(stage, "alice"), History("alice").add(entry))
    replays_path(stage, "alice", ROUND).parent.mkdir(parents=True)
    replays_path(stage, "alice", ROUND).write_bytes(blob)
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True, capture_output=True)
    # Merged: the entry into history/, the replays as a ref of their own and no file on the branch.
    assert merge(stage, repo) == [history_path(repo, "alice")]
    assert not (repo / "history" / "alice").exists()
    ref = replays_ref("alice", ROUND)
    assert ref == f"refs/replays/alice/{ROUND}"
    assert git(repo, "ls-tree", "--name-only", ref).decode().split() == [f"{ROUND}.replays"]
    assert git(repo, "cat-file", "blob", f"{ref}:{ROUND}.replays") == blob
    push_replays(repo)
    # A fresh clone of the branches carries no replays; opening fetches the owner's own ref.
    git(repo, "add", "history")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "history")
    git(repo, "push", "-q", "origin", "HEAD:main")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--branch", "main", str(origin), str(clone)], check=True, capture_output=True)
    assert b"refs/replays" not in git(clone, "for-each-ref")
    for key in (owner, staff):
        payload = entry.open(key)
        with pytest.raises(replays.ReplaysLocked):
            open_replays(clone, "alice", entry, payload, None)
        assert open_replays(clone, "alice", entry, payload, SEED)["handle"] == "alice"
    assert git(clone, "for-each-ref", "--format=%(refname)").decode().split().count(ref) == 1
    with pytest.raises(HistoryError, match="not to this key"):
        entry.open(stranger)
    # An entry of version 1 (from before replays) still opens, and has none.
    old = seal_entry(
        RESULTS, {}, "round", encode_key(bytes(owner.public_key)), encode_key(bytes(staff.public_key)), WHEN
    )
    assert open_replays(clone, "alice", old, old.open(owner), SEED) is None
    store_replays(clone, "alice", ROUND, blob[:-10])
    with pytest.raises(replays.ReplaysError, match="damaged"):
        open_replays(clone, "alice", entry, entry.open(owner), SEED)
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    with pytest.raises(replays.ReplaysError, match="not fetched from 'origin'"):
        open_replays(other, "alice", entry, entry.open(owner), SEED)


def test_one_pass_packs_each_owner_as_alone(sources, tmp_path):
    both = packed(sources, tmp_path / "both", ("alice", "bob"))
    for name in ("alice", "bob"):
        assert both[name] == packed(sources, tmp_path / name, (name,))[name]
    assert not list((tmp_path / "both").iterdir())  # the packing files are gone
    nobody = json.loads(lzma.decompress(packed(sources, tmp_path / "dave", ("dave",))["dave"]))
    assert nobody["environments"] == [] and nobody["handle"] == "dave"


def test_the_text_names_cells_as_the_site_does(sources, tmp_path):
    doc = replays.with_boards(replays.build(ROUND, "final", "alice", sources, tmp_path), specs_of(sources))
    written = replays.write_readable(doc, tmp_path / "out")
    assert [p.name for p in written] == ["E01.txt", "E02.txt", "E03.txt"]
    env = doc["environments"][0]
    text = written[0].read_text()
    first = env["games"][0]["acts"][0]
    assert f"move {first['ply'] + 1}: you played {replays.cell_name(first['move'], env['cols'])}" in text
    assert replays.cell_name(0, 8) == "a1" and replays.cell_name(8 * 2 + 3, 8) == "d3"
    assert "checkpoint at 0 games, game 0: you played black against @random" in text
    assert "pairing, game 1: you played white against bob" in text
    assert "carol" not in text  # a game alice did not play
