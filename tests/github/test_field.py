"""`arena field`: approved accounts' submissions on main, and for the final main at the freeze."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from grader.cli.main import main
from tests.github.conftest import CONFIG, REGISTRY, agent_files, package_digest, plain_files


def write_files(root, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


pytestmark = pytest.mark.timeout(60)


def git(repo, *args, date=None):
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
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
        write_files(root, agent_files(handle))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "before the freeze", date="2026-12-10T10:00:00Z")
    # After the freeze (2026-12-12T09:00Z) somebody merges a new alice and adds bob.
    write_files(root, agent_files("alice", extra={"notes.txt": b"late change\n"}))
    write_files(root, agent_files("bob"))
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "after the freeze", date="2026-12-13T10:00:00Z")
    return root


def field(repo, tmp_path, tier, now):
    out = tmp_path / f"field-{tier}.yaml"
    agents = tmp_path / f"agents-{tier}.txt"
    code = main(
        [
            "field",
            "--tier",
            tier,
            "--repo-dir",
            str(repo),
            "--config",
            str(repo / "config" / "competition.yaml"),
            "--copy-to",
            str(tmp_path / f"entrants-{tier}"),
            "--out",
            str(out),
            "--agents-file",
            str(agents),
            "--now",
            now,
        ]
    )
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
    assert {
        "handle": "carol",
        "reason": "account not approved: staff approve it with `arena accounts approve carol`",
    } in doc["excluded"]
    assert "field: left out carol: account not approved" in capsys.readouterr().err
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert doc["source_commit"] == head.strip()  # a ladder field names its commit too


def test_final_field_is_main_at_the_freeze(repo, tmp_path):
    code, doc, _ = field(repo, tmp_path, "final", "2026-12-14T09:00:00Z")
    assert code == 0 and doc["frozen_at"] == "2026-12-12T09:00:00Z"
    assert [e["handle"] for e in doc["entrants"]] == ["alice"]  # bob arrived after the freeze
    before = yaml.safe_load(
        subprocess.run(
            ["git", "-C", str(repo), "show", "HEAD~1:submissions/alice/manifest.yaml"], capture_output=True, text=True
        ).stdout
    )
    assert doc["entrants"][0]["digest"] == before["digest"]  # nor did alice's change
    head = subprocess.run(["git", "-C", str(repo), "rev-list", "-1", "HEAD~1"], capture_output=True, text=True).stdout
    assert doc["source_commit"] == head.strip()


def test_empty_field_exits_1(repo, tmp_path):
    shutil.rmtree(repo / "submissions")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "no submissions")
    code, doc, agents = field(repo, tmp_path, "ladder", "2026-12-01T00:00:00Z")
    assert code == 1 and doc["entrants"] == [] and agents == []


def test_final_field_with_no_commit_before_the_freeze_says_so(repo, tmp_path, capsys):
    config = yaml.safe_load((repo / "config" / "competition.yaml").read_text())
    config["final_at"] = "2026-12-01T09:00:00Z"  # the freeze (11-29) is before the first commit
    (repo / "config" / "competition.yaml").write_text(yaml.safe_dump(config))
    code = main(
        [
            "field",
            "--tier",
            "final",
            "--repo-dir",
            str(repo),
            "--config",
            str(repo / "config" / "competition.yaml"),
            "--copy-to",
            str(tmp_path / "entrants"),
            "--out",
            str(tmp_path / "f.yaml"),
            "--now",
            "2026-12-14T09:00:00Z",
        ]
    )
    assert code == 1
    assert "cannot read main at the freeze" in capsys.readouterr().err


def test_an_arena_failure_of_the_smoke_gate_drops_nobody(repo, tmp_path, capsys, monkeypatch):
    """The arena failing to smoke-test an entrant is the arena's error (exit 2), never the
    entrant's 'smoke test failed'."""
    from grader.play import field as field_mod
    from grader.play.smoke import SmokeReport

    def arena_error(folder, sandbox, settings=None, **kwargs):
        return SmokeReport(str(folder), "local", result="arena_error", reason="launch_failed: no docker engine answers")

    monkeypatch.setattr(field_mod, "run_smoke", arena_error)
    monkeypatch.setattr("grader.cli.commands.field.get_sandbox", lambda name: object())
    code = main(
        [
            "field",
            "--tier",
            "ladder",
            "--repo-dir",
            str(repo),
            "--config",
            str(repo / "config" / "competition.yaml"),
            "--smoke",
            "local",
            "--copy-to",
            str(tmp_path / "e"),
            "--out",
            str(tmp_path / "f.yaml"),
            "--now",
            "2026-12-13T12:00:00Z",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "the arena failed while smoke-testing alice (not the agent's fault)" in err
    assert "smoke test failed" not in err and not (tmp_path / "f.yaml").exists()


def test_the_field_reads_blobs_not_the_checkout_and_copies_sealed_packages(repo, tmp_path):
    """Attributes (export-subst, line endings) and a changed checkout change nothing the field
    reads: the packages are taken from the blobs, and what it copies for the shards is sealed.
    (A package holds its two files only: a .gitattributes of its own is refused.)"""
    files = agent_files("bob")
    (repo / ".gitattributes").write_text("* export-subst\n*.sealed text eol=crlf\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "attributes")
    # The checkout's files are changed behind git's back: the field must not read them.
    (repo / "submissions" / "bob" / "submission.sealed").write_bytes(b"changed in the checkout")
    code, doc, agents = field(repo, tmp_path, "ladder", "2026-12-13T12:00:00Z")
    assert code == 0
    bob = next(e for e in doc["entrants"] if e["handle"] == "bob")
    assert bob["digest"] == package_digest(files)
    copied = tmp_path / "entrants-ladder" / "bob"
    assert sorted(p.name for p in copied.iterdir()) == ["manifest.yaml", "submission.sealed"]
    committed = subprocess.run(
        ["git", "-C", str(repo), "show", "HEAD:submissions/bob/submission.sealed"], capture_output=True
    ).stdout
    assert copied.joinpath("submission.sealed").read_bytes() == committed


def test_a_plain_submission_on_main_is_left_out_with_how_to_repackage(repo, tmp_path):
    shutil.rmtree(repo / "submissions" / "bob")
    write_files(repo, plain_files("bob"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a plain bob")
    code, doc, _ = field(repo, tmp_path, "ladder", "2026-12-13T12:00:00Z")
    assert code == 0 and [e["handle"] for e in doc["entrants"]] == ["alice"]
    (bob,) = [e for e in doc["excluded"] if e["handle"] == "bob"]
    assert "not a sealed submission" in bob["reason"] and "make package HANDLE=" in bob["reason"]
