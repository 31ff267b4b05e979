"""A final round publishes no hidden rules, no seed and no agent output (docs/rules.md §8)."""

from __future__ import annotations

import gzip
import json

import pytest

from grader.rounds.orchestrate import run_round
from grader.rounds.results import load_games, load_results
from grader.verification.verify import verify
from tests.rounds.agents import OUTPUT_MARKER
from tests.rounds.conftest import field, small_plan


@pytest.fixture(autouse=True)
def arena_key():
    """The arena's key on this machine, as the first `arena kit build` makes it: what
    `arena disclose` seals a private round to (in CI nothing else may have made it yet)."""
    from grader.documents.sealing import private_key

    private_key(create=True)


pytestmark = pytest.mark.timeout(180)

TIER_SEED = "918273645546372819"
ROUND_SEED = "roundseed-5c0ffee-81d2"


def every_file_text(folder):
    """(path, text) of every file under `folder`, gzip files decompressed."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = path.read_bytes()
        if path.suffix == ".gz":
            blob = gzip.decompress(blob)
        yield path, blob.decode("utf-8", "replace")


RULE_KEYS = {"capture", "win", "rules", "obstacles", "moves", "black_discs", "seed"}


def _items(node):
    """Every (key, value) of a JSON document, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _items(value)
    elif isinstance(node, list):
        for value in node:
            yield from _items(value)


def test_a_final_round_keeps_rules_seeds_and_output_out_of_rounds(tmp_path):
    plan = small_plan(
        field(("alpha", "Learner"), ("echo", "Chatty")), envs="2", tier="final", seed=ROUND_SEED, tier_seed=TIER_SEED
    )
    out, private = tmp_path / "rounds", tmp_path / "private"
    outcome = run_round(plan, out, private, command="arena round --tier final --seed <secret> --tier-seed <secret>")
    assert outcome.status == "published"
    secrets = [TIER_SEED, ROUND_SEED, OUTPUT_MARKER]
    for entry in plan.envs:
        spec = entry.spec
        secrets += [spec.id, spec.name, spec.id[4:]]
    forbidden_keys = ["capture", '"win"', "win:", "rules:", '"rules"', "obstacles", '"moves"', "black_discs", '"seed"']
    files = list(every_file_text(out))
    assert len(files) == 3  # the results file, its JSON twin and its games
    for path, text in files:
        for secret in secrets:
            assert secret not in text, f"{path.name} carries {secret!r}"
        if path.suffix == ".json":  # the YAML's twin: its keys are quoted, so held to none with a value
            held = [k for k, v in _items(json.loads(text)) if k in RULE_KEYS and v is not None]
            assert not held, f"{path.name} carries {held}"
            continue
        for key in forbidden_keys:
            assert key not in text, f"{path.name} carries {key!r}"
    # The staff record has all of it, and the marker the agent printed.
    staff = "".join(text for _, text in every_file_text(private))
    assert OUTPUT_MARKER in staff and plan.envs[0].spec.id in staff
    # The public projection alone still lets anyone recompute every aggregate.
    data = load_results(outcome.public_path)
    assert data["disclosure"]["profile"] == "final" and data["provenance"]["config"]["seed"] is None
    assert all("moves" not in g for g in load_games(outcome.public_path, data))
    report = verify(outcome.public_path)
    assert report.replayed == 0 and report.numbers > 50
    assert verify(outcome.public_path, private).replayed > 0


def test_final_labels_follow_a_secret_order(tmp_path):
    a = small_plan(field(references=("random",)), envs="4", tier="final", seed="1", tier_seed=TIER_SEED)
    b = small_plan(field(references=("random",)), envs="4", tier="final", seed="2", tier_seed=TIER_SEED)
    assert {e.spec.id for e in a.envs} == {e.spec.id for e in b.envs}
    assert [e.spec.id for e in a.envs] != [e.spec.id for e in b.envs]  # not the generation order


def test_a_ladder_round_withholds_rules_by_default(tmp_path):
    plan = small_plan(field(references=("random", "greedy")), envs="1", tier="ladder", seed="3", tier_seed="5")
    outcome = run_round(plan, tmp_path / "rounds", tmp_path / "private", command="x")
    text = outcome.public_path.read_text()
    assert plan.envs[0].spec.id not in text and "capture" not in text
    open_plan = small_plan(
        field(references=("random", "greedy")), envs="1", tier="ladder", seed="3", tier_seed="5", ladder_rules="public"
    )
    opened = run_round(open_plan, tmp_path / "rounds2", tmp_path / "private2", command="x")
    assert open_plan.envs[0].spec.id in opened.public_path.read_text()


def results_doc(
    envs: int = 8, field: int = 8, tier: str = "ladder", requested: bool = False, round_id: str = "ladder-0123456789ab"
) -> dict:
    config = {"environments": envs} | ({"requested": True} if requested else {})
    return {
        "round": {"id": round_id, "tier": tier, "private": False},
        "provenance": {"config": config},
        "field": [{"name": f"a{i}"} for i in range(field)],
    }


def test_one_rule_says_which_rounds_are_private():
    from grader.season.disclosure import private_reasons

    assert private_reasons(results_doc()) == []
    assert private_reasons(results_doc(envs=7)) == ["played on 7 environments, fewer than 8"]
    assert private_reasons(results_doc(field=7)) == ["a field of 7, fewer than 8"]
    assert private_reasons(results_doc(requested=True))[0].startswith("a requested run")
    final = results_doc(tier="final", round_id="final-0123456789ab")
    assert private_reasons(final) == ["the final, until staff publish it"]
    assert private_reasons(final, published_final="final-fedcba987654") == ["the final, until staff publish it"]
    assert private_reasons(final, published_final="final-0123456789ab") == []


def test_a_private_round_is_sealed_out_of_rounds_and_only_the_arenas_key_opens_it(tmp_path, capsys):
    """`arena disclose` on a round of 2 environments: no file of it stays in rounds/, the sealed
    copy does not show its numbers, staff's key opens it whole, another key does not."""
    from nacl.public import PrivateKey

    from grader.cli.main import main
    from grader.documents.sealing import private_key
    from grader.rounds.publish import WithheldError, release

    rounds = tmp_path / "rounds"
    outcome = run_round(
        small_plan(field(references=("random", "greedy"))), rounds, tmp_path / "private", command="test"
    )
    path = outcome.public_path
    before = {p.relative_to(rounds): p.read_bytes() for p in rounds.rglob("*") if p.is_file()}
    numbers = [f"{a['sae']['value']:.4f}" for a in load_results(path)["agents"] if a["sae"]["value"]]
    assert (
        main(["disclose", str(path), "--withheld", str(tmp_path / "withheld"), "--config", str(tmp_path / "none.yaml")])
        == 0
    )
    assert "private (played on 2 environments, fewer than 8" in capsys.readouterr().out
    assert [p for p in rounds.rglob("*") if p.is_file()] == []
    sealed = (tmp_path / "withheld" / f"{path.stem}.sealed").read_bytes()
    assert not any(n.encode() in sealed for n in numbers) and b"agents" not in sealed
    with pytest.raises(WithheldError, match="not sealed to this arena's key"):
        release(tmp_path / "withheld", path.stem, tmp_path / "elsewhere", PrivateKey.generate())
    written = release(tmp_path / "withheld", path.stem, tmp_path / "opened", private_key())
    assert {p.relative_to(tmp_path / "opened"): p.read_bytes() for p in written} == before
    assert verify(tmp_path / "opened" / path.name).games == outcome_games(tmp_path / "opened" / path.name)


def outcome_games(path) -> int:
    return len(load_games(path, load_results(path)))


def test_a_public_round_stays(tmp_path, capsys):
    from grader.cli.main import main

    outcome = run_round(
        small_plan(field(references=("random", "greedy")), envs="8"),
        tmp_path / "rounds",
        tmp_path / "private",
        command="test",
    )
    # 8 environments but a field of 2: private as well.
    assert main(["disclose", str(outcome.public_path), "--withheld", str(tmp_path / "withheld")]) == 0
    assert "a field of 2, fewer than 8" in capsys.readouterr().out
    assert not outcome.public_path.exists()


def test_verify_with_the_staff_record_does_not_say_the_games_were_not_replayed(tmp_path, capsys):
    from grader.cli.main import main

    plan = small_plan(field(references=("random", "greedy")), envs="1", tier="ladder", seed="3", tier_seed="5")
    outcome = run_round(plan, tmp_path / "rounds", tmp_path / "private", command="x")
    assert main(["verify", str(outcome.public_path)]) == 0
    alone = capsys.readouterr()
    assert "games were not replayed here (give --private DIR)" in alone.err
    assert main(["verify", str(outcome.public_path), "--private", str(tmp_path / "private")]) == 0
    both = capsys.readouterr()
    assert "not replayed" not in both.err + both.out and " replayed" in both.out
