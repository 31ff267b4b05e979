"""Kernels of the reference opponents: greedy, minimax (alpha-beta) and a seeded UCT oracle.

All randomness comes from a caller's xorshift state, so every choice replays from a seed.
Win conditions are passed as (win code, lo_num, lo_den, hi_num, hi_den): code 0 most,
1 fewest, 2 band with the open interval (lo, hi) of winning shares.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from .bitboard import (
    ONE,
    ZERO,
    advance,
    apply_move,
    bit,
    fill_view,
    flips,
    legal_moves,
    lowest_index,
    next_random,
    nonzero,
    nth_cell,
    popcount,
    random_cell,
    random_playout,
    row,
)

WIN_SCORE = 10_000.0


@njit(cache=True)
def winner_of(mine, theirs, win, lo_num, lo_den, hi_num, hi_den) -> int:
    """1 if `mine` wins, -1 if it loses, 0 a draw, for final counts (exact integer comparisons)."""
    if win == 0:
        return 1 if mine > theirs else (-1 if theirs > mine else 0)
    if win == 1:
        return 1 if mine < theirs else (-1 if theirs < mine else 0)
    total = mine + theirs
    if total == 0:
        return 0
    if mine * lo_den > lo_num * total and mine * hi_den < hi_num * total:
        return 1
    if theirs * lo_den > lo_num * total and theirs * hi_den < hi_num * total:
        return -1
    return 0


@njit(cache=True)
def cell_list(moves, out) -> int:
    """Write the set cells of a bitboard into out; returns how many."""
    n = 0
    for w in range(len(moves)):
        x = moves[w]
        while x != ZERO:
            low = x & (~x + ONE)
            out[n] = w * 64 + lowest_index(low)
            n += 1
            x ^= low
    return n


@njit(cache=True)
def take_best(value, best, ties, state):
    """(take this candidate?, ties so far) for a running argmax whose equal values are drawn
    uniformly by reservoir sampling with the seeded state."""
    if value > best:
        return True, 1
    if value == best:
        ties += 1
        return next_random(state) % np.uint64(ties) == ZERO, ties
    return False, ties


@njit(cache=True)
def greedy_move(own, opp, masks, shifts, nxt, cap, state) -> int:
    """The move flipping the most discs; ties drawn uniformly with the seeded state."""
    cells = np.empty(256, dtype=np.int64)
    n = cell_list(legal_moves(own, opp, masks, shifts, cap), cells)
    best = -1
    best_cell = -1
    ties = 0
    for i in range(n):
        f = popcount(flips(own, opp, cells[i], nxt, cap))
        take, ties = take_best(f, best, ties, state)
        if take:
            best = f
            best_cell = cells[i]
    return best_cell


@njit(cache=True)
def evaluate(own, opp, win, lo_num, lo_den, hi_num, hi_den) -> float:
    """Disc-count evaluation of a non-final position under the win condition, for `own`."""
    mine = popcount(own)
    theirs = popcount(opp)
    if win == 0:
        return float(mine - theirs)
    if win == 1:
        return float(theirs - mine)
    target = 0.5 * (lo_num / lo_den + hi_num / hi_den)
    target = min(max(target, 0.0), 1.0)
    return -100.0 * abs(mine / (mine + theirs) - target)


@njit(cache=True)
def negamax(
    own, opp, placements, depth, alpha, beta, masks, shifts, nxt, cap, turn_limit, win, lo_num, lo_den, hi_num, hi_den
) -> float:
    """Alpha-beta value of the position for the side to move (`own`)."""
    over = turn_limit >= 0 and placements >= turn_limit
    moves = legal_moves(own, opp, masks, shifts, cap)
    if not over and not nonzero(moves):
        over = not nonzero(legal_moves(opp, own, masks, shifts, cap))
    if over:
        return WIN_SCORE * winner_of(popcount(own), popcount(opp), win, lo_num, lo_den, hi_num, hi_den)
    if depth == 0:
        return evaluate(own, opp, win, lo_num, lo_den, hi_num, hi_den)
    if not nonzero(moves):  # forced pass
        return -negamax(
            opp,
            own,
            placements,
            depth - 1,
            -beta,
            -alpha,
            masks,
            shifts,
            nxt,
            cap,
            turn_limit,
            win,
            lo_num,
            lo_den,
            hi_num,
            hi_den,
        )
    best = -math.inf
    for w in range(len(moves)):
        x = moves[w]
        while x != ZERO:
            low = x & (~x + ONE)
            x ^= low
            a, b = apply_move(own, opp, w * 64 + lowest_index(low), nxt, cap)
            v = -negamax(
                b,
                a,
                placements + 1,
                depth - 1,
                -beta,
                -alpha,
                masks,
                shifts,
                nxt,
                cap,
                turn_limit,
                win,
                lo_num,
                lo_den,
                hi_num,
                hi_den,
            )
            if v > best:
                best = v
            if v > alpha:
                alpha = v
            if alpha >= beta:
                return best
    return best


@njit(cache=True)
def minimax_move(
    own, opp, placements, depth, masks, shifts, nxt, cap, turn_limit, win, lo_num, lo_den, hi_num, hi_den, state
) -> int:
    """The best move at `depth` plies; equal values drawn uniformly with the seeded state."""
    cells = np.empty(256, dtype=np.int64)
    n = cell_list(legal_moves(own, opp, masks, shifts, cap), cells)
    best = -math.inf
    best_cell = -1
    ties = 0
    for i in range(n):
        a, b = apply_move(own, opp, cells[i], nxt, cap)
        v = -negamax(
            b,
            a,
            placements + 1,
            depth - 1,
            -math.inf,
            math.inf,
            masks,
            shifts,
            nxt,
            cap,
            turn_limit,
            win,
            lo_num,
            lo_den,
            hi_num,
            hi_den,
        )
        take, ties = take_best(v, best, ties, state)
        if take:
            best = v
            best_cell = cells[i]
    return best_cell


@njit(cache=True)
def _store(arr, i, a):
    for w in range(len(a)):
        arr[i, w] = a[w]


@njit(cache=True)
def mcts_move(
    black,
    white,
    to_move,
    placements,
    iterations,
    masks,
    shifts,
    nxt,
    cap,
    turn_limit,
    win,
    lo_num,
    lo_den,
    hi_num,
    hi_den,
    state,
) -> int:
    """UCT with random playouts; the most visited root child. Deterministic for a state."""
    cap_nodes = iterations + 2
    words = len(black)
    nb = np.zeros((cap_nodes, words), dtype=np.uint64)
    nw = np.zeros((cap_nodes, words), dtype=np.uint64)
    untried = np.zeros((cap_nodes, words), dtype=np.uint64)
    side = np.zeros(cap_nodes, dtype=np.int64)  # who moves at this node
    mover = np.zeros(cap_nodes, dtype=np.int64)  # who moved into this node
    placed = np.zeros(cap_nodes, dtype=np.int64)
    parent = np.full(cap_nodes, -1, dtype=np.int64)
    first_child = np.full(cap_nodes, -1, dtype=np.int64)
    sibling = np.full(cap_nodes, -1, dtype=np.int64)
    move = np.full(cap_nodes, -1, dtype=np.int64)
    terminal = np.zeros(cap_nodes, dtype=np.bool_)
    visits = np.zeros(cap_nodes, dtype=np.float64)
    value = np.zeros(cap_nodes, dtype=np.float64)

    like = black  # the word count of every bitboard row below
    # Root.
    _store(nb, 0, black)
    _store(nw, 0, white)
    side[0] = to_move
    mover[0] = 1 - to_move
    placed[0] = placements
    own = black if to_move == 0 else white
    opp = white if to_move == 0 else black
    root_moves = legal_moves(own, opp, masks, shifts, cap)
    if popcount(root_moves) == 1:
        for w in range(words):
            if root_moves[w] != ZERO:
                return w * 64 + lowest_index(root_moves[w])
    _store(untried, 0, root_moves)
    count = 1
    for _ in range(iterations):
        node = 0
        # Selection: descend while fully expanded.
        while not terminal[node] and not nonzero(row(untried, node, like)) and first_child[node] >= 0:
            best = -1.0
            best_child = -1
            c = first_child[node]
            log_n = math.log(visits[node])
            while c >= 0:
                score = value[c] / visits[c] + 1.4 * math.sqrt(log_n / visits[c])
                if score > best:
                    best = score
                    best_child = c
                c = sibling[c]
            node = best_child
        # Expansion: one untried move.
        if not terminal[node] and nonzero(row(untried, node, like)):
            moves = row(untried, node, like)
            cell = nth_cell(moves, np.int64(next_random(state) % np.uint64(popcount(moves))))
            taken = bit(cell, like)
            for w in range(words):
                untried[node, w] &= ~taken[w]
            b = row(nb, node, like)
            wh = row(nw, node, like)
            s = side[node]
            if s == 0:
                b, wh = apply_move(b, wh, cell, nxt, cap)
            else:
                wh, b = apply_move(wh, b, cell, nxt, cap)
            child = count
            count += 1
            _store(nb, child, b)
            _store(nw, child, wh)
            placed[child] = placed[node] + 1
            mover[child] = s
            move[child] = cell
            parent[child] = node
            sibling[child] = first_child[node]
            first_child[node] = child
            # The side to move at the child, passing automatically when it has no move.
            ns = 1 - s
            o1 = wh if ns == 1 else b
            o2 = b if ns == 1 else wh
            cm = legal_moves(o1, o2, masks, shifts, cap)
            if turn_limit >= 0 and placed[child] >= turn_limit:
                terminal[child] = True
            elif not nonzero(cm):
                cm = legal_moves(o2, o1, masks, shifts, cap)
                if nonzero(cm):
                    ns = s
                else:
                    terminal[child] = True
            side[child] = ns
            if not terminal[child]:
                _store(untried, child, cm)
            node = child
        # Simulation.
        fb, fw, _, _, _ = random_playout(
            row(nb, node, like),
            row(nw, node, like),
            side[node],
            placed[node],
            masks,
            shifts,
            nxt,
            cap,
            turn_limit,
            state,
        )
        result_black = winner_of(popcount(fb), popcount(fw), win, lo_num, lo_den, hi_num, hi_den)
        # Backpropagation, each node scored for the player who moved into it.
        while node >= 0:
            visits[node] += 1.0
            r_node = result_black if mover[node] == 0 else -result_black
            value[node] += 1.0 if r_node > 0 else (0.5 if r_node == 0 else 0.0)
            node = parent[node]
    best_cell = -1
    most = -1.0
    c = first_child[0]
    while c >= 0:
        if visits[c] > most or (visits[c] == most and move[c] < best_cell):
            most = visits[c]
            best_cell = move[c]
        c = sibling[c]
    return best_cell


def monotonic_ns() -> int:
    """The monotonic clock in nanoseconds; under the JIT, libc's clock_gettime called
    natively (see _register_clock), so kernels can time what they do."""
    return time.monotonic_ns()


def _register_clock() -> None:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic, overload

    clock_id = time.CLOCK_MONOTONIC

    @intrinsic
    def _clock_gettime_ns(typingctx):
        def codegen(context, builder, signature, args):
            i32, i64 = ir.IntType(32), ir.IntType(64)
            timespec = ir.LiteralStructType([i64, i64])
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(i32, [i32, timespec.as_pointer()]), "clock_gettime"
            )
            ts = cgutils.alloca_once(builder, timespec)
            builder.call(fn, [ir.Constant(i32, clock_id), ts])
            sec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 0))
            nsec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 1))
            return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

        return types.int64(), codegen

    @overload(monotonic_ns, inline="always")
    def _monotonic_ns():
        def impl():
            return _clock_gettime_ns()

        return impl


_register_clock()


# Seat kinds of `engine_turns`: a reference player's kernel, or AGENT for a seat the engine
# does not hold (an agent over the wire, or any other caller-driven player).
AGENT, RANDOM, GREEDY, MINIMAX, MCTS = -1, 0, 1, 2, 3


@njit(cache=True)
def _view_fits(obs, mask, obstacles) -> bool:
    cells = obstacles.shape[0]
    return obs.shape[1] == 0 or (obs.shape[0] == 3 and obs.shape[1] == cells and mask.shape[0] == cells)


@njit(cache=True)
def engine_turns(
    st,
    meta,
    like,
    masks,
    shifts,
    nxt,
    cap,
    turn_limit,
    first,
    seats,
    states,
    moves_out,
    obstacles,
    obs_black,
    mask_black,
    obs_white,
    mask_white,
) -> int:
    """Play a game's forced passes and its reference players' moves, from the state arrays
    of engine.game.Game, until the game ends or a seat of kind AGENT must move. When
    `first` >= 0 the side to move places there first, and -1 is returned at once, with
    nothing changed, if that is not a legal move.

    seats (int64, 11) packs, per side: kind (0, 1), depth of minimax or iterations of mcts
    (2, 3), the time spent choosing moves in ns, to which this adds (4, 5); then the win
    condition (6-10, as `win_args`). states[side] is the seat's seeded xorshift state. Moves
    go to moves_out (-1 a pass); returns how many (`first` not counted). A move here is exactly the one the
    player's own `act` would choose in the same position with the same state.

    When it stops for an agent, that side's view (observation and legal mask, as
    bitboard.fill_view writes them) goes to its obs/mask pair, unless the pair is empty
    (obs of shape (3, 0)): the caller then reads the position itself.
    """
    # A caller's bug (Game sizes the views), and a numba kernel raises only a class with constant args.
    if not (_view_fits(obs_black, mask_black, obstacles) and _view_fits(obs_white, mask_white, obstacles)):
        raise ValueError("engine_turns: a view is obs (3, cells) and mask (cells,), or empty")
    win, lo_num, lo_den, hi_num, hi_den = seats[6], seats[7], seats[8], seats[9], seats[10]
    if first >= 0:
        if meta[2] >= 0 or (st[2, first >> 6] >> np.uint64(first & 63)) & ONE == ZERO:
            return -1  # not a legal move: nothing changed
        advance(st, meta, first, like, masks, shifts, nxt, cap, turn_limit)
    n = 0
    while meta[2] < 0:
        side = meta[0]
        if meta[3] == 0:
            moves_out[n] = -1
            n += 1
            advance(st, meta, -1, like, masks, shifts, nxt, cap, turn_limit)
            continue
        kind = seats[side]
        if kind == AGENT:
            break
        black = row(st, 0, like)
        white = row(st, 1, like)
        own, opp = black, white
        if side == 1:
            own, opp = white, black
        state = states[side]
        param = seats[2 + side]
        start = monotonic_ns()
        if kind == RANDOM:
            cell = random_cell(row(st, 2, like), state)
        elif kind == GREEDY:
            cell = greedy_move(own, opp, masks, shifts, nxt, cap, state)
        elif kind == MINIMAX:
            cell = minimax_move(
                own,
                opp,
                meta[1],
                param,
                masks,
                shifts,
                nxt,
                cap,
                turn_limit,
                win,
                lo_num,
                lo_den,
                hi_num,
                hi_den,
                state,
            )
        else:
            cell = mcts_move(
                black,
                white,
                side,
                meta[1],
                param,
                masks,
                shifts,
                nxt,
                cap,
                turn_limit,
                win,
                lo_num,
                lo_den,
                hi_num,
                hi_den,
                state,
            )
        seats[4 + side] += monotonic_ns() - start
        moves_out[n] = cell
        n += 1
        advance(st, meta, cell, like, masks, shifts, nxt, cap, turn_limit)
    if meta[2] < 0:
        if meta[0] == 0:
            if obs_black.shape[1]:
                fill_view(st, 0, obstacles, obs_black, mask_black)
        elif obs_white.shape[1]:
            fill_view(st, 1, obstacles, obs_white, mask_white)
    return n


@njit(cache=True)
def reference_records(
    st0, meta0, like, masks, shifts, nxt, cap, turn_limit, obstacles, seats, states, out, moves
) -> None:
    """Play len(states) whole games from the opening (st0, meta0) between the two reference
    seats of `seats` (as `engine_turns` packs them), game i with the xorshift states
    states[i] (2, 1): out[i] = (the winner as `winner_of` gives it for black, the plies,
    black's discs, white's discs, the termination as meta[2] holds it), and game i's moves in
    moves[i, :plies] (-1 a pass). Each game is the one `engine_turns` plays from the same
    states; the time spent choosing moves is charged to seats[4], seats[5]."""
    no_obs = np.empty((3, 0), dtype=np.float32)
    no_mask = np.empty(0, dtype=np.int8)
    for i in range(states.shape[0]):
        st = st0.copy()
        meta = meta0.copy()
        plies = engine_turns(
            st,
            meta,
            like,
            masks,
            shifts,
            nxt,
            cap,
            turn_limit,
            -1,
            seats,
            states[i],
            moves[i],
            obstacles,
            no_obs,
            no_mask,
            no_obs,
            no_mask,
        )
        winner, black, white = final_result(st, like, seats)
        out[i, 0] = winner
        out[i, 1] = plies
        out[i, 2] = black
        out[i, 3] = white
        out[i, 4] = meta[2]


@njit(cache=True)
def final_result(st, like, seats) -> tuple:
    """(the winner as `winner_of` gives it for black, black's discs, white's discs) of the
    finished position in `st`, under the win condition packed in `seats` (6-10)."""
    black = popcount(row(st, 0, like))
    white = popcount(row(st, 1, like))
    return winner_of(black, white, seats[6], seats[7], seats[8], seats[9], seats[10]), black, white
