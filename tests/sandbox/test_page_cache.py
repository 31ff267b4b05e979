"""Sessions leave nothing in the page cache for later ones: a file of the shared runtime that
one session read is dropped from the host's page cache before the next sandbox starts
(grader.sandbox.pagecache), in both sandboxes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from grader.sandbox import pagecache

from .conftest import ENV_INFO

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(shutil.which("fincore") is None, reason="fincore (util-linux) is not installed"),
]


def resident_bytes(path: str) -> int:
    out = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES", path], capture_output=True, text=True, check=True
    ).stdout
    return int(out.split()[0])


def host_path(sandbox, name: str) -> str:
    """Where the host keeps the standard library's `name` that the sandbox reads."""
    if sandbox.name == "local":  # the stdlib's folder, or its staged copy, bound at its path
        from grader.sandbox.local import runtime_binds

        stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
        return os.path.join(dict((dest, src) for src, dest in runtime_binds())[stdlib], name)
    for root in sandbox.layer_roots():
        for lib in ("usr/local/lib/python3.11", "usr/lib/python3.11"):  # python:3.11-slim's, or a stand-in's
            path = Path(root) / lib / name
            if path.is_file():
                return str(path)
    pytest.skip("the image's standard library is not readable on this host")


def test_evict_drops_a_files_pages(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(os.urandom(1 << 20))
    os.sync()  # written back: clean pages, which the kernel may drop
    path.read_bytes()
    assert resident_bytes(str(path)) > 0
    assert pagecache.evict((str(path), str(tmp_path / "absent"))) == 1
    assert resident_bytes(str(path)) == 0


def test_a_session_finds_nothing_an_earlier_one_read(launch, sandbox):
    path = host_path(sandbox, "this.py")
    # Any sandbox that starts drops the runtime's pages, a test's beside this one too (the suite
    # runs two at a time): the sender reads again until its read is seen in the cache.
    for _ in range(5):
        sender = launch("runtime_reader")
        assert sender.prepare(ENV_INFO) is None
        sender.close()
        if resident_bytes(path) > 0:
            break
    assert resident_bytes(path) > 0, "the sender's read left nothing in the cache: nothing was tested"
    receiver = launch("random_agent")
    assert receiver.fault is None
    assert resident_bytes(path) == 0
