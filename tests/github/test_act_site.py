"""site.yml run as a workflow (act, tests/github/act_harness.py): the arena installed with a
plain `pip install .`, as the workflow does, builds the kit and the site, and the deploy
stand-in receives the pages. The footer names main's commit. The checkout holds main's whole
history, so a round committed to rounds/ on an earlier day is dated that day and leads the
board with no entry in site.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
FIXTURES = Path(__file__).resolve().parents[1] / "site" / "fixtures" / "rounds"
ROUND = "ladder-51a798c1f2"  # public, 8 environments, a field of 10: it can stand on the board


def test_the_site_deploy_builds_the_kit_and_every_page_from_a_plain_install(act, scratch):
    files = {f"rounds/{ROUND}.yaml": (FIXTURES / f"{ROUND}.yaml").read_bytes()}
    files |= {f"rounds/{ROUND}/{p.name}": p.read_bytes() for p in (FIXTURES / ROUND).iterdir()}
    scratch.commit(files, f"round {ROUND}", date="2026-11-20T10:00:00Z")
    scratch.commit(
        {"docs/notes.md": "# Notes\n\nA later commit: the round's day is not main's.\n"},
        "a later change",
        date="2026-11-27T10:00:00Z",
    )
    run = act.run("site.yml", "workflow_dispatch", {"inputs": {}})
    assert run.code == 0, run.log[-4000:]
    assert run.job("build") == "succeeded" and run.job("deploy") == "succeeded", run.jobs
    pages = run.pages
    for page in (
        "index.html",
        "style.css",
        "rules.html",
        "environments.html",
        "rounds/index.html",
        "kit.html",
        "kit/othello-arena-kit.zip",
    ):
        assert (pages / page).is_file(), f"{page} missing; the site has {sorted(p.name for p in pages.iterdir())}"
    footer = (pages / "index.html").read_text()
    head = scratch.head()
    assert f"Built from data commit <code>{head}</code>" in footer, footer[-600:]
    assert "unknown" not in footer.split("Built from data commit", 1)[1][:80]
    # A shallow checkout would see every file as added by main's one commit, and date none.
    rounds_page = (pages / "rounds" / "index.html").read_text()
    row = rounds_page[rounds_page.index(f"{ROUND}.html") :][:400]
    assert "<td>2026-11-20</td>" in row, row
    assert ROUND in footer.split("Built from data commit", 1)[0], "the round leads the board by itself"
    print(f"act: site.yml ran in {run.timing}")
