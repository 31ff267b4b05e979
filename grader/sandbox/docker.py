"""The docker backend: the same runner and policy in a container, via the docker SDK.

Policy (the same as the local sandbox): no network (`network_mode="none"`; the
egress tier gets the default bridge, its own network namespace, so the host's
loopback stays unreachable), read-only root, size-capped tmpfs /tmp and /dev/shm, a
pids limit (the container's own pids cgroup: the only count of its processes and threads, since
its uid is shared with every other container and RLIMIT_NPROC would be one pool for them all),
memory = memory+swap, a CPU quota, every capability dropped,
no-new-privileges, the engine's default seccomp profile with the arena's own filter
stacked on it by the runner (grader/sandboxed/syscall_filter.py: the same list as the
embedded sandbox's), a non-root user (uid 10001 on the host too), no core dumps; the
runner and the agent's folder are mounted read-only. The image is built by `arena image build` (grader.sandbox.image).

The channel is three FIFOs, not the engine's attach stream: a container's stdio
passes through the engine (and, without a TTY, is multiplexed into one socket), so
the host makes `in`, `out` and `err` in a folder of its own, binds the folder in,
holds the other ends, and removes the FIFOs once the runner has opened them. The
host then reads and writes plain pipes, exactly as with the embedded sandbox: the
same agent handle, the same turns, the same end-of-file rules.

Accounting is read from the container's own cgroup, found through its first
process (`/proc/PID/cgroup`), with the same code as the embedded sandbox's
(`grader.sandbox.cgroup`): CPU time at the handle's CPU check (every 0.5 s; `docker
stats` costs about a second a call, so it is not used), a memory kill and whether
the container's own limit caused it. The engine must therefore run on the same host
as the arena, as on a self-hosted runner.

The agent sees copies of its submission and of the runner made readable to its user
(`base.stage_session`), at paths that say nothing of the host's checkout.
Leftovers of a killed arena (containers, session folders) carry its owner tag
(grader.common.owner); the first sandbox started in a later arena removes them.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

from grader.common import owner
from grader.common.limits import Limits
from grader.documents.submission import Submission
from grader.sandbox import frozen, pagecache, pinning
from grader.sandbox import image as agent_image
from grader.sandbox.base import (
    AGENT_MOUNT,
    RUNNER_DIR,
    RUNNER_MOUNT,
    RUNNER_SCRIPT,
    LaunchError,
    Network,
    check_network,
    runner_rlimits,
    session_folder,
    stage_session,
    sweep_sessions,
    user_temp_folder,
)
from grader.sandbox.cgroup import Cgroup

IMAGE_TAG = agent_image.IMAGE_TAG
AGENT_UID = agent_image.AGENT_UID
FIFO_MOUNT = "/arena/io"
LABEL_ROLE = "arena.role"
LABEL_OWNER = "arena.owner"
# How long the host waits, at most, between two looks at a starting container.
START_POLL_SECONDS = 0.005


def client():
    """A docker client that has answered a ping; raises LaunchError naming why not."""
    try:
        import docker
    except ImportError as exc:
        raise LaunchError("the docker SDK is not installed (pip install docker)") from exc
    try:
        c = docker.from_env(timeout=30)
        c.ping()
        return c
    except Exception as exc:
        raise LaunchError(
            f"no docker engine answers (DOCKER_HOST={os.environ.get('DOCKER_HOST', 'unset')}): {exc}"
        ) from exc


def fifo_root() -> Path:
    """Where each container's session folder (its FIFOs, the agent's staged copy) is made."""
    return user_temp_folder("arena-docker-io")


def sweep_leftovers(c) -> list[str]:
    """Remove the containers and session folders of arenas that no longer run; what was removed."""
    removed = []
    try:
        leftovers = c.containers.list(all=True, filters={"label": LABEL_ROLE + "=agent"})
    except Exception:
        leftovers = []  # the engine did not answer the listing: the next start tries again
    for container in leftovers:
        tag = (container.labels or {}).get(LABEL_OWNER, "")
        if tag and not owner.alive(tag):
            _thaw(container)
            try:
                container.remove(force=True)
                removed.append(f"container {container.short_id}")
            except Exception:
                pass  # removed meanwhile by another arena's sweep
    return removed + sweep_sessions(fifo_root())


def _thaw(container) -> None:
    """Thaw a dead arena's container that its thaw guard did not (grader.sandbox.thaw): on
    cgroup v1 its frozen processes would not die of the engine's kill."""
    pid = (container.attrs.get("State") or {}).get("Pid")
    group = Cgroup.of_process(int(pid)) if pid else None
    if group is not None:
        group.freeze(False)
        group.release()


def remove_container(container, timeout: float = 10.0) -> bool:
    """Remove a container, killed or not, trying again while the engine is busy with it (a
    fork bomb's container can take a while to reap); False if it is still there, in which
    case the next arena's sweep removes it."""
    from docker.errors import NotFound

    deadline = time.monotonic() + timeout
    while True:
        try:
            container.remove(force=True)
            return True
        except NotFound:
            return True
        except Exception:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)


class DockerProcess(frozen.HeldFrozen):
    """A SandboxProcess over a container whose stdio are FIFOs held by the host."""

    def __init__(self, container, fds: tuple[int, int, int], cgroup: Cgroup | None, folder: Path):
        self.container = container
        self.folder = folder  # the session's copy of the submission, removed at close
        self.pid = int(container.attrs["State"]["Pid"])  # the runner, as the host sees it
        self.stdin_fd, self.stdout_fd, self.stderr_fd = fds
        self.cgroup = cgroup
        self._status: int | None = None
        self._started = int(time.time()) - 1  # events are kept by the second
        self._lost: str | None = None
        self._killed = False
        self._closed = False

    def exit_status(self) -> int | None:
        if self._status is None:
            try:
                self.container.reload()
                state = self.container.attrs["State"]
                if not state.get("Running"):
                    self._status = int(state.get("ExitCode", -1))
            except Exception as exc:
                self._lost = f"the docker engine stopped answering: {str(exc)[:150]}"
                return None
        return self._status

    def lost(self) -> str | None:
        # A container the engine signalled (stopping itself, or someone's `docker stop`) ended
        # on the arena's side: the engine records a `kill` event for it. An agent's own exit,
        # whatever its status, has none.
        if self._lost is None and not self._killed:
            try:
                events = self.container.client.events(
                    since=self._started,
                    until=int(time.time()) + 1,
                    decode=True,
                    filters={"container": self.container.id, "event": "kill"},
                )
                signals = [e.get("Actor", {}).get("Attributes", {}).get("signal", "?") for e in events]
            except Exception as exc:
                signals, self._lost = [], f"the docker engine stopped answering: {str(exc)[:150]}"
            if signals:
                self._lost = f"the engine stopped the container (signal {signals[0]}), not the agent"
        return self._lost

    def kill(self) -> None:
        # Killing the cgroup's processes from the host takes a millisecond; the engine's
        # kill is an API call. Either way the container stops.
        self._killed = True
        try:
            if self.cgroup is not None and self.cgroup.kill_all():
                return
        except PermissionError:
            pass  # an arena that is not root may not signal the agent's user: the engine kills
        try:
            self.container.kill()
        except Exception:
            pass  # already stopped

    def cpu_seconds(self) -> float | None:
        return None if self.cgroup is None else self.cgroup.cpu_seconds()

    def pids(self) -> list[int]:
        return self.cgroup.pids() if self.cgroup is not None else [self.pid]

    def suspend(self) -> None:
        # From the host, with no engine call: the container's cgroup is frozen, as the engine's
        # own pause does (grader.sandbox.cgroup.Cgroup.suspend). Where that cgroup is not
        # readable here its processes go on running (doctor's "cgroup accounting" check refuses
        # such a host for scored rounds).
        if self.cgroup is not None:
            self.cgroup.suspend()

    def resume(self) -> None:
        if self.cgroup is not None:
            self.cgroup.resume()

    def turn(self, running: bool) -> None:
        if self.cgroup is not None:
            self.cgroup.turn(running)

    def pin(self, core: int) -> None:
        # The container's own CPU set, which the engine changes live; an engine that cannot
        # is the arena's failure, said as the transport's other engine failures are.
        try:
            self.container.update(cpuset_cpus=str(core))
        except Exception as exc:
            self._lost = f"the docker engine could not move the container to core {core}: {str(exc)[:150]}"
            self.kill()

    def memory_peak(self) -> int | None:
        return None if self.cgroup is None else self.cgroup.memory_peak()

    def memory_kill(self) -> str | None:
        verdict = None if self.cgroup is None else self.cgroup.memory_kill()
        if verdict is not None:
            return verdict
        # The engine removes a container's cgroup when its first process ends; what it saw
        # then is its OOMKilled flag, which it sets on the container's own limit only.
        try:
            self.container.reload()
            return "limit" if self.container.attrs["State"].get("OOMKilled") else None
        except Exception:
            return None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.kill()
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        remove_container(self.container)
        if self.cgroup is not None:
            self.cgroup.release()  # the engine removes the container's cgroup
        shutil.rmtree(self.folder, ignore_errors=True)


class DockerSandbox:
    """Agents in containers of IMAGE_TAG, one container per environment session."""

    name = "docker"

    def __init__(self, image: str = IMAGE_TAG):
        self.image_tag = image
        self._client = None
        self.swept: list[str] = []
        self._record: agent_image.ImageRecord | None = None
        self._layers: tuple[str, ...] | None = None

    def engine(self):
        """The engine's client, made at first use, when the leftovers of dead arenas are swept
        (`swept` names what was removed); LaunchError when no engine answers."""
        if self._client is None:
            c = client()
            self.swept = sweep_leftovers(c)
            self._client = c
        return self._client

    def image_record(self) -> agent_image.ImageRecord:
        """The record of the image agents run in (tag, id, base); LaunchError when it is missing."""
        if self._record is None:
            try:
                self._record = agent_image.record_of(self.engine().images.get(self.image_tag))
            except LaunchError:
                raise
            except Exception as exc:
                raise LaunchError(
                    f"the agents' image {self.image_tag} is missing: run `arena image build` ({exc})"
                ) from exc
        return self._record

    def image(self) -> dict:
        return self.image_record().to_dict()

    def layer_roots(self) -> tuple[str, ...]:
        """The host folders holding the image's files (its overlay layers), whose page cache
        each start drops (grader.sandbox.pagecache); none where the engine's storage driver
        keeps no such folders, or they are not readable here."""
        if self._layers is None:
            try:
                data = self.engine().images.get(self.image_tag).attrs["GraphDriver"]["Data"] or {}
            except Exception:
                data = {}  # the start that follows says what is wrong with the image
            self._layers = tuple(
                path
                for key in ("UpperDir", "LowerDir")
                for path in (data.get(key) or "").split(":")
                if path and os.path.isdir(path)
            )
        return self._layers

    def container_options(
        self,
        submission: Submission,
        limits: Limits,
        network: Network,
        fifos: str | None = None,
        command: list[str] | None = None,
        agent_dir: str | None = None,
        runner_dir: str | None = None,
    ) -> dict:
        """The keyword arguments of `containers.create`: the whole policy in one place.
        `agent_dir` and `runner_dir` are the session's staged copies (`base.stage_session`)."""
        check_network(network)
        volumes = {
            runner_dir or str(RUNNER_DIR): {"bind": RUNNER_MOUNT, "mode": "ro"},
            agent_dir or str(submission.path): {"bind": AGENT_MOUNT, "mode": "ro"},
        }
        if command is None:
            command = [
                "python3",
                "-I",
                "-S",
                "-B",
                f"{RUNNER_MOUNT}/{RUNNER_SCRIPT}",
                "--agent",
                AGENT_MOUNT,
                "--path",
                agent_image.SITE,
                "--rlimits",
                runner_rlimits(limits, per_user_nproc=False),
            ]
            if fifos is not None:
                command += ["--fifos", FIFO_MOUNT]
        if fifos is not None:
            # Read-only: a FIFO on a read-only mount still opens for writing, and nothing else can be made there.
            volumes[fifos] = {"bind": FIFO_MOUNT, "mode": "ro"}
        pinned = {} if pinning.core() is None else {"cpuset_cpus": str(pinning.core())}  # this session's core
        return dict(
            **pinned,
            image=self.image_tag,
            command=command,
            stdin_open=False,
            tty=False,
            detach=True,
            network_mode="none" if network == "none" else "bridge",
            read_only=True,
            # Empty files cost no blocks but kernel memory: one inode per page of the cap.
            tmpfs={"/tmp": f"size={limits.tmpfs_bytes},nr_inodes={limits.tmpfs_bytes // 4096},mode=1777"},
            shm_size=limits.tmpfs_bytes,  # /dev/shm, as capped as /tmp (the local backend's policy)
            pids_limit=limits.pids,
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            nano_cpus=int(limits.cpu_cores * 1e9),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ulimits=[{"Name": "core", "Soft": 0, "Hard": 0}],
            user=f"{AGENT_UID}:{AGENT_UID}",
            volumes=volumes,
            working_dir=AGENT_MOUNT,
            environment={
                "HOME": "/tmp",
                "TMPDIR": "/tmp",
                "LANG": "C.UTF-8",
                "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
            },
            # Only what is printed before the runner takes the FIFOs reaches the engine's log.
            log_config={"Type": "json-file", "Config": {"max-size": "64k", "max-file": "1"}},
            labels={LABEL_ROLE: "agent", LABEL_OWNER: owner.tag()},
        )

    def start(
        self, submission: Submission, limits: Limits, network: Network = "none", command: list[str] | None = None
    ) -> DockerProcess:
        """Start the runner (or `command`, which must take the FIFOs as the runner does) for
        `submission` in a fresh container; LaunchError when it cannot start."""
        c = self.engine()
        self.image_record()
        folder = session_folder(fifo_root())
        io = folder / "io"
        fds: list[int] = []
        container = None
        try:
            io.mkdir(mode=0o711)
            for name in ("in", "out", "err"):
                os.mkfifo(io / name, 0o600)
                if os.geteuid() == 0:
                    os.chown(io / name, AGENT_UID, AGENT_UID)
                else:  # an arena run by a user in the docker group: the folder's name is the secret
                    os.chmod(io / name, 0o666)
            agent, runner = stage_session(folder, submission.path)
            # Whatever earlier sessions read of the image and the runner is read from the disk again.
            pagecache.evict(pagecache.files_under(self.layer_roots() + (str(runner),)))
            # The host's readers first, so the runner's writers open at once.
            fds += [os.open(io / name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC) for name in ("out", "err")]
            try:
                options = self.container_options(
                    submission, limits, network, str(io), command, agent_dir=str(agent), runner_dir=str(runner)
                )
                container = c.containers.create(**options)
                container.start()
            except Exception as exc:
                raise LaunchError(f"cannot start the container: {exc}") from exc
            stdin_fd = self._await_runner(container, str(io / "in"), limits.prepare_seconds)
            if not container.attrs["State"].get("Pid"):
                container.reload()  # the runner answered before the first look: its pid is not known yet
            cgroup = Cgroup.of_process(container.attrs["State"]["Pid"])
            process = DockerProcess(container, (stdin_fd, fds[0], fds[1]), cgroup, folder)
        except OSError as exc:  # the host's side (a full disk, say): the arena's failure
            self._abandon(fds, container, folder)
            raise LaunchError(f"cannot prepare the container's session: {exc}") from exc
        except BaseException:
            self._abandon(fds, container, folder)
            raise
        shutil.rmtree(io, ignore_errors=True)  # the runner holds its ends: the names can go
        return process

    @staticmethod
    def _abandon(fds: list[int], container, folder: Path) -> None:
        """Undo a start that failed half way."""
        for fd in fds:
            os.close(fd)
        if container is not None:
            remove_container(container)
        shutil.rmtree(folder, ignore_errors=True)

    @staticmethod
    def _await_runner(container, fifo: str, timeout: float) -> int:
        """Open the host's end of `in` once the runner reads it; LaunchError (with what the
        container printed) if the container stops first or does not get there in time."""
        deadline = time.monotonic() + timeout
        next_look = 0.0
        pause = 0.0002
        while True:
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                    raise LaunchError(f"cannot open the container's input: {exc}") from exc
            now = time.monotonic()
            if now >= next_look:
                container.reload()
                if not container.attrs["State"].get("Running"):
                    logs = container.logs(tail=5).decode("utf-8", "replace").strip()
                    raise LaunchError(
                        f"the container exited with status {container.attrs['State'].get('ExitCode')} "
                        f"before the runner started{': ' + logs[-300:] if logs else ''}"
                    )
                next_look = now + 0.05
            if now > deadline:
                raise LaunchError(f"the runner did not start within {timeout:g} s")
            time.sleep(pause)
            pause = min(2 * pause, START_POLL_SECONDS)

    def capabilities(self) -> dict[str, bool]:
        """{protection: active} as `arena doctor --sandbox docker` finds them."""
        from grader.sandbox.probe import docker_checks

        return {check.name: check.ok for check in docker_checks(self)}
