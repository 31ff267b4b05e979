"""`kill -9` of `arena round --jobs 2`: no process is left running, and what the killed round left
(cgroups, a zip's extraction folder) is removed by the next arena to start, by its own tags.

The killed round and the doctor run in a cgroup and a temporary folder of their own: the suite
runs two tests at a time, and any arena starting beside them sweeps the leftovers of dead
arenas beside it, which would leave the doctor nothing to find."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from grader.common import owner
from grader.documents.submission import EXTRACT_PREFIX
from grader.sandbox import cgroup

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent.parent


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2 :].split()[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@contextlib.contextmanager
def _apart(name: str):
    """A cgroup (one folder per hierarchy) and a temporary folder for the arenas of this test;
    yields the group's folders, the environment their processes start with and the preexec_fn
    that moves a process into the group. Both are removed after, with whatever is left in them."""
    own = cgroup._own_paths()
    v2 = (cgroup.CGROUP_ROOT / "cgroup.controllers").exists()
    homes = (
        [cgroup.CGROUP_ROOT / own[""].lstrip("/")]
        if v2
        else [cgroup.CGROUP_ROOT / c / own[c].lstrip("/") for c in cgroup.V1_CONTROLLERS if c in own]
    )
    groups = list(dict.fromkeys(home.resolve() / name for home in homes))  # cpu and cpuacct may be one
    for group in groups:
        group.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):  # a v1 cpuset takes no process until they are set
            if not v2 and (group / name).exists() and not (group / name).read_text().strip():
                (group / name).write_text((group.parent / name).read_text().strip())
    tmp = Path(tempfile.mkdtemp(prefix="killed-round-"))
    os.chmod(tmp, 0o755)  # the sandbox's user reads the runner staged in it

    def enter() -> None:
        for group in groups:
            with open(group / "cgroup.procs", "w") as f:
                f.write(str(os.getpid()))

    try:
        yield groups, {**os.environ, "TMPDIR": str(tmp)}, enter
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for group in groups:
            for child in group.glob("*"):
                if child.is_dir():
                    cgroup.Cgroup({"": child}, 2 if v2 else 1).remove(timeout=5.0)
            with contextlib.suppress(OSError):
                group.rmdir()


def test_a_killed_round_leaves_nothing_running_and_the_next_start_cleans_up(local_sandbox, tmp_path):
    with _apart(f"killed-round-{os.getpid()}") as (groups, env, enter):
        _kill_a_round_then_start_the_doctor(tmp_path, groups, env, enter)


def _kill_a_round_then_start_the_doctor(tmp_path: Path, groups: list[Path], env: dict, enter) -> None:
    bundle = tmp_path / "random.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        z.write(ROOT / "examples" / "random" / "agent.py", "agent.py")
    command = [
        sys.executable,
        "-m",
        "grader.cli.main",
        "round",
        "--tier",
        "public",
        "--envs",
        "random-2 most/standard,standard most/standard,random-2 fewest/standard",
        "--budget",
        "2000",
        "--jobs",
        "2",
        "--agents",
        f"zipped={bundle}",
        f"folder={ROOT / 'examples' / 'random'}",
        "random",
        "--out",
        str(tmp_path / "out"),
        "--private-out",
        str(tmp_path / "private"),
    ]
    round_proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env, preexec_fn=enter)
    try:
        for line in round_proc.stderr:  # wait until both workers play
            if "self-play" in line:
                break
        # Until its workers and sandboxes are there, however slowly a busy host starts them.
        deadline = time.monotonic() + 60
        while len(family := _descendants(round_proc.pid)) < 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        tags = {owner.tag(pid) for pid in family | {round_proc.pid}}
        os.kill(round_proc.pid, signal.SIGKILL)
        round_proc.wait(10)
    finally:
        if round_proc.poll() is None:
            round_proc.kill()
    assert len(family) >= 4, family  # two workers, the manager, the resource tracker, sandboxes
    deadline = time.monotonic() + 15
    while any(_running(p) for p in family) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in family if _running(p)], "processes of the killed round are still running"
    while any(Path(f"/proc/{p}").exists() for p in family) and time.monotonic() < deadline + 15:
        time.sleep(0.2)  # exited: now reaped by whoever inherited them, at the host's pace

    def leftovers() -> list[str]:
        left = [
            p.name
            for group in groups
            for p in group.glob(cgroup.PREFIX + "*")
            if owner.owner_of(p.name, cgroup.PREFIX) in tags
        ]
        folders = [
            p.name
            for p in Path(env["TMPDIR"]).glob(EXTRACT_PREFIX + "*")
            if owner.owner_of(p.name, EXTRACT_PREFIX) in tags
        ]
        return left + folders

    assert leftovers(), "the killed round should have left its cgroups and extraction folder"
    doctor = subprocess.run(
        [sys.executable, "-m", "grader.cli.main", "doctor"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        preexec_fn=enter,
    )
    assert "leftovers of killed arenas" in doctor.stdout and "removed" in doctor.stdout, doctor.stdout
    assert leftovers() == []
    shutil.rmtree(tmp_path / "private", ignore_errors=True)
