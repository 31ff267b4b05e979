"""No sandbox at all: the runner as a plain subprocess of the host.

For debugging one's own agent only. The agent can read and write anything the
host user can, reach the network and outlive its game, so this backend must be
asked for by name (`--sandbox unsafe`) and says so loudly every time it starts.
The host still enforces deadlines, the output cap and kills the process group;
the runner still sets its per-process rlimits (not RLIMIT_NPROC, which would
count every process of the host user).
"""

from __future__ import annotations

import os
import subprocess
import sys

from grader.common.limits import Limits
from grader.documents.submission import Submission
from grader.sandbox.base import (
    RUNNER_DIR,
    RUNNER_SCRIPT,
    LaunchError,
    Network,
    PopenProcess,
    check_network,
    runner_rlimits,
)

WARNING = (
    "\n*** arena: WARNING: running {label} WITHOUT A SANDBOX (--sandbox unsafe). ***\n"
    "*** It can read and write your files and use the network. Use only on code you trust. ***\n"
)


class UnsafeSandbox:
    name = "unsafe"

    def __init__(self, quiet: bool = False):
        self.quiet = quiet

    def start(self, submission: Submission, limits: Limits, network: Network = "none") -> PopenProcess:
        check_network(network)
        if not self.quiet:
            print(WARNING.format(label=submission.path.name), file=sys.stderr, flush=True)
        import numpy

        site = os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))
        argv = [
            sys.executable,
            "-I",
            "-S",
            "-B",
            str(RUNNER_DIR / RUNNER_SCRIPT),
            "--agent",
            str(submission.path),
            "--path",
            site,
            "--rlimits",
            runner_rlimits(limits, per_user_nproc=False),
        ]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "LANG": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                cwd=submission.path,
                env=env,
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            raise LaunchError(f"cannot start the runner: {exc}") from exc
        return PopenProcess(popen)

    def image(self) -> None:
        """Agents run on the host's own interpreter (its version is in every report): no image."""
        return None

    def capabilities(self) -> dict[str, bool]:
        return {"isolation": False, "deadlines": True, "output cap": True, "rlimits": True}
