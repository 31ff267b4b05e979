"""Each sandbox runs on a core of its own, and the round records the host's load.

A round on two environments, with an agent that tries to leave its core and prints the cores
it may run on: each environment's agent ran on exactly one core, one of its environment's;
no more cores than the machine gives; the results carry the host's load (cores, the
load average and the CPUs' busy fraction), the round page shows it, and verify still passes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from grader.rounds.records import read_record, record_path
from grader.sandbox import pinning
from grader.sandbox.local import find_bwrap
from grader.site import build
from tests.site.goldens import DATA_COMMIT, FIXTURES

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(find_bwrap() is None, reason="the local sandbox needs bubblewrap"),
]
AGENT = Path(__file__).resolve().parent.parent / "agents" / "affinity_reporter"
# Eight environments: a round on fewer is private and gets no page on the public site.
ROUND = [
    "round",
    "--tier",
    "public",
    "--envs",
    "8",
    "--budget",
    "2",
    "--checkpoints",
    "0,2",
    "--games-per-checkpoint",
    "2",
    "--pairing-games",
    "2",
    "--seed",
    "3",
    "--agents",
    "random",
    "greedy",
    "minimax",
    f"pin={AGENT}",
    # A field of 8: a smaller one is private, and its round has no page on the public site.
    *(f"{n}=examples/random" for n in "abcd"),
]


def test_sandboxes_are_pinned_and_the_host_load_is_recorded(tmp_path, capsys):
    cores = pinning.available_cores()
    private = tmp_path / "private"
    assert (
        main(ROUND + ["--jobs", str(len(cores) + 1), "--out", str(tmp_path / "out"), "--private-out", str(private)])
        == 0
    )
    captured = capsys.readouterr()
    assert f"{len(cores) + 1} jobs asked for, {len(cores)} cores to pin them to" in captured.err
    path = Path(captured.out.strip())
    data = yaml.safe_load(path.read_text())
    for index in range(2):
        record = read_record(record_path(private / data["round"]["id"], index))
        seen = re.findall(r"affinity: \[([0-9, ]*)\]", record.stderr["pin"])
        assert seen, record.stderr["pin"]
        assert len(set(seen)) == 1 and int(seen[0]) in record.host["core"], (seen, record.host)  # one core, held
        assert record.host["cores"] == len(cores) and record.host["busy"] is not None
    host = data["provenance"]["execution"]["host"]
    assert host["environments"] == 8 and host["pinned"] is True and host["cores"] == len(cores)
    assert 0 <= host["busy"]["min"] <= host["busy"]["mean"] <= host["busy"]["max"] <= 1
    assert host["loadavg"]["min"] <= host["loadavg"]["max"]
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()
    site = tmp_path / "site"
    config = tmp_path / "site.yaml"
    config.write_text(
        f"schema_version: 1\nseries:\n  name: Small\n  rounds:\n    - {{id: {data['round']['id']}, date: 2026-10-01}}\n"
    )
    build(
        tmp_path / "out", site, docs_dir=FIXTURES / "docs", config=config, data_commit=DATA_COMMIT, log=lambda m: None
    )
    page = (site / "rounds" / f"{data['round']['id']}.html").read_text()
    assert "Host load" in page and "every sandbox pinned to a core of its own" in page
    assert f"1-minute load average {host['loadavg']['min']} to {host['loadavg']['max']}" in page


def test_a_process_started_pinned_inherits_the_core_and_the_caller_keeps_its_own():
    cores = pinning.available_cores()
    before = os.sched_getaffinity(0)
    core = cores[-1]
    pinning.set_core(core)
    try:
        with pinning.spawning_pinned():
            child = subprocess.Popen(
                [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                stdout=subprocess.PIPE,
                text=True,
            )
        assert os.sched_getaffinity(0) == before
        assert child.communicate(timeout=30)[0].strip() == f"[{core}]"
    finally:
        pinning.set_core(None)
    assert pinning.current_cpu(cores) in cores


def test_the_load_between_two_samples():
    start = {"loadavg": 0.5, "cpu": (100, 1000)}
    end = {"loadavg": 1.5, "cpu": (400, 2000)}
    assert pinning.load_over(start, end, 2) == {
        "cores": 2,
        "core": None,
        "loadavg_start": 0.5,
        "loadavg_end": 1.5,
        "busy": 0.3,
    }
    assert pinning.load_over({"loadavg": None, "cpu": None}, end, 2)["busy"] is None
    busy, total = pinning.cpu_times()
    assert 0 <= busy <= total
