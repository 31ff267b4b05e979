"""The arena's in-sandbox runner: imports the agent and serves it over the wire.

Started by path (`python -I -S runner.py --agent DIR ...`), never as a package:
it imports only the standard library, numpy and its siblings wire.py and
syscall_filter.py. In the docker backend it first takes the FIFOs the host made as its
stdio (`--fifos`). It

1. moves the protocol channel to private high file descriptors, points fd 1
   (the agent's stdout) at fd 2 (the captured, size-capped log) and fd 0 at
   /dev/null, so nothing the agent prints or reads can touch the protocol;
2. lowers its own resource limits (the limits are per process or, for
   RLIMIT_NPROC, per user inside this user namespace, so they must be set here) and
   installs the arena's seccomp filter (syscall_filter.py), in every backend;
3. says `started`, imports `agent.py`, builds `Agent()` and says `ready`;
4. answers `prepare`, `act`, `outcome` and `freeze` until its input closes;
5. after `freeze`, hands the session to a copy of itself with one thread, no file but the
   protocol's and the log, no shared memory, no signal handler of the agent's and that no
   other process may write (`hand_over`): the frozen agent, in which no code of the agent's
   runs again. It serves each pairing from a fork (`pairing` ... `end_pairing`): the child
   plays the pairing's games and exits at its end, the parent waits with the frozen state
   untouched, so no pairing sees what another one did. The host checks the frozen process
   and cleans up after every pairing (grader/sandbox/frozen.py): this process runs the
   agent's code and cannot be trusted with that.

Before it imports the agent, the runner forks: the first process stays the sandbox's init
(its pid 1), which runs none of the agent's code, reaps every orphan of the sandbox (so an
agent's process count is what it has running) and ends with the session's status.

An exception in the agent's code is reported as an `error` frame (and its
traceback goes to the log); SystemExit and KeyboardInterrupt end the process,
which the host sees as end of file.
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import importlib.util
import json
import os
import resource
import signal
import struct
import sys
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
# numpy's folder is passed as `--path DIR` and must be on sys.path before the
# first import of numpy (wire imports it), hence this look ahead of argparse.
sys.path[0:0] = [HERE] + [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--path"]
import numpy as np  # noqa: E402
import syscall_filter  # noqa: E402  (sibling modules, found through the line above)
import wire  # noqa: E402

# Protocol fds are moved up here, out of the way of anything the agent opens.
PROTOCOL_FD_FLOOR = 100

RLIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "as": resource.RLIMIT_AS,
    "data": resource.RLIMIT_DATA,
    "fsize": resource.RLIMIT_FSIZE,
    "core": resource.RLIMIT_CORE,
    "cpu": resource.RLIMIT_CPU,
    "nofile": resource.RLIMIT_NOFILE,
}


# The log (fd 2 as the host gave it), kept apart so that the frozen agent's fds 0, 1 and 2
# are put back as the runner set them, whatever the agent made of them.
LOG_FD: int | None = None
PR_SET_DUMPABLE = 4


def isolate_stdio() -> tuple[int, int]:
    """Return private (read, write) protocol fds; fd 0 -> /dev/null, fd 1 -> fd 2."""
    global LOG_FD
    proto_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, PROTOCOL_FD_FLOOR)
    proto_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, PROTOCOL_FD_FLOOR)
    LOG_FD = fcntl.fcntl(2, fcntl.F_DUPFD_CLOEXEC, PROTOCOL_FD_FLOOR)
    reset_stdio()
    return proto_in, proto_out


def reset_stdio() -> None:
    """fd 0 -> /dev/null, fds 1 and 2 -> the log."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if LOG_FD is not None:
        os.dup2(LOG_FD, 2)
    os.dup2(2, 1)


def set_dumpable(on: bool) -> None:
    """prctl(PR_SET_DUMPABLE): a process that is not dumpable cannot be written, read or traced
    through /proc/<pid>/mem, ptrace or process_vm_* by another of its uid without
    CAP_SYS_PTRACE, which nothing in a sandbox has (its /proc files then belong to root)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, int(on), 0, 0, 0)


# The status the server ends with when it hands the session to its frozen copy, whose pid
# it has written to the init's pipe just before.
HANDOVER_STATUS = 86
# The writing end of the init's pipe, in the server (None: no init, nothing to hand over).
HANDOVER_FD: int | None = None


def be_init(server: int, note: int) -> None:
    """The sandbox's init (pid 1): hold nothing of the session's, reap every process that ends
    (its own child and every orphan the kernel gives it), and end with the server's status.
    `note` is the pipe on which the server names its frozen copy. Never returns."""
    for sig in range(1, signal.NSIG):
        if sig not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            try:
                # No handler: the kernel then drops every signal sent to a pid namespace's init
                # from inside it, so no process of the agent's can end or stop it.
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
    set_dumpable(False)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    for name in os.listdir("/proc/self/fd"):  # the protocol's and the log's ends: never the init's
        if int(name) > 2 and int(name) != note:
            try:
                os.close(int(name))
            except OSError:
                pass
    os.set_blocking(note, False)
    handed = False
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid != server:
            continue  # an orphan, reaped: it no longer counts against the sandbox's processes
        code = os.waitstatus_to_exitcode(status)
        if code == HANDOVER_STATUS and not handed:
            # The frozen copy is the server now; the kernel made it this process's child when
            # its parent ended. (Whatever else was written to the pipe only misleads this init
            # about which process ends the session, which the host ends anyway.)
            try:
                server = struct.unpack("=i", os.read(note, 4096)[-4:])[0]
                handed = True
                continue
            except (OSError, struct.error):
                pass
        os._exit(code if code >= 0 else 128 - code)


def start_init() -> None:
    """Fork: the parent stays behind as the sandbox's init (`be_init`), the child goes on as
    the runner. Outside a pid namespace of its own (the kit's unsandboxed check) nothing is
    forked: the host's init reaps there, and the session is never handed over."""
    global HANDOVER_FD
    if os.getpid() != 1:
        return
    note_read, note_write = os.pipe()
    server = os.fork()
    if server:
        os.close(note_write)
        be_init(server, note_read)
    os.close(note_read)
    HANDOVER_FD = fcntl.fcntl(note_write, fcntl.F_DUPFD_CLOEXEC, PROTOCOL_FD_FLOOR)
    os.close(note_write)


def attach_fifos(folder: str) -> None:
    """Make the FIFOs folder/in, folder/out and folder/err this process's fds 0, 1 and 2.

    The docker backend's channel: a container's own stdio passes through the engine, so
    the host makes three FIFOs, binds their folder in and holds the other ends, which
    makes the channel a plain pipe, as in the embedded sandbox. The writing ends are
    opened first (the host's readers are already there), `in` last: the host opens its
    writing end once it sees this reader, and only then removes the FIFOs.
    """
    for name, target, flags in (("err", 2, os.O_WRONLY), ("out", 1, os.O_WRONLY), ("in", 0, os.O_RDONLY)):
        fd = os.open(os.path.join(folder, name), flags)
        os.dup2(fd, target)
        os.close(fd)


def set_rlimits(limits: dict[str, int]) -> None:
    """Lower each named resource limit (soft = hard = value; cpu gets 5 s grace before SIGKILL)."""
    for name, value in limits.items():
        which = RLIMITS[name]
        soft = hard = int(value)
        if name == "cpu":
            hard = soft + 5  # SIGXCPU at soft, SIGKILL at hard
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError) as exc:
            # On Linux every limit is a protection: failing to set one stops the agent. Other
            # systems (a student's Mac running the kit's unsandboxed check) lack some limits.
            if sys.platform.startswith("linux"):
                raise
            print(f"runner: limit {name} not available here ({exc}); continuing without it", file=sys.stderr)


def confine(limits: dict[str, int]) -> None:
    """Lower the resource limits and install the arena's seccomp filter: what every backend
    applies from inside, before the agent's code runs. On Linux a filter that cannot be
    installed stops the runner (the sandbox would be weaker than `arena doctor` says);
    elsewhere (a student's Mac running the kit's unsandboxed check) it is skipped, said."""
    set_rlimits(limits)
    if sys.platform.startswith("linux"):
        syscall_filter.install()
    else:
        print(f"runner: no seccomp filter on {sys.platform}; continuing without it", file=sys.stderr)


def load_agent(agent_dir: str):
    """Import agent_dir/agent.py as module `agent` and return its Agent class."""
    sys.path.insert(0, agent_dir)  # so agent.py can import the modules it ships
    path = os.path.join(agent_dir, "agent.py")
    spec = importlib.util.spec_from_file_location("agent", path)
    assert spec is not None and spec.loader is not None  # a path ending in .py always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent"] = module
    spec.loader.exec_module(module)
    return module.Agent


def _plain_text(value, what: str) -> str:
    """`value` as an exact str (a str subclass may override slicing or formatting: the base
    class's own method copies it), or a note of what it was instead."""
    if isinstance(value, str):
        return str.__str__(value)
    return f"<{what} is a {type(value).__name__}, not a string>"


def describe(exc: BaseException) -> str:
    """`Type: message` of an exception the agent raised, at most 500 characters. The agent
    made the exception, so its `__str__` (or even its class's name) may raise or return
    something other than a string: that is said in the text instead of breaking the runner."""
    try:
        name = _plain_text(type(exc).__name__, "its class's name")
    except Exception:
        name = "<a class whose name cannot be read>"
    try:
        message = _plain_text(str(exc), "its message")
    except Exception as inner:
        message = (
            f"<the exception's message cannot be shown: str() raised {_plain_text(type(inner).__name__, 'a name')}>"
        )
    return f"{name[:100]}: {message[:500]}"[:500]


def error_frame(where: str, exc: BaseException) -> bytes:
    """The `error` frame for an exception of the agent's code during `where`; its traceback
    goes to the owner's log (if even that fails, the frame still goes out)."""
    try:
        traceback.print_exc()
    except Exception:
        pass
    return wire.encode({"op": "error", "where": where, "error": describe(exc)})


def action_frame(action) -> bytes:
    """The reply to `act`: `action` if it is an integer, else `bad_action` naming its type.

    bool is an int subclass but not a cell; numpy integer scalars are accepted.
    """
    if type(action) is int and 0 <= action < len(wire.ACTION_FRAMES):
        return wire.ACTION_FRAMES[action]
    if isinstance(action, np.integer):
        action = int(action)
    if isinstance(action, int) and not isinstance(action, bool) and -(1 << 63) <= action < (1 << 63):
        return wire.action_frame(action)
    return wire.encode({"op": "bad_action", "type": type(action).__name__, "repr": repr(action)[:100]})


def _mark_before() -> None:
    """A no-op registered with os.register_at_fork, by which the interpreter's lists of such
    callables are found (`find_fork_hooks`)."""


def _mark_parent() -> None:
    """As `_mark_before`, for the callables run in the parent after a fork."""


def _mark_child() -> None:
    """As `_mark_before`, for the callables run in the child after a fork."""


# The interpreter's lists of os.register_at_fork callables ("before", "parent", "child"),
# found once before the agent is imported: the frozen agent runs none of the agent's, and
# its pairings' forks run the agent's "child" ones (the way to start threads again there).
FORK_HOOKS: dict[str, list] = {}


def find_fork_hooks() -> None:
    """Find the interpreter's three lists of at-fork callables by marks registered in each."""
    os.register_at_fork(before=_mark_before, after_in_parent=_mark_parent, after_in_child=_mark_child)
    marks = {"before": _mark_before, "parent": _mark_parent, "child": _mark_child}
    for obj in gc.get_objects():
        if type(obj) is list:
            for name, mark in marks.items():
                if any(item is mark for item in obj):
                    FORK_HOOKS[name] = obj


# The agent's Python signal handlers, taken off the frozen agent and put back in each fork.
AGENT_HANDLERS: dict[int, Any] = {}
# CPU seconds the server had used when it handed the session over (its copy starts at zero).
HANDED_CPU = 0.0


def privatize_shared_memory() -> list[str]:
    """Make every shared mapping of this process a private copy of itself, in place: no other
    process can then change what this one holds. What cannot be copied is named."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    import mmap

    failed = []
    with open("/proc/self/maps") as maps:
        lines = maps.read().splitlines()
    for line in lines:
        fields = line.split(None, 5)
        perms = fields[1]
        if perms[3] != "s":
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        size = end - start
        prot = (
            (mmap.PROT_READ if perms[0] == "r" else 0)
            | (mmap.PROT_WRITE if perms[1] == "w" else 0)
            | (mmap.PROT_EXEC if perms[2] == "x" else 0)
        )
        if not perms[0] == "r" and libc.mprotect(start, size, mmap.PROT_READ) != 0:
            failed.append(line)
            continue
        data = ctypes.string_at(start, size)
        fixed = libc.mmap(
            start, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x10, -1, 0
        )  # 0x10: MAP_FIXED
        if fixed != start:
            failed.append(line)
            continue
        ctypes.memmove(start, data, size)
        libc.mprotect(start, size, prot)
    return failed


def hand_over(agent_dir: str, keep: tuple[int, ...]) -> None:
    """After freeze(): go on in a copy of this process that holds only the frozen agent.

    The copy (os.fork, with none of the agent's at-fork callables) has one thread; it
    closes every file but `keep`, the log and fds 0-2 (put back as the runner set them),
    makes its shared memory private, takes the agent's signal handlers off (a signal from a
    pairing's fork must not run the agent's code in it), and is made not dumpable, so no
    other process of the sandbox can write its memory. This process tells the init which pid
    serves now and ends, and the agent's threads with it. Without an init (unsandboxed)
    nothing is handed over."""
    global HANDED_CPU
    if HANDOVER_FD is None:
        return
    flush_output()
    HANDED_CPU = cpu_used()
    child_hooks = list(FORK_HOOKS.get("child", []))
    for hooks in FORK_HOOKS.values():
        hooks.clear()
    copy = os.fork()
    if copy:
        try:
            os.write(HANDOVER_FD, struct.pack("=i", copy))
        finally:
            os._exit(HANDOVER_STATUS)
    FORK_HOOKS.get("child", [])[:] = child_hooks  # a pairing's fork runs them; this process never
    for sig in range(1, signal.NSIG):
        try:
            handler = signal.getsignal(sig)
        except (OSError, ValueError):
            continue
        if callable(handler):
            AGENT_HANDLERS[sig] = handler
            # Ignored (a signal from a fork then changes nothing), but SIGCHLD: ignoring it would
            # have the kernel reap the pairings' forks, which this process waits for.
            signal.signal(sig, signal.SIG_DFL if sig == signal.SIGCHLD else signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    kept = set(keep) | {0, 1, 2, LOG_FD}
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in kept:
            try:
                os.close(int(name))
            except OSError:
                pass  # the listing's own fd, already closed
    reset_stdio()
    for fd in keep:
        os.set_blocking(fd, True)
    try:
        os.chdir(agent_dir)
    except OSError:
        pass
    for line in privatize_shared_memory():
        print(f"arena runner: cannot make this shared mapping private: {line}", file=sys.stderr)
    set_dumpable(False)


def enter_pairing() -> None:
    """In a pairing's fork, before the agent's code: its signal handlers back, and the fork
    is as dumpable as the agent was (it is the agent's own copy to use up)."""
    for sig, handler in AGENT_HANDLERS.items():
        try:
            signal.signal(sig, handler)
        except (OSError, ValueError):
            pass
    set_dumpable(True)


OK = wire.encode({"op": "ok"})
PAIRING_OUTSIDE = "pairing before freeze, or inside another pairing"
# The frozen agent runs none of its code again: after freeze() it plays only in a pairing's fork.
ACT_FROZEN = "act after freeze outside a pairing"


def flush_output() -> None:
    """Flush the agent's buffered prints to the log (before a fork, so that no buffered line
    is written twice, and after every reply, so the log keeps up)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass  # the agent's own stream is broken or replaced: its log, not the protocol, suffers


def cpu_used() -> float:
    """CPU seconds this process and the children it reaped used (what RLIMIT_CPU would have
    counted had they been one process)."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return HANDED_CPU + own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def fork_pairing() -> int | None:
    """Fork for a pairing. In the child: None, with RLIMIT_CPU lowered to what the session has
    left (a fork's counter starts at zero, and the limit is the session's). In the parent:
    wait for the child, then 0 when it ended the pairing, else the status the runner must end
    with (a child the agent's code ended or the kernel killed ends the session as it would
    have without the fork: the host sees end of file)."""
    flush_output()
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    used = cpu_used()
    child = os.fork()
    if child == 0:
        enter_pairing()
        if soft != resource.RLIM_INFINITY:
            left = max(1, int(soft - used))
            resource.setrlimit(
                resource.RLIMIT_CPU,
                (left, min(hard, left + 5) if hard != resource.RLIM_INFINITY else resource.RLIM_INFINITY),
            )
        return None
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:  # the agent reaped it itself (a SIGCHLD handler): it ended somehow
            return 1
        except InterruptedError:
            continue
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return 0
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) or 1


def serve(agent, proto_in: int, proto_out: int, in_pairing: bool = False, agent_dir: str = "/") -> int:
    """Answer host requests until the input closes (or, in a pairing's fork, until the
    pairing ends); returns the exit status."""
    reader = wire.FrameReader(cached_ops=frozenset({"act"}))
    frozen = in_pairing
    flush = sys.stdout.flush
    while True:
        try:
            frame = wire.read_frame(proto_in, reader)
        except wire.WireError as exc:
            print(f"arena runner: bad frame from host: {exc}", file=sys.stderr)
            return 3
        if frame is None:
            return 0
        header, arrays = frame
        op = header["op"]
        try:
            if op == "act" and not (frozen and not in_pairing):
                reply = action_frame(agent.act(arrays[0], arrays[1]))
            elif op == "act":
                reply = wire.encode({"op": "refused", "detail": ACT_FROZEN})
            elif op == "prepare":
                agent.prepare(header["env_info"])
                reply = OK
            elif op == "outcome":
                if frozen:
                    reply = wire.encode({"op": "refused", "detail": "outcome after freeze"})
                else:
                    agent.observe_outcome(header["outcome"])
                    reply = OK
            elif op == "freeze":
                if frozen:
                    reply = wire.encode({"op": "refused", "detail": "freeze after freeze"})
                else:
                    frozen = True
                    freeze = getattr(agent, "freeze", None)
                    if callable(freeze):
                        freeze()
                    hand_over(agent_dir, (proto_in, proto_out))
                    # The host checks this process, the frozen agent, by its pid (as the sandbox sees it).
                    reply = wire.encode({"op": "ok", "pid": os.getpid()})
            elif op == "pairing":
                if not frozen or in_pairing:
                    reply = wire.encode({"op": "refused", "detail": PAIRING_OUTSIDE})
                else:
                    ended = fork_pairing()
                    if ended is None:  # the fork: it answers the whole pairing, then exits
                        wire.write_all(proto_out, OK)
                        os._exit(serve_pairing(agent, proto_in, proto_out))
                    if ended:
                        return ended
                    continue  # the parent, after the fork: the frozen agent is untouched
            elif op == "end_pairing":
                if not in_pairing:
                    reply = wire.encode({"op": "refused", "detail": "end_pairing outside a pairing"})
                else:
                    wire.write_all(proto_out, OK)
                    return 0  # the parent reads the next frame; this process reads nothing more
            else:
                reply = wire.encode({"op": "refused", "detail": f"unknown op {op!r}"})
        except Exception as exc:  # the agent's bug, reported, not fatal to the runner
            reply = error_frame(op, exc)
        try:
            flush()
        except Exception:
            pass  # the agent's own stdout is broken or replaced: its log, not the protocol, suffers
        written = os.write(proto_out, reply)
        if written != len(reply):
            wire.write_all(proto_out, reply[written:])


def serve_pairing(agent, proto_in: int, proto_out: int) -> int:
    """A pairing's fork: serve until `end_pairing` (0) or end of file (0: the parent then sees
    it too); however else it ends (the agent's SystemExit, even with status 0, or anything
    uncaught) is a status that ends the runner, as that end would have without the fork."""
    try:
        status = serve(agent, proto_in, proto_out, in_pairing=True)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) and exc.code else 1
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
        status = 1
    flush_output()
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="arena in-sandbox runner")
    parser.add_argument("--agent", required=True, help="folder holding agent.py")
    parser.add_argument("--path", action="append", default=[], help="sys.path entry for numpy")
    parser.add_argument("--rlimits", default="{}", help="JSON {name: value} resource limits")
    parser.add_argument("--fifos", default=None, help="folder of the FIFOs in, out, err to use as stdio")
    args = parser.parse_args(argv)

    if args.fifos:
        attach_fifos(args.fifos)
    proto_in, proto_out = isolate_stdio()
    confine(json.loads(args.rlimits))
    start_init()
    find_fork_hooks()
    # Tells the host the sandbox is up: an end of file before this is the arena's
    # fault (launch_failed), after it the agent's.
    wire.write_all(proto_out, wire.encode({"op": "started"}))
    versions = {"python": sys.version.split()[0], "numpy": np.__version__}
    try:
        agent = load_agent(args.agent)()
    except Exception as exc:
        wire.write_all(proto_out, error_frame("import", exc))
        return 1
    try:
        sys.stdout.flush()
    except Exception:
        pass  # as in serve(): a broken agent stdout must not stop the protocol
    wire.write_all(proto_out, wire.encode(dict(op="ready", **versions)))
    return serve(agent, proto_in, proto_out, agent_dir=args.agent)


if __name__ == "__main__":
    sys.exit(main())
