"""What the pages must and must not show, beyond the goldens: the final's review, the field
under 8, replays and their redaction, missing inputs said plainly, incremental builds, the CLI."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main as arena
from grader.season.site_settings import load_site_config
from grader.site import build
from grader.site.render import check_out_folder
from grader.site.replays import build_replay
from tests.site.conftest import site_text
from tests.site.goldens import DATA_COMMIT, FIXTURES, build_fixture_site

pytestmark = pytest.mark.timeout(120)


def round_ids() -> dict[str, str]:
    ids = {}
    for path in sorted((FIXTURES / "rounds").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        kind = (
            doc["round"]["tier"]
            + ("-one" if len(doc["field"]) == 1 else "")
            + ("-small" if doc["provenance"]["config"]["environments"] < 8 else "")
        )
        ids[kind] = doc["round"]["id"]
    return ids


def test_the_fixture_set_covers_the_cases():
    ids = round_ids()
    assert set(ids) == {"public", "public-small", "ladder", "ladder-one", "final"}
    ladder = yaml.safe_load((FIXTURES / "rounds" / f"{ids['ladder']}.yaml").read_text())
    assert ladder["disclosure"]["profile"] == "staff" and ladder["round"]["standing_published"]
    assert ladder["provenance"]["execution"]["arena_faults"], "an environment the arena failed and re-ran"
    assert any(a["faulted_envs"] for a in ladder["agents"]), "agents' faults"
    public = yaml.safe_load((FIXTURES / "rounds" / f"{ids['public']}.yaml").read_text())
    # The practice round: public (8 environments, a field of 8), its rules and replays open.
    assert public["round"]["standing_published"] and len(public["field"]) == 8 and not public["round"]["private"]
    assert public["disclosure"]["profile"] == "open"
    small = yaml.safe_load((FIXTURES / "rounds" / f"{ids['public-small']}.yaml").read_text())
    assert small["round"]["private"] and small["provenance"]["config"]["environments"] == 2
    requested = yaml.safe_load((FIXTURES / "rounds" / f"{ids['ladder-one']}.yaml").read_text())
    assert requested["provenance"]["config"]["requested"] and requested["round"]["private"]


def test_while_the_final_is_under_review_nothing_of_it_is_shown(site_running):
    final = round_ids()["final"]
    index = (site_running / "index.html").read_text()
    assert "Final standings pending review" in index
    for rel, text in site_text(site_running).items():
        assert final not in text, f"{rel} shows the final under review"
    assert not (site_running / "rounds" / f"{final}.html").exists()
    assert not (site_running / "data" / f"{final}.yaml").exists()


def test_the_published_final_leads_the_board(site_ended):
    ids = round_ids()
    index = (site_ended / "index.html").read_text()
    assert "pending review" not in index and ids["final"] in index
    assert "Final" in index and "2026-12-14" in index and "Final tier" in index


def test_the_leaderboard_names_the_sae_window_under_the_table(site_running):
    index = (site_running / "index.html").read_text()
    assert re.search(r"B<sub>0</sub> = 5</span>.*B<sub>max</sub> = 10</span>", index, re.S)
    assert "tie group" in index and "95% interval (over environments)" in index


def small_board(tmp_path: Path, round_id: str) -> str:
    config = tmp_path / "site.yaml"
    config.write_text(
        f"schema_version: 1\nseries:\n  name: Small\n  rounds:\n    - {{id: {round_id}, date: 2026-10-01}}\n"
    )
    out = tmp_path / "out"
    build(
        FIXTURES / "rounds", out, docs_dir=FIXTURES / "docs", config=config, data_commit=DATA_COMMIT, log=lambda m: None
    )
    return (out / "index.html").read_text()


def test_the_practice_round_is_listed_with_its_standing_and_never_leads(site_running):
    public = round_ids()["public"]  # 8 environments, a field of 8: public; practice, so never on the board
    page = (site_running / "rounds" / f"{public}.html").read_text()
    assert '<h2 id="standings">Standings</h2>' in page
    assert public not in (site_running / "index.html").read_text().split("Every public round")[0]


def test_a_private_round_never_makes_the_leaderboard(tmp_path):
    ids = round_ids()
    index = small_board(tmp_path, ids["public-small"])  # 2 environments: private, dated newest
    assert ids["public-small"] not in index and ids["ladder"] in index  # the board follows the rules


def test_replays_of_public_rounds_at_once_and_only_with_moves(site_running, site_ended):
    ids = round_ids()
    public = yaml.safe_load((FIXTURES / "rounds" / f"{ids['public']}.yaml").read_text())
    for site in (site_running, site_ended):  # its moves are published: no waiting for the end
        games = sorted((site / "replays" / ids["public"]).glob("g*.html"))
        assert len(games) == public["games"]["count"]
        assert "move by move" in (site / "rounds" / f"{ids['public']}.html").read_text()
    first = sorted((site_running / "replays" / ids["public"]).glob("g*.html"))[0].read_text()
    assert "the opening; black to move" in first and "Result:" in first and "Rules:" in first
    assert first.count('class="frame"') >= 5
    assert (
        "Replays open when the competition has ended" in (site_running / "rounds" / f"{ids['ladder']}.html").read_text()
    )
    for rid in (ids["ladder"], ids["final"]):
        assert not (site_ended / "replays" / rid).exists()
        assert "carries no moves" in (site_ended / "rounds" / f"{rid}.html").read_text()


def test_a_final_replay_shows_no_rules_winner_or_counts():
    """The staff record of the final has moves; even built from it, a replay stays redacted."""
    import gzip
    import json

    final = round_ids()["final"]
    full = yaml.safe_load((FIXTURES / "private" / f"{final}.yaml").read_text())
    lines = gzip.decompress((FIXTURES / "private" / final / "games.jsonl.gz").read_bytes()).decode().splitlines()
    game = next(g for g in map(json.loads, lines[1:]) if g.get("moves"))
    env = next(e for e in full["environments"] if e["label"] == game["env"])
    replay = build_replay(1, game, env, "final", "full")
    assert replay.result is None and replay.rules is None and replay.env_name is None
    assert len(replay.frames) == len(game["moves"])  # the opening and every board but the last
    captions = " ".join(f.caption for f in replay.frames)
    assert "black " not in captions.replace("black to move", "").replace("black plays", "").replace("black passes", "")
    assert not re.search(r"\(black \d+, white \d+\)", captions)


def test_missing_inputs_are_said_plainly(tmp_path):
    out = tmp_path / "out"
    build(
        tmp_path / "no-rounds",
        out,
        docs_dir=tmp_path / "no-docs",
        accounts=tmp_path / "none.yaml",
        data_commit=DATA_COMMIT,
        log=lambda m: None,
    )
    assert "No round of" in (out / "index.html").read_text()
    assert "No site settings given: no series, no final." in (out / "index.html").read_text()
    assert "has not been built for this site yet" in (out / "kit.html").read_text()
    assert "does not exist yet" in (out / "accounts" / "index.html").read_text()
    assert "No ladder round has been published yet" in (out / "environments.html").read_text()


def test_the_kit_is_linked_when_it_exists(tmp_path):
    kit = tmp_path / "kit"
    kit.mkdir()
    from grader.documents.sealing import public_key_text

    key = public_key_text()
    with zipfile.ZipFile(kit / "arena-kit.zip", "w") as z:
        z.writestr("othello-arena-kit/agent.py", "class Agent: pass\n")
        z.writestr("othello-arena-kit/kit.json", json.dumps({"submission_key": key}))
    (kit / "version").write_text("1.4.0\n")
    config = tmp_path / "site.yaml"
    config.write_text("schema_version: 1\nkit: {zip: kit/arena-kit.zip, version: kit/version}\n")
    out = tmp_path / "out"
    build(tmp_path / "none", out, docs_dir=FIXTURES / "docs", config=config, data_commit="c", log=lambda m: None)
    page = (out / "kit.html").read_text()
    assert 'href="kit/arena-kit.zip"' in page and "1.4.0" in page
    assert f'the arena\'s public key <code class="digest">{key}</code>' in page  # what the kit seals to
    assert (out / "kit" / "arena-kit.zip").read_bytes() == (kit / "arena-kit.zip").read_bytes()
    assert (out / "kit" / "version").read_text() == "1.4.0\n"


def test_rules_page_renders_the_limits_from_the_grader(site_running):
    from grader.common.limits import DEFAULT_LIMITS

    rules = (site_running / "rules.html").read_text()
    assert "limits-table" not in rules and 'class="limits"' in rules
    for name, value, _ in DEFAULT_LIMITS.rows():
        assert value in rules, name
    assert 'href="protocol.html"' in rules and 'href="results.html#metrics"' in rules
    assert 'class="offsite"' in rules  # a link out of the site became text


def test_the_repository_docs_render_when_present(tmp_path):
    docs = Path(__file__).resolve().parents[2] / "docs"
    if not (docs / "rules.md").exists():
        pytest.skip("docs/rules.md is not in this checkout yet")
    out = tmp_path / "out"
    build(tmp_path / "none", out, docs_dir=docs, data_commit="c", log=lambda m: None)
    assert 'class="limits"' in (out / "rules.html").read_text()


def test_every_page_has_the_footer_with_the_data_commit(site_ended):
    pages = [p for p in site_ended.rglob("*.html")]
    assert len(pages) > 20
    for page in pages:
        assert f"Built from data commit <code>{DATA_COMMIT}</code>" in page.read_text(), page


def test_account_history_lists_placings_and_windows(site_ended):
    ids = round_ids()
    alice = (site_ended / "accounts" / "alice.html").read_text()
    for rid in (ids["ladder"], ids["final"]):
        assert rid in alice
    for rid in (ids["ladder-one"], ids["public-small"]):  # private: her requested run, a 2-environment round
        assert rid not in alice
    assert "of 10" in alice and "[5, 10]" in alice
    assert ids["public"] in (site_ended / "accounts" / "carol.html").read_text()  # the practice round, listed
    assert "Not approved yet" in (site_ended / "accounts" / "heidi.html").read_text()


def test_an_incremental_build_renders_only_what_changed(tmp_path):
    rounds = tmp_path / "rounds"
    shutil.copytree(FIXTURES / "rounds", rounds)
    out, cache = tmp_path / "out", tmp_path / "cache"
    config = load_site_config(FIXTURES / "site-running.yaml")
    first = build(
        rounds,
        out,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=config,
        cache_dir=cache,
        data_commit="a",
        log=lambda m: None,
    )
    assert first.reused == 0
    again = build(
        rounds,
        out,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=config,
        cache_dir=cache,
        data_commit="a",
        log=lambda m: None,
    )
    assert again.rendered == 0 and again.written <= 3  # style.css, .nojekyll and the manifest
    public = round_ids()["public"]
    (rounds / f"{public}.yaml").unlink()
    shutil.rmtree(rounds / public)
    third = build(
        rounds,
        out,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=config,
        cache_dir=cache,
        data_commit="b",
        log=lambda m: None,
    )
    assert 0 < third.rendered < first.rendered // 2
    assert not (out / "rounds" / f"{public}.html").exists() and third.removed >= 3
    assert "Built from data commit <code>b</code>" in (out / "environments.html").read_text()
    fresh = tmp_path / "fresh"
    build(
        rounds,
        fresh,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=config,
        data_commit="b",
        log=lambda m: None,
    )
    assert site_text(fresh) == site_text(out)  # incremental = from scratch


def test_a_foreign_folder_is_never_emptied(tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    from grader.site.render import OutFolderError

    with pytest.raises(OutFolderError, match="not made by") as info:
        check_out_folder(tmp_path)
    assert info.value.folder == tmp_path


def test_the_command_line_builds_the_site(tmp_path, capsys):
    out = tmp_path / "site"
    code = arena(
        [
            "site",
            "build",
            "--rounds",
            str(FIXTURES / "rounds"),
            "--out",
            str(out),
            "--docs",
            str(FIXTURES / "docs"),
            "--accounts",
            str(FIXTURES / "accounts.yaml"),
            "--config",
            str(FIXTURES / "site-ended.yaml"),
            "--cache",
            str(tmp_path / "cache"),
            "--commit",
            "abc",
            "--validate",
        ]
    )
    assert code == 0
    assert (out / "index.html").exists() and capsys.readouterr().out.strip() == str(out)


def test_the_demo_site_names_its_round_on_the_leaderboard(tmp_path):
    from grader.cli.commands.demo import build_site, demo_site_config

    round_id = "ladder-51a798c1f2"  # the fixtures' one round that is not private
    config = demo_site_config(tmp_path, round_id)
    line = build_site(FIXTURES / "rounds", tmp_path / "site", config)
    index = (tmp_path / "site" / "index.html").read_text()
    assert "site built" in line and "A demonstration build" in index and round_id in index


def test_a_round_file_the_site_cannot_render_is_named(tmp_path):
    rounds = tmp_path / "rounds"
    rounds.mkdir()
    (rounds / "ladder-0000000000.yaml").write_text("schema_version: 1\nround: {}\n")
    with pytest.raises(ValueError, match="ladder-0000000000.yaml: cannot be rendered"):
        build(rounds, tmp_path / "out", data_commit="c", log=lambda m: None)


def test_fixture_builds_are_reproducible(tmp_path, site_running):
    again = tmp_path / "again"
    build_fixture_site("running", again)
    assert site_text(again) == site_text(site_running)
