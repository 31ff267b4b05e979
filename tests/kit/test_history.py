"""`make history` as a student runs it, against a history the arena wrote: a requested round
of one played from the sealed package `make package` made, sealed to its owner with their log,
merged into the repository's history/, then listed and opened with the owner's key only."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from grader.cli.main import main as arena

pytestmark = pytest.mark.slow  # a round in the sandbox


def noting_agent(owner: str) -> str:
    """An agent that writes a line of its own output per environment, which must reach its
    owner's history only (the act round test plays bob's)."""
    return textwrap.dedent(f"""\
        import sys
        import numpy as np

        class Agent:
            def prepare(self, env_info):
                print(f"{owner}'s own note: a {{env_info['rows']}}x{{env_info['cols']}} board", file=sys.stderr)

            def act(self, obs, action_mask):
                return int(np.flatnonzero(action_mask)[0])

            def observe_outcome(self, outcome):
                pass
        """)


CHATTY = noting_agent("alice")


@pytest.fixture
def history_repo(kit_scripts, tmp_path, capsys):
    """The kit's package of alice's agent, played in a requested round, sealed and merged into a
    repository's history/; (kit folder, modules, repository, round id)."""
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(CHATTY)
    assert modules["package"].main(["--force"]) == 0
    field = tmp_path / "field"
    shutil.copytree(folder / "submission", field / "alice")
    out, private = tmp_path / "requested", tmp_path / "private"
    capsys.readouterr()
    assert (
        arena(
            [
                "round",
                "--tier",
                "ladder",
                "--requested",
                "--agents",
                f"alice={field / 'alice'}",
                "--envs",
                "2",
                "--budget",
                "4",
                "--checkpoints",
                "0,2,4",
                "--games-per-checkpoint",
                "2",
                "--seed",
                "round-7",
                "--tier-seed",
                "tier-7",
                "--out",
                str(out),
                "--private-out",
                str(private),
            ]
        )
        == 0
    )
    (results,) = out.glob("*.yaml")
    round_id = results.stem
    stage, repo = tmp_path / "stage", tmp_path / "repo"
    assert (
        arena(
            [
                "history",
                "seal",
                "--results",
                str(results),
                "--private",
                str(private),
                "--field",
                str(field),
                "--request",
                "c-17",
                "--tier-seed",
                "tier-7",
                "--out",
                str(stage),
            ]
        )
        == 0
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the repository: its replays are refs
    assert arena(["history", "merge", str(stage), "--into", str(repo)]) == 0
    capsys.readouterr()
    return folder, modules, repo, round_id


def test_the_owner_lists_and_opens_their_requested_run_and_log(history_repo, capsys):
    folder, modules, repo, round_id = history_repo
    stored = (repo / "history" / "alice.yaml").read_text()
    # Readable by anyone, so sealed: neither the numbers nor the log are in the plain file.
    assert round_id in stored and "alice's own note" not in stored and "win_rate" not in stored
    assert modules["history"].main(["--from", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "history of alice: 1 round(s)" in out
    line = next(l for l in out.splitlines() if l.startswith(round_id))
    assert "requested" in line and "ladder" in line and "faults none" in line and "win rate" in line
    assert modules["history"].main(["--from", str(repo), round_id, "--save", str(folder / "mine")]) == 0
    out = capsys.readouterr().out
    assert "at     0 games: win rate" in out and "at     4 games: win rate" in out
    assert out.count("alice's own note: a ") == 2  # one environment each, by label
    assert "--- your output in " in out
    assert (folder / "mine" / f"{round_id}.json").exists()


def test_another_key_opens_nothing_and_staff_open_with_the_arenas(history_repo, tmp_path, capsys):
    from nacl.public import PrivateKey

    from grader.documents.sealing import encode_key

    _, modules, repo, round_id = history_repo
    other = tmp_path / "other.key"
    other.write_text(encode_key(bytes(PrivateKey.generate())) + "\n")
    assert modules["history"].main(["--from", str(repo), "--key", str(other)]) == 1
    assert "not to this key" in capsys.readouterr().err
    # Staff read it with the arena's key (the key the submission was sealed to).
    assert arena(["history", "open", "--handle", "alice", "--root", str(repo), "--round", round_id]) == 0
    out, err = capsys.readouterr()
    assert "alice's own note" in out and "faults none" in out
    assert f"refs/replays/alice/{round_id} (--replays DIR writes them)" in err


def publish_seeds(repo, ladder: str) -> None:
    import datetime as dt

    from grader.rounds.seeds import DEFAULT_PATH, PublishedSeeds, write

    write(
        repo / DEFAULT_PATH,
        PublishedSeeds(dt.datetime(2030, 1, 2, tzinfo=dt.UTC), {"ladder": ladder, "final": "another"}),
    )


def test_the_replays_open_once_the_seed_is_published(history_repo, tmp_path, capsys):
    folder, modules, repo, round_id = history_repo
    assert not (repo / "history" / "alice").exists()  # not on the branch: a ref of its own
    assert modules["history"].main(["--from", str(repo)]) == 0
    assert "replays open when the competition has ended" in capsys.readouterr().out
    assert modules["history"].main(["--from", str(repo), round_id]) == 0
    out = capsys.readouterr().out
    assert "replays of this round open when the competition has ended and the ladder seed is published" in out
    assert not (folder / "replays").exists()
    # A seed that is not the round's opens nothing, and says so.
    publish_seeds(repo, "tier-8")
    assert modules["history"].main(["--from", str(repo), round_id]) == 1
    assert "does not open with the published ladder seed" in capsys.readouterr().err
    publish_seeds(repo, "tier-7")
    assert modules["history"].main(["--from", str(repo)]) == 0
    assert "; replays open" in capsys.readouterr().out
    assert modules["history"].main(["--from", str(repo), round_id]) == 0
    out = capsys.readouterr().out
    where = folder / "replays" / round_id
    assert f"written into {where}" in out
    files = sorted(where.glob("*.txt"))
    assert [p.name for p in files] == ["E01.txt", "E02.txt"]
    text = files[0].read_text()
    # alice's checkpoint games against the seeded random opponent, with her boards, a.. by 1..
    assert "checkpoint at 0 games, game 0: you played black against @random" in text
    assert "move 1: you played " in text and "\n  a b c " in text
    for withheld in ("winner", "disc", "threshold", "won", "lost the game"):
        assert withheld not in text
    # Staff open them with the published seed as well.
    assert (
        arena(
            [
                "history",
                "open",
                "--handle",
                "alice",
                "--root",
                str(repo),
                "--round",
                round_id,
                "--replays",
                str(tmp_path / "staff"),
            ]
        )
        == 0
    )
    assert sorted(p.name for p in (tmp_path / "staff").glob("*.txt")) == ["E01.txt", "E02.txt"]
    # Sealing needs the round's own tier seed: without it, or with another, nothing is locked for good.
    results, private, field = tmp_path / "requested" / f"{round_id}.yaml", tmp_path / "private", tmp_path / "field"
    seal = [
        "history",
        "seal",
        "--results",
        str(results),
        "--private",
        str(private),
        "--field",
        str(field),
        "--out",
        str(tmp_path / "again"),
    ]
    assert arena(seal) == 1
    assert "locked with its tier seed: give --tier-seed or ARENA_TIER_SEED" in capsys.readouterr().err
    assert arena(seal + ["--tier-seed", "tier-8"]) == 1
    assert f"not the seed round {round_id} was generated from" in capsys.readouterr().err
    # A damaged file says so.
    from grader.history.owner_history import read_replays, store_replays

    store_replays(repo, "alice", round_id, read_replays(repo, "alice", round_id)[:-1])
    assert modules["history"].main(["--from", str(repo), round_id]) == 1
    assert "damaged" in capsys.readouterr().err


def test_no_history_yet_says_how_one_comes(kit_scripts, tmp_path, capsys):
    from grader.documents.sealing import owner_public_key

    folder, _, modules = kit_scripts
    owner_public_key(folder / ".arena-owner.key")  # the key is there: what is missing is the history
    assert modules["history"].main(["--from", str(tmp_path), "--handle", "alice"]) == 1
    assert "alice has no history yet" in capsys.readouterr().err
