"""An agent's moves played natively: its act frame sent, its reply read and parsed, its move
played and the next view written, for a whole stretch of a game in one kernel call.

An agent that answers `act` in tens of microseconds leaves the arena's own Python around
each move (building the frame, reading the reply, judging the move, stepping the engine) as
the larger part of a round. This kernel does the common case natively and nothing else: the
frame written whole, one reply that is exactly the runner's `action` frame for a cell on the
board, that cell legal, the deadlines, the pace and the CPU check not due. Anything else - a
write that does not go through at once, output on stderr, a reply in any other form, the
deadline passing, an illegal cell, the pace or a CPU check due, a seat that is not a live
sandboxed agent - stops the kernel where it is, and `AgentHandle` finishes that act in Python
exactly as `act` would have (`resume_act`, `after_native_act`). The enforcement stays in one
place: what the kernel measures is what `act` measures (from before the write to after the
read), with the same deadlines.

Budget self-play goes further (`self_play_turns`, driven by grader/self_play.py): game after
game, each followed by its outcome frame and the runner's exact `ok`, stopping for Python in
the same way.

The system calls are libc's `write`, `read` and `poll`, called natively through numba
intrinsics (as `engine.search.monotonic_ns` calls `clock_gettime`), so the kernel stays
cacheable; without the JIT the same functions run through `os` and `select`.
"""

from __future__ import annotations

import os
import select

import numpy as np
from numba import njit

from engine.search import engine_turns, final_result, monotonic_ns
from grader import protocol

# Fields of a seat's row of `io` (int64 (3, FIELDS); rows 0 and 1 are black and white). The
# session's accounting (COUNT .. LEGAL) is kept in the row ACCOUNT names: one agent holding
# both seats (self-play) has one session.
(NATIVE, STDIN, STDOUT, STDERR, FRAME_LEN, HARD_NS, ENV_DEADLINE_NS, SOFT_NS, PACE_STOP_NS, PACE_MIN,
 NEXT_CPU_NS, ACCOUNT, COUNT, TOTAL_NS, MAX_NS, SOFT_OVERRUNS, LEGAL, GAME_ACTS, GAME_NS, GAME_MAX_NS,
 CELL, SENT, PENDING, T0, CALL_HARD_NS, CALL_NS) = range(26)
FIELDS = 26
# The row of the whole call, GAME: MOVES (the moves of the game under way), GAMES (self-play
# games finished), OUTCOME_LEN (the length of the last outcome frame).
GAME = 2
MOVES, GAMES, OUTCOME_LEN = 0, 1, 2
# What stopped the kernel: the game is over (in self-play: all its games are); the side to
# move is Python's to ask; an act is under way (frame sent in part or whole, reply bytes in the
# read buffer); an act is done and its cell needs Python's judgement (illegal, pace, CPU
# check). In self-play also: the outcome call of the last finished game is under way (as an
# act under way), or it is done and the CPU check is due.
DONE, ASK, RESUME, ACTED, HEARING, HEARD = 0, 1, 2, 3, 4, 5

POLLIN = select.POLLIN
REPLY_BYTES = 64  # an action reply is 8 + 26..31 bytes; anything longer goes to Python
ACTION_PREFIX = np.frombuffer(b'{"op":"action","action":', dtype=np.uint8)
# The runner's reply to an outcome, byte for byte; and the outcome message of a self-play game
# as protocol.encode writes it: {"op":"outcome","outcome":{"winner":W,"black_discs":B,
# "white_discs":N,"your_color":"both"}}, in pieces around the winner and the counts.
OK_REPLY = np.frombuffer(protocol.encode({"op": protocol.OP_OK}), dtype=np.uint8)
OUTCOME_HEAD = np.frombuffer(b'{"op":"outcome","outcome":{"winner":"', dtype=np.uint8)
OUTCOME_WINNERS = np.frombuffer(b"whitedraw black", dtype=np.uint8)  # 5 bytes from 5 * (winner_of + 1)
OUTCOME_BLACK = np.frombuffer(b'","black_discs":', dtype=np.uint8)
OUTCOME_WHITE = np.frombuffer(b',"white_discs":', dtype=np.uint8)
OUTCOME_TAIL = np.frombuffer(b',"your_color":"both"}}', dtype=np.uint8)
OUTCOME_BYTES = 8 + 128  # the longest is 8 + 96


# -- system calls ---------------------------------------------------------------------
def sys_write(fd: int, buf: np.ndarray, start: int, n: int) -> int:
    """write(2) of buf[start:start + n]; -1 on any error (the caller's Python finds out which)."""
    try:
        return os.write(fd, buf[start:start + n].tobytes())
    except OSError:
        return -1


def sys_read(fd: int, buf: np.ndarray, start: int, n: int) -> int:
    """read(2) into buf[start:start + n]; -1 on any error."""
    try:
        data = os.read(fd, n)
    except OSError:
        return -1
    buf[start:start + len(data)] = np.frombuffer(data, dtype=np.uint8)
    return len(data)


def sys_poll(pfds: np.ndarray, nfds: int, timeout_ms: int) -> int:
    """poll(2) on `nfds` struct pollfd laid out in int32 pairs (fd, events | revents << 16)."""
    poller = select.poll()
    for i in range(nfds):
        pfds[2 * i + 1] &= 0xFFFF
        if pfds[2 * i] >= 0:
            poller.register(int(pfds[2 * i]), int(pfds[2 * i + 1]))
    try:
        ready = poller.poll(timeout_ms)
    except OSError:
        return -1
    for fd, revents in ready:
        for i in range(nfds):
            if pfds[2 * i] == fd:
                pfds[2 * i + 1] |= revents << 16
    return len(ready)


def _register_syscalls() -> None:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic, overload

    i8p, i32, i64 = ir.IntType(8).as_pointer(), ir.IntType(32), ir.IntType(64)

    def buffer_call(name: str):
        @intrinsic
        def call(typingctx, fd, buf, start, n):
            def codegen(context, builder, signature, args):
                fd_, buf_, start_, n_ = args
                data = context.make_array(signature.args[1])(context, builder, buf_).data
                ptr = builder.bitcast(builder.gep(data, [start_]), i8p)
                fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i32, i8p, i64]), name)
                return builder.call(fn, [builder.trunc(fd_, i32), ptr, n_])
            return types.int64(types.int64, buf, types.int64, types.int64), codegen
        return call

    native_write, native_read = buffer_call("write"), buffer_call("read")

    @intrinsic
    def native_poll(typingctx, pfds, nfds, timeout_ms):
        def codegen(context, builder, signature, args):
            pfds_, nfds_, timeout_ = args
            data = context.make_array(signature.args[0])(context, builder, pfds_).data
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i8p, i64, i32]), "poll")
            result = builder.call(fn, [builder.bitcast(data, i8p), nfds_, builder.trunc(timeout_, i32)])
            return builder.sext(result, i64)
        return types.int64(pfds, types.int64, types.int64), codegen

    @overload(sys_write, inline="always")
    def _write(fd, buf, start, n):
        return lambda fd, buf, start, n: native_write(fd, buf, start, n)

    @overload(sys_read, inline="always")
    def _read(fd, buf, start, n):
        return lambda fd, buf, start, n: native_read(fd, buf, start, n)

    @overload(sys_poll, inline="always")
    def _poll(pfds, nfds, timeout_ms):
        def impl(pfds, nfds, timeout_ms):
            for i in range(nfds):
                pfds[2 * i + 1] &= 0xFFFF
            return native_poll(pfds, nfds, timeout_ms)
        return impl


_register_syscalls()


# -- the kernel ---------------------------------------------------------------------------
@njit(cache=True)
def parse_action(buf, start, end, cells) -> int:
    """The cell of a reply header that is exactly `{"op":"action","action":N}` with N a cell
    written as JSON writes it (no sign, no leading zero); -1 for anything else."""
    prefix = ACTION_PREFIX.shape[0]
    digits = end - start - prefix - 1
    if digits < 1 or digits > 9 or buf[end - 1] != 125:  # "}"
        return -1
    for i in range(prefix):
        if buf[start + i] != ACTION_PREFIX[i]:
            return -1
    if digits > 1 and buf[start + prefix] == 48:  # a leading "0"
        return -1
    cell = 0
    for i in range(start + prefix, end - 1):
        d = np.int64(buf[i]) - 48
        if d < 0 or d > 9:
            return -1
        cell = cell * 10 + d
    return cell if cell < cells else -1


@njit(cache=True)
def _u32(buf, at) -> int:
    return np.int64(buf[at]) | np.int64(buf[at + 1]) << 8 | np.int64(buf[at + 2]) << 16 | np.int64(buf[at + 3]) << 24


@njit(cache=True)
def _await_reply(row, rbuf, pfds, deadline) -> int:
    """Read one reply frame from the seat's stdout into `rbuf`: its end (8 + header length)
    when exactly one whole frame without a body came before `deadline`, else -1 and Python
    reads on (row[PENDING] says how many bytes are in `rbuf`)."""
    got = 0
    end = -1
    while True:
        remaining = deadline - monotonic_ns()
        if remaining <= 0:
            break
        pfds[0] = row[STDOUT]
        pfds[1] = POLLIN
        pfds[2] = row[STDERR]
        pfds[3] = POLLIN
        ready = sys_poll(pfds, 2, remaining // 1_000_000 + 1)
        if ready < 0 or (pfds[3] >> 16) != 0:
            break  # interrupted, or output on stderr: Python drains it
        if ready == 0 or (pfds[1] >> 16) == 0:
            continue
        got_now = sys_read(row[STDOUT], rbuf, got, rbuf.shape[0] - got)
        if got_now <= 0:
            break
        got += got_now
        if got < 8:
            continue
        head = _u32(rbuf, 0)
        if _u32(rbuf, 4) != 0 or 8 + head > rbuf.shape[0] or got > 8 + head:
            break
        if got == 8 + head:
            end = got
            break
    row[PENDING] = got
    return end


@njit(cache=True)
def _put(buf, at, piece) -> int:
    buf[at:at + piece.shape[0]] = piece
    return at + piece.shape[0]


@njit(cache=True)
def _put_int(buf, at, value) -> int:
    digits = 1
    while value >= 10 ** digits:
        digits += 1
    for i in range(digits):
        buf[at + digits - 1 - i] = 48 + value % 10
        value //= 10
    return at + digits


@njit(cache=True)
def outcome_frame(buf, winner, black, white) -> int:
    """Write the frame of a self-play game's outcome (winner as `winner_of` gives it for
    black) into `buf`, exactly as protocol.encode writes it; returns its length."""
    at = _put(buf, 8, OUTCOME_HEAD)
    word = 5 * (winner + 1)
    at = _put(buf, at, OUTCOME_WINNERS[word:word + (4 if winner == 0 else 5)])
    at = _put_int(buf, _put(buf, at, OUTCOME_BLACK), black)
    at = _put_int(buf, _put(buf, at, OUTCOME_WHITE), white)
    at = _put(buf, at, OUTCOME_TAIL)
    head = at - 8
    for i in range(4):
        buf[i] = (head >> (8 * i)) & 255
        buf[4 + i] = 0
    return at


@njit(cache=True)
def _stop(io, n, status) -> int:
    io[GAME, MOVES] = n
    return status


@njit(cache=True, nogil=True)
def agent_turns(st, meta, like, masks, shifts, nxt, cap, turn_limit, seats, states, moves, obstacles,
                obs_black, mask_black, obs_white, mask_white, frame_black, frame_white, io, rbuf, pfds) -> int:
    """Play a game on from a position where an agent is to move and its view is written:
    send its frame, read its move, play it and the engine's turns after it (as
    `engine.search.engine_turns`), until the game ends or something needs Python.

    The position and tables are those of `engine.Game.native_args()`; moves go to `moves`
    (io[GAME, MOVES] says how many); each seat's row of `io` carries its pipes, limits and
    accounting (the field names above). Returns DONE, ASK, RESUME or ACTED, the side
    concerned being the side to move.
    """
    n = 0
    cells = obstacles.shape[0]
    while True:
        side = meta[0]
        row = io[side]
        if row[NATIVE] == 0 or moves.shape[0] - n < 2 * cells + 3:
            return _stop(io, n, ASK)
        frame = frame_black if side == 0 else frame_white
        mask = mask_black if side == 0 else mask_white
        t0 = monotonic_ns()
        row[T0] = t0
        row[PENDING] = 0
        written = sys_write(row[STDIN], frame, 0, row[FRAME_LEN])
        if written != row[FRAME_LEN]:
            row[SENT] = written if written > 0 else 0
            return _stop(io, n, RESUME)
        row[SENT] = written
        end = _await_reply(row, rbuf, pfds, min(t0 + row[HARD_NS], row[ENV_DEADLINE_NS]))
        cell = parse_action(rbuf, 8, end, cells) if end > 0 else -1
        if cell < 0:
            return _stop(io, n, RESUME)
        t1 = monotonic_ns()
        elapsed = t1 - t0
        account = io[row[ACCOUNT]]
        account[COUNT] += 1
        account[TOTAL_NS] += elapsed
        account[MAX_NS] = max(account[MAX_NS], elapsed)
        if elapsed > row[SOFT_NS]:
            account[SOFT_OVERRUNS] += 1
        row[GAME_ACTS] += 1
        row[GAME_NS] += elapsed
        row[GAME_MAX_NS] = max(row[GAME_MAX_NS], elapsed)
        row[CELL] = cell
        over_pace = account[COUNT] >= row[PACE_MIN] and account[TOTAL_NS] > row[PACE_STOP_NS] * account[COUNT]
        if mask[cell] == 0 or over_pace or t1 >= row[NEXT_CPU_NS]:
            return _stop(io, n, ACTED)
        played = engine_turns(st, meta, like, masks, shifts, nxt, cap, turn_limit, cell, seats, states,
                              moves[n + 1:], obstacles, obs_black, mask_black, obs_white, mask_white)
        if played < 0:  # cannot be (the mask said legal); Python judges it and finds out
            return _stop(io, n, ACTED)
        account[LEGAL] += 1
        moves[n] = cell
        n += 1 + played
        if meta[2] >= 0:
            return _stop(io, n, DONE)


@njit(cache=True)
def _is_ok(rbuf, end) -> bool:
    if end != OK_REPLY.shape[0]:
        return False
    for i in range(end):
        if rbuf[i] != OK_REPLY[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def self_play_turns(st0, meta0, st, meta, like, masks, shifts, nxt, cap, turn_limit, seats, states, moves,
                    obstacles, obs, mask, frame, io, rbuf, pfds, oframe, results) -> int:
    """Play an agent's self-play games one after another, each from the opening (st0, meta0)
    in the game arrays st and meta, and send each its outcome, until results.shape[0] games
    are played and heard or something needs Python.

    A game is played as `agent_turns` plays it, the agent on both seats (io rows 0 and 1 alike,
    accounted in row 0); each finished game's (winner as `winner_of` gives it for black, plies,
    black's discs, white's discs) goes to `results`, and io[GAME, GAMES] says how many. Its
    outcome frame is then written (into `oframe`) and the reply must be exactly the runner's
    `ok`: the call timed and bounded as `AgentHandle.observe_outcome` times it (CALL_HARD_NS,
    the environment's deadline), its time added to CALL_NS. Returns DONE when all are heard;
    ASK, RESUME or ACTED with the game under way (its moves so far in `moves`, io[GAME, MOVES]
    of them); HEARING when the last finished game's outcome call stopped before a proper
    `ok` (SENT bytes of io[GAME, OUTCOME_LEN] written, PENDING bytes read); HEARD when it was
    heard and the CPU check is due."""
    agent = io[0]
    for g in range(results.shape[0]):
        st[:] = st0
        meta[:] = meta0
        for side in range(2):
            io[side, GAME_ACTS] = 0
            io[side, GAME_NS] = 0
            io[side, GAME_MAX_NS] = 0
        io[GAME, MOVES] = 0
        plies = engine_turns(st, meta, like, masks, shifts, nxt, cap, turn_limit, -1, seats, states, moves,
                             obstacles, obs, mask, obs, mask)
        if meta[2] < 0:
            status = agent_turns(st, meta, like, masks, shifts, nxt, cap, turn_limit, seats, states, moves[plies:],
                                 obstacles, obs, mask, obs, mask, frame, frame, io, rbuf, pfds)
            plies += io[GAME, MOVES]
            io[GAME, MOVES] = plies
            if status != DONE:
                return status
        winner, black, white = final_result(st, like, seats)
        results[g, 0] = winner
        results[g, 1] = plies
        results[g, 2] = black
        results[g, 3] = white
        io[GAME, GAMES] = g + 1
        length = outcome_frame(oframe, winner, black, white)
        io[GAME, OUTCOME_LEN] = length
        t0 = monotonic_ns()
        agent[T0] = t0
        agent[PENDING] = 0
        written = sys_write(agent[STDIN], oframe, 0, length)
        agent[SENT] = written if written > 0 else 0
        if written != length:
            return HEARING
        end = _await_reply(agent, rbuf, pfds, min(t0 + agent[CALL_HARD_NS], agent[ENV_DEADLINE_NS]))
        if not _is_ok(rbuf, end):
            return HEARING
        t1 = monotonic_ns()
        agent[CALL_NS] += t1 - t0
        if t1 >= agent[NEXT_CPU_NS]:
            return HEARD
    return DONE


# -- the Python side ----------------------------------------------------------------------
_NO_FRAME = np.zeros(0, dtype=np.uint8)


class NativeDriver:
    """The native play of one game's agent seats: loads each seat's row before a kernel call,
    and afterwards hands back the moves, the timings and whatever needs Python.

    A seat takes part when it has `native_load` (an `AgentHandle` with a sandbox) and says
    yes; any other seat, and any moment a seat says no, is Python's (`run` returns it to be
    asked)."""

    def __init__(self, game, seats, players: list, shown: list, flat: list):
        self.game, self.seats, self.players = game, seats, players
        self.shown, self.flat = shown, flat
        self.same_agent = players[0] is players[1]  # one session on both seats, accounted in black's row
        cells = game.geo.cells
        self.io = np.zeros((3, FIELDS), dtype=np.int64)
        self.rbuf = np.zeros(REPLY_BYTES, dtype=np.uint8)
        self.pfds = np.zeros(4, dtype=np.int32)
        self.moves = np.empty(6 * cells + 16, dtype=np.int64)
        self.outcome = np.zeros(OUTCOME_BYTES, dtype=np.uint8)  # a self-play outcome frame
        self.args = game.native_args()

    @classmethod
    def for_game(cls, game, seats, players: list, shown: list, flat: list) -> "NativeDriver | None":
        """A driver when some seat could be played natively, else None."""
        if not any(getattr(p, "plays_natively", False) for p in players):
            return None
        return cls(game, seats, players, shown, flat)

    def _load(self) -> list:
        io = self.io
        io[:] = 0
        frames = [_NO_FRAME, _NO_FRAME]
        for side, player in enumerate(self.players):
            if side == 1 and self.same_agent:
                io[1] = io[0]
                frames[1] = frames[0]
                continue
            load = getattr(player, "native_load", None)
            frame = None if load is None else load(io[side], self.shown[side][0])
            if frame is not None:
                io[side, ACCOUNT] = side
                frames[side] = frame
            else:
                io[side, NATIVE] = 0
        return frames

    def run(self, sides: tuple) -> tuple[int, tuple | None]:
        """Play natively from the current position (an agent to move, its view written).

        Returns (the side to move, or -1 when the game is over; None when Python must ask that
        side itself, or the (action, fault) of an act the kernel began or finished for it).
        The acts the kernel timed are added to `sides` (the game's SideStats)."""
        frames = self._load()
        io = self.io
        (st, meta, like, masks, shifts, nxt, cap, turn_limit, obstacles) = self.args
        (obs_black, mask_black), (obs_white, mask_white) = self.flat
        status = agent_turns(st, meta, like, masks, shifts, nxt, cap, turn_limit, self.seats.packed,
                             self.seats.states, self.moves, obstacles, obs_black, mask_black, obs_white,
                             mask_white, frames[0], frames[1], io, self.rbuf, self.pfds)
        return self._after(status, sides)

    def self_play(self, results: np.ndarray) -> int:
        """Play self-play games natively, this driver's game restarted from its opening for
        each, and hear their outcomes (`self_play_turns`); returns its status. The finished
        games are results[:self.games]; a game it stopped in is `resume_game`'s."""
        frame = self._load()[0]
        io = self.io
        st, meta, like, masks, shifts, nxt, cap, turn_limit, obstacles = self.args
        obs, mask = self.flat[0]
        io[GAME, GAMES] = 0
        st0, meta0 = self.game.opening_state()
        status = self_play_turns(st0, meta0, st, meta, like, masks, shifts, nxt, cap, turn_limit,
                                 self.seats.packed, self.seats.states, self.moves, obstacles, obs, mask, frame,
                                 io, self.rbuf, self.pfds, self.outcome, results)
        if io[0, NATIVE] and status in (DONE, HEARING, HEARD):  # else resume_game stores it
            self.players[0].native_store(io[0])
        return status

    @property
    def games(self) -> int:
        """Self-play games the last `self_play` call finished."""
        return int(self.io[GAME, GAMES])

    def outcome_call(self) -> tuple[bytes, int, bytes, int]:
        """The outcome call the last `self_play` stopped in (HEARING): (its frame, bytes of it
        sent, reply bytes read, its start as time.monotonic_ns)."""
        row = self.io[0]
        return (self.outcome[:int(self.io[GAME, OUTCOME_LEN])].tobytes(), int(row[SENT]),
                self.rbuf[:int(row[PENDING])].tobytes(), int(row[T0]))

    def resume_game(self, status: int, sides: tuple) -> tuple[int, tuple | None]:
        """After `self_play` stopped in a game (ASK, RESUME, ACTED): that game's moves so far
        become the game's record, and as `run` returns."""
        self.game.restart_native()
        return self._after(status, sides)

    def _after(self, status: int, sides: tuple) -> tuple[int, tuple | None]:
        io = self.io
        self.game.record_native(self.moves, int(io[GAME, MOVES]), self.seats)
        for side, stats in enumerate(sides):
            acts = int(io[side, GAME_ACTS])
            if acts:
                stats.acts += acts
                stats.act_seconds += int(io[side, GAME_NS]) * 1e-9
                stats.max_act_seconds = max(stats.max_act_seconds, int(io[side, GAME_MAX_NS]) * 1e-9)
        for side, player in enumerate(self.players[:1] if self.same_agent else self.players):
            if io[side, NATIVE]:
                player.native_store(io[side])
        if status == DONE:
            return -1, None
        turn = self.game.side_to_move
        if status == ASK:
            return turn, None
        player, row = self.players[turn], io[turn]
        if status == ACTED:
            return turn, player.after_native_act(int(row[CELL]))
        action, fault, elapsed = player.resume_act(int(row[SENT]), self.rbuf[:int(row[PENDING])].tobytes(),
                                                   int(row[T0]))
        stats = sides[turn]
        stats.acts += 1
        stats.act_seconds += elapsed
        stats.max_act_seconds = max(stats.max_act_seconds, elapsed)
        return turn, (action, fault)
