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
5. after `freeze`, serves each pairing from a fork of the frozen agent (`pairing` ...
   `end_pairing`): the child plays the pairing's games and exits at its end, the parent
   waits with the frozen state untouched, so no pairing sees what another one did.

An exception in the agent's code is reported as an `error` frame (and its
traceback goes to the log); SystemExit and KeyboardInterrupt end the process,
which the host sees as end of file.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
import json
import os
import resource
import sys
import traceback

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


def isolate_stdio() -> tuple[int, int]:
    """Return private (read, write) protocol fds; fd 0 -> /dev/null, fd 1 -> fd 2."""
    proto_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, PROTOCOL_FD_FLOOR)
    proto_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, PROTOCOL_FD_FLOOR)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


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
        message = f"<the exception's message cannot be shown: str() raised {_plain_text(type(inner).__name__, 'a name')}>"
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


OK = wire.encode({"op": "ok"})
PAIRING_OUTSIDE = "pairing before freeze, or inside another pairing"


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
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


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
        if soft != resource.RLIM_INFINITY:
            left = max(1, int(soft - used))
            resource.setrlimit(resource.RLIMIT_CPU, (left, min(hard, left + 5) if hard != resource.RLIM_INFINITY
                                                     else resource.RLIM_INFINITY))
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


def serve(agent, proto_in: int, proto_out: int, in_pairing: bool = False) -> int:
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
            if op == "act":
                reply = action_frame(agent.act(arrays[0], arrays[1]))
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
                frozen = True
                freeze = getattr(agent, "freeze", None)
                if callable(freeze):
                    freeze()
                reply = OK
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
    return serve(agent, proto_in, proto_out)


if __name__ == "__main__":
    sys.exit(main())
