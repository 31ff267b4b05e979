"""A short, wide round as a visitor meets it: 28 environments at budget 2 with one non-zero
checkpoint. The leaderboard names its budget and checkpoints and marks it below the canonical
budget, the SAE says there is none instead of printing an empty window, the round page's
sentences are apart, the kit page gives the steps to a pull request with the repository's
link, and in Chromium the per-environment table scrolls to E28 at 1280 px and at a phone's width."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

from grader.cli.main import main as arena
from grader.kit.build import submit_steps
from grader.site import build
from tests.site.goldens import DATA_COMMIT, FIXTURES
from tests.site.test_browser import FLAGS, chromium, serve

# A round of 8 entrants on 28 environments (a smaller field is private): slow on a busy machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
REPOSITORY = "https://github.com/course/othello-arena"
WIDTHS = (1280, 390)  # a laptop, and a phone held upright


def words(page: str) -> str:
    """A page's text as a reader sees it: tags gone, entities decoded, spaces collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page))).strip()


@pytest.fixture(scope="module")
def short_site(tmp_path_factory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("short")
    rounds = tmp / "rounds"
    # A field of 8: a smaller one is private, and the public site would show nothing of it.
    code = arena(
        [
            "round",
            "--tier",
            "public",
            "--agents",
            "random",
            "greedy",
            *(f"{n}=examples/random" for n in "abc"),
            *(f"{n}=examples/greedy" for n in "def"),
            "--envs",
            "28",
            "--budget",
            "2",
            "--checkpoints",
            "0,2",
            "--games-per-checkpoint",
            "2",
            "--pairing-games",
            "2",
            "--out",
            str(rounds),
            "--private-out",
            str(tmp / "private"),
        ]
    )
    assert code == 0
    round_id = next(rounds.glob("*.yaml")).stem
    config = tmp / "site.yaml"
    config.write_text(
        f"schema_version: 1\nseries:\n  name: Short\n  rounds:\n    - {{id: {round_id}, date: 2026-10-01}}\n"
        f"kit: {{repository: {REPOSITORY}}}\n"
    )
    out = tmp / "site"
    build(rounds, out, docs_dir=FIXTURES / "docs", config=config, data_commit=DATA_COMMIT, log=lambda m: None)
    return out, round_id


def test_the_round_header_names_budget_and_checkpoints_and_marks_a_short_round(short_site):
    site, round_id = short_site
    text = words((site / "rounds" / f"{round_id}.html").read_text())
    assert "8 entrants on 28 environments, budget 2 games, checkpoints 0, 2 below the canonical budget of 2000." in text
    # A public-tier round is practice, no professor's round: never the board.
    board = words((site / "index.html").read_text())
    assert "No round of Short has been published yet that can stand on the board" in board
    assert f"the newest is {round_id} (public tier, 8 entrants on 28 environments)" in board


def test_a_full_round_is_not_marked(site_ended):
    # The fixture rounds are all short (budget 10): the mark is there, and says why.
    assert "below the canonical budget of 2000" in words((site_ended / "index.html").read_text())


def test_one_non_zero_checkpoint_says_no_sae_instead_of_an_empty_window(short_site):
    site, round_id = short_site
    page = (site / "rounds" / f"{round_id}.html").read_text()
    text = words(page)
    assert "No SAE: one non-zero checkpoint in this round (0, 2 games), so its window is empty" in text
    assert "B0 = 2" not in text and "Bmax = 2" not in text
    assert page.count('">no SAE</span>') == 8  # one cell per agent (a field of 8), not a number
    # Said where the curves are too: two points each, not a learning curve.
    assert (
        "No SAE in this round: its checkpoints (0, 2 games) have one non-zero checkpoint, so the SAE window is "
        'empty and every agent\'s SAE reads "no SAE". The curves below are 2 points each, not a learning curve'
    ) in text


def test_the_round_page_keeps_its_sentences_apart(short_site, site_ended):
    site, round_id = short_site
    text = words((site / "rounds" / f"{round_id}.html").read_text())
    assert "Each label links to its environment. A cell is the agent's score there" in text
    assert "hover for wins, draws and losses. The table scrolls sideways, to E28." in text
    ladder = next(p for p in (site_ended / "rounds").glob("ladder-*.html") if "label is" in p.read_text())
    assert "which environment a label is. A cell is" in words(ladder.read_text())


def test_the_kit_page_links_the_repository_and_gives_the_kits_steps(short_site):
    site, _ = short_site
    page = (site / "kit.html").read_text()
    assert f'<a href="{REPOSITORY}">{REPOSITORY}</a>' in page
    text = words(page)
    assert "From the package to a pull request" in text and "There is no upload" in text
    for step in submit_steps(REPOSITORY):
        assert step.replace("`", "") in text


def probe(width: int, page: str) -> str:
    """A page that loads `page` in a frame `width` px wide, scrolls the per-environment table's
    box to its right end and writes what it measured into its own body (read with --dump-dom)."""
    script = """
    const f = document.getElementById('f');
    f.addEventListener('load', () => {
      const d = f.contentDocument, t = d.querySelector('table.matrix'), box = t.parentElement;
      box.scrollLeft = box.scrollWidth;
      const heads = t.querySelectorAll('thead th.vert'), last = heads[heads.length - 1];
      const b = box.getBoundingClientRect(), c = last.getBoundingClientRect();
      const out = {label: last.textContent.trim(), overflow: getComputedStyle(box).overflowX,
                   scrolls: box.scrollWidth > box.clientWidth, lastLeft: c.left - b.left, lastRight: c.right - b.left,
                   boxWidth: box.clientWidth, pageWidth: d.documentElement.scrollWidth, frameWidth: f.clientWidth};
      document.getElementById('out').textContent = JSON.stringify(out);
    });"""
    return (
        f'<!DOCTYPE html><html><head><link rel="icon" href="data:,"><title>probe</title></head><body>'
        f'<iframe id="f" src="/{page}" width="{width}" height="900" style="border:0"></iframe>'
        f'<pre id="out">not measured</pre><script>{script}</script></body></html>'
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_per_environment_table_scrolls_to_its_last_column(short_site, tmp_path, width):
    binary = chromium()
    site, round_id = short_site
    server, _ = serve(site, {"/__probe__.html": probe(width, f"rounds/{round_id}.html")})
    try:
        done = subprocess.run(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={tmp_path / 'profile'}",
                "--virtual-time-budget=20000",
                "--dump-dom",
                f"http://127.0.0.1:{server.server_address[1]}/__probe__.html",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        dom = done.stdout
    finally:
        server.shutdown()
    found = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert found and found.group(1) != "not measured", dom[-2000:]
    m = json.loads(html.unescape(found.group(1)))
    assert m["label"] == "E28"
    assert m["overflow"] in ("auto", "scroll")
    assert m["scrolls"], f"at {width} px the table fits, so this test proves nothing: {m}"
    # Scrolled to the end, E28's header lies inside the visible box: it can be seen, not clipped.
    assert 0 <= m["lastLeft"] and m["lastRight"] <= m["boxWidth"] + 1, m
    # The page itself is no wider than the window: the table scrolls in its box, the page does not.
    assert m["pageWidth"] <= m["frameWidth"] + 1, m


def test_a_repository_that_is_not_an_https_address_is_named(tmp_path):
    from grader.documents.yaml_io import DocumentError
    from grader.season.site_settings import load_site_config

    config = tmp_path / "site.yaml"
    config.write_text("schema_version: 1\nkit: {repository: 'git@github.com:course/arena.git'}\n")
    with pytest.raises(
        DocumentError,
        match=r"kit.repository: 'git@github.com:course/arena.git' is not the "
        r"repository's https:// address",
    ):
        load_site_config(config)
