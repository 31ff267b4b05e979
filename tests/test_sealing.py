"""Sealed submissions (grader.documents.sealing): sealed to a key, opened only with it, checked against
the manifest; what cannot be opened is refused with the reason."""

from __future__ import annotations

import shutil

import pytest
from nacl.public import PrivateKey

from grader.documents import sealing
from grader.documents.submission import SubmissionError, load_submission
from grader.kit.build import write_sealed_package, write_submission_zip
from tests.github.conftest import AGENTS


@pytest.fixture
def package(tmp_path):
    agent = AGENTS / "random_agent"
    files = sorted(p.name for p in agent.iterdir() if p.is_file())
    archive = write_submission_zip(agent, files, tmp_path / "submission.zip")
    digest = load_submission(archive, extract_to=tmp_path / "plain").digest
    manifest = write_sealed_package(
        archive, digest, "alice", "2030.01.02-0123456789", sealing.public_key_text(), tmp_path / "sealed"
    )
    return tmp_path / "sealed", manifest


def test_a_sealed_package_opens_to_the_digest_its_manifest_names(package, tmp_path):
    folder, manifest = package
    opened = load_submission(folder, extract_to=tmp_path / "opened")
    assert opened.digest == manifest.digest and "agent.py" in opened.files
    assert sealing.Manifest.from_bytes((folder / "manifest.yaml").read_bytes()) == manifest


def test_a_changed_byte_is_refused(package, tmp_path):
    folder, _ = package
    data = bytearray((folder / "submission.sealed").read_bytes())
    data[-1] ^= 1
    (folder / "submission.sealed").write_bytes(bytes(data))
    with pytest.raises(SubmissionError, match="its digest is"):
        load_submission(folder, extract_to=tmp_path / "x")


def test_a_manifest_that_lies_about_the_files_is_refused(package, tmp_path):
    folder, manifest = package
    text = (folder / "manifest.yaml").read_text().replace(manifest.digest, "sha256:" + "0" * 64)
    (folder / "manifest.yaml").write_text(text)
    with pytest.raises(SubmissionError, match="the manifest says sha256:0000"):
        load_submission(folder, extract_to=tmp_path / "x")


def test_without_the_key_nothing_opens(package, tmp_path, monkeypatch):
    folder, _ = package
    monkeypatch.setenv("ARENA_CONFIG_DIR", str(tmp_path / "nobody"))
    with pytest.raises(SubmissionError, match="no submission key"):
        load_submission(folder, extract_to=tmp_path / "x")
    monkeypatch.setenv(sealing.KEY_ENV, sealing.encode_key(bytes(PrivateKey.generate())))
    with pytest.raises(SubmissionError, match="another arena's key"):
        load_submission(folder, extract_to=tmp_path / "y")


def test_the_environments_key_is_the_one_used(tmp_path, monkeypatch):
    key = PrivateKey.generate()
    monkeypatch.setenv(sealing.KEY_ENV, sealing.encode_key(bytes(key)))
    assert sealing.public_key_text() == sealing.encode_key(bytes(key.public_key))
    monkeypatch.setenv(sealing.KEY_ENV, "not a key")
    with pytest.raises(sealing.SealError, match="ARENA_SUBMISSION_KEY: not a key"):
        sealing.private_key()


def test_a_plain_file_beside_the_package_is_refused_with_how_to_repackage(package, tmp_path):
    folder, _ = package
    shutil.copy(AGENTS / "random_agent" / "agent.py", folder / "agent.py")
    with pytest.raises(SubmissionError, match="make package HANDLE="):
        load_submission(folder, extract_to=tmp_path / "x")


@pytest.mark.parametrize(
    "text,problem",
    [
        ("schema_version: 2\n", "schema_version must be 1"),
        (
            "schema_version: 1\nhandle: a\nkit_version: v\nsealed: md5:1\ndigest: sha256:x\nrecipient: k\n",
            "sealed: .md5:1. is not a digest",
        ),
        ("[1, 2]\n", "schema_version must be 1"),
        ("schema_version: 1\nhandle: a\n", "kit_version: missing"),
    ],
)
def test_a_bad_manifest_names_its_problem(text, problem):
    with pytest.raises(sealing.SealError, match=problem):
        sealing.Manifest.from_bytes(text.encode())


def test_staff_open_a_submission_to_review_it(package, tmp_path, capsys):
    from grader.cli.main import main

    folder, manifest = package
    assert main(["open-submission", str(folder), "--out", str(tmp_path / "review")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (tmp_path / "review" / "agent.py").is_file()
    assert out[0].startswith("handle alice, kit 2030.01.02-0123456789") and out[-1] == f"/cleared {manifest.digest}"
    assert main(["open-submission", str(folder), "--out", str(tmp_path / "review")]) == 1  # not empty


def test_staff_open_a_submission_from_a_refs_blobs(package, tmp_path, capsys):
    import subprocess

    from grader.cli.main import main

    folder, manifest = package
    repo = tmp_path / "repo"
    shutil.copytree(folder, repo / "submissions" / "alice")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "alice"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    code = main(["open-submission", "alice", "--ref", "main", "--repo-dir", str(repo), "--out", str(tmp_path / "r")])
    assert code == 0 and capsys.readouterr().out.splitlines()[-1] == f"/cleared {manifest.digest}"
