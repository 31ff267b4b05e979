"""The hostile-agent suite: each agent of tests/agents run through both sandboxes (local and docker).

Each test checks the expected fault *and* that the host and the next agent are
unharmed (no process left, a well-behaved agent plays right after).
"""

from __future__ import annotations

import dataclasses
import os
import py_compile
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from grader.common.faults import FaultKind
from grader.documents.submission import load_submission
from grader.play.agent_handle import AgentHandle

from .conftest import TEST_LIMITS, board, cpu_rises, play

pytestmark = pytest.mark.timeout(90)
HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    "name, kind, detail",
    [
        ("fork_bomb", FaultKind.TIMEOUT, "hard limit"),
        ("busy_loop", FaultKind.TIMEOUT, "hard limit"),
        ("sleep_forever", FaultKind.TIMEOUT, "hard limit"),
        ("alloc_8gib", FaultKind.AGENT_ERROR, "MemoryError"),
        ("threads_500", FaultKind.AGENT_ERROR, "thread"),
        ("crash_mid_game", FaultKind.AGENT_ERROR, "ZeroDivisionError"),
        ("exit_mid_game", FaultKind.EOF, "ended during act"),
        ("non_integer_action", FaultKind.PROTOCOL, "not an int: return the cell's index as a Python int"),
        ("out_of_range_action", FaultKind.PROTOCOL, "outside the board"),
        ("huge_int_action", FaultKind.PROTOCOL, "action 1180591620717411303424 is outside the board (0..63)"),
        ("stdout_flood", FaultKind.AGENT_ERROR, "output cap of 8 MiB to stdout/stderr: print less"),
        ("ignore_signals", FaultKind.TIMEOUT, "hard limit"),
        ("partial_frame", FaultKind.TIMEOUT, "hard limit"),
        ("channel_spammer", FaultKind.PROTOCOL, "bad frame"),
        ("huge_announce", FaultKind.PROTOCOL, "body of 4294967280 bytes announced"),
        ("bool_action", FaultKind.PROTOCOL, "not an int"),
        ("exit_in_prepare", FaultKind.EOF, "ended during prepare"),
    ],
)
def test_hostile_agent_faults_and_host_is_unharmed(launch, assert_unharmed, name, kind, detail):
    handle = launch(name)
    assert handle.fault is None, handle.fault
    faults = play(handle, 10)
    assert [f.kind for f in faults] == [kind], (faults, handle.stderr_text()[-2000:])
    assert detail in faults[0].detail
    assert kind.is_agents_fault
    # A dead handle answers every later call with the same fault, at once.
    assert handle.act(*board()) == (None, faults[0])
    handle.close()
    assert_unharmed()


def test_crash_on_import_is_agent_error(launch, assert_unharmed):
    handle = launch("crash_on_import")
    assert handle.fault is not None and handle.fault.kind is FaultKind.AGENT_ERROR
    assert "RuntimeError" in handle.fault.detail and "import" in handle.fault.detail
    assert "this agent breaks on import" in handle.stderr_text()  # the traceback is kept for the owner
    handle.close()
    assert_unharmed()


def test_a_sandbox_and_its_processes_are_in_its_cgroup_in_every_controller(launch, sandbox):
    """The shell that starts bwrap moves itself into each controller's group before exec
    (on cgroup v1 through `tasks`, the calling thread alone): bwrap and everything under it
    are counted there, in every controller. A container's group (the engine's) holds its
    runner, and is the one the host reads."""
    handle = launch("random_agent")
    least = 2 if sandbox.name == "local" else 1  # bwrap and the runner; the runner alone
    cgroup = handle.process.cgroup
    if cgroup is None:
        pytest.skip("no cgroup on this host: only the rlimits apply")
    members = {
        name: {int(p) for p in (path / "cgroup.procs").read_text().split()} for name, path in cgroup.dirs.items()
    }
    assert all(handle.process.pid in procs and len(procs) >= least for procs in members.values()), members
    assert len({frozenset(procs) for procs in members.values()}) == 1, members


@pytest.mark.parametrize("name", ["memory_hog", "child_oom_then_exit"])
def test_the_memory_limit_reached_is_the_agents_fault(launch, assert_unharmed, name):
    """Its own memory limit, reached (by the agent, or by a child of its killed for it before
    the agent exits): the agent's fault (docs/rules.md §5.1), never `oom`, the arena's, which would
    re-run it and could hold the round."""
    # Filling 1 GiB on one CPU can take seconds on a loaded host: a roomy deadline,
    # so that the memory limit, not the clock, is what stops it.
    handle = launch(name, limits=dataclasses.replace(TEST_LIMITS, act_hard_seconds=20.0))
    if handle.process.cgroup is None or "memory" not in handle.process.cgroup.dirs:
        pytest.skip("no memory cgroup on this host: only the address-space rlimit applies")
    faults = play(handle, 1)
    assert [f.kind for f in faults] == [FaultKind.AGENT_ERROR], faults
    assert "over its memory limit of 1024 MiB" in faults[0].detail
    handle.close()
    assert_unharmed()


def test_stdout_garbage_stays_off_the_wire(launch, assert_unharmed):
    handle = launch("stdout_garbage")
    assert play(handle, 20) == []
    log = handle.stderr_text()
    assert "thinking..." in log and "hello from prepare" in log and "garbage" in log
    handle.close()
    assert_unharmed()


def test_stderr_chatty_is_truncated_not_faulted(launch, assert_unharmed):
    handle = launch("stderr_chatty")
    assert play(handle, 30) == []
    log = handle.stderr_text()
    assert handle.transport.log.total > 30 * 20_000
    assert len(log) < handle.limits.log_keep_bytes + 200
    assert "more bytes of output dropped" in log
    handle.close()
    assert_unharmed()


def test_tcp_connect_to_host_loopback_never_arrives(launch, assert_unharmed):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, addr = listener.accept()
                accepted.append(addr)
                conn.close()
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        handle = launch("tcp_connect", target={"port": port})
        assert play(handle, 10) == []
        log = handle.stderr_text()
        handle.close()
    finally:
        stop.set()
        thread.join(2)
        listener.close()
    assert accepted == [], f"the sandbox reached the host's loopback: {accepted}"
    assert "CONNECTED" not in log
    assert f"connect 127.0.0.1:{port} failed" in log
    assert_unharmed()


@pytest.fixture
def host_path(tmp_path):
    """A host path outside /tmp (the sandbox has a private /tmp of its own, so a
    path under the host's /tmp would prove nothing); removed afterwards. A checkout
    that itself lives under /tmp uses /var/tmp instead."""
    base = HERE if not str(HERE.resolve()).startswith("/tmp/") else Path("/var/tmp")
    path = base / f"arena-host-{os.getpid()}-{os.urandom(4).hex()}"
    yield path
    if path.is_dir():
        for child in path.iterdir():
            child.unlink()
        path.rmdir()
    elif path.exists():
        path.unlink()


def test_write_outside_tmp_fails(launch, assert_unharmed, tmp_path, host_path):
    target = host_path / "pwned.txt"
    handle = launch("write_outside_tmp", target={"path": str(target)})
    assert play(handle, 5) == []
    log = handle.stderr_text()
    handle.close()
    assert "WROTE /tmp/ok.txt" in log
    wrote = [line for line in log.splitlines() if line.startswith("WROTE") and "/tmp/ok.txt" not in line]
    assert wrote == [], wrote
    assert not host_path.exists()
    assert f"write {target} failed" in log
    assert not (tmp_path / "subs" / "write_outside_tmp" / "pwned.txt").exists()
    assert not os.path.exists("/pwned.txt") and not os.path.exists("/etc/pwned.txt")
    assert_unharmed()


def test_host_file_and_env_var_do_not_leak(launch, assert_unharmed, host_path, monkeypatch, sandbox):
    secret = "ARENA-SECRET-" + os.urandom(8).hex()
    secret_file = host_path
    secret_file.write_text(secret)
    monkeypatch.setenv("ARENA_TEST_SECRET", secret)
    handle = launch("read_host", target={"path": str(secret_file), "env_var": "ARENA_TEST_SECRET"})
    assert play(handle, 5) == []
    log = handle.stderr_text()
    handle.close()
    assert "VAR None" in log
    assert f"read {secret_file} failed" in log
    assert secret not in log
    if sandbox.name == "local":
        assert "read /etc/passwd failed" in log  # /etc of the host is not in the sandbox at all
    else:  # a container has the image's /etc, never the host's
        host_passwd = Path("/etc/passwd").read_bytes()[:4096]
        assert repr(host_passwd) not in log and "agent:x:10001:10001" in log
    assert_unharmed()


def test_grandchild_is_killed_with_the_sandbox(launch, assert_unharmed):
    handle = launch("grandchild")
    assert play(handle, 5) == []
    handle.close()
    assert_unharmed()  # checks no process with the grandchild's marker is alive


def test_a_paused_agents_processes_take_no_cpu(launch, assert_unharmed):
    """An entrant the round has turned away from (others learn or play) is stopped whole, the
    process it moved to a session of its own too: its spinners cannot take another agent's
    CPU, and resumed it plays on."""
    handle = launch("idle_spinner")
    assert play(handle, 2) == []  # prepare left two spinners behind

    def cpu_over(seconds: float) -> float:
        start = handle.transport.cpu_seconds()
        time.sleep(seconds)
        return handle.transport.cpu_seconds() - start

    # Its own CPU time, from its cgroup: no other work on the machine adds to it, and how soon
    # the spinners get theirs depends on that work, so only that they get it is judged.
    assert cpu_rises(handle, 0.2)
    handle.pause()
    assert cpu_over(1.0) < 0.05
    handle.resume()
    assert cpu_rises(handle, 0.2)
    assert play(handle, 2) == []
    handle.close()
    assert_unharmed()


def test_closing_stdin_does_not_break_the_protocol(launch, assert_unharmed):
    handle = launch("close_stdin")
    assert play(handle, 20) == []
    assert "stdin read: " in handle.stderr_text()  # it read /dev/null, not the protocol
    handle.close()
    assert_unharmed()


def test_a_setsid_daemon_dies_with_the_sandbox(launch, assert_unharmed):
    handle = launch("setsid_daemon")
    assert play(handle, 5) == []
    handle.close()
    assert_unharmed()  # checks no `time.sleep(10**6)` process is alive


def test_no_file_system_grows_past_its_cap(launch, assert_unharmed):
    """/dev/shm and /tmp are size-capped tmpfs, /dev is read-only: filling them is refused
    (the agent's own business), never an out-of-memory kill (which would be the arena's)."""
    handle = launch("fill_file_systems")
    assert play(handle, 5) == []
    log = handle.stderr_text()
    cap = TEST_LIMITS.tmpfs_bytes >> 20
    # /dev is read-only in the embedded sandbox, root's and not the agent's in a container.
    for folder, why in (
        ("/dev/shm", ("No space left on device",)),
        ("/dev", ("Read-only file system", "Permission denied")),
        ("/tmp", ("No space left on device",)),
    ):
        line = next(line for line in log.splitlines() if line.startswith(f"FILL {folder} "))
        assert any(w in line for w in why) and int(line.split(" after ")[1].split(" MiB")[0]) <= cap, line
    handle.close()
    assert_unharmed()


def test_a_raise_in_observe_outcome_is_the_agents_error(launch, assert_unharmed):
    handle = launch("outcome_raises")
    assert play(handle, 3) == []
    fault = handle.observe_outcome({"winner": "black", "black_discs": 40, "white_discs": 24, "your_color": "black"})
    assert fault.kind is FaultKind.AGENT_ERROR and "observe_outcome() raised RuntimeError" in fault.detail
    handle.close()
    assert_unharmed()


def test_no_namespace_of_its_own_undoes_the_caps(launch, assert_unharmed):
    """A nested user namespace, a mount namespace, a cgroupfs or tmpfs mount, setns: refused."""
    handle = launch("nested_namespaces")
    assert play(handle, 3) == []
    lines = [line for line in handle.stderr_text().splitlines() if line.startswith(("DONE", "REFUSED"))]
    handle.close()
    assert len(lines) == 7 and all(line.startswith("REFUSED") for line in lines), lines
    assert_unharmed()


def test_the_seccomp_filter_refuses_its_calls(launch, assert_unharmed):
    handle = launch("refused_syscalls")
    assert play(handle, 3) == []
    results = dict(line.split()[1::2] for line in handle.stderr_text().splitlines() if line.startswith("SYSCALL"))
    handle.close()
    assert results.pop("clone3") == "38", "clone3 must get ENOSYS, so that the C library falls back to clone"
    assert results and all(err == "1" for err in results.values()), results  # EPERM, each
    assert_unharmed()


def test_no_process_in_the_sandbox_runs_without_the_filter(launch, assert_unharmed):
    """The runner is the sandbox's first process (pid 1), and stays its init when it forks to
    import the agent: no init of the sandbox's own runs unfiltered beside it, whose memory the
    agent could write through /proc/1/mem (the runner's init is not dumpable either)."""
    handle = launch("unfiltered_process")
    assert play(handle, 3) == []
    log = handle.stderr_text()
    handle.close()
    seen = {
        int(pid): (mode, name)
        for pid, mode, name in (line.split()[1:4] for line in log.splitlines() if line.startswith("PROC "))
    }
    own = int(next(line.split()[1] for line in log.splitlines() if line.startswith("SELF ")))
    assert own != 1 and 1 in seen and own in seen, (own, seen)
    assert all(mode == "2" for mode, _ in seen.values()), seen
    assert_unharmed()


AGENT_SOURCE = """
import sys

class Agent:
    def prepare(self, env_info):
        print("{said}", file=sys.stderr, flush=True)

    def act(self, obs, action_mask):
        return int(action_mask.nonzero()[0][0])

    def observe_outcome(self, outcome):
        pass
"""


def test_bytecode_beside_agent_py_never_runs_in_its_place(sandbox, assert_unharmed, tmp_path):
    """A `__pycache__` is not read by the loader (not digested, not screened), so it is not
    copied into the sandbox either: an unchecked-hash .pyc there would run in place of the
    agent.py that was reviewed."""
    folder = tmp_path / "bytecode_swap"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT_SOURCE.format(said="SOURCE RAN"))
    other = tmp_path / "other.py"
    other.write_text(AGENT_SOURCE.format(said="BYTECODE RAN"))
    py_compile.compile(
        str(other),
        cfile=str(folder / "__pycache__" / f"agent.{sys.implementation.cache_tag}.pyc"),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        doraise=True,
    )
    submission = load_submission(folder)
    assert submission.files == ("agent.py",)
    handle = AgentHandle.launch(sandbox, submission, TEST_LIMITS)
    try:
        assert play(handle, 3) == []
        log = handle.stderr_text()
    finally:
        handle.close()
    assert "SOURCE RAN" in log and "BYTECODE RAN" not in log, log[-2000:]
    assert_unharmed()


def test_a_suspended_agent_runs_nothing_whatever_it_forks(launch, assert_unharmed):
    """While the round turns to other entrants, none of the agent's processes runs: not even
    children forked as the suspend began, which woke the stopped ones when it was a round of
    SIGSTOPs (the red team's agent escaped 6 suspends of 10 that way)."""
    handle = launch("suspend_escaper")
    assert play(handle, 2) == []
    process = handle.process
    for trial in range(4):
        handle.pause()
        time.sleep(0.1)  # what was on a CPU as the freeze began has left it
        before = process.cpu_seconds()
        time.sleep(0.5)
        used = process.cpu_seconds() - before
        handle.resume()
        assert used < 0.05, f"suspend {trial}: the agent used {used:.2f} CPU s while suspended"
        time.sleep(0.1)
    obs, mask = board()
    assert handle.act(obs, mask)[1] is None  # resumed, it plays on
    handle.close()
    assert_unharmed()


def test_the_agent_sees_its_own_paths_only(launch, assert_unharmed, tmp_path):
    """Command lines, environments and the mount table inside name no host path of the arena's
    checkout or of the folder the submission was loaded from (both are staged copies)."""
    handle = launch("host_paths")
    assert play(handle, 3) == []
    log = handle.stderr_text()
    handle.close()
    assert "READ /proc/self/mountinfo" in log and "READ /proc/1/cmdline" in log
    checkout = str(HERE.parent.parent)
    assert checkout not in log, [line[:300] for line in log.splitlines() if checkout in line]
    assert str(tmp_path) not in log  # the folder `launch` copied the agent into
    assert_unharmed()
