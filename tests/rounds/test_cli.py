"""`arena round`, `arena merge` and `arena verify` from the command line; bad input exits 1, the arena failing 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from grader.rounds.plan import commitment
from grader.sandbox.local import find_bwrap

pytestmark = pytest.mark.timeout(180)
AGENTS = Path(__file__).resolve().parent.parent / "agents"
BASE = [
    "round",
    "--tier",
    "public",
    "--envs",
    "random-2 most/standard",
    "--budget",
    "6",
    "--checkpoints",
    "0,3,6",
    "--games-per-checkpoint",
    "2",
    "--pairing-games",
    "2",
]


def test_round_then_verify(tmp_path, capsys):
    out, private = tmp_path / "rounds", tmp_path / "private"
    assert main(BASE + ["--agents", "random", "greedy", "--out", str(out), "--private-out", str(private)]) == 0
    path = Path(capsys.readouterr().out.strip())
    data = yaml.safe_load(path.read_text())
    assert data["provenance"]["execution"]["command"].startswith("arena round --tier public")
    assert main(["verify", str(path), "--private", str(private)]) == 0
    assert "OK" in capsys.readouterr().out


def test_sharded_round_then_merge(tmp_path, capsys):
    out = tmp_path / "rounds"
    args = BASE[:4] + ["2"] + BASE[5:] + ["--seed", "5", "--agents", "random", "greedy", "--out", str(out)]
    for i in (1, 2):
        assert main(args + ["--shard", f"{i}/2", "--private-out", str(tmp_path / f"p{i}")]) == 0
    assert not out.exists()
    folders = [str(next((tmp_path / f"p{i}").iterdir())) for i in (1, 2)]
    assert main(["merge", *folders, "--out", str(out), "--private-out", str(tmp_path / "joined")]) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert len(yaml.safe_load(path.read_text())["provenance"]["execution"]["shards"]) == 2
    assert main(["verify", str(path)]) == 0


def test_a_public_round_draws_a_fresh_seed_and_records_it(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARENA_ROUND_SEED", raising=False)
    seeds = []
    for run in ("a", "b"):
        out = tmp_path / run
        assert (
            main(BASE + ["--agents", "random", "greedy", "--out", str(out), "--private-out", str(tmp_path / f"p{run}")])
            == 0
        )
        captured = capsys.readouterr()
        data = yaml.safe_load(Path(captured.out.strip()).read_text())
        seed = data["provenance"]["config"]["seed"]
        assert f"round seed {seed} (drawn fresh; --seed {seed} resumes or replays this round)" in captured.err
        assert len(seed) == 16 and seed != "0"
        assert f"--seed {seed}" in data["provenance"]["execution"]["command"]
        assert data["provenance"]["seed_commitment"] == commitment("round", seed)
        assert main(["verify", str(Path(captured.out.strip()))]) == 0
        capsys.readouterr()
        seeds.append(seed)
    assert seeds[0] != seeds[1]
    # A shard must be told the seed: shards of fresh seeds would be different rounds.
    assert main(BASE + ["--agents", "random", "--shard", "1/2", "--out", str(tmp_path / "c")]) == 1
    assert "a sharded round needs --seed" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--checkpoints", "0,5,3"], "increase strictly"),
        (["--checkpoints", "0,3"], "last checkpoint must be the budget"),
        (["--pairing-games", "3"], "even"),
        (["--agents", "random", "no-such-folder"], "neither a submission"),
        (["--shard", "3/2"], "--shard"),
    ],
)
def test_bad_input_exits_1_naming_it(tmp_path, capsys, extra, message):
    args = BASE + ["--agents", "random", "greedy", "--out", str(tmp_path / "o"), "--private-out", str(tmp_path / "p")]
    args = (
        args[: args.index("--agents")] + extra + args[args.index("--agents") :]
        if extra[0] != "--agents"
        else BASE + extra + ["--out", str(tmp_path / "o"), "--private-out", str(tmp_path / "p")]
    )
    assert main(args) == 1
    assert message in capsys.readouterr().err


def test_hidden_tiers_need_their_secrets_and_a_staff_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARENA_TIER_SEED", raising=False)
    monkeypatch.delenv("ARENA_ROUND_SEED", raising=False)
    monkeypatch.delenv("ARENA_PRIVATE_OUT", raising=False)
    base = ["round", "--tier", "final", "--agents", "random", "--envs", "1", "--out", str(tmp_path / "o")]
    assert main(base + ["--private-out", str(tmp_path / "p")]) == 1
    assert "secret round seed" in capsys.readouterr().err
    assert main(base + ["--seed", "x", "--private-out", str(tmp_path / "p")]) == 1
    assert "--tier-seed" in capsys.readouterr().err
    assert main(base + ["--seed", "x", "--tier-seed", "3"]) == 1
    assert "--private-out" in capsys.readouterr().err
    assert main(base + ["--seed", "x", "--tier-seed", "3", "--private-out", str(tmp_path / "o" / "staff")]) == 1
    assert "would be published" in capsys.readouterr().err


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")
def test_a_sandboxed_submission_plays_a_round(tmp_path, capsys):
    out, private = tmp_path / "rounds", tmp_path / "private"
    code = main(
        BASE
        + ["--agents", f"rnd={AGENTS / 'random_agent'}", "random", "--out", str(out), "--private-out", str(private)]
    )
    err = capsys.readouterr()
    if code != 0 and "bwrap" in err.err:
        pytest.skip("bubblewrap cannot create namespaces here")
    assert code == 0, err.err
    path = Path(err.out.strip())
    data = yaml.safe_load(path.read_text())
    entry = next(f for f in data["field"] if f["name"] == "rnd")
    assert entry["kind"] == "submission" and entry["digest"].startswith("sha256:") and entry["account"] == "rnd"
    assert all(row["status"] == "ok" for env in data["environments"] for row in env["agents"])
    assert main(["verify", str(path)]) == 0


def test_a_scored_round_refuses_a_host_missing_a_protection(tmp_path, monkeypatch, capsys):
    """`arena doctor` (docs/architecture.md, "The sandbox"): no submission runs in a ladder round on
    a host that lacks a required protection; a public round goes on with a warning naming it."""
    from grader.cli.commands import round as round_command
    from grader.sandbox.probe import Check

    monkeypatch.setattr(
        round_command,
        "checks_for",
        lambda sandbox: [Check("cgroup memory", False, "no memory controller", required=True)],
    )
    agent = str(Path(__file__).resolve().parents[1] / "agents" / "random_agent")
    base = [
        "round",
        "--agents",
        "random",
        agent,
        "--envs",
        "1",
        "--budget",
        "2",
        "--checkpoints",
        "0,2",
        "--games-per-checkpoint",
        "2",
        "--pairing-games",
        "2",
        "--seed",
        "5",
    ]
    code = main(
        base
        + ["--tier", "ladder", "--tier-seed", "9", "--out", str(tmp_path / "l"), "--private-out", str(tmp_path / "lp")]
    )
    assert code == 2 and "refusing a scored ladder round" in capsys.readouterr().err
    assert not (tmp_path / "l").exists()
    code = main(base + ["--tier", "public", "--out", str(tmp_path / "p"), "--private-out", str(tmp_path / "pp")])
    assert code == 0 and "WARNING: missing sandbox protection(s): cgroup memory" in capsys.readouterr().err


def test_a_full_disk_is_named_and_the_round_resumes(tmp_path, monkeypatch, capsys):
    """The disk fills while the round writes: a clear error, exit 1, nothing half-written, and the
    same command started again finishes the round."""
    import errno
    import os

    real_fsync = os.fsync
    calls = {"n": 0}

    def full_after_two(fd):  # every arena write ends with an fsync (records.atomic_write_bytes)
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    argv = [
        "round",
        "--tier",
        "public",
        "--agents",
        "random",
        "greedy",
        "--envs",
        "2",
        "--budget",
        "2",
        "--checkpoints",
        "0,2",
        "--games-per-checkpoint",
        "2",
        "--pairing-games",
        "2",
        "--seed",
        "3",
        "--out",
        str(tmp_path / "r"),
        "--private-out",
        str(tmp_path / "p"),
    ]
    monkeypatch.setattr(os, "fsync", full_after_two)
    assert main(argv) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.tmp"))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert main(argv) == 0
    published = list((tmp_path / "r").glob("*.yaml"))
    assert len(published) == 1 and main(["verify", str(published[0])]) == 0


@pytest.mark.skipif(find_bwrap() is None, reason="needs bubblewrap for the local sandbox")
def test_a_path_that_is_not_utf8_still_publishes(tmp_path, capsys):
    """Red team: the recorded command quoted the path's bytes as surrogate escapes,
    and the round, played to the end, could never publish (UnicodeEncodeError)."""
    import os
    import shutil

    folder = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"ag\xff")))
    shutil.copytree(AGENTS / "random_agent", folder)
    out, private = tmp_path / "rounds", tmp_path / "private"
    assert main(BASE + ["--agents", f"alice={folder}", "random", "--out", str(out), "--private-out", str(private)]) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    command = yaml.safe_load(path.read_text(encoding="utf-8"))["provenance"]["execution"]["command"]
    assert "alice=ag\\xff" in command
    assert main(["verify", str(path), "--private", str(private)]) == 0


def test_the_recorded_command_names_an_agent_as_its_checkout_does(tmp_path, monkeypatch):
    """`ex-random=/abs/checkout/examples/random` was recorded as `ex-random=random`, which re-runs
    nothing: a path in a git checkout is recorded relative to that checkout's top; inside the
    working folder, relative to it; elsewhere only its last component (no machine path)."""
    import argparse

    from grader.cli.commands import round as round_command

    checkout = tmp_path / "arena"
    (checkout / ".git").mkdir(parents=True)
    agent = checkout / "examples" / "random"
    agent.mkdir(parents=True)
    elsewhere = tmp_path / "loose" / "agent"
    elsewhere.mkdir(parents=True)
    work = tmp_path / "work"
    (work / "field").mkdir(parents=True)
    monkeypatch.chdir(work)
    parser = argparse.ArgumentParser()
    round_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "round",
            "--tier",
            "public",
            "--seed",
            "5",
            "--out",
            str(work / "rounds"),
            "--agents",
            f"ex-random={agent}",
            f"mine={work / 'field'}",
            f"x={elsewhere}",
            "greedy",
        ]
    )
    command = round_command.command_of(args, hidden=False)
    assert "ex-random=examples/random mine=field x=agent greedy" in command
    assert "--out rounds" in command and str(tmp_path) not in command
