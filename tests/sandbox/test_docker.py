"""The docker backend on a real engine: its policy, its doctor, its image, its leftovers.

The hostile suite (test_hostile.py and the other users of `launch`) runs in both sandboxes;
these are the checks only the docker backend has. An engine is started for the session
when none answers (tests/conftest.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from grader.common import owner
from grader.common.limits import DEFAULT_LIMITS
from grader.documents.submission import load_submission
from grader.sandbox import image, pinning
from grader.sandbox.docker import FIFO_MOUNT, LABEL_OWNER, DockerSandbox, fifo_root

from .conftest import AGENTS, ENV_INFO, TEST_LIMITS, board

pytestmark = pytest.mark.timeout(300)
ROOT = AGENTS.parent.parent


def test_container_policy_is_complete():
    options = DockerSandbox().container_options(
        load_submission(AGENTS / "random_agent"), DEFAULT_LIMITS, "none", fifos="/somewhere"
    )
    assert options["network_mode"] == "none" and options["read_only"] is True
    assert options["mem_limit"] == options["memswap_limit"] == DEFAULT_LIMITS.memory_bytes
    assert options["pids_limit"] == DEFAULT_LIMITS.pids and options["cap_drop"] == ["ALL"]
    assert options["security_opt"] == ["no-new-privileges"] and not options["user"].startswith("0")
    assert f"size={DEFAULT_LIMITS.tmpfs_bytes}" in options["tmpfs"]["/tmp"] and "nr_inodes=" in options["tmpfs"]["/tmp"]
    assert options["shm_size"] == DEFAULT_LIMITS.tmpfs_bytes
    assert all(v["mode"] == "ro" for v in options["volumes"].values())
    assert options["volumes"]["/somewhere"]["bind"] == FIFO_MOUNT and options["command"][-2:] == ["--fifos", FIFO_MOUNT]
    assert options["labels"][LABEL_OWNER] == owner.tag() and not options["stdin_open"]
    assert "cpuset_cpus" not in options  # a process with no core of its own pins nothing


def test_a_workers_containers_run_on_its_core():
    pinning.set_core(1)
    try:
        options = DockerSandbox().container_options(
            load_submission(AGENTS / "random_agent"), DEFAULT_LIMITS, "none", fifos="/somewhere"
        )
    finally:
        pinning.set_core(None)
    assert options["cpuset_cpus"] == "1" and options["nano_cpus"] == int(DEFAULT_LIMITS.cpu_cores * 1e9)


def test_doctor_checks_the_policy_from_inside_a_container(docker_sandbox):
    from grader.cli.commands.doctor import checks_for, missing_required

    checks = {c.name: c for c in checks_for("docker")}
    assert not missing_required(list(checks.values())), [c for c in checks.values() if c.required and not c.ok]
    for name in (
        "unprivileged",
        "no nested namespaces",
        "seccomp filter",
        "read-only root, host hidden",
        "no network",
        "cgroup accounting",
        "rlimits inside",
        "private /tmp",
    ):
        assert checks[name].ok, checks[name]
    assert (
        docker_sandbox.image_record().id in checks["agent image"].detail
        or docker_sandbox.image_record().id[:19] in checks["agent image"].detail
    )


def test_the_image_says_what_it_is_built_on(docker_sandbox):
    record = docker_sandbox.image_record()
    assert record.tag == image.IMAGE_TAG and record.id.startswith("sha256:")
    labels = docker_sandbox.engine().images.get(record.tag).labels
    assert labels[image.LABEL_NUMPY] == image.NUMPY_VERSION
    assert record.stand_in == (labels[image.LABEL_STAND_IN] == "true")
    assert (image.BASE_IMAGE in record.base) and (("stand-in" in record.base) == record.stand_in)


def test_cpu_is_read_from_the_containers_cgroup(docker_sandbox):
    """An agent that burns 0.4 s of its own CPU time in an act (tests/agents/cpu_burner): the
    container's cgroup, read on the host, counts at least that, however long the act took on
    a busy machine's wall clock."""
    import dataclasses

    from grader.play.agent_handle import AgentHandle

    limits = dataclasses.replace(TEST_LIMITS, act_hard_seconds=60.0)  # the act's wall time is the host's business
    with AgentHandle.launch(docker_sandbox, load_submission(AGENTS / "cpu_burner"), limits) as handle:
        assert handle.prepare(ENV_INFO) is None
        process = handle.process
        before = process.cpu_seconds()
        assert handle.act(*board())[1] is None
        after = process.cpu_seconds()
    assert before is not None and after is not None, (before, after)
    assert after - before >= 0.4


def test_a_killed_arena_leaves_nothing_once_the_next_one_starts(docker_sandbox, tmp_path):
    """kill -9 of the arena mid-session: its container and FIFO folder stay behind, tagged
    with its owner; the next arena's first start removes them (and nothing of a live one)."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from grader.play.agent_handle import AgentHandle
        from grader.sandbox.docker import DockerSandbox
        from grader.documents.submission import load_submission
        handle = AgentHandle.launch(DockerSandbox(), load_submission({str(AGENTS / "random_agent")!r}))
        print("READY" if handle.fault is None else handle.fault, flush=True)
        time.sleep(600)
    """)
    from grader.play.agent_handle import AgentHandle

    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    live = AgentHandle.launch(docker_sandbox, load_submission(AGENTS / "random_agent"))  # this arena's own
    try:
        assert child.stdout.readline().strip() == "READY"
        tag = owner.tag(child.pid)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    engine = docker_sandbox.engine()

    def of(owner_tag: str) -> list:
        return engine.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={owner_tag}"})

    assert len(of(tag)) == 1, "the killed arena's container is there until the next arena starts"
    DockerSandbox().engine()  # a new arena's first use of the engine sweeps
    deadline = time.monotonic() + 10
    while of(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not of(tag) and not list(fifo_root().glob(tag + "-*"))
    assert len(of(owner.tag())) == 1 and live.prepare(ENV_INFO) is None  # the live arena's container stays
    live.close()
    assert not of(owner.tag())


def test_a_container_the_engine_stops_is_the_arenas_failure_not_the_agents(docker_sandbox):
    """The engine stopping a container (its own shutdown, `docker stop`) is the arena's side:
    `infrastructure`, re-run; an agent's own exit with the same status stays its `eof`."""
    from grader.common.faults import FaultKind
    from grader.play.agent_handle import AgentHandle

    with AgentHandle.launch(docker_sandbox, load_submission(AGENTS / "random_agent"), TEST_LIMITS) as handle:
        assert handle.prepare(ENV_INFO) is None
        handle.process.container.kill()  # SIGKILL: the runner, pid 1 of its namespace, has no SIGTERM handler
        fault = handle.act(*board())[1]
    assert fault is not None and fault.kind is FaultKind.INFRASTRUCTURE and "engine stopped" in fault.detail, fault
    with AgentHandle.launch(docker_sandbox, load_submission(AGENTS / "exit_mid_game"), TEST_LIMITS) as handle:
        assert handle.prepare(ENV_INFO) is None
        faults = [handle.act(*board())[1] for _ in range(5)]
    assert faults[-1] is not None and faults[-1].kind is FaultKind.EOF, faults
