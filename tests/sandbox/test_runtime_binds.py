"""The local sandbox's runtime binds: its shared libraries bound one folder at a time."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from grader.sandbox.base import staged_files
from grader.sandbox.local import library_binds, runtime_binds


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A fake host: libraries in two folders, one of which holds another bind's mount point;
    the staged copies go to a temporary folder of the test's own."""
    staging = tmp_path / "tmp"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    lib = tmp_path / "usr" / "lib"
    (lib / "arch").mkdir(parents=True)
    (lib / "arch" / "libc.so.6.1").write_bytes(b"c" * 10)
    (lib / "arch" / "libz.so.1").write_bytes(b"z" * 10)
    (lib / "loader.so.2").write_bytes(b"ld")
    (lib / "loader.so.2").chmod(0o755)
    return tmp_path


def test_a_folder_of_libraries_is_one_bind_of_just_its_libraries(host):
    arch = str(host / "usr" / "lib" / "arch")
    binds = library_binds({arch: {"libc.so.6": f"{arch}/libc.so.6.1", "libz.so.1": f"{arch}/libz.so.1"}}, [])
    assert len(binds) == 1 and binds[0][1] == arch
    staged = binds[0][0]
    assert sorted(os.listdir(staged)) == ["libc.so.6", "libz.so.1"]  # under the names the loader asks for
    with open(os.path.join(staged, "libc.so.6"), "rb") as f:
        assert f.read() == b"c" * 10
    assert all(os.stat(os.path.join(staged, n)).st_mode & stat.S_IROTH for n in os.listdir(staged))
    # The same libraries again: the same staged folder; a changed one: a new folder.
    assert library_binds({arch: {"libc.so.6": f"{arch}/libc.so.6.1", "libz.so.1": f"{arch}/libz.so.1"}}, []) == binds
    (host / "usr" / "lib" / "arch" / "libz.so.1").write_bytes(b"z" * 11)
    changed = library_binds({arch: {"libc.so.6": f"{arch}/libc.so.6.1", "libz.so.1": f"{arch}/libz.so.1"}}, [])
    assert changed[0][0] != staged


def test_a_folder_that_holds_another_mount_point_is_bound_file_by_file(host):
    lib, arch = str(host / "usr" / "lib"), str(host / "usr" / "lib" / "arch")
    binds = library_binds({lib: {"loader.so.2": f"{lib}/loader.so.2"},
                           arch: {"libz.so.1": f"{arch}/libz.so.1"}}, [f"{lib}/python3/stdlib"])
    assert [dest for _, dest in binds] == [f"{lib}/loader.so.2", arch]
    # `lib` holds `arch` too: without the other bind it is still bound file by file.
    binds = library_binds({lib: {"loader.so.2": f"{lib}/loader.so.2"},
                           arch: {"libz.so.1": f"{arch}/libz.so.1"}}, [])
    assert [dest for _, dest in binds] == [f"{lib}/loader.so.2", arch]


def test_a_staged_loader_stays_executable(host):
    lib = str(host / "usr" / "lib")
    (staged, dest), = library_binds({lib: {"loader.so.2": f"{lib}/loader.so.2"}}, [])
    assert os.stat(os.path.join(staged, "loader.so.2")).st_mode & stat.S_IXOTH  # execve runs the loader


def test_the_runtime_binds_libcs_folder_whole():
    binds = runtime_binds()
    dests = [dest for _, dest in binds]
    assert len(dests) == len(set(dests))
    assert not any(os.path.basename(dest).startswith("libc.so") for dest in dests)  # no library one by one there
    holding = [(source, dest) for source, dest in binds if os.path.isdir(source) and "libc.so.6" in os.listdir(source)]
    assert len(holding) == 1
    assert len(os.listdir(holding[0][0])) > 1  # its neighbours the runtime links are in it too


def test_a_copy_that_fails_leaves_nothing_behind(host):
    """A library that cannot be copied (gone, or a full disk) fails the staging and leaves no
    half-made folder: the next start tries again from nothing."""
    arch = host / "usr" / "lib" / "arch"
    with pytest.raises(OSError):
        staged_files({"libc.so.6": str(arch / "libc.so.6.1"), "libgone.so.1": str(arch / "libgone.so.1")},
                     "libraries-arch", "0123")
    assert os.listdir(host / "tmp" / "arena-runtime") == []
