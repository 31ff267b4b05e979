"""A round played with `--sandbox docker` is the round played with `--sandbox local`, but for
the sandbox's name (and so the round id) and the image it records; and it verifies."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parent.parent.parent
ROUND = [
    "round",
    "--tier",
    "public",
    "--envs",
    "random-2 most/standard,standard fewest/standard",
    "--budget",
    "20",
    "--checkpoints",
    "0,10,20",
    "--games-per-checkpoint",
    "2",
    "--pairing-games",
    "2",
    "--seed",
    "11",
    "--agents",
    f"ex_random={ROOT / 'examples' / 'random'}",
    f"ex_greedy={ROOT / 'examples' / 'greedy'}",
    "random",
]


def _play(sandbox: str, tmp_path: Path, capsys) -> tuple[dict, bytes, Path, Path]:
    out, private = tmp_path / sandbox / "rounds", tmp_path / sandbox / "private"
    assert main(ROUND + ["--sandbox", sandbox, "--out", str(out), "--private-out", str(private)]) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    data = yaml.safe_load(path.read_text())
    rid = data["round"]["id"]
    games = gzip.decompress((out / rid / "games.jsonl.gz").read_bytes()).replace(rid.encode(), b"ROUND")
    return data, games, path, private


def _without_how_it_ran(data: dict) -> dict:
    data = yaml.safe_load(yaml.safe_dump(data))
    data["round"].pop("id")
    data["provenance"]["config"].pop("sandbox")
    data["provenance"].pop("execution")
    data.pop("games")  # its path names the round id, its hash the games with the id in them
    return data


def test_a_docker_round_is_the_local_round_and_names_its_image(docker_sandbox, local_sandbox, tmp_path, capsys):
    local, local_games, _, _ = _play("local", tmp_path, capsys)
    docker, docker_games, path, private = _play("docker", tmp_path, capsys)
    assert docker["provenance"]["config"]["sandbox"] == "docker"
    assert local["provenance"]["execution"]["images"] == []
    assert docker["provenance"]["execution"]["images"] == [docker_sandbox.image()]
    assert _without_how_it_ran(docker) == _without_how_it_ran(local)
    assert docker_games == local_games
    assert main(["verify", str(path), "--private", str(private)]) == 0
    assert "all match" in capsys.readouterr().out
