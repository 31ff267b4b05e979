"""The submission loader: good folders and zips, and each way a bad one is rejected."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from grader.documents import submission as sub_mod
from grader.documents.submission import SubmissionError, load_submission

pytestmark = pytest.mark.timeout(60)

AGENT = "class Agent:\n    def prepare(self, e): pass\n    def act(self, o, m): return 0\n    def observe_outcome(self, o): pass\n"


def make_folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def make_zip(path: Path, entries: list[tuple], compression=zipfile.ZIP_DEFLATED) -> Path:
    """entries: (name, data) or (ZipInfo, data)."""
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def test_folder_loads_with_stable_digest(tmp_path):
    folder = make_folder(tmp_path / "a", {"agent.py": AGENT, "priors/table.json": "[1, 2]"})
    first = load_submission(folder)
    assert first.files == ("agent.py", "priors/table.json")
    assert first.digest.startswith("sha256:") and load_submission(folder).digest == first.digest
    (folder / "priors" / "table.json").write_text("[1, 3]")
    assert load_submission(folder).digest != first.digest


def test_zip_loads_including_one_top_folder(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("mine/agent.py", AGENT), ("mine/w.csv", "1,2\n")])
    s = load_submission(z, extract_to=tmp_path / "out")
    assert s.files == ("agent.py", "w.csv")


@pytest.mark.parametrize(
    "files, message",
    [
        ({"main.py": AGENT}, "no agent.py"),
        ({"agent.py": "class Agente:\n    pass\n"}, "no top-level `class Agent`"),
        ({"agent.py": "class Agent:\n    def act(self, o, m):\n        return 0\n"}, "no prepare, observe_outcome"),
        ({"agent.py": "class Agent(:\n"}, "syntax error at line 1"),
    ],
)
def test_bad_folders(tmp_path, files, message):
    with pytest.raises(SubmissionError, match=message):
        load_submission(make_folder(tmp_path / "a", files))


def test_symlink_in_folder_is_rejected(tmp_path):
    folder = make_folder(tmp_path / "a", {"agent.py": AGENT})
    os.symlink("/etc/passwd", folder / "passwd")
    with pytest.raises(SubmissionError, match="symbolic links"):
        load_submission(folder)


def test_too_many_files(tmp_path, monkeypatch):
    monkeypatch.setattr(sub_mod, "MAX_FILES", 3)
    folder = make_folder(tmp_path / "a", {"agent.py": AGENT, **{f"f{i}.txt": "x" for i in range(4)}})
    with pytest.raises(SubmissionError, match="more than 3 files"):
        load_submission(folder)
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT)] + [(f"f{i}", "x") for i in range(4)])
    with pytest.raises(SubmissionError, match="entries, more than 3"):
        load_submission(z, extract_to=tmp_path / "out")


def test_zip_with_absolute_path(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("/etc/evil", "x")])
    with pytest.raises(SubmissionError, match="absolute path"):
        load_submission(z, extract_to=tmp_path / "out")


def test_zip_with_dotdot(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("../../evil.py", "x")])
    with pytest.raises(SubmissionError, match=r"'\.\.'"):
        load_submission(z, extract_to=tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()


def test_zip_with_symlink(tmp_path):
    link = zipfile.ZipInfo("link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), (link, "/etc/passwd")])
    with pytest.raises(SubmissionError, match="symbolic link"):
        load_submission(z, extract_to=tmp_path / "out")


def test_zip_bomb_by_ratio(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("zeros.bin", b"\0" * (8 * 1024 * 1024))])
    with pytest.raises(SubmissionError, match="zip bomb"):
        load_submission(z, extract_to=tmp_path / "out")
    assert not (tmp_path / "out" / "zeros.bin").exists()


def test_zip_over_total_uncompressed_size(tmp_path, monkeypatch):
    monkeypatch.setattr(sub_mod, "MAX_TOTAL_BYTES", 1000)
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("big.txt", os.urandom(2000))], zipfile.ZIP_STORED)
    with pytest.raises(SubmissionError, match="unpacks to more than"):
        load_submission(z, extract_to=tmp_path / "out")


def test_zip_over_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sub_mod, "MAX_ZIP_BYTES", 100)
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("r.bin", os.urandom(500))])
    with pytest.raises(SubmissionError, match="over the"):
        load_submission(z, extract_to=tmp_path / "out")


def test_not_a_folder_or_zip(tmp_path):
    (tmp_path / "agent.tar").write_bytes(b"not a zip")
    with pytest.raises(SubmissionError, match="neither a folder nor a zip"):
        load_submission(tmp_path / "agent.tar")
    with pytest.raises(SubmissionError, match="no such file"):
        load_submission(tmp_path / "missing")


def test_the_hostile_suite_agents_all_load():
    agents = Path(__file__).resolve().parent.parent / "agents"
    for folder in sorted(p for p in agents.iterdir() if p.is_dir()):
        assert load_submission(folder).files[0] == "agent.py"


# -- red team, hostile bytes: every way a submission's bytes broke the loader -----
def _utf8_flagged_zip(path: Path, raw: bytes) -> Path:
    """A zip with a member named `caf\u00e9.txt` (so zipfile sets the UTF-8 flag) whose two
    UTF-8 bytes of the \u00e9 are then replaced, in the raw bytes, by `raw` (two bytes)."""
    make_zip(path, [("agent.py", AGENT), ("caf\u00e9.txt", "x")])
    path.write_bytes(path.read_bytes().replace("caf\u00e9".encode(), b"caf" + raw))
    return path


@pytest.mark.filterwarnings("ignore:Duplicate name")  # zipfile warns as it writes the clash we test
@pytest.mark.parametrize(
    "entries, message",
    [
        ([("agent.py", AGENT), ("data", "x"), ("data/x", "y")], "'data' is both a file and a folder"),
        ([("agent.py", AGENT), ("data/", ""), ("data", "x")], "'data' is both a file and a folder"),
        ([("agent.py", AGENT), ("a/b/c", "x"), ("a/b", "y")], "'a/b' is both a file and a folder"),
        ([("agent.py", AGENT), ("x.txt", "1"), ("./x.txt", "2")], "'x.txt' appears twice"),
        ([("agent.py", AGENT), ("agent.py", AGENT)], "'agent.py' appears twice"),
    ],
)
def test_zip_entries_that_clash_are_refused_by_name(tmp_path, entries, message):
    z = make_zip(tmp_path / "s.zip", entries)
    with pytest.raises(SubmissionError, match=message):
        load_submission(z, extract_to=tmp_path / "out")


def test_a_top_folder_holding_an_entry_of_its_own_name_unpacks(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("sub/agent.py", AGENT), ("sub/sub", "data"), ("sub/x/sub", "more")])
    s = load_submission(z, extract_to=tmp_path / "out")
    assert s.files == ("agent.py", "sub", "x/sub") and (s.path / "sub").read_text() == "data"


def test_a_zip_name_marked_utf8_that_is_not_is_refused(tmp_path):
    z = _utf8_flagged_zip(tmp_path / "s.zip", b"\xff\xfe")
    with pytest.raises(SubmissionError, match="s.zip: an entry's name is marked UTF-8 but is not UTF-8"):
        load_submission(z, extract_to=tmp_path / "out")


def test_a_damaged_zip_is_refused(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("data.txt", "x" * 5000)])
    blob = bytearray(z.read_bytes())
    at = blob.index(b"data.txt") + 8 + 100  # inside the compressed data of data.txt
    blob[at : at + 20] = b"\x00" * 20
    z.write_bytes(bytes(blob))
    with pytest.raises(SubmissionError, match="s.zip: cannot be unpacked"):
        load_submission(z, extract_to=tmp_path / "out")


def test_a_file_name_that_is_not_utf8_is_refused_by_its_bytes(tmp_path):
    folder = make_folder(tmp_path / "a", {"agent.py": AGENT})
    with open(os.path.join(os.fsencode(folder), b"w\xffights.txt"), "wb") as fh:
        fh.write(b"1")
    with pytest.raises(SubmissionError, match=r"b'w\\xffights.txt': a file name that is not UTF-8") as err:
        load_submission(folder)
    str(err.value).encode("utf-8")


def test_an_unreadable_file_is_refused(tmp_path):
    folder = make_folder(tmp_path / "a", {"agent.py": AGENT, "secret/data.txt": "x"})
    os.chmod(folder / "secret", 0)
    try:
        if os.access(folder / "secret", os.R_OK):
            pytest.skip("running as a user that reads any folder (root without the DAC check)")
        with pytest.raises(SubmissionError, match="cannot be read"):
            load_submission(folder)
    finally:
        os.chmod(folder / "secret", 0o755)


@pytest.mark.parametrize(
    "expression", ["1+" * 100_000 + "1", "-" * 100_000 + "1", "a" + "[0]" * 100_000, "(" * 300 + ")" * 300]
)
def test_an_agent_too_deep_for_the_parser_is_refused(tmp_path, expression):
    folder = make_folder(tmp_path / "a", {"agent.py": f"x = {expression}\n" + AGENT})
    with pytest.raises(SubmissionError, match="agent.py: (nested too deeply for Python's parser|syntax error)"):
        load_submission(folder)


def test_folders_nested_too_deep_are_refused(tmp_path):
    """A 1,500-deep tree exhausted the recursion of os.walk (and of pathlib's mkdir in a zip)."""
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("a/" * 1500 + "x", "y")])
    with pytest.raises(SubmissionError, match=f"nested more than {sub_mod.MAX_DEPTH} deep"):
        load_submission(z, extract_to=tmp_path / "out")
    folder = make_folder(tmp_path / "f", {"agent.py": AGENT})
    deep = folder
    for _ in range(60):
        deep = deep / "d"
    deep.mkdir(parents=True)
    with pytest.raises(SubmissionError, match="nested more than"):
        load_submission(folder)
    ok = make_zip(tmp_path / "ok.zip", [("agent.py", AGENT), ("a/" * 20 + "x", "y")])
    assert len(load_submission(ok, extract_to=tmp_path / "ok").files) == 2


def test_a_path_too_long_to_stage_is_refused(tmp_path):
    """A path within the system's limit where the submission sits, but longer than a sandbox's
    session folder leaves room for, failed the copy at launch as the arena's `launch_failed`:
    the loader refuses it, naming it."""
    long = "/".join(["d" * 250] * 5) + "/" + "y" * 50  # its folder alone is 1,254 bytes
    folder = make_folder(tmp_path / "f", {"agent.py": AGENT, long: "data\n"})
    with pytest.raises(
        SubmissionError, match=f"a path of 1254 bytes inside the submission, over {sub_mod.MAX_PATH_BYTES}"
    ):
        load_submission(folder)
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), (long, "data\n")])
    with pytest.raises(SubmissionError, match="a path of 1254 bytes"):
        load_submission(z, extract_to=tmp_path / "out")
    short = "/".join(["d" * 250] * 4)  # 1,003 bytes: still fine
    assert len(load_submission(make_folder(tmp_path / "ok", {"agent.py": AGENT, short: "x"})).files) == 2


def test_an_encrypted_zip_member_is_refused(tmp_path):
    z = make_zip(tmp_path / "s.zip", [("agent.py", AGENT), ("data.txt", "x")])
    blob = bytearray(z.read_bytes())
    central = blob.index(b"PK\x01\x02", blob.index(b"PK\x01\x02") + 4)  # data.txt's central entry
    blob[central + 8] |= 0x1  # the "encrypted" flag
    z.write_bytes(bytes(blob))
    with pytest.raises(SubmissionError, match="s.zip: cannot be unpacked: RuntimeError: .*encrypted"):
        load_submission(z, extract_to=tmp_path / "out")
