"""The docker backend: the same policy through the docker SDK (skipped when no engine answers)."""

from __future__ import annotations

import pytest

from grader.limits import DEFAULT_LIMITS
from grader.sandbox.base import LaunchError
from grader.submission import load_submission
from .conftest import AGENTS, ENV_INFO, TEST_LIMITS, board

pytestmark = pytest.mark.timeout(180)


def test_container_policy_is_complete():
    from grader.sandbox.docker import DockerSandbox
    options = DockerSandbox().container_options(load_submission(AGENTS / "random_agent"), DEFAULT_LIMITS, "none")
    assert options["network_mode"] == "none" and options["read_only"] is True
    assert options["mem_limit"] == options["memswap_limit"] == DEFAULT_LIMITS.memory_bytes
    assert options["pids_limit"] == DEFAULT_LIMITS.pids and options["cap_drop"] == ["ALL"]
    assert options["security_opt"] == ["no-new-privileges"] and not options["user"].startswith("0")
    assert f"size={DEFAULT_LIMITS.tmpfs_bytes}" in options["tmpfs"]["/tmp"]
    assert options["shm_size"] == DEFAULT_LIMITS.tmpfs_bytes
    assert all(v["mode"] == "ro" for v in options["volumes"].values())


@pytest.fixture(scope="module")
def docker_sandbox():
    from grader.sandbox.docker import DockerSandbox, client
    try:
        client()
    except LaunchError as exc:
        pytest.skip(f"docker tests need a docker engine: {exc}")
    sandbox = DockerSandbox()
    if not sandbox.capabilities()["image"]:
        pytest.skip(f"docker tests need the agents' image: run `arena image build` ({sandbox.image})")
    return sandbox


def test_docker_agent_plays_and_hostile_agent_faults(docker_sandbox):
    from grader.agent_handle import AgentHandle
    from grader.faults import FaultKind
    with AgentHandle.launch(docker_sandbox, load_submission(AGENTS / "random_agent"), TEST_LIMITS) as good:
        assert good.fault is None and good.prepare(ENV_INFO) is None
        action, fault = good.act(*board())
        assert fault is None and action in (19, 26, 37, 44)
    with AgentHandle.launch(docker_sandbox, load_submission(AGENTS / "sleep_forever"), TEST_LIMITS) as bad:
        assert bad.prepare(ENV_INFO) is None
        assert bad.act(*board())[1].kind is FaultKind.TIMEOUT
