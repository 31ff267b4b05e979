"""The engine's command-line forms, exactly as later checks call them."""

from __future__ import annotations

import json

import yaml

from grader.cli.main import main
from tests.conftest import DATA


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def write_spec(tmp_path, rows=7, cols=9, obstacles=((0, 0), (6, 8)), win="fewest", capture="longest"):
    path = tmp_path / "spec.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "layout": {"rows": rows, "cols": cols, "obstacles": [list(o) for o in obstacles]},
                "rules": {"win": win, "capture": capture},
            }
        )
    )
    return str(path)


def test_perft_prints_the_count_last(capsys, tmp_path):
    code, out, _ = run(capsys, "perft", write_spec(tmp_path, 8, 8, (), "most", "standard"), "--depth", "5")
    assert code == 0 and out[-1] == "1396"


def test_perft_divide(capsys):
    code, out, _ = run(capsys, "perft", "standard most/standard", "--depth", "3", "--divide")
    assert code == 0 and out[-1] == "56" and "20: 14" in out


def test_perft_bad_spec_is_a_usage_error(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("layout: {rows: 3, cols: 8}\nrules: {win: most, capture: sideways}\n")
    code, _, err = run(capsys, "perft", str(bad), "--depth", "2")
    assert code == 1 and "layout.rows" in err and "rules.capture" in err
    code, _, err = run(capsys, "perft", str(tmp_path / "missing.yaml"), "--depth", "2")
    assert code == 1 and "neither a spec file" in err


def test_envs_formats(capsys):
    code, out, _ = run(capsys, "envs", "--tier", "public", "--format", "json")
    docs = json.loads("\n".join(out))
    assert code == 0 and len(docs) == 56 and all(d["id"].startswith("env-") for d in docs)
    code, out, _ = run(capsys, "envs", "--tier", "paper")
    assert code == 0 and len(yaml.safe_load("\n".join(out))) == 56
    code, out, _ = run(capsys, "envs", "--tier", "ladder", "--seed", "28", "--count", "3")
    ladder = yaml.safe_load("\n".join(out))
    assert code == 0 and [d["id"] for d in ladder][:2] == ["env-0775ccf94e69", "env-19fd70a0739f"]
    code, _, err = run(capsys, "envs", "--tier", "final")
    assert code == 1 and "--seed" in err


def test_replay_transcripts_and_a_tampered_one(capsys, tmp_path):
    code, out, _ = run(capsys, "replay", str(DATA / "paper_transcripts.jsonl"))
    assert code == 0 and out[-1] == "448 games, 448 match"
    lines = (DATA / "paper_transcripts.jsonl").read_text().splitlines()[:3]
    record = json.loads(lines[1])
    record["white_discs"] += 1
    lines[1] = json.dumps(record)
    tampered = tmp_path / "t.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "replay", str(tampered))
    assert code == 1 and out[-1] == "3 games, 2 match" and "line 2: white_discs" in err


def test_simulate_summary_is_json_on_the_last_line(capsys, tmp_path):
    spec = write_spec(tmp_path)
    code, out, _ = run(capsys, "simulate", spec, "--games", "200", "--seed", "9")
    summary = json.loads(out[-1])
    assert code == 0 and summary["games"] == 200
    assert summary["black_wins"] + summary["white_wins"] + summary["draws"] == 200
    assert 0 < summary["mean_fill"] <= 1 and summary["mean_plies"] > 8
    again = run(capsys, "simulate", spec, "--games", "200", "--seed", "9")[1]
    assert again[-1] == out[-1]  # deterministic for a seed
    code, out, _ = run(capsys, "simulate", spec, "--games", "4", "--seed", "1", "--black", "greedy")
    assert code == 0 and json.loads(out[-1])["black"] == "greedy"


def test_replay_names_each_hostile_line_and_goes_on(capsys, tmp_path):
    """Red team: an auditor's file is data; no line of it stops the replay."""
    game = '{"layout": {"rows": 8, "cols": 8}, "rules": {"win": "most", "capture": "standard"}, "moves": %s}'
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(
        b"\n".join(
            [
                ("[" * 5000 + "]" * 5000).encode(),
                b"\xff\xfe",
                (game % "5").encode(),
                (game % '["x"]').encode(),
                b"[1, 2]",
                b'{"moves": []}',
                b"1" * 5000,
            ]
        )
        + b"\n"
    )
    code, out, err = run(capsys, "replay", str(hostile))
    assert code == 1 and out[-1] == "7 games, 0 match"
    for n, text in enumerate(
        [
            "nested too deeply",
            "not UTF-8",
            "not a game record: TypeError",
            "move 0 ('x'): cell 'x' is not a legal move",
            "not a JSON object",
            "missing field",
            "not JSON",
        ],
        1,
    ):
        assert f"line {n}: {text}" in err, (n, err)
    assert "Traceback" not in err


def test_envs_takes_a_seed_as_published(capsys, tmp_path):
    """The seeds file publishes a tier seed as text (a hex string, as docs/results.md recommends
    drawing it); `arena envs` lists the tier the rounds drew from it, as `arena round` does."""
    from grader.rounds.environments import select_envs

    published = "3f0c9a1b2c3d4e5f6a7b8c9d0e1f2a3b"
    code, out, err = run(capsys, "envs", "--tier", "final", "--seed", published, "--count", "2", "--format", "json")
    assert code == 0, err
    assert [e["id"] for e in json.loads("\n".join(out))] == [s.id for s in select_envs("final", "2", published)]
    code, out, _ = run(capsys, "envs", "--tier", "ladder", "--seed", "28", "--count", "1", "--format", "json")
    assert code == 0 and json.loads("\n".join(out))[0]["id"] == select_envs("ladder", "1", "28")[0].id
