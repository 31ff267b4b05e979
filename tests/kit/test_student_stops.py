"""Each ordinary step a student takes ends in the right state, with a message that says what to
do: packaging without a handle, a wrong handle, a newer kit, `make history` from a fork's clone,
an agent that writes beside agent.py, and what the kit says of the site and of /score."""

from __future__ import annotations

import subprocess
import textwrap

import pytest
from nacl.public import PrivateKey

from grader.documents.sealing import OWNER_KEY_FILE, PACKAGE_FILES, encode_key
from tests.kit.test_history import history_repo  # noqa: F401 - the fixture: a requested round in history/

pytestmark = pytest.mark.timeout(300)


def test_package_without_a_handle_leaves_no_earlier_sealed_package(kit_scripts, capsys, monkeypatch):
    folder, _, modules = kit_scripts
    assert modules["package"].main([]) == 0  # HANDLE=alice: sealed
    assert all((folder / "submission" / name).exists() for name in PACKAGE_FILES)
    (folder / "agent.py").write_text((folder / "agent.py").read_text() + "\n# a new version\n")
    monkeypatch.delenv("HANDLE")
    capsys.readouterr()
    assert modules["package"].main([]) == 1
    out = capsys.readouterr().out
    assert "removed the previous sealed package from submission/" in out
    assert "NOT SEALED: submission/ holds no package now; say your handle" in out
    assert "make package HANDLE=<your handle>" in out
    assert not any((folder / "submission" / name).exists() for name in PACKAGE_FILES)  # nothing old to copy


@pytest.mark.parametrize("handle", ["Bob", "bob_1", "-bob", "b" * 33])
def test_a_handle_the_arena_refuses_is_refused_by_the_kit_with_the_rule(kit_scripts, capsys, handle):
    folder, _, modules = kit_scripts
    assert modules["package"].main([f"--handle={handle}"]) == 1
    out = capsys.readouterr().out
    assert f"REFUSED: HANDLE={handle!r} is not a handle: 1-32 lower-case letters, digits and inner hyphens" in out
    assert not (folder / "submission").exists() and not (folder / "submission.zip").exists()


def test_a_newer_kit_carries_the_owner_key_over(kit_scripts, tmp_path, capsys):
    folder, _, modules = kit_scripts
    assert not (folder / OWNER_KEY_FILE).exists()
    old = tmp_path / "old-kit"
    old.mkdir()
    (old / OWNER_KEY_FILE).write_text(encode_key(bytes(PrivateKey.generate())) + "\n")
    assert modules["package"].main([]) == 0
    out = capsys.readouterr().out
    assert f"your key: carried over {old / OWNER_KEY_FILE} into this kit" in out
    assert (folder / OWNER_KEY_FILE).read_text() == (old / OWNER_KEY_FILE).read_text()
    import yaml

    from grader.documents.sealing import read_key_file

    manifest = yaml.safe_load((folder / "submission" / "manifest.yaml").read_text())
    assert manifest["owner_key"] == encode_key(bytes(read_key_file(old / OWNER_KEY_FILE).public_key))


def test_two_earlier_keys_are_not_guessed_between(kit_scripts, tmp_path, capsys):
    folder, _, modules = kit_scripts
    for name in ("kit-a", "kit-b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / OWNER_KEY_FILE).write_text(encode_key(bytes(PrivateKey.generate())) + "\n")
    assert modules["package"].main([]) == 1
    out = capsys.readouterr().out
    assert "REFUSED: this kit has no .arena-owner.key, and several kits beside it have one" in out
    assert "cp <that kit>/.arena-owner.key" in out and not (folder / OWNER_KEY_FILE).exists()


def test_a_first_key_is_made_and_the_student_told_to_keep_it(kit_scripts, capsys):
    folder, _, modules = kit_scripts
    assert modules["package"].main([]) == 0
    out = capsys.readouterr().out
    assert f"your key: made {folder / OWNER_KEY_FILE} (never packaged). Keep it" in out
    assert "copy .arena-owner.key into the new kit's folder" in out


WRITES_BESIDE = textwrap.dedent("""\
    import os
    import numpy as np

    class Agent:
        def prepare(self, env_info):
            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.txt"), "a") as out:
                out.write("a board\\n")

        def act(self, obs, action_mask):
            return int(np.flatnonzero(action_mask)[0])

        def observe_outcome(self, outcome):
            pass
    """)


def test_an_agent_that_writes_beside_agent_py_fails_the_unsandboxed_check(kit_scripts, capsys):
    """On the server the submission's folder is read-only: `make check --sandbox none` (what a
    macOS user gets) fails such an agent too, and says where to write instead."""
    folder, _, modules = kit_scripts
    (folder / "agent.py").write_text(WRITES_BESIDE)
    assert modules["check"].main(["--sandbox", "none"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out, out
    assert (
        "your agent wrote beside agent.py (notes.txt)" in out  # root: the write went through
        or "PermissionError" in out
        or "Permission denied" in out
    ), out
    assert not (folder / "notes.txt").exists()  # the check played a copy; the kit folder is untouched


def test_history_from_a_forks_clone_fetches_from_the_arenas_repository(history_repo, tmp_path, capsys):
    """Students clone their fork to submit; the history and the replays live in the arena's
    repository. The kit knows its address and fetches from it, and says so."""
    folder, modules, repo, round_id = history_repo
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "history"], check=True)
    fork = tmp_path / "fork"
    subprocess.run([*git, "init", "-q", str(fork)], check=True)
    subprocess.run([*git, "-C", str(fork), "commit", "-q", "--allow-empty", "-m", "the fork, long ago"], check=True)
    subprocess.run([*git, "-C", str(fork), "remote", "add", "origin", "https://github.com/alice-gh/arena"], check=True)
    manifest = modules["kitenv"].enter_venv("history.py")
    manifest["repository"] = str(repo)  # the arena's address, as kit.json carries it
    assert modules["history"].main(["--from", str(fork)]) == 0
    out = capsys.readouterr().out
    assert "your clone's origin is https://github.com/alice-gh/arena (your fork?), not the arena's repository" in out
    assert "history of alice: 1 round(s)" in out and round_id in out
    # The replays are fetched from the arena's repository into the fork's clone, not from its origin.
    from tests.kit.test_history import publish_seeds

    publish_seeds(repo, "tier-7")
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "seeds"], check=True)
    assert modules["history"].main(["--from", str(fork), round_id, "--replays", str(tmp_path / "replays")]) == 0
    assert f"written into {tmp_path / 'replays'}" in capsys.readouterr().out
    # An address that cannot be fetched says what to do.
    manifest["repository"] = str(tmp_path / "nowhere")
    assert modules["history"].main(["--from", str(fork)]) == 1
    err = capsys.readouterr().err
    assert "could not fetch" in err and "clone the arena's repository itself" in err


def test_the_kit_gives_the_site_and_explains_score_and_the_template_orders_freeze(kit_scripts):
    from grader.kit.build import site_address, site_line

    folder, _, _ = kit_scripts
    assert site_address("https://github.com/Arena-Org/arena") == "https://arena-org.github.io/arena/"
    assert site_line("https://github.com/arena-org/arena").startswith(
        "The arena's site: <https://arena-org.github.io/arena/>"
    )
    assert "ask your course staff" in site_line(None)
    readme = (folder / "README.md").read_text()
    assert "{{site}}" in readme and "## The arena's site, and /score" in readme
    assert "`/score`" in readme and "`make history` opens them" in readme
    freeze = (folder / "agent.py").read_text().split("def freeze")[1]
    assert freeze.index("measurement games") < freeze.index("After freeze()")
