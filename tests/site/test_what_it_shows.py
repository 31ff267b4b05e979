"""What a visitor reads is true at a glance: the board follows the rules by itself, private
rounds stay off the public site, a faulted agent never looks unbeaten, curves carry their
intervals, and the pages name what they show (the words are read from the built pages)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main as arena
from grader.common.schedule import sae_warning
from grader.season.site_settings import load_site_config
from grader.site import build, svg
from grader.site.builder import leaderboard_round
from grader.site.data import RoundSource
from tests.site.goldens import DATA_COMMIT, FIXTURES
from tests.site.test_pages import round_ids

pytestmark = pytest.mark.timeout(180)


def words(page: str) -> str:
    """A page's text as a reader sees it: tags gone, entities decoded, spaces collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page))).strip()


def source(
    rid: str,
    *,
    tier: str = "ladder",
    envs: int = 8,
    field: int = 10,
    status: str = "complete",
    private: bool = False,
    published: bool = True,
    requested: bool = False,
) -> RoundSource:
    """A round as the board sees it: its summary's flags and sizes, nothing else."""
    config = {"environments": envs} | ({"requested": True} if requested else {})
    summary = {
        "round": {
            "id": rid,
            "tier": tier,
            "status": status,
            "private": private,
            "research": False,
            "standing_published": published,
        },
        "provenance": {"config": config},
        "field": [{"name": f"a{i}"} for i in range(field)],
    }
    return RoundSource(rid, Path(f"{rid}.yaml"), "sha256:0", summary)


def settings(tmp_path: Path, dates: dict[str, str], competition: str = "competition-running.yaml"):
    (tmp_path / "c.yaml").write_text((FIXTURES / competition).read_text())
    rounds = "".join(f"    - {{id: {rid}, date: {day}}}\n" for rid, day in dates.items())
    (tmp_path / "site.yaml").write_text(
        f"schema_version: 1\nseries:\n  name: S\n  rounds:\n{rounds or '    []'}\ncompetition: c.yaml\n"
    )
    return load_site_config(tmp_path / "site.yaml")


def test_the_board_is_the_newest_round_that_the_rules_let_stand(tmp_path):
    rounds = {
        r.id: r
        for r in (
            source("ladder-000000000a"),
            source("ladder-000000000b"),
            source("ladder-000000000c", field=2, published=False),  # a field under 8: no standing
            source("ladder-000000000d", envs=7),  # fewer than 8 environments
            source("ladder-000000000e", private=True),
            source("ladder-000000000f", requested=True, field=1),
            source("ladder-0000000010", status="partial"),
            source("paper-0000000011", tier="paper"),
            source("public-0000000012", tier="public", requested=True),
        )
    }
    newer = {rid: f"2026-11-{n:02d}" for n, rid in enumerate(sorted(rounds), 1)}
    config = settings(tmp_path, newer)
    assert leaderboard_round(rounds, config).id == "ladder-000000000b"  # every later one may not stand
    # Dated by git (not listed in site.yaml): the same rule reads those dates.
    config = settings(tmp_path, {})
    assert leaderboard_round(rounds, config, newer).id == "ladder-000000000b"
    assert (
        leaderboard_round(
            rounds,
            config,
            {"ladder-000000000a.yaml": "2026-12-01"}
            | {k: v for k, v in newer.items() if k != "ladder-000000000a.yaml"},
        ).id
        == "ladder-000000000a"
    )


def test_a_practice_round_never_leads_the_board(tmp_path):
    """The public tier is practice (the rules): however new, a public-tier round of the series
    is listed but never leads; the newest ladder round does."""
    rounds = {
        r.id: r
        for r in (
            source("ladder-000000000a"),
            source("public-000000000b", tier="public"),
            source("ladder-000000000c", field=7, published=False),
        )
    }
    config = settings(
        tmp_path,
        {"ladder-000000000a": "2026-11-01", "public-000000000b": "2026-11-02", "ladder-000000000c": "2026-11-03"},
    )
    assert leaderboard_round(rounds, config).id == "ladder-000000000a"
    only_practice = {"public-000000000b": rounds["public-000000000b"]}
    assert leaderboard_round(only_practice, config) is None


def test_a_field_under_8_is_private_on_the_site(tmp_path):
    from grader.site.builder import visible

    config = settings(tmp_path, {})
    assert visible(source("ladder-000000000a"), config)
    assert not visible(source("ladder-000000000b", field=7, published=False), config)
    assert not visible(source("ladder-000000000c", envs=7), config)
    assert not visible(source("final-000000000d", tier="final"), config)  # pending review: another id


def test_the_published_final_leads_and_a_pending_one_does_not(tmp_path):
    final = source("final-0000000001", tier="final")
    rounds = {final.id: final, "ladder-000000000a": source("ladder-000000000a")}
    running = settings(tmp_path, {})  # the fixture's final is pending review, and it is another id
    assert leaderboard_round(rounds, running).id == "ladder-000000000a"
    (tmp_path / "c.yaml").write_text(
        (FIXTURES / "competition-ended.yaml")
        .read_text()
        .replace(yaml.safe_load((FIXTURES / "competition-ended.yaml").read_text())["final"]["round_id"], final.id)
    )
    ended = load_site_config(tmp_path / "site.yaml")
    assert leaderboard_round(rounds, ended).id == final.id


def build_without_series(tmp_path: Path, competition: str) -> Path:
    """The fixture rounds with a site.yaml that lists no round: the board must find its own."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "c.yaml").write_text((FIXTURES / competition).read_text())
    (tmp_path / "site.yaml").write_text("schema_version: 1\nseries: {name: Course, rounds: []}\ncompetition: c.yaml\n")
    out = tmp_path / "out"
    build(
        FIXTURES / "rounds",
        out,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=tmp_path / "site.yaml",
        data_commit=DATA_COMMIT,
        log=lambda m: None,
    )
    return out


def test_the_professors_round_reaches_the_board_without_a_hand_edit(tmp_path):
    ids = round_ids()
    board = words((build_without_series(tmp_path / "a", "competition-running.yaml") / "index.html").read_text())
    assert (
        f"Ranked here: each agent's standing (match points of the round-robin, averaged over 8 environments) in "
        f"{ids['ladder']}, the latest published round before the final."
    ) in board
    assert "Final standings pending review" in board
    board = words((build_without_series(tmp_path / "b", "competition-ended.yaml") / "index.html").read_text())
    assert f"in {ids['final']}, the published final." in board


def test_the_board_says_the_phase_and_the_dates(site_running, site_ended):
    running = words((site_running / "index.html").read_text())
    assert (
        "Competition: the final has been played and is under staff review. Submissions freeze 2026-12-12 09:00 "
        "UTC; the final starts 2026-12-14 09:00 UTC."
    ) in running
    ended = words((site_ended / "index.html").read_text())
    assert "Competition: ended: the final is published and its appeal window has closed." in ended
    assert "Final published 2026-12-18 12:00 UTC; appeals close 2026-12-25 12:00 UTC." in ended


def test_private_rounds_are_not_on_the_public_site(site_running, site_ended):
    ids = round_ids()
    for site in (site_running, site_ended):
        listing = (site / "rounds" / "index.html").read_text()
        assert ids["public"] in listing and ids["ladder"] in listing
        for rid in (ids["public-small"], ids["ladder-one"]):
            assert not (site / "rounds" / f"{rid}.html").exists()
            assert not (site / "data" / f"{rid}.yaml").exists() and not (site / "replays" / rid).exists()
            for path in site.rglob("*.html"):
                assert rid not in path.read_text(), f"{path.relative_to(site)} names private round {rid}"


def test_a_faulted_agent_shows_its_faults_counted_lost(site_ended):
    ids = round_ids()
    ladder = yaml.safe_load((FIXTURES / "rounds" / f"{ids['ladder']}.yaml").read_text())
    erin = next(a for a in ladder["agents"] if a["name"] == "erin")
    lost = erin["standing"]["faulted_games"]
    assert erin["faulted_envs"] == 8 and lost > 0 and erin["record"]["games"] == 0
    page = (site_ended / "rounds" / f"{ids['ladder']}.html").read_text()
    row = re.search(r'<tr class="[^"]*faulted">.*?erin.*?</tr>', page, re.S).group(0)
    cells = [words(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    # W, D, L (with the faulted games in L, marked), games: never 0-0-0 of 0.
    assert [f"{lost} ✕{lost}", str(lost)] == cells[cells.index("0", cells.index("0") + 1) + 1 :][:2], cells
    assert f"W–D–L 0–0–{lost} ({lost} lost by fault)" in words(row)
    text = words(page)
    assert "agent_error: the agent's code raised" in text  # the fault's words, beside the word
    # The pairwise table counts them too: the row agent's losses include its faulted pairing games.
    pairwise = page[page.index('<table class="pairwise">') :]
    pair = re.search(r"<tr><th scope=\"row\">erin</th>.*?</tr>", pairwise, re.S).group(0)
    assert "✕" in pair and "void" not in words(pair).replace("void", "", 1)
    assert "n of the row agent's losses are pairing games of environments it faulted" in text


def test_curves_carry_intervals_and_agents_are_told_apart(site_ended):
    ids = round_ids()
    page = (site_ended / "rounds" / f"{ids['ladder']}.html").read_text()
    assert re.search(r"minimax: \d\.\d{3} at 10 games \(95% interval \d\.\d{3}–\d\.\d{3}\)", page)
    assert page.count('class="ci"') >= 10 * 3  # a bar for each point of each agent
    assert "Each point carries its 95% interval (Wilson's, over the 16 games it was measured on" in words(page)
    assert "win rate against random</text>" in page  # the y axis says what is measured
    styles = [svg.style_of(i) + (svg.mark_of(i),) for i in range(24)]
    assert len(set(styles)) == 24 and len({c for c, _, _ in styles[:8]}) == 8
    assert all(styles[i][1] != styles[i + 1][1] for i in range(23))  # neighbours differ in line style too


def test_an_agents_page_has_its_curve_environments_and_faults_in_words(site_ended):
    ids = round_ids()
    erin = (site_ended / "accounts" / "erin.html").read_text()
    text = words(erin)
    assert f"In Final ({ids['final']})" in text
    assert "erin against the field: win rate against random" in erin
    assert "agent_error in 8 environments: the agent's code raised" in text
    assert text.count("agent_error: the agent's code raised") == 8  # one row per environment
    alice = words((site_ended / "accounts" / "alice.html").read_text())
    assert "No faults in this round." in alice and "played to the end" in alice


def test_the_frozen_entry_is_on_the_students_page(site_ended):
    final = yaml.safe_load((FIXTURES / "rounds" / f"{round_ids()['final']}.yaml").read_text())
    digest = next(f["digest"] for f in final["field"] if f["account"] == "bob")
    text = words((site_ended / "accounts" / "bob.html").read_text())
    assert "Frozen entry The field froze 2026-12-12 09:00 UTC: the submission the final plays is fixed." in text
    assert f"Digest {digest}; uploaded at a time not in the history this site was built from" in text


def test_headings_and_footnotes_say_what_they_head(site_ended):
    ids = round_ids()
    public = words((site_ended / "rounds" / f"{ids['public']}.html").read_text())
    assert " Standings " in public and "no standing" not in public
    ladder = words((site_ended / "rounds" / f"{ids['ladder']}.html").read_text())
    assert "spread: standing" in ladder and "spread: score" not in ladder
    assert (
        "Spread (spread.final_win_rate, spread.sae, spread.standing in the round file) is the population "
        "standard deviation over environments"
    ) in ladder
    assert "Elo (random = 1000): an ordering only, fitted to the pairwise scores" in ladder


def test_the_navigation_is_a_few_short_items_and_the_documents_have_a_page(site_ended):
    index = (site_ended / "index.html").read_text()
    nav = re.search(r"<nav>(.*?)</nav>", index, re.S).group(1)
    labels = [words(a) for a in re.findall(r"<a [^>]*>(.*?)</a>", nav)]
    assert labels == ["Leaderboard", "Rounds", "Environments", "Rules", "Docs", "Accounts", "Kit"]
    docs = words((site_ended / "docs.html").read_text())
    assert "Protocol (site fixture)" in docs and "Round results (site fixture)" in docs


def test_a_replay_has_coordinates_and_the_winners_count_first(site_ended):
    ids = round_ids()
    folder = site_ended / "replays" / ids["public"]
    first = (folder / "g0001.html").read_text()
    assert '<g class="coord"' in first and ">a</text>" in first and ">1</text>" in first
    results = [re.search(r"Result: (.*?)\.</p>", p.read_text()).group(1) for p in sorted(folder.glob("g*.html"))]
    won = [
        m
        for m in map(
            re.compile(r"^(black|white) \(.*\) won (\d+) to (\d+) \(black (\d+), white (\d+)\)").match, results
        )
        if m
    ]
    assert any(m.group(1) == "white" for m in won) and any(m.group(1) == "black" for m in won), results
    for m in won:  # the winner's count first, and both colours named with theirs
        colour, first_n, second_n, black, white = m.group(1), *map(int, m.groups()[1:])
        assert (first_n, second_n) == ((white, black) if colour == "white" else (black, white))


def test_the_kit_page_says_how_to_register_and_where(site_ended):
    text = words((site_ended / "kit.html").read_text())
    assert "First: an account" in text and "https://api.github.com/users/<your login>" in text
    assert "open a pull request that adds only your own entry to accounts.yaml (under accounts:), unapproved" in text
    assert "not configured on this site (staff set kit.repository in site.yaml)" in text


def test_a_round_planned_without_an_sae_window_is_warned_about(tmp_path, capsys):
    assert sae_warning([0, 100, 500]) is None
    assert 'every agent\'s SAE will be "no SAE"' in sae_warning([0, 100])
    code = arena(
        [
            "round",
            "--tier",
            "public",
            "--agents",
            "random",
            "greedy",
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
            "--out",
            str(tmp_path / "rounds"),
            "--private-out",
            str(tmp_path / "private"),
        ]
    )
    assert code == 0
    assert (
        'arena round: warning: checkpoints 0,2 have 1 non-zero checkpoint: every agent\'s SAE will be "no SAE"'
    ) in capsys.readouterr().err


def test_after_the_end_the_environments_page_does_not_call_the_final_seed_secret(site_running, site_ended):
    ended = words((site_ended / "environments.html").read_text())
    final = ended[ended.index("Final tier") :]
    assert "secret" not in final.replace("no longer secret", ""), final
    assert "the final's seed is published" in final and "arena envs --tier final --seed SEED" in final
    running = words((site_running / "environments.html").read_text())
    assert "generated from a secret seed" in running[running.index("Final tier") :]


def test_an_invalidated_result_is_struck_through_with_its_reason(tmp_path):
    """Staff invalidate bob's final: the round page and the board strike his row and say why."""
    import shutil

    site = tmp_path / "site"
    shutil.copy(FIXTURES / "site-ended.yaml", tmp_path / "site.yaml")
    shutil.copy(FIXTURES / "competition-ended.yaml", tmp_path / "competition-ended.yaml")
    final = round_ids()["final"]
    (tmp_path / "invalidations.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "invalidated": [
                    {
                        "round": final,
                        "handle": "bob",
                        "reason": "read the final's rules from the runner",
                        "by": 1000001,
                        "at": "2026-12-19T10:00:00Z",
                    }
                ],
            }
        )
    )
    text = (
        (tmp_path / "site.yaml")
        .read_text()
        .replace("kit: {zip: kit/othello-arena-kit.zip, version: kit/version}\n", "")
    )
    (tmp_path / "site.yaml").write_text(text)
    build(
        FIXTURES / "rounds",
        site,
        docs_dir=FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=tmp_path / "site.yaml",
        data_commit=DATA_COMMIT,
        log=lambda m: None,
    )
    for page in (site / "rounds" / f"{final}.html", site / "index.html"):
        html_text = page.read_text()
        row = re.search(r'<tr class="[^"]*invalidated">.*?</tr>', html_text, re.S).group(0)
        assert "bob" in row and "invalidated by staff: read the final's rules from the runner" in words(row)
        assert html_text.count(' invalidated">') == 1  # bob's row only
    css = (site / "style.css").read_text()
    assert "tr.invalidated td.num" in css and "line-through" in css
