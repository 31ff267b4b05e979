"""The suspend's ending condition, driven step by step: a child forked after the host read the
group's list is not on it, so one look that finds every listed process stopped is not enough
(the hostile agent of test_hostile.py wins that race now and then on a loaded machine)."""

import signal
import subprocess
import time

from grader.sandbox.cgroup import Cgroup, _state


def test_a_process_listed_after_a_quiet_look_is_stopped_too(tmp_path, monkeypatch):
    first = subprocess.Popen(["sleep", "60"])
    late: list[subprocess.Popen] = []
    try:
        first.send_signal(signal.SIGSTOP)
        while _state(first.pid) != "T":
            time.sleep(0.001)
        procs = tmp_path / "cgroup.procs"
        procs.write_text(f"{first.pid}\n")
        listed = Cgroup.pids

        def list_then_fork(group: Cgroup) -> list[int]:
            # The first look has read its list; the agent forks a child it could not see.
            pids = listed(group)
            if not late:
                late.append(subprocess.Popen(["sleep", "60"]))
                procs.write_text(f"{first.pid}\n{late[0].pid}\n")
            return pids

        monkeypatch.setattr(Cgroup, "pids", list_then_fork)
        Cgroup({"pids": tmp_path}, 1).suspend()
        deadline = time.monotonic() + 2
        while _state(late[0].pid) != "T" and time.monotonic() < deadline:
            time.sleep(0.001)
        assert _state(late[0].pid) == "T"
    finally:
        for process in [first, *late]:
            process.kill()
            process.wait()
