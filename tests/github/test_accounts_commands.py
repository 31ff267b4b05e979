"""`arena accounts approve` and `arena accounts add`: staff edit the registry by command, and the
first staff account is made so (docs/staff.md); what they print and refuse."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.cli.main import main
from grader.season.accounts import load_registry

REPO = Path(__file__).resolve().parents[2]


def registry(tmp_path) -> Path:
    path = tmp_path / "accounts.yaml"
    shutil.copy(REPO / "accounts.yaml", path)  # the repository's own: comments, no account
    return path


def test_the_first_staff_account_then_a_student_approved(tmp_path, capsys):
    path = registry(tmp_path)
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    assert (
        main(
            [
                "accounts",
                "add",
                "--id",
                "583231",
                "--login",
                "octocat",
                "--handle",
                "prof",
                "--staff",
                "--approved",
                "--registry",
                str(path),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("added prof (GitHub id 583231, login octocat, staff, approved) to ")
    assert main(["accounts", "add", "--id", "99", "--login", "ann-s", "--handle", "ann", "--registry", str(path)]) == 0
    assert main(["accounts", "approve", "ann", "--registry", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"approved ann (GitHub id 99, login ann-s) in {path}; commit it and merge it to main" in out
    loaded = load_registry(path)
    assert loaded.by_handle("ann").approved and not loaded.by_handle("ann").staff
    assert loaded.is_staff(583231)
    assert [line for line in path.read_text().splitlines() if line.startswith("#")] == header


def test_approving_an_unknown_or_approved_handle_is_refused(tmp_path, capsys):
    path = registry(tmp_path)
    main(
        ["accounts", "add", "--id", "99", "--login", "ann-s", "--handle", "ann", "--approved", "--registry", str(path)]
    )
    capsys.readouterr()
    before = path.read_text()
    assert main(["accounts", "approve", "bob", "--registry", str(path)]) == 1
    assert (
        "arena accounts: no account has the handle 'bob' (handles: ann); the student adds their account by a "
        "pull request first"
    ) in capsys.readouterr().err
    assert main(["accounts", "approve", "ann", "--registry", str(path)]) == 1
    assert "ann (GitHub id 99, ann-s) is already approved" in capsys.readouterr().err
    assert path.read_text() == before


def test_a_bad_handle_or_a_taken_id_is_named(tmp_path, capsys):
    path = registry(tmp_path)
    assert (
        main(["accounts", "add", "--id", "7", "--login", "x", "--handle", "Bad_Handle", "--registry", str(path)]) == 1
    )
    assert "'Bad_Handle' is not a handle: 1-32 lower-case letters" in capsys.readouterr().err
    main(["accounts", "add", "--id", "7", "--login", "x", "--handle", "ok", "--registry", str(path)])
    assert main(["accounts", "add", "--id", "7", "--login", "y", "--handle", "ok2", "--registry", str(path)]) == 1
    assert "GitHub id 7 already has an account (ok)" in capsys.readouterr().err


def test_the_staff_docs_commands_run_as_written(tmp_path, capsys, monkeypatch):
    """docs/staff.md's bootstrap and approval, run line by line (LOGIN and HANDLE filled in)."""
    import shlex

    text = (REPO / "docs" / "staff.md").read_text()
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines() if line.startswith("arena accounts ")]
    assert [shlex.split(line)[:3] for line in lines] == [
        ["arena", "accounts", "add"],
        ["arena", "accounts", "check"],
        ["arena", "accounts", "approve"],
    ]
    monkeypatch.chdir(tmp_path)
    shutil.copy(REPO / "accounts.yaml", tmp_path / "accounts.yaml")
    add, check, approve = (shlex.split(line.replace("LOGIN", "prof-gh"))[1:] for line in lines)
    assert main(add) == 0
    assert main(check) == 0
    assert "accounts.yaml: OK, 1 accounts, 1 approved" in capsys.readouterr().out
    main(["accounts", "add", "--id", "99", "--login", "ann-s", "--handle", "ann"])
    assert main([a.replace("HANDLE", "ann") for a in approve]) == 0
    assert "approved ann" in capsys.readouterr().out
