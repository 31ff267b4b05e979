"""The local sandbox's runtime binds (its shared libraries bound one folder at a time), and the
folders staged copies live in (the arena user's own, refused when another user could write them)."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from grader.sandbox.base import own_folder, runtime_root, staged_files
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
    binds = library_binds(
        {lib: {"loader.so.2": f"{lib}/loader.so.2"}, arch: {"libz.so.1": f"{arch}/libz.so.1"}},
        [f"{lib}/python3/stdlib"],
    )
    assert [dest for _, dest in binds] == [f"{lib}/loader.so.2", arch]
    # `lib` holds `arch` too: without the other bind it is still bound file by file.
    binds = library_binds({lib: {"loader.so.2": f"{lib}/loader.so.2"}, arch: {"libz.so.1": f"{arch}/libz.so.1"}}, [])
    assert [dest for _, dest in binds] == [f"{lib}/loader.so.2", arch]


def test_a_staged_loader_stays_executable(host):
    lib = str(host / "usr" / "lib")
    ((staged, dest),) = library_binds({lib: {"loader.so.2": f"{lib}/loader.so.2"}}, [])
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
        staged_files(
            {"libc.so.6": str(arch / "libc.so.6.1"), "libgone.so.1": str(arch / "libgone.so.1")},
            "libraries-arch",
            "0123",
        )
    assert os.listdir(runtime_root()) == []


def test_the_arenas_own_folder_is_made_for_this_user(tmp_path):
    folder = own_folder(tmp_path / "arena-x", 0o755)
    info = os.lstat(folder)
    assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o755
    assert own_folder(folder, 0o711) == folder and stat.S_IMODE(os.lstat(folder).st_mode) == 0o711


@pytest.mark.parametrize("kind", ["open to others", "a link", "another user's"])
def test_a_folder_someone_else_could_write_is_refused(tmp_path, kind):
    """What the sandboxes bind is staged in these folders: one another user made, may write, or
    points to, could hold their own copy of the runtime."""
    path = tmp_path / "arena-x"
    if kind == "a link":
        (tmp_path / "elsewhere").mkdir()
        path.symlink_to(tmp_path / "elsewhere")
    else:
        path.mkdir()
        if kind == "open to others":
            path.chmod(0o777)
        else:
            if os.geteuid() != 0:
                pytest.skip("only root can make a folder another user's")
            os.chown(path, 65534, 65534)
    with pytest.raises(OSError, match="arena-x is not a folder of this user's"):
        own_folder(path, 0o755)


def test_a_start_with_a_session_folder_not_its_own_is_a_launch_failure(tmp_path, monkeypatch):
    from grader.common.limits import DEFAULT_LIMITS
    from grader.sandbox.base import LaunchError
    from grader.sandbox.local import LocalSandbox, bwrap_problem, session_root

    if bwrap_problem() is not None:
        pytest.skip(bwrap_problem())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    session_root().mkdir(mode=0o777)
    session_root().chmod(0o777)  # anyone may write it: swap a staged copy, say
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.py").write_text("class Agent:\n    pass\n")
    with pytest.raises(LaunchError, match="is not a folder of this user's"):
        LocalSandbox().run(agent, DEFAULT_LIMITS)
