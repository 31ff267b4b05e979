"""`arena grades` and `arena appeal` on rounds played here: two windows, a faulted entrant."""

from __future__ import annotations

import csv
import io

import pytest
import yaml

from grader.cli.main import main
from grader.play.session import python_entrant
from grader.rounds.orchestrate import run_round
from grader.rounds.results import load_results
from tests.rounds.conftest import field, small_plan

pytestmark = pytest.mark.timeout(300)


def entrants(*named):
    """In-process agents entered as students' accounts (the workflows name them HANDLE=PATH)."""
    from dataclasses import replace

    return [replace(python_entrant(n, f"tests.rounds.agents:{c}"), account=n) for n, c in named]


@pytest.fixture(scope="module")
def two_windows(tmp_path_factory):
    """Round 1 over the window [5, 10], round 2 over [4, 12]; `crash` faults in round 2."""
    out = tmp_path_factory.mktemp("rounds")
    first = run_round(
        small_plan(field(references=("random",)) + entrants(("alpha", "Learner"), ("bravo", "FirstLegal"))),
        out,
        out.parent / "p1",
        command="test",
    ).public_path
    second = run_round(
        small_plan(
            field(references=("random",))
            + entrants(("alpha", "Learner"), ("bravo", "LastLegal"), ("crash", "CrashLate")),
            budget=12,
            checkpoints=(0, 4, 12),
        ),
        out,
        out.parent / "p2",
        command="test",
    ).public_path
    return first, second


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_grades_compare_only_rows_of_one_window(two_windows, capsys):
    first, second = two_windows
    assert main(["grades", str(first), str(second)]) == 0
    table = rows(capsys.readouterr().out)
    assert [r["student"] for r in table] == ["alpha", "alpha", "bravo", "bravo", "crash"]  # no reference player
    by = {(r["student"], r["round"]): r for r in table}
    one, two = load_results(first), load_results(second)
    old = by[("alpha", one["round"]["id"])]
    new = by[("alpha", two["round"]["id"])]
    assert (old["sae_b0"], old["sae_b_max"], new["sae_b0"], new["sae_b_max"]) == ("5", "10", "4", "12")
    # The export's window is the newest round's: the old row is carried, with the reason, and compared with nothing.
    assert old["status"] == "other window: SAE over [5, 10], the export's is [4, 12]; not compared"
    assert old["best_sae"] == "" and new["status"] == "ok"
    alpha = next(a for a in two["agents"] if a["name"] == "alpha")
    assert float(new["sae"]) == pytest.approx(alpha["sae"]["value"], abs=1e-6)
    assert float(new["best_sae"]) == pytest.approx(alpha["sae"]["value"], abs=1e-6)
    assert (new["wins"], new["draws"], new["losses"]) == tuple(
        str(alpha["record"][k]) for k in ("wins", "draws", "losses")
    )
    assert new["standing"] == "" and new["field"] == "4"  # a field under 8 publishes no standing
    crash = by[("crash", two["round"]["id"])]
    assert int(crash["faults"]) > 0 and crash["fault_kinds"].startswith("agent_error=")
    # Over the first round's window, the second round's rows are the ones carried aside.
    assert main(["grades", str(first), str(second), "--window", "5,10"]) == 0
    table = {(r["student"], r["round"]): r for r in rows(capsys.readouterr().out)}
    assert table[("alpha", one["round"]["id"])]["status"] == "ok"
    assert table[("alpha", two["round"]["id"])]["status"].startswith("other window: SAE over [4, 12]")
    assert main(["grades", str(first), "--window", "10,5"]) == 1
    assert "B0 must be positive and below BMAX" in capsys.readouterr().err


def test_grades_written_to_a_file(two_windows, tmp_path, capsys):
    target = tmp_path / "grades.csv"
    assert main(["grades", *map(str, two_windows), "--out", str(target)]) == 0
    assert "grades: 5 rows from 2 rounds" in capsys.readouterr().err
    assert rows(target.read_text())[0]["student"] == "alpha"


def test_appeal_evidence_without_environment_identities(two_windows, capsys):
    _, second = two_windows
    data = load_results(second)
    assert main(["appeal", "--round", str(second), "--student", "crash"]) == 0
    evidence = yaml.safe_load(capsys.readouterr().out)
    assert evidence["student"] == "crash" and evidence["round"] == data["round"]["id"]
    assert [e["label"] for e in evidence["environments"]] == [e["label"] for e in data["environments"]]
    assert any(e["faulted"] and e["status"] == "agent_error" for e in evidence["environments"])
    assert evidence["totals"]["faults"]["agent_error"] >= 1
    text = yaml.safe_dump(evidence)
    for env in data["environments"]:  # a public round states ids and specs; the evidence never does
        assert env["id"] not in text and env["name"] not in text
    assert all(
        set(e) == {"label", "status", "faulted", "wins", "draws", "losses", "games", "checkpoints"}
        for e in evidence["environments"]
    )
    assert main(["appeal", "--round", str(second), "--student", "nobody"]) == 1
    assert "its students: alpha, bravo, crash" in capsys.readouterr().err


def test_grades_take_a_folder_in_the_order_played_final_last(two_windows, tmp_path, capsys):
    """A folder of rounds is read whole and sorted by when each round was committed to rounds/
    (git), whatever the ids' order; an invalidated result is carried with its reason."""
    import shutil
    import subprocess

    from grader.verification.grades import chronological

    first, second = two_windows
    repo = tmp_path / "arena"
    (repo / "rounds").mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    for results, date in ((second, "2026-01-01T10:00:00Z"), (first, "2026-02-01T10:00:00Z")):
        for path in results.parent.glob(results.stem + "*"):
            (shutil.copytree if path.is_dir() else shutil.copy)(path, repo / "rounds" / path.name)
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "PATH": "/usr/bin:/bin"}
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", results.stem], check=True, env=env)
    one, two = load_results(first)["round"]["id"], load_results(second)["round"]["id"]
    invalidations = tmp_path / "invalidations.yaml"
    invalidations.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "invalidated": [
                    {"round": one, "handle": "bravo", "reason": "copied code", "by": 9001, "at": "2026-02-02T10:00:00Z"}
                ],
            }
        )
    )
    assert main(["grades", str(repo / "rounds"), "--window", "5,10", "--invalidations", str(invalidations)]) == 0
    out = capsys.readouterr()
    table = rows(out.out)
    assert [r["round"] for r in table if r["student"] == "alpha"] == [two, one]  # committed first, listed first
    bravo = {r["round"]: r for r in table if r["student"] == "bravo"}
    assert bravo[one]["status"] == "invalidated: copied code" and bravo[one]["best_sae"] == ""
    assert f"in the order played: {two}, {one}" in out.err
    assert main(["grades", str(tmp_path / "invalidations.yaml").replace(".yaml", "-none")]) != 0
    # The final is last whatever its date.
    docs = [
        ({"round": {"tier": "final", "id": "f"}}, "2026-01-01"),
        ({"round": {"tier": "ladder", "id": "l2"}}, "2026-03-01"),
        ({"round": {"tier": "ladder", "id": "l1"}}, "2026-02-01"),
    ]
    assert [d["round"]["id"] for d in chronological(docs)] == ["l1", "l2", "f"]
