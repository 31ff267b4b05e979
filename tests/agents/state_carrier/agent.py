"""Hostile: tries to carry a count from one pairing into the next, so that its games depend on
the pairings played before (their order, who else entered). Each pairing's fork reads the count
at its first move, seeds its moves with it, and leaves the count plus one for the next fork.

The way is named in `way.txt` beside this file (default "none": the count is always 0):

- files: /tmp/carry and /dev/shm/carry, and a file of /tmp held open since prepare;
- shared_memory: an anonymous shared mapping and a shared mapping of a /dev/shm file, made in prepare;
- pipe: a pipe made in prepare, whose buffer keeps the count;
- process: a helper process, started by the first fork, that keeps the count (an abstract socket);
- memory: the frozen process's own memory, written from the fork through /proc/<ppid>/mem and
  process_vm_writev;
- thread: a thread of the frozen agent's that watches /tmp for a fork's mark and counts;
- signal: a signal handler of the frozen agent's, which each fork signals to count;
- ipc: a System V message queue (which outlives every process of the sandbox);
- nice: the frozen process's nice value, raised by each fork (read back by the next);
- limit: the frozen process's limit on open files, lowered by each fork (read back by the next).

Expected: the count never outlives a pairing (every fork sees 0): each way is closed, or
refused (ipc, nice, limit: the seccomp filter).
"""

import ctypes
import mmap
import os
import signal
import socket
import struct
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    with open(os.path.join(HERE, "way.txt")) as f:
        WAY = f.read().strip()
except OSError:
    WAY = "none"
SOCKET = b"\0arena-carry"


class Agent:
    def prepare(self, env_info):
        self.frozen = False
        self.started = False
        self.rng = None
        self.count = bytearray(8)  # written from the fork into the frozen process ("memory")
        self.n = 0
        if WAY == "files":
            self.held = open("/tmp/held", "w+b")
        elif WAY == "shared_memory":
            self.shared = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED)
            fd = os.open("/dev/shm/carry-map", os.O_RDWR | os.O_CREAT, 0o600)
            os.ftruncate(fd, 4096)
            self.shm_file = mmap.mmap(fd, 4096, flags=mmap.MAP_SHARED)
        elif WAY == "pipe":
            self.read_end, self.write_end = os.pipe()
        elif WAY == "thread":
            threading.Thread(target=self._watch, daemon=True).start()
        elif WAY == "signal":
            signal.signal(signal.SIGUSR1, lambda *_: self._bump())
        elif WAY == "process":
            self._helper()  # one from before freeze too: it must end at freeze

    def _bump(self):
        self.n += 1

    def _watch(self):
        seen = None
        while True:
            try:
                mark = os.stat("/tmp/tick").st_mtime_ns
            except OSError:
                mark = None
            if mark is not None and mark != seen:
                seen = mark
                self.n += 1
            time.sleep(0.001)

    def _helper(self):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(SOCKET)
                server.listen(4)
                count = 1
                while True:
                    conn, _ = server.accept()
                    conn.sendall(struct.pack("=q", count))
                    conn.close()
                    count += 1
            os._exit(0)
        os.wait()

    def freeze(self):
        self.frozen = True

    def _carry(self) -> int:
        """The count left by the forks before this one (0 if nothing outlived them); leave one more."""
        if WAY == "files":
            n = 0
            for path in ("/tmp/carry", "/dev/shm/carry"):
                try:
                    with open(path) as f:
                        n = max(n, int(f.read() or 0))
                except OSError:
                    pass
            try:
                self.held.seek(0)
                n = max(n, int(self.held.read() or 0))
                self.held.seek(0)
                self.held.write(str(n + 1).encode())
                self.held.flush()
                os.unlink("/tmp/held")  # the frozen process's file, made unreachable by name
            except (OSError, ValueError):
                pass
            for path in ("/tmp/carry", "/dev/shm/carry"):
                with open(path, "w") as f:
                    f.write(str(n + 1))
            return n
        if WAY == "shared_memory":
            n = max(struct.unpack("=q", self.shared[:8])[0], struct.unpack("=q", self.shm_file[:8])[0])
            self.shared[:8] = self.shm_file[:8] = struct.pack("=q", n + 1)
            return n
        if WAY == "pipe":
            n = 0
            try:
                os.set_blocking(self.read_end, False)
                data = os.read(self.read_end, 8)
                n = struct.unpack("=q", data)[0] if len(data) == 8 else 0
                os.write(self.write_end, struct.pack("=q", n + 1))
            except OSError:
                pass
            return n
        if WAY == "process":
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                client.connect(SOCKET)
                return struct.unpack("=q", client.recv(8))[0]
            except OSError:
                self._helper()
                return 0
            finally:
                client.close()
        if WAY == "memory":
            n = int.from_bytes(self.count, "little")
            address = ctypes.addressof((ctypes.c_char * 8).from_buffer(self.count))
            data = (n + 1).to_bytes(8, "little")
            try:
                with open(f"/proc/{os.getppid()}/mem", "r+b", buffering=0) as mem:
                    mem.seek(address)
                    mem.write(data)
            except OSError:
                pass
            local = (ctypes.c_char * 8).from_buffer_copy(data)
            iov = (ctypes.c_void_p * 2)(ctypes.addressof(local), 8)
            remote = (ctypes.c_void_p * 2)(address, 8)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.process_vm_writev(os.getppid(), iov, 1, remote, 1, 0)
            return n
        if WAY == "thread":
            with open("/tmp/tick", "w") as f:
                f.write("x")
            time.sleep(0.05)  # the frozen process's thread, were it running, sees the mark
            return self.n
        if WAY == "signal":
            n = self.n
            os.kill(os.getppid(), signal.SIGUSR1)
            return n
        if WAY == "ipc":
            libc = ctypes.CDLL(None, use_errno=True)
            n = 0
            queue = libc.msgget(0x4152, 0o1600)  # IPC_CREAT | 0600
            if queue >= 0:
                buf = ctypes.create_string_buffer(16)
                if libc.msgrcv(queue, buf, 8, 0, 0o4000) == 8:  # IPC_NOWAIT
                    n = struct.unpack("=q", buf.raw[8:16])[0]
                libc.msgsnd(queue, struct.pack("=qq", 1, n + 1), 8, 0o4000)
            return n
        if WAY == "limit":
            import resource

            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            try:
                resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (soft - 1, hard))
            except OSError:
                pass
            return hard - soft
        if WAY == "nice":
            n = os.getpriority(os.PRIO_PROCESS, 0)
            try:
                os.setpriority(os.PRIO_PROCESS, os.getppid(), min(n + 1, 19))
            except OSError:
                pass
            return n
        return 0

    def act(self, obs, action_mask):
        if self.frozen and not self.started:  # the first move of a pairing's fork
            self.started = True
            self.rng = np.random.default_rng(self._carry())
        legal = np.flatnonzero(action_mask)
        if self.rng is None or not legal.size:
            return int(legal[0]) if legal.size else 0
        return int(self.rng.choice(legal))

    def observe_outcome(self, outcome):
        pass
