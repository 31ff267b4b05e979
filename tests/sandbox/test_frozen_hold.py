"""The host's hold on a frozen agent (grader/sandbox/frozen.py): at freeze, every process of the
sandbox but its init and the frozen one ends; the frozen process is checked from outside (one
thread, not dumpable, no signal handler, no file but the channels, no shared memory), and an
agent whose frozen process is not what the runner makes of it is charged, never the arena."""

from __future__ import annotations

import os
import subprocess
import sys

from grader.common.faults import FaultKind
from grader.sandbox import frozen

from .conftest import ENV_INFO, board


def test_at_freeze_only_the_init_and_the_frozen_agent_remain(launch):
    handle = launch("idle_spinner")  # two spinning processes from prepare
    assert handle.prepare(ENV_INFO) is None
    assert len(handle.process.pids()) >= 4
    assert handle.freeze() is None
    assert len(handle.process.pids()) == 2, handle.process.pids()
    assert handle.begin_pairing() is None and handle.act(*board())[1] is None and handle.end_pairing() is None
    assert len(handle.process.pids()) == 2, handle.process.pids()


def test_a_forged_answer_to_freeze_is_the_agents_fault(launch):
    handle = launch("forged_freeze")
    assert handle.prepare(ENV_INFO) is None
    fault = handle.freeze()
    assert fault is not None and fault.kind is FaultKind.AGENT_ERROR, fault
    assert "freeze() was answered for a process that is not in the sandbox (1)" in fault.detail


CHILD = """
import mmap, os, signal, sys, threading, time
signal.signal(signal.SIGUSR1, lambda *_: None)
shared = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)
held = open(sys.argv[1], "w")
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print("ready", flush=True)
time.sleep(60)
"""


def test_the_check_names_everything_the_runner_takes_off_the_frozen_process(tmp_path):
    """Read from the host, of a process that keeps what the runner's hand-over removes."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "held")], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ready\n"
        state = frozen.Frozen(frozen=child.pid, keep=frozenset({child.pid}), devnull=os.stat("/dev/null").st_rdev)
        found = frozen._check(state)
    finally:
        child.kill()
        child.wait()
    assert found is not None and found.startswith("the frozen process is not what the runner makes of it")
    for part in ("2 threads", "signal handlers", "shared memory", "open files", "(/tmp/"):
        assert part in found, (part, found)
    # A process that is not dumpable has root's /proc files: told apart for any other uid (a
    # sandbox's processes are never the host's root: arena doctor, "unprivileged").
    assert ("it is dumpable" in found) == (os.geteuid() != 0), found


def test_a_writable_file_system_is_put_back_as_it_was(tmp_path):
    root = tmp_path / "tmp"
    (root / "kept").mkdir(parents=True)
    (root / "kept" / "file").write_bytes(b"frozen")
    (root / "link").symlink_to("kept/file")
    os.utime(root / "kept" / "file", ns=(1, 2))
    entries = frozen._read_tree(root)
    handle = open(root / "kept" / "file", "r+b")  # held, as the frozen process may hold it
    (root / "kept" / "file").write_bytes(b"changed by a pairing")
    (root / "new").mkdir()
    (root / "new" / "deep").write_text("x")
    (root / "link").unlink()
    (root / "link").symlink_to("elsewhere")
    os.mkfifo(root / "fifo")
    frozen._restore_tree(root, entries)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["kept", "kept/file", "link"]
    assert handle.read() == b"frozen"  # the same file, rewritten in place
    assert os.readlink(root / "link") == "kept/file"
    assert os.stat(root / "kept" / "file").st_mtime_ns == 2
    # Nothing changed: nothing to do.
    frozen._restore_tree(root, entries)
    assert (root / "kept" / "file").read_bytes() == b"frozen"
