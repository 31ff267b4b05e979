"""`arena verify` catches one changed move or one changed number, and names it."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil

import pytest
import yaml

from engine.tiers import POOL_VERSION
from grader.cli.main import main
from grader.common.files import gzip_bytes
from grader.rounds.orchestrate import run_round
from grader.rounds.results import ResultsError, load_results
from grader.verification.verify import Difference, verify
from tests.rounds.conftest import field, small_plan

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify")
    plan = small_plan(field(("alpha", "Learner")), envs="random-2 most/standard")
    outcome = run_round(plan, root / "rounds", root / "private", command="test")
    return outcome.public_path


def copy_round(src, dst):
    """A copy of a published round (results and games) to tamper with."""
    data = yaml.safe_load(src.read_text())
    games = gzip.decompress((src.parent / data["games"]["path"]).read_bytes()).decode().splitlines()
    return data, games


def write(dst_dir, data, lines, fix_hash=True):
    blob = gzip_bytes(("\n".join(lines) + "\n").encode())
    (dst_dir / data["round"]["id"]).mkdir(parents=True, exist_ok=True)
    (dst_dir / data["games"]["path"]).write_bytes(blob)
    if fix_hash:  # a careful forger recomputes the hash the results file carries
        data["games"]["sha256"] = "sha256:" + hashlib.sha256(blob).hexdigest()
    path = dst_dir / f"{data['round']['id']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_an_untouched_round_verifies(published):
    report = verify(published)
    assert report.replayed == report.games > 0 and report.numbers > 100
    assert main(["verify", str(published)]) == 0


def test_one_changed_move_is_caught(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[5])
    cells = [i for i, m in enumerate(game["moves"]) if isinstance(m, int)]
    game["moves"][cells[3]] = (game["moves"][cells[3]] + 1) % 48
    lines[5] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=r"game 5 .*move"):
        verify(path)
    assert main(["verify", str(path)]) == 1


def test_a_changed_games_file_without_its_hash_is_caught(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[1])
    game["winner"] = {"black": "white", "white": "black", None: "black"}[game["winner"]]
    lines[1] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines, fix_hash=False)
    with pytest.raises(Difference, match="sha256"):
        verify(path)


def test_one_changed_number_is_caught_and_named(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    data["agents"][0]["sae"]["value"] = round(data["agents"][0]["sae"]["value"] + 0.01, 6)
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=r"agents\[0\]\.sae\.value"):
        verify(path)


def test_a_changed_outcome_is_caught_by_the_replay(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[2])
    game["winner"] = {"black": "white", "white": "black", None: "black"}[game["winner"]]
    lines[2] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match="winner"):
        verify(path)


def test_the_loader_lists_every_problem_by_path(published, tmp_path):
    data, lines = copy_round(published, tmp_path)
    data["round"]["tier"] = "practice"
    data["agents"][0]["curve"][1]["win_rate"] = 1.5
    del data["field"][0]["digest"]
    data["bogus"] = 1
    path = write(tmp_path, data, lines)
    with pytest.raises(ResultsError) as err:
        load_results(path)
    problems = err.value.problems
    assert "round.tier: must be one of ['public', 'paper', 'ladder', 'final'], got 'practice'" in problems
    assert "agents[0].curve[1].win_rate: must be <= 1, got 1.5" in problems
    assert "field[0].digest: missing" in problems
    assert "bogus: unknown field" in problems


@pytest.mark.parametrize(
    "where, change, message",
    [
        (
            "budget",
            lambda d: d["provenance"]["config"].update(budget=d["provenance"]["config"]["budget"] + 1),
            r"self_play\.games",
        ),
        ("a limit", lambda d: d["provenance"]["limits"].update(act_hard_seconds=4.5), r"round\.id"),
        ("the arena's version", lambda d: d["provenance"].update(arena_version="9.9.9"), r"round\.id"),
        ("an entrant's digest", lambda d: d["field"][0].update(digest="sha256:" + "0" * 64), r"round\.id"),
        ("an environment's name", lambda d: d["environments"][0].update(name="renamed"), r"round\.id"),
        (
            "a self-play count",
            lambda d: d["environments"][0]["agents"][0]["self_play"].update(
                black_wins=d["environments"][0]["agents"][0]["self_play"]["black_wins"] + 1
            ),
            "black_wins",
        ),
        ("the notes", lambda d: d["round"]["notes"].append("an extra note"), r"round\.notes"),
        (
            "a reference's digest",
            lambda d: d["field"].append(
                {"name": "random", "kind": "reference", "account": None, "digest": "reference:greedy"}
            ),
            "a reference entrant",
        ),
        ("the description", lambda d: d["disclosure"].update(description="everything"), "disclosure"),
        (
            "the environment ids",
            lambda d: d["provenance"]["config"]["env_ids"].__setitem__(0, "env-000000000000"),
            "env_ids",
        ),
        (
            "the retries",
            lambda d: d["provenance"]["execution"]["arena_faults"].extend(
                [{"env": "E01", "entrant": "alpha", "kind": "pipe", "phase": "act"}] * 3
            ),
            "arena",
        ),
    ],
)
def test_what_the_file_says_of_the_round_itself_is_checked(published, tmp_path, where, change, message):
    """The configuration, limits, field and environments are held by the round id (a hash of
    them); the rest of what a file states about itself is held to what it follows from."""
    data, lines = copy_round(published, tmp_path)
    change(data)
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=message):
        verify(path)


# -- red team: no field's value switches a check off ------------------------------
def forge_numbers(data: dict, lines: list[str]) -> None:
    """What a careful forger does after changing an input of the numbers (a status): recompute
    every number from the games as verify would, so that only the input itself is wrong."""
    from grader.verification.verify import recompute

    try:
        got = recompute(data, [json.loads(line) for line in lines[1:]])
    except Difference:
        return  # the games cannot give numbers for this input: verify says so as well
    data["agents"], data["pairwise"], data["elo"] = got["agents"], got["pairwise"], got["elo"]
    for env, rows in zip(data["environments"], got["environment_agents"]):
        env["agents"] = rows


def _alpha_row(d: dict) -> dict:
    return next(a for a in d["environments"][0]["agents"] if a["name"] == "alpha")


def _alpha(d: dict) -> dict:
    return next(f for f in d["field"] if f["name"] == "alpha")


OTHER_DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    "where, change, message",
    [
        (
            "a tier seed commitment on a public round, with a changed digest",
            lambda d: (
                d["provenance"].update(tier_seed_commitment="sha256:" + "1" * 64),
                _alpha(d).update(digest=OTHER_DIGEST),
            ),
            r"provenance\.tier_seed_commitment",
        ),
        (
            "a null round seed on a public round, with a changed digest",
            lambda d: (d["provenance"]["config"].update(seed=None), _alpha(d).update(digest=OTHER_DIGEST)),
            r"provenance\.config\.seed",
        ),
        (
            "a null round seed on a public round, with a changed limit",
            lambda d: (
                d["provenance"]["config"].update(seed=None),
                d["provenance"]["limits"].update(act_hard_seconds=99),
            ),
            r"provenance\.config\.seed",
        ),
        (
            "a seed commitment that is not the seed's",
            lambda d: d["provenance"].update(seed_commitment="sha256:" + "2" * 64),
            r"provenance\.seed_commitment",
        ),
        (
            "a withheld spec on a public round, with a changed account",
            lambda d: (d["environments"][0].update(spec=None), _alpha(d).update(account="mallory")),
            r"environments\[0\]\.spec",
        ),
        (
            "withheld environment ids on a public round",
            lambda d: d["provenance"]["config"].update(env_ids=None),
            r"provenance\.config\.env_ids",
        ),
        (
            "a staff profile on a public round",
            lambda d: d["provenance"]["config"].update(disclosure="staff"),
            r"provenance\.config\.disclosure",
        ),
        (
            "a disclosure profile of another tier",
            lambda d: d["disclosure"].update(profile="final"),
            r"disclosure\.profile",
        ),
        ("a round tier apart from its configuration", lambda d: d["round"].update(tier="ladder"), r"round\.tier"),
        ("a public round on the leaderboard", lambda d: d["round"].update(leaderboard=True), r"round\.leaderboard"),
        ("a held round published", lambda d: d["round"].update(status="held"), r"round\.status"),
        (
            "a public round that is not beside the file",
            lambda d: (
                d["provenance"]["config"].update(public_round={"id": "public-0123456789", "sha256": OTHER_DIGEST}),
                _alpha(d).update(digest=OTHER_DIGEST),
            ),
            r"provenance\.config\.public_round",
        ),
        # (A `timeout` or `budget` status may be given after the last game, at the session's end:
        # only the staff's records, `--private`, tell a forged one from a real one.)
        (
            "a forged status, numbers recomputed to match",
            lambda d: _alpha_row(d).update(status="agent_error"),
            r"environments\[0\]\.agents\[0\]\.status: the file says .agent_error., but alpha played every game",
        ),
        (
            "a forged self-play count of an entrant that did not fault",
            lambda d: _alpha_row(d)["self_play"].update(games=3, black_wins=1, white_wins=1, draws=1),
            r"environments\[0\]\.agents\[0\]\.self_play\.games",
        ),
    ],
)
def test_no_field_switches_a_check_off(published, tmp_path, where, change, message):
    """Each of these verified with exit 0 (and at most a note) before the red team's review: a field that
    could declare itself withheld turned the round-id check off, and the seed commitment,
    statuses and self-play counts were taken as given. Now verify refuses, naming the field."""
    data, lines = copy_round(published, tmp_path)
    change(data)
    if "status" in message:
        forge_numbers(data, lines)
    header = json.loads(lines[0])  # a careful forger keeps the games file's header in step
    header.update(round=data["round"]["id"], profile=data["disclosure"]["profile"])
    lines[0] = json.dumps(header, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=message):
        verify(path)
    assert main(["verify", str(path)]) == 1


def test_moves_removed_from_a_public_round_are_refused(published, tmp_path):
    """Dropping a game's moves used to skip its replay in silence."""
    data, lines = copy_round(published, tmp_path)
    game = json.loads(lines[3])
    for key in ("moves", "seed"):
        game.pop(key)
    lines[3] = json.dumps(game, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=r"game 3 .*publishes seed, moves"):
        verify(path)


@pytest.fixture(scope="module")
def faulted(tmp_path_factory):
    """A round in which `crash` raises on its 40th act, inside its budget self-play."""
    root = tmp_path_factory.mktemp("verify-faulted")
    plan = small_plan(field(("alpha", "Learner"), ("crash", "CrashLate")), envs="random-2 most/standard")
    outcome = run_round(plan, root / "rounds", root / "private", command="test")
    return outcome.public_path


def _crash_row(d: dict) -> dict:
    return next(a for a in d["environments"][0]["agents"] if a["name"] == "crash")


def test_a_round_with_a_faulted_entrant_verifies(faulted):
    data = load_results(faulted)
    assert _crash_row(data)["status"] == "agent_error" and _crash_row(data)["self_play"]["games"] < 10
    assert verify(faulted).replayed > 0


@pytest.mark.parametrize(
    "where, change, message",
    [
        (
            "its self-play count raised to the budget",
            lambda d: _crash_row(d)["self_play"].update(
                games=10, black_wins=10 - _crash_row(d)["self_play"]["white_wins"] - _crash_row(d)["self_play"]["draws"]
            ),
            r"agents\[1\]\.self_play\.games: 10 self-play games, but crash's checkpoint games stop at checkpoint",
        ),
        (
            "its status forged to ok, numbers recomputed",
            lambda d: _crash_row(d).update(status="ok"),
            r"agents\[1\]\.self_play\.games: \d+ self-play games for an entrant whose status is 'ok'",
        ),
    ],
)
def test_a_faulted_entrants_record_is_held_to_its_games(faulted, tmp_path, where, change, message):
    data, lines = copy_round(faulted, tmp_path)
    change(data)
    if "status" in where:
        forge_numbers(data, lines)
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match=message):
        verify(path)


def _staff_copy(public_path, tmp_path):
    """A copy of a round's public and staff folders (records and plan included)."""
    root = public_path.parent.parent
    shutil.copytree(root / "rounds", tmp_path / "rounds")
    shutil.copytree(root / "private", tmp_path / "private")
    return tmp_path / "rounds" / public_path.name, tmp_path / "private"


def _edit_record(private, round_id, change):
    path = private / round_id / "envs" / "env-0000.json.gz"
    record = json.loads(gzip.decompress(path.read_bytes()))
    change(record)
    path.write_bytes(gzip_bytes(json.dumps(record).encode()))


def test_with_the_staff_folder_the_environment_records_and_plan_are_checked(faulted, tmp_path):
    public, private = _staff_copy(faulted, tmp_path)
    report = verify(public, private)
    assert not any("environment records" in n for n in report.notes)
    rid = public.stem
    _edit_record(
        private, rid, lambda r: r["entrants"]["crash"]["self_play"].update(games=1, draws=1, black_wins=0, white_wins=0)
    )
    with pytest.raises(Difference, match=r"environments\[0\]\.agents\[1\]\.self_play"):
        verify(public, private)


def test_a_plan_that_is_not_the_records_round_is_refused(faulted, tmp_path):
    public, private = _staff_copy(faulted, tmp_path)
    plan_path = private / public.stem / "plan.json"
    plan = json.loads(plan_path.read_text())
    plan["seed"] = "another seed"
    plan_path.write_text(json.dumps(plan))
    with pytest.raises(Difference, match="round.id|seed_commitment"):
        verify(public, private)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"schema_version: 1\nround: \xff\n", "not UTF-8"),
        (
            (
                "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                + "".join(
                    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8)
                )
            ).encode(),
            "alias bomb",
        ),
        (("x:\n" + "".join(" " * i + "-\n" for i in range(2, 1400, 2))).encode(), "nested"),
        (None, "invalid results"),  # the published file cut in half
    ],
)
def test_a_hostile_results_file_is_refused_by_name(published, tmp_path, capsys, content, message):
    """Red team: an auditor's input is data, bounded and named, never a traceback."""
    path = tmp_path / published.name
    path.write_bytes(content if content is not None else published.read_bytes()[: len(published.read_bytes()) // 2])
    with pytest.raises(ResultsError, match=message):
        load_results(path)
    assert main(["verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err


@pytest.mark.parametrize(
    "file, content, message",
    [
        ("plan.json", b"[" * 5000 + b"]" * 5000, "plan.json: not a round plan: nested too deeply"),
        ("plan.json", b'{"plan_version": 1}', "plan.json: not a round plan: missing field"),
        (
            "envs/env-0000.json.gz",
            gzip_bytes(b"[" * 5000 + b"]" * 5000),
            "env-0000.json.gz: not a readable environment",
        ),
        ("envs/env-0000.json.gz", gzip_bytes(b"\xff\xfe{"), "env-0000.json.gz: not a readable environment"),
        ("envs/env-0000.json.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 40, "env-0000.json.gz: not a readable environment"),
    ],
)
def test_a_damaged_staff_file_is_named(faulted, tmp_path, capsys, file, content, message):
    public, private = _staff_copy(faulted, tmp_path)
    (private / public.stem / file).write_bytes(content)
    with pytest.raises(Difference, match=message):
        verify(public, private)
    assert (
        main(["merge", str(private / public.stem), "--out", str(tmp_path / "o"), "--private-out", str(tmp_path / "p")])
        == 1
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err and file.split("/")[-1] in err


def test_the_games_files_header_is_checked(published, tmp_path):
    """Its first line says whose games they are (round, profile, count): a field like any other."""
    data, lines = copy_round(published, tmp_path)
    header = json.loads(lines[0])
    header["round"] = "public-0000000000"
    lines[0] = json.dumps(header, separators=(",", ":"))
    path = write(tmp_path, data, lines)
    with pytest.raises(Difference, match="line 1: the header is"):
        verify(path)


def test_the_self_play_games_are_kept_bound_and_their_outcomes_checked(faulted, tmp_path):
    """Every self-play game an agent played is kept in its environment record (moves and the
    outcome it was sent), bound by a digest in the results; verify replays each and checks
    the outcome sent, and a changed outcome is caught."""
    from grader.rounds.records import read_record, record_path

    public, private = _staff_copy(faulted, tmp_path)
    report = verify(public, private)
    rid = public.stem
    record = read_record(record_path(private / rid, 0))
    kept = record.entrants["alpha"].self_play_games
    assert kept and len(kept) == record.entrants["alpha"].self_play.games
    crashed = record.entrants["crash"].self_play_games
    assert crashed[-1]["outcome"] is None  # the game it crashed in: no outcome was sent
    assert report.self_play_checked == len(kept) + len(crashed) - 1
    assert all(len(g["outcome"]) == 3 for g in kept)

    def flip(r):
        sent = r["entrants"]["alpha"]["self_play_games"][0]["outcome"]
        sent[1], sent[2] = sent[2] + 1, sent[1]

    _edit_record(private, rid, flip)
    with pytest.raises(Difference, match=r"self_play\.games_sha256: not the digest"):
        verify(public, private)


def test_a_forged_outcome_with_its_digest_is_caught_by_the_replay(faulted):
    """Past the digest (a forger with the staff files rebinds it), the replay itself catches
    an outcome the agent was sent that is not its game's."""
    from engine import parse_spec
    from grader.rounds.records import read_record, record_path
    from grader.verification.verify import Report, check_kept_self_play

    record = read_record(record_path(faulted.parent.parent / "private" / faulted.stem, 0))
    spec = parse_spec(load_results(faulted)["environments"][0]["spec"])  # a public round: its spec is in the file
    entrant = record.entrants["alpha"]
    check_kept_self_play(spec, "alpha", entrant, None, "here", Report(faulted))
    game = entrant.self_play_games[0]
    game["outcome"] = ["white" if game["outcome"][0] != "white" else "black", *game["outcome"][1:]]
    with pytest.raises(Difference, match="here game 1: the agent was sent"):
        check_kept_self_play(spec, "alpha", entrant, None, "here", Report(faulted))


# --- The round's environments are its tier's -------------------------------------------------


def _public_spec(name):
    from engine import tier_specs

    return next(s for s in tier_specs("public") if s.name == name)


def _run_with_tier(monkeypatch, root, lookup, **plan_kw):
    """A round really played on what `lookup(tier, seed, count, pool)` gives as its tier, the
    lookup patched for the round only: the file is self-consistent, its environments are not."""
    import grader.rounds.environments as environments

    with monkeypatch.context() as m:
        m.setattr(environments, "tier_specs", lookup)
        plan = small_plan(**plan_kw)
        outcome = run_round(plan, root / "rounds", root / "private", command="test")
    return plan, outcome.public_path


def test_a_public_round_on_an_environment_outside_its_tier_is_refused(monkeypatch, tmp_path, capsys):
    """Its round id and seeds follow from the specs it states, so only the tier can refuse it."""
    import dataclasses

    from engine import tier_specs

    real = _public_spec("random-2 most/standard")
    forged = dataclasses.replace(real.with_rules(capture="diagonal"), name=real.name)  # rules of the forger's own
    _, path = _run_with_tier(
        monkeypatch,
        tmp_path,
        lambda tier, seed=None, count=None, pool=None: [forged] + tier_specs(tier, seed, count, pool=pool),
        entrants=field(references=("random", "greedy")),
        envs="1",
    )
    with pytest.raises(
        Difference,
        match=rf"^environments\[0\] \(E01\): {forged.id} is not an environment of "
        r"the public tier$",
    ):
        verify(path)
    assert main(["verify", str(path)]) != 0
    assert f"environments[0] (E01): {forged.id} is not an environment of the public tier" in capsys.readouterr().err


def test_a_public_environment_under_another_name_is_refused(monkeypatch, tmp_path):
    import dataclasses

    real = _public_spec("random-2 most/standard")
    renamed = dataclasses.replace(real, name="random-2 most/anything")
    _, path = _run_with_tier(
        monkeypatch, tmp_path, lambda *a, **k: [renamed], entrants=field(references=("random", "greedy")), envs="1"
    )
    with pytest.raises(
        Difference,
        match=rf"environments\[0\] \(E01\): {real.id} is named 'random-2 most/anything'; "
        r"the public tier names it 'random-2 most/standard'",
    ):
        verify(path)


def test_an_environment_listed_twice_is_refused(monkeypatch, tmp_path):
    real = _public_spec("random-2 most/standard")
    _, path = _run_with_tier(
        monkeypatch, tmp_path, lambda *a, **k: [real, real], entrants=field(references=("random", "greedy")), envs="2"
    )
    with pytest.raises(Difference, match=rf"environments\[1\] \(E02\): {real.id} is listed twice"):
        verify(path)


def test_an_honest_paper_round_verifies(tmp_path):
    plan = small_plan(
        field(references=("random", "greedy")), envs="1", tier="paper", budget=4, checkpoints=(0, 4), games=2
    )
    outcome = run_round(plan, tmp_path / "rounds", tmp_path / "private", command="test")
    report = verify(outcome.public_path, tmp_path / "private")
    assert report.replayed == 2 * report.games > 0  # the public file and the staff record, every game


LADDER_SEED = "5"


@pytest.fixture(scope="module")
def ladder(tmp_path_factory):
    """An honest ladder round of one generated environment, with its staff folder."""
    root = tmp_path_factory.mktemp("verify-ladder")
    plan = small_plan(
        field(references=("random", "greedy")),
        envs="1",
        tier="ladder",
        seed="3",
        tier_seed=LADDER_SEED,
        budget=4,
        checkpoints=(0, 4),
    )
    outcome = run_round(plan, root / "rounds", root / "private", command="test")
    return outcome.public_path


def test_an_honest_ladder_round_verifies_with_its_staff_folder(ladder, capsys):
    report = verify(ladder, ladder.parent.parent / "private")
    assert report.replayed > 0 and not any("environment records" in n for n in report.notes)
    assert main(["verify", str(ladder), "--private", str(ladder.parent.parent / "private")]) == 0
    assert "all match" in capsys.readouterr().out


def test_the_ladder_check_runs_on_arena_verify_private(ladder, tmp_path, monkeypatch, capsys):
    """`arena verify --private` of a real ladder round draws the tier from the plan's seed and
    pool: with a generator that draws nothing of the round's, the same round is refused."""
    import grader.verification.verify as verify_module

    public, private = _staff_copy(ladder, tmp_path)
    monkeypatch.setattr(verify_module, "tier_specs", lambda tier, seed=None, count=None, pool=1: [])
    assert main(["verify", str(public), "--private", str(private)]) != 0
    err = capsys.readouterr().err
    assert "environments[0] (E01): env-" in err and "is not an environment of the ladder tier" in err


def test_without_the_staff_folder_a_ladder_round_is_not_drawn_again(ladder, monkeypatch):
    import grader.verification.verify as verify_module

    monkeypatch.setattr(verify_module, "tier_specs", lambda *a, **k: pytest.fail("the tier was drawn"))
    assert any("withholds its rules" in n for n in verify(ladder).notes)


def test_a_ladder_round_on_environments_its_seed_does_not_draw_is_refused(monkeypatch, tmp_path):
    """A forger with the staff folder: plan, records, staff record and public file all agree and
    every commitment holds, but the environment is not one the tier seed draws."""
    import dataclasses

    foreign = dataclasses.replace(_public_spec("random-2 most/standard"), name="ladder-01")
    plan, path = _run_with_tier(
        monkeypatch,
        tmp_path,
        lambda *a, **k: [foreign],
        entrants=field(references=("random", "greedy")),
        envs="1",
        tier="ladder",
        seed="3",
        tier_seed=LADDER_SEED,
    )
    assert plan.envs[0].spec.id == foreign.id
    verify(path)  # the public file alone cannot tell
    with pytest.raises(
        Difference,
        match=rf"^environments\[0\] \(E01\): {foreign.id} is not an environment of the "
        rf"ladder tier that its tier seed draws from generator pool {POOL_VERSION}$",
    ):
        verify(path, tmp_path / "private")


def test_a_plan_without_a_pool_is_drawn_from_the_first_pool(ladder):
    """A plan from before the pool was recorded: its environments are checked against pool 1."""
    import dataclasses

    from grader.rounds.plan import read_plan
    from grader.verification.verify import check_plan_tier

    plan = read_plan(ladder.parent.parent / "private" / ladder.stem / "plan.json")
    check_plan_tier(dataclasses.replace(plan, pool=None))
    with pytest.raises(Difference, match="is not an environment of the ladder tier"):
        check_plan_tier(dataclasses.replace(plan, pool=None, tier_seed="another seed"))


def test_final_labels_out_of_their_secret_order_are_refused(monkeypatch, tmp_path):
    """The final's labels are shuffled by a hash of its seeds: with the staff plan, the order is
    the one that secret gives (here the round was labelled in the reverse order)."""
    import grader.rounds.orchestrate as orchestrate
    from grader.rounds.plan import order_envs
    from grader.season.disclosure import PROFILES
    from grader.verification.verify import check_plan_tier

    def reversed_order(specs, profile, secret):
        return order_envs([e.spec for e in reversed(order_envs(specs, profile, secret))], PROFILES["open"], secret)

    with monkeypatch.context() as m:
        m.setattr(orchestrate, "order_envs", reversed_order)
        forged = small_plan(field(references=("random",)), envs="2", tier="final", seed="1", tier_seed="9")
    honest = small_plan(field(references=("random",)), envs="2", tier="final", seed="1", tier_seed="9")
    check_plan_tier(honest)
    with pytest.raises(
        Difference,
        match=rf"environments\[0\] \(E01\): {forged.envs[0].spec.id} is not the "
        rf"environment the round's secret orders there \({honest.envs[0].spec.id}, E01\)",
    ):
        check_plan_tier(forged)
