"""Every rule of docs/rules.md's limits table, and of its faults table, is applied: an agent that
breaks it gets what the rules say. Each row names the test that shows it; the rows are read
from the grader's own limits, so a new limit without a test fails here."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from grader.common.faults import FaultKind
from grader.common.limits import DEFAULT_LIMITS

from .conftest import TEST_LIMITS, board, play

pytestmark = pytest.mark.timeout(120)

# A limits-table row (by the start of its name) -> the tests that break it and check the outcome.
ROW_TESTS = {
    "act() pace": [
        "tests.rounds.test_arena_faults:test_an_agent_over_the_pace_at_the_end_of_its_session_times_out",
        "tests.sandbox.test_turns:test_the_pace_stop_is_made_after_every_reply",
    ],
    "act() soft limit": ["tests.sandbox.test_rules_applied:test_a_slow_reply_is_an_overrun_not_a_fault"],
    "act() hard limit": ["tests.sandbox.test_hostile:test_hostile_agent_faults_and_host_is_unharmed"],
    "environment ceiling": ["tests.sandbox.test_rules_applied:test_breaking_a_limit_gets_the_fault_the_rules_name"],
    "CPU share": ["tests.sandbox.test_rules_applied:test_breaking_a_limit_gets_the_fault_the_rules_name"],
    "CPU cores": [
        "tests.sandbox.test_docker:test_cpu_is_read_from_the_containers_cgroup",
        "tests.sandbox.test_hostile:test_a_sandbox_and_its_processes_are_in_its_cgroup_in_every_controller",
    ],
    "start and prepare()": ["tests.sandbox.test_rules_applied:test_breaking_a_limit_gets_the_fault_the_rules_name"],
    "memory": ["tests.sandbox.test_hostile:test_the_memory_limit_reached_is_the_agents_fault"],
    "address space": ["tests.sandbox.test_hostile:test_hostile_agent_faults_and_host_is_unharmed"],
    "processes and threads": ["tests.sandbox.test_hostile:test_hostile_agent_faults_and_host_is_unharmed"],
    "open files": ["tests.sandbox.test_rules_applied:test_breaking_a_limit_gets_the_fault_the_rules_name"],
    "/tmp": ["tests.sandbox.test_hostile:test_no_file_system_grows_past_its_cap"],
    "output": ["tests.sandbox.test_hostile:test_hostile_agent_faults_and_host_is_unharmed"],
    "log kept": ["tests.sandbox.test_hostile:test_stderr_chatty_is_truncated_not_faulted"],
    "illegal moves": ["tests.sandbox.test_match:test_illegal_moves_lose_turns_then_forfeit"],
    "never legal": ["tests.sandbox.test_match:test_illegal_moves_lose_turns_then_forfeit"],
    "largest field": ["tests.rounds.test_capacity:test_a_field_larger_than_the_limits_allow_is_refused"],
}


def test_every_limit_of_the_rules_has_a_test_that_breaks_it():
    for name, _, _ in DEFAULT_LIMITS.rows():
        key = next((k for k in ROW_TESTS if name.startswith(k)), None)
        assert key is not None, f"the limits table's row {name!r} has no test that breaks it"
    for tests in ROW_TESTS.values():
        for target in tests:
            module, _, function = target.partition(":")
            assert callable(getattr(importlib.import_module(module), function, None)), f"{target} does not exist"


def test_a_slow_reply_is_an_overrun_not_a_fault(launch):
    handle = launch("slow_mover", limits=dataclasses.replace(TEST_LIMITS, act_soft_seconds=0.1))
    assert play(handle, 3) == []
    assert handle.act_stats.soft_overruns == 3 and handle.act_stats.count == 3


@pytest.mark.parametrize(
    "agent, changes, kind, detail",
    [
        ("slow_mover", {"env_wall_seconds": 2.0}, FaultKind.TIMEOUT, "environment wall ceiling"),
        ("cpu_burner", {"cpu_seconds_per_env": 1.0}, FaultKind.BUDGET, "over the share of 1 s"),
        ("slow_prepare", {"prepare_seconds": 2.0}, FaultKind.TIMEOUT, "no reply to prepare"),
        ("open_files", {}, FaultKind.AGENT_ERROR, "Too many open files"),
    ],
)
def test_breaking_a_limit_gets_the_fault_the_rules_name(launch, assert_unharmed, agent, changes, kind, detail):
    handle = launch(agent, limits=dataclasses.replace(TEST_LIMITS, **changes))
    faults = play(handle, 20)
    assert [f.kind for f in faults] == [kind] and detail in faults[0].detail, faults
    assert handle.act(*board()) == (None, faults[0])
    handle.close()
    assert_unharmed()
