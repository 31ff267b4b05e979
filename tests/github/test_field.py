"""`arena field`: approved accounts' submissions on main, and for the final main at the freeze."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from grader.cli import main
from tests.github.conftest import AGENTS, CONFIG, REGISTRY

pytestmark = pytest.mark.timeout(60)


def git(repo, *args, date=None):
    env = os.environ | {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, timeout=30)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "main"
    (root / "config").mkdir(parents=True)
    (root / "accounts.yaml").write_text(yaml.safe_dump(REGISTRY))
    (root / "config" / "competition.yaml").write_text(yaml.safe_dump(CONFIG))
    for handle in ("alice", "carol"):  # carol is not approved
        shutil.copytree(AGENTS / "random_agent", root / "submissions" / handle)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "before the freeze", date="2026-12-10T10:00:00Z")
    # After the freeze (2026-12-12T09:00Z) somebody merges a new alice and adds bob.
    (root / "submissions" / "alice" / "notes.txt").write_text("late change\n")
    shutil.copytree(AGENTS / "random_agent", root / "submissions" / "bob")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "after the freeze", date="2026-12-13T10:00:00Z")
    return root


def field(repo, tmp_path, tier, now):
    out = tmp_path / f"field-{tier}.yaml"
    agents = tmp_path / f"agents-{tier}.txt"
    code = main(["field", "--tier", tier, "--repo-dir", str(repo), "--config", str(repo / "config" / "competition.yaml"),
                 "--copy-to", str(tmp_path / f"entrants-{tier}"), "--out", str(out), "--agents-file", str(agents),
                 "--now", now])
    return code, yaml.safe_load(out.read_text()), agents.read_text().splitlines()


def test_ladder_field_is_main_now(repo, tmp_path):
    code, doc, agents = field(repo, tmp_path, "ladder", "2026-12-13T12:00:00Z")
    assert code == 0
    assert [e["handle"] for e in doc["entrants"]] == ["alice", "bob"]
    assert {"handle": "prof", "reason": "no submission"} in doc["excluded"]
    assert not any(e["handle"] == "carol" for e in doc["entrants"])  # unapproved: never in a field
    assert agents == [f"alice={tmp_path}/entrants-ladder/alice", f"bob={tmp_path}/entrants-ladder/bob"]


def test_an_unapproved_submission_is_listed_as_excluded_and_the_commit_named(repo, tmp_path, capsys):
    code, doc, _ = field(repo, tmp_path, "ladder", "2026-12-13T12:00:00Z")
    assert code == 0
    assert {"handle": "carol", "reason": "account not approved: staff approve it with "
                                         "`arena accounts approve carol`"} in doc["excluded"]
    assert "field: left out carol: account not approved" in capsys.readouterr().err
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert doc["source_commit"] == head.strip()  # a ladder field names its commit too


def test_final_field_is_main_at_the_freeze(repo, tmp_path):
    code, doc, _ = field(repo, tmp_path, "final", "2026-12-14T09:00:00Z")
    assert code == 0 and doc["frozen_at"] == "2026-12-12T09:00:00Z"
    assert [e["handle"] for e in doc["entrants"]] == ["alice"]  # bob arrived after the freeze
    assert not (tmp_path / "entrants-final" / "alice" / "notes.txt").exists()  # nor did alice's change
    head = subprocess.run(["git", "-C", str(repo), "rev-list", "-1", "HEAD~1"], capture_output=True, text=True).stdout
    assert doc["source_commit"] == head.strip()


def test_empty_field_exits_1(repo, tmp_path):
    shutil.rmtree(repo / "submissions")
    code, doc, agents = field(repo, tmp_path, "ladder", "2026-12-01T00:00:00Z")
    assert code == 1 and doc["entrants"] == [] and agents == []


def test_final_field_with_no_commit_before_the_freeze_says_so(repo, tmp_path, capsys):
    config = yaml.safe_load((repo / "config" / "competition.yaml").read_text())
    config["final_at"] = "2026-12-01T09:00:00Z"  # the freeze (11-29) is before the first commit
    (repo / "config" / "competition.yaml").write_text(yaml.safe_dump(config))
    code = main(["field", "--tier", "final", "--repo-dir", str(repo), "--config", str(repo / "config" / "competition.yaml"),
                 "--copy-to", str(tmp_path / "entrants"), "--out", str(tmp_path / "f.yaml"), "--now", "2026-12-14T09:00:00Z"])
    assert code == 1
    assert "cannot read main at the freeze" in capsys.readouterr().err


def test_an_arena_failure_of_the_smoke_gate_drops_nobody(repo, tmp_path, capsys, monkeypatch):
    """The arena failing to smoke-test an entrant is the arena's error (exit 2), never the
    entrant's 'smoke test failed'."""
    from grader import field as field_mod
    from grader.smoke import SmokeReport

    def arena_error(folder, sandbox, settings=None, **kwargs):
        return SmokeReport(str(folder), "local", result="arena_error",
                           reason="launch_failed: no docker engine answers")

    monkeypatch.setattr(field_mod, "run_smoke", arena_error)
    monkeypatch.setattr("grader.commands.field.get_sandbox", lambda name: object())
    code = main(["field", "--tier", "ladder", "--repo-dir", str(repo), "--config", str(repo / "config" / "competition.yaml"),
                 "--smoke", "local", "--out", str(tmp_path / "f.yaml"), "--now", "2026-12-13T12:00:00Z"])
    err = capsys.readouterr().err
    assert code == 2 and "the arena failed while smoke-testing alice (not the agent's fault)" in err
    assert "smoke test failed" not in err and not (tmp_path / "f.yaml").exists()
