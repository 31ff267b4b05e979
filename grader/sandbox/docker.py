"""The docker backend: the same runner and policy in a container, via the docker SDK.

Policy (the same as the local sandbox): no network (`network_mode="none"`; the
egress tier gets the default bridge, its own network namespace, so the host's
loopback stays unreachable), read-only root, a size-capped tmpfs /tmp, a pids
limit, memory = memory+swap, a CPU quota, every capability dropped,
no-new-privileges, a non-root user, no core dumps; the runner and the agent's
folder are mounted read-only. The image is `python:3.11-slim` plus the pinned
numpy, built by `arena image build`.

The container's stdio is one attached socket: the host writes frames straight
to it, and a pump thread splits docker's multiplexed stdout/stderr stream into
two pipes, so the agent handle sees the same three fds as with any backend.
"""

from __future__ import annotations

import io
import os
import struct
import threading
import time

from grader.limits import Limits
from grader.protocol import write_all
from grader.sandbox.base import (AGENT_MOUNT, RUNNER_DIR, RUNNER_MOUNT, RUNNER_SCRIPT, LaunchError, Network,
                                 check_network, runner_rlimits)
from grader.submission import Submission

NUMPY_VERSION = "2.4.6"
BASE_IMAGE = "python:3.11-slim"
IMAGE_TAG = f"arena-agent:py3.11-numpy{NUMPY_VERSION}"
AGENT_UID = 10001
DOCKERFILE = f"""\
FROM {BASE_IMAGE}
RUN pip install --no-cache-dir numpy=={NUMPY_VERSION} \\
 && useradd --uid {AGENT_UID} --no-create-home --shell /usr/sbin/nologin agent
USER {AGENT_UID}:{AGENT_UID}
"""
# docker stats is slow (about a second a call), so CPU time is read at most this often.
STATS_INTERVAL = 10.0


def client():
    """A docker client that has answered a ping; raises LaunchError naming why not."""
    try:
        import docker
    except ImportError as exc:
        raise LaunchError("the docker SDK is not installed (pip install docker)") from exc
    try:
        c = docker.from_env(timeout=10)
        c.ping()
        return c
    except Exception as exc:
        raise LaunchError(f"no docker engine answers: {exc}") from exc


def build_image(tag: str = IMAGE_TAG, log=print) -> str:
    """Build the agents' image (python:3.11-slim + numpy) and return its id."""
    c = client()
    image, stream = c.images.build(fileobj=io.BytesIO(DOCKERFILE.encode()), tag=tag, rm=True, pull=True)
    for chunk in stream:
        if "stream" in chunk and chunk["stream"].strip():
            log(chunk["stream"].rstrip())
    return image.id


class DockerProcess:
    """A SandboxProcess over a container with an attached stdio socket."""

    def __init__(self, container, sock):
        self.container = container
        self.sock = sock
        raw = getattr(sock, "_sock", sock)
        self.stdin_fd = raw.fileno()
        self._out_r, self._out_w = os.pipe()
        self._err_r, self._err_w = os.pipe()
        self.stdout_fd, self.stderr_fd = self._out_r, self._err_r
        self._raw = raw
        self._status = None
        self._cpu = None
        self._cpu_at = 0.0
        self._closed = False
        self._pump = threading.Thread(target=self._demux, name="docker-stdio", daemon=True)
        self._pump.start()

    def _demux(self) -> None:
        """Split docker's stream (8-byte header: stream id, 3 zero bytes, big-endian size) into pipes."""
        buf = b""
        try:
            while True:
                chunk = self._raw.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 8:
                    kind, size = buf[0], struct.unpack(">I", buf[4:8])[0]
                    if len(buf) < 8 + size:
                        break
                    payload, buf = buf[8:8 + size], buf[8 + size:]
                    write_all(self._out_w if kind == 1 else self._err_w, payload)
        except OSError:
            pass  # the socket or a pipe closed: the finally below ends both streams
        finally:
            for fd in (self._out_w, self._err_w):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def exit_status(self) -> int | None:
        if self._status is None:
            try:
                self.container.reload()
                state = self.container.attrs["State"]
                if not state.get("Running"):
                    self._status = int(state.get("ExitCode", -1))
            except Exception:
                return None
        return self._status

    def kill(self) -> None:
        try:
            self.container.kill()
        except Exception:
            pass  # already stopped

    def cpu_seconds(self) -> float | None:
        now = time.monotonic()
        if self._status is None and now - self._cpu_at >= STATS_INTERVAL:
            self._cpu_at = now
            try:
                stats = self.container.stats(stream=False)
                self._cpu = stats["cpu_stats"]["cpu_usage"]["total_usage"] / 1e9
            except Exception:
                pass  # the container is gone or stats failed: keep the last reading
        return self._cpu

    def oom_killed(self) -> bool:
        try:
            self.container.reload()
            return bool(self.container.attrs["State"].get("OOMKilled"))
        except Exception:
            return False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.kill()
        try:
            self.sock.close()
        except Exception:
            pass  # best-effort teardown: the container is killed already and removed below
        self._pump.join(timeout=5)
        for fd in (self._out_r, self._err_r):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.container.remove(force=True)
        except Exception:
            pass  # already removed, or the engine went away: nothing left to release here


class DockerSandbox:
    """Agents in containers of IMAGE_TAG, one container per environment session."""

    name = "docker"

    def __init__(self, image: str = IMAGE_TAG):
        self.image = image

    def container_options(self, submission: Submission, limits: Limits, network: Network) -> dict:
        """The keyword arguments of `containers.create`: the whole policy in one place."""
        check_network(network)
        return dict(
            image=self.image,
            command=["python", "-I", "-B", f"{RUNNER_MOUNT}/{RUNNER_SCRIPT}", "--agent", AGENT_MOUNT,
                     "--rlimits", runner_rlimits(limits, per_user_nproc=True)],
            stdin_open=True, tty=False, detach=True,
            network_mode="none" if network == "none" else "bridge",
            read_only=True,
            tmpfs={"/tmp": f"size={limits.tmpfs_bytes},mode=1777"},
            shm_size=limits.tmpfs_bytes,  # /dev/shm, as capped as /tmp (the local backend's policy)
            pids_limit=limits.pids,
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            nano_cpus=int(limits.cpu_cores * 1e9),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            user=f"{AGENT_UID}:{AGENT_UID}",
            volumes={str(RUNNER_DIR): {"bind": RUNNER_MOUNT, "mode": "ro"},
                     str(submission.path): {"bind": AGENT_MOUNT, "mode": "ro"}},
            working_dir=AGENT_MOUNT,
            environment={"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                         "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
            labels={"arena.role": "agent"},
        )

    def start(self, submission: Submission, limits: Limits, network: Network = "none") -> DockerProcess:
        c = client()
        try:
            container = c.containers.create(**self.container_options(submission, limits, network))
        except Exception as exc:
            raise LaunchError(f"cannot create the container (did you run `arena image build`?): {exc}") from exc
        try:
            sock = container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            container.start()
        except Exception as exc:
            try:
                container.remove(force=True)
            except Exception:
                pass  # cleanup on the way out: the LaunchError below is what matters
            raise LaunchError(f"cannot start the container: {exc}") from exc
        return DockerProcess(container, sock)

    def capabilities(self) -> dict[str, bool]:
        try:
            c = client()
        except LaunchError:
            return {"docker engine": False, "image": False}
        try:
            c.images.get(self.image)
            has_image = True
        except Exception:
            has_image = False
        return {"docker engine": True, "image": has_image}
