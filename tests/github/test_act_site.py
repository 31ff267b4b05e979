"""site.yml run as a workflow (act, tests/github/act_harness.py): the arena installed with a
plain `pip install .`, as the workflow does, builds the kit and the site, and the deploy
stand-in receives the pages. The footer names main's commit."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def test_the_site_deploy_builds_the_kit_and_every_page_from_a_plain_install(act, scratch):
    run = act.run("site.yml", "workflow_dispatch", {"inputs": {}})
    assert run.code == 0, run.log[-4000:]
    assert run.job("build") == "succeeded" and run.job("deploy") == "succeeded", run.jobs
    pages = run.pages
    for page in ("index.html", "style.css", "rules.html", "environments.html", "rounds/index.html", "kit.html",
                 "kit/othello-arena-kit.zip"):
        assert (pages / page).is_file(), f"{page} missing; the site has {sorted(p.name for p in pages.iterdir())}"
    footer = (pages / "index.html").read_text()
    head = scratch.head()
    assert f"Built from data commit <code>{head}</code>" in footer, footer[-600:]
    assert "unknown" not in footer.split("Built from data commit", 1)[1][:80]
    print(f"act: site.yml ran in {run.timing}")
