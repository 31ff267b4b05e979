"""numba kernels over multi-word bitboards.

A side's discs are a tuple of 1 to 3 uint64 words (as many as the board needs); cell i
(= row * cols + col, no padding) is bit i & 63 of word i >> 6, so boards up to 12x12
(144 cells) fit, and a 64-cell board pays for one word: numba compiles each kernel once
per tuple length. A step in a
direction is a shift by `dr * cols + dc` across the words; a column wrap is cut by a
per-direction mask of the cells such a step may land on (`masks[1 + d]`), and anything
past the last cell is cut by the valid-cell mask (`masks[0]`). Flips walk precomputed rays
(`nxt[cell, d]`, -1 at the edge or an obstacle).

Direction order (also the tie order of the `longest` rule): NW, N, NE, W, E, SW, S, SE.
Capture rules are dispatched by their explicit code (engine.rules.CAPTURE_RULES), through
the kernels' copy of that table below (CAP_DIRECTIONS, CAP_RUN_LIMIT, CAP_LONGEST).

Everything here must give identical results with NUMBA_DISABLE_JIT=1 (numpy scalars), so
the arithmetic sticks to uint64 shifts, masks and comparisons: no overflowing multiplies.
"""

from __future__ import annotations

import numpy as np
from numba import njit

U64 = np.uint64
ZERO = np.uint64(0)
ONE = np.uint64(1)
DIRS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
NO_LIMIT = 1 << 20
# The kernels' copy of engine.rules.CAPTURE_RULES, indexed by capture code: direction mask
# (bit d is direction d), longest run flipped, longest-run-only. It is written out here, not
# built from the table, because numba's cache is keyed by this file's source alone: a table
# change must edit this file to recompile. tests/engine/test_registries.py keeps them equal.
CAP_DIRECTIONS = np.array([0xFF, 0x5A, 0xA5, 0xFF, 0xFF, 0xFF], dtype=np.int64)
CAP_RUN_LIMIT = np.array([NO_LIMIT, NO_LIMIT, NO_LIMIT, 1, 2, NO_LIMIT], dtype=np.int64)
CAP_LONGEST = np.array([False, False, False, False, False, True])


def words_for(cells: int) -> int:
    """How many 64-bit words a board of `cells` cells takes (1 to 3)."""
    return (cells + 63) // 64


def geometry(rows: int, cols: int, obstacles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(masks uint64 (9, words), shifts int64 (8,), nxt int32 (cells, 8)) for a layout."""
    walls = {(int(r), int(c)) for r, c in obstacles}
    masks = np.zeros((9, words_for(rows * cols)), dtype=np.uint64)
    shifts = np.array([dr * cols + dc for dr, dc in DIRS], dtype=np.int64)
    nxt = np.full((rows * cols, 8), -1, dtype=np.int32)

    def setbit(row: int, i: int) -> None:
        masks[row, i >> 6] |= np.uint64(1) << np.uint64(i & 63)

    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            if (r, c) not in walls:
                setbit(0, i)
            for d, (dr, dc) in enumerate(DIRS):
                # A step in direction d lands on (r, c) from (r - dr, c - dc): no column wrap.
                if 0 <= c - dc < cols:
                    setbit(1 + d, i)
                rr, cc = r + dr, c + dc
                if 0 <= rr < rows and 0 <= cc < cols and (rr, cc) not in walls:
                    nxt[i, d] = rr * cols + cc
    return masks, shifts, nxt


def to_words(cells, nwords: int) -> tuple:
    """A bitboard of `nwords` words from an iterable of cell indices."""
    words = [0] * nwords
    for i in cells:
        words[i >> 6] |= 1 << (i & 63)
    return tuple(np.uint64(w) for w in words)


def words(t) -> tuple:
    """Normalise a bitboard returned to Python (numba boxes uint64 as int) back to uint64 words."""
    return tuple(np.uint64(x) for x in t)


def from_words(a: tuple) -> list[int]:
    """Cell indices set in a bitboard."""
    out = []
    for w in range(len(a)):
        x = int(a[w])
        while x:
            low = x & -x
            out.append(w * 64 + low.bit_length() - 1)
            x ^= low
    return out


def _words_to_int(a) -> int:
    return sum(int(w) << (64 * i) for i, w in enumerate(a))


def _int_to_words(v: int, n: int) -> tuple:
    return tuple(np.uint64((v >> (64 * i)) & 0xFFFFFFFFFFFFFFFF) for i in range(n))


# Tuple-producing primitives. Each has a plain-Python body (used with NUMBA_DISABLE_JIT=1)
# and a numba overload generated for 1, 2 and 3 words, so a 64-cell board pays for one word.


def step(a, s):
    """Shift a bitboard by s cells (s > 0 towards higher indices); 0 < |s| < 64."""
    v, s = _words_to_int(a), int(s)
    return _int_to_words(v << s if s > 0 else v >> -s, len(a))


def band(a, b):
    return tuple(x & y for x, y in zip(a, b))


def bor(a, b):
    return tuple(x | y for x, y in zip(a, b))


def bandnot(a, b):
    return tuple(x & ~y for x, y in zip(a, b))


def zeros(like):
    return tuple(ZERO for _ in like)


def bit(i, like):
    """The one-cell bitboard of cell i, with as many words as `like`."""
    return _int_to_words(1 << int(i), len(like))


def row(masks, r, like):
    """Row r of a (k, words) mask array as a bitboard with as many words as `like`."""
    return tuple(masks[r, w] for w in range(len(like)))


def _compile(src: str, name: str):
    scope = {"np": np, "ZERO": ZERO, "ONE": ONE}
    exec(src, scope)
    return scope[name]


def _tup(items) -> str:
    return "(" + ", ".join(items) + ",)"


def _step_src(n: int) -> str:
    left = ["a[0] << sl"] + [f"(a[{i}] << sl) | (a[{i - 1}] >> sr)" for i in range(1, n)]
    right = [f"(a[{i}] >> sl) | (a[{i + 1}] << sr)" for i in range(n - 1)] + [f"a[{n - 1}] >> sl"]
    return (
        "def impl(a, s):\n"
        "    if s > 0:\n"
        "        sl = np.uint64(s)\n        sr = np.uint64(64 - s)\n"
        f"        return {_tup(left)}\n"
        "    sl = np.uint64(-s)\n    sr = np.uint64(64 + s)\n"
        f"    return {_tup(right)}\n"
    )


def _binary_src(op: str, n: int) -> str:
    return f"def impl(a, b):\n    return {_tup(op.format(i=i) for i in range(n))}\n"


def _bit_src(n: int) -> str:
    lines = ["def impl(i, like):", "    b = ONE << np.uint64(i & 63)", "    w = i >> 6"]
    for k in range(n):
        words = ["b" if j == k else "ZERO" for j in range(n)]
        lines.append(f"    if w == {k}:\n        return {_tup(words)}")
    lines.append(f"    return {_tup(['ZERO'] * n)}")
    return "\n".join(lines) + "\n"


def _register_overloads() -> None:
    from numba.extending import overload

    def table(make_src) -> dict:
        return {n: _compile(make_src(n), "impl") for n in (1, 2, 3)}

    steps = table(_step_src)
    ands = table(lambda n: _binary_src("a[{i}] & b[{i}]", n))
    ors = table(lambda n: _binary_src("a[{i}] | b[{i}]", n))
    andnots = table(lambda n: _binary_src("a[{i}] & ~b[{i}]", n))
    zero_tuples = table(lambda n: f"def impl(like):\n    return {_tup(['ZERO'] * n)}\n")
    bits = table(_bit_src)
    rows = table(lambda n: "def impl(masks, r, like):\n    return " + _tup(f"masks[r, {w}]" for w in range(n)) + "\n")

    # The overload's signature must match the implementation's, hence one small function each.
    @overload(step, inline="always")
    def _step(a, s):
        return steps.get(len(a))

    @overload(band, inline="always")
    def _band(a, b):
        return ands.get(len(a))

    @overload(bor, inline="always")
    def _bor(a, b):
        return ors.get(len(a))

    @overload(bandnot, inline="always")
    def _bandnot(a, b):
        return andnots.get(len(a))

    @overload(zeros, inline="always")
    def _zeros(like):
        return zero_tuples.get(len(like))

    @overload(bit, inline="always")
    def _bit(i, like):
        return bits.get(len(like))

    @overload(row, inline="always")
    def _row(masks, r, like):
        return rows.get(len(like))


_register_overloads()


def _register_bit_intrinsics() -> None:
    """popcount64 and lowest_index as single LLVM instructions (ctpop, cttz) under the JIT."""
    from numba.core import types
    from numba.extending import intrinsic, overload

    @intrinsic
    def _ctpop(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.zext(builder.ctpop(args[0]), context.get_value_type(types.int64))

        return types.int64(types.uint64), codegen

    @intrinsic
    def _cttz(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.zext(
                builder.cttz(args[0], context.get_constant(types.boolean, True)), context.get_value_type(types.int64)
            )

        return types.int64(types.uint64), codegen

    @overload(popcount64, inline="always")
    def _popcount64(x):
        def impl(x):
            return _ctpop(np.uint64(x))

        return impl

    @overload(lowest_index, inline="always")
    def _lowest_index(x):
        def impl(x):
            return _cttz(np.uint64(x))

        return impl


@njit(cache=True)
def nonzero(a) -> bool:
    acc = ZERO
    for w in a:
        acc |= w
    return acc != ZERO


def popcount64(x) -> int:
    """Set bits of one word (the CPU's popcount under the JIT; see _register_bit_intrinsics)."""
    return int(x).bit_count()


@njit(cache=True)
def popcount(a) -> int:
    n = 0
    for w in a:
        n += popcount64(w)
    return n


@njit(cache=True)
def testbit(a, i) -> bool:
    return ((a[i >> 6] >> np.uint64(i & 63)) & ONE) != ZERO


@njit(cache=True)
def uses_direction(cap, d) -> bool:
    return (CAP_DIRECTIONS[cap] >> d) & 1 == 1


@njit(cache=True)
def run_limit(cap) -> int:
    return CAP_RUN_LIMIT[cap]


@njit(cache=True)
def legal_moves(own, opp, masks, shifts, cap):
    """Cells where `own` may place: each flips at least one run under capture rule `cap`."""
    empty = bandnot(row(masks, 0, own), bor(own, opp))
    limit = run_limit(cap)
    moves = zeros(own)
    for d in range(8):
        if not uses_direction(cap, d):
            continue
        s = shifts[d]
        dm = row(masks, 1 + d, own)
        o = band(opp, dm)
        e = band(empty, dm)
        t = band(step(own, s), o)
        n = 1
        while nonzero(t) and n <= limit:
            st = step(t, s)
            moves = bor(moves, band(st, e))
            t = band(st, o)
            n += 1
    return moves


@njit(cache=True)
def flips(own, opp, cell, nxt, cap):
    """The discs a placement of `own` at `cell` flips (empty if the move is illegal)."""
    limit = run_limit(cap)
    longest = CAP_LONGEST[cap]
    f = zeros(own)
    best = zeros(own)
    best_len = 0
    for d in range(8):
        if not uses_direction(cap, d):
            continue
        run = zeros(own)
        c = nxt[cell, d]
        n = 0
        while c >= 0 and testbit(opp, c):
            run = bor(run, bit(c, own))
            n += 1
            c = nxt[c, d]
        if n == 0 or c < 0 or n > limit or not testbit(own, c):
            continue
        if not longest:
            f = bor(f, run)
        elif n > best_len:  # strict: a tie keeps the earlier direction
            best_len = n
            best = run
    if longest:
        return best
    return f


@njit(cache=True)
def apply_move(own, opp, cell, nxt, cap):
    """(own, opp) after `own` places at `cell`; the caller knows the move is legal."""
    f = flips(own, opp, cell, nxt, cap)
    return bor(bor(own, f), bit(cell, own)), bandnot(opp, f)


@njit(cache=True)
def next_random(state) -> np.uint64:
    """xorshift64 on a 1-element uint64 array (never zero)."""
    x = state[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    state[0] = x
    return x


def lowest_index(x) -> int:
    """Index of the lowest set bit of a non-zero word (the CPU's cttz under the JIT)."""
    x = int(x)
    return (x & -x).bit_length() - 1


@njit(cache=True)
def nth_cell(a, r) -> int:
    """The cell of the r-th set bit (0-based, lowest first)."""
    for w in range(len(a)):
        x = a[w]
        c = popcount64(x)
        if r < c:
            for _ in range(r):
                x &= x - ONE
            return w * 64 + lowest_index(x)
        r -= c
    return -1


@njit(cache=True)
def random_cell(moves, state) -> int:
    """A uniformly drawn legal cell."""
    n = popcount(moves)
    r = np.int64(next_random(state) % np.uint64(n))
    return nth_cell(moves, r)


@njit(cache=True)
def random_playout(black, white, to_move, placements, masks, shifts, nxt, cap, turn_limit, state):
    """Play uniformly random moves to the end from a position.

    Returns (black, white, plies played, placements, ended by the turn limit).
    """
    if to_move == 0:
        own, opp = black, white
    else:
        own, opp = white, black
    side = to_move
    plies = 0
    by_limit = False
    while True:
        if turn_limit >= 0 and placements >= turn_limit:
            by_limit = True
            break
        moves = legal_moves(own, opp, masks, shifts, cap)
        if not nonzero(moves):
            if not nonzero(legal_moves(opp, own, masks, shifts, cap)):
                break
            own, opp = opp, own
            side ^= 1
            plies += 1
            continue
        cell = random_cell(moves, state)
        own, opp = apply_move(own, opp, cell, nxt, cap)
        own, opp = opp, own
        side ^= 1
        plies += 1
        placements += 1
    if side == 0:
        return own, opp, plies, placements, by_limit
    return opp, own, plies, placements, by_limit


@njit(cache=True)
def random_games(black, white, masks, shifts, nxt, cap, turn_limit, seeds, out):
    """Play len(seeds) random games from the opening; out[i] = (black, white, plies, placements, by_limit)."""
    state = np.zeros(1, dtype=np.uint64)
    for i in range(seeds.shape[0]):
        state[0] = seeds[i]
        b, w, plies, placed, by_limit = random_playout(black, white, 0, 0, masks, shifts, nxt, cap, turn_limit, state)
        out[i, 0] = popcount(b)
        out[i, 1] = popcount(w)
        out[i, 2] = plies
        out[i, 3] = placed
        out[i, 4] = 1 if by_limit else 0


@njit(cache=True)
def perft(own, opp, placements, depth, masks, shifts, nxt, cap, turn_limit) -> int:
    """Leaves at `depth` plies: a forced pass is a ply; a finished game counts 1 (docs/rules.md §2)."""
    if depth == 0 or (turn_limit >= 0 and placements >= turn_limit):
        return 1
    moves = legal_moves(own, opp, masks, shifts, cap)
    if not nonzero(moves):
        if not nonzero(legal_moves(opp, own, masks, shifts, cap)):
            return 1
        return perft(opp, own, placements, depth - 1, masks, shifts, nxt, cap, turn_limit)
    if depth == 1:
        return popcount(moves)
    total = 0
    for w in range(len(moves)):
        x = moves[w]
        while x != ZERO:
            low = x & (~x + ONE)
            cell = w * 64 + lowest_index(low)
            x ^= low
            a, b = apply_move(own, opp, cell, nxt, cap)
            total += perft(b, a, placements + 1, depth - 1, masks, shifts, nxt, cap, turn_limit)
    return total


@njit(cache=True)
def bits_to_int8(a, ncells, out):
    """out[i] = 1 where bit i of a is set, for i < ncells."""
    for i in range(ncells):
        out[i] = 1 if testbit(a, i) else 0


# -- The Game's state as arrays: one kernel call per action -------------------------------
# st: uint64 (3, words) = rows black, white, legal-for-the-side-to-move;
# meta: int64 [side to move (0 black), placements, termination (-1 running, 0 no moves,
# 1 turn limit), 1 if the side to move has a legal move].


@njit(cache=True)
def refresh(st, meta, like, masks, shifts, nxt, cap, turn_limit):
    """Recompute the side to move's legal moves and whether the game has ended."""
    black = row(st, 0, like)
    white = row(st, 1, like)
    if meta[0] == 0:
        own, opp = black, white
    else:
        own, opp = white, black
    legal = legal_moves(own, opp, masks, shifts, cap)
    for w in range(len(legal)):
        st[2, w] = legal[w]
    meta[3] = 1 if nonzero(legal) else 0
    if turn_limit >= 0 and meta[1] >= turn_limit:
        meta[2] = 1
    elif not nonzero(legal) and not nonzero(legal_moves(opp, own, masks, shifts, cap)):
        meta[2] = 0
    else:
        meta[2] = -1


@njit(cache=True)
def advance(st, meta, cell, like, masks, shifts, nxt, cap, turn_limit):
    """Place at `cell` for the side to move (cell < 0: no placement), then hand the turn over."""
    if cell >= 0:
        black = row(st, 0, like)
        white = row(st, 1, like)
        if meta[0] == 0:
            black, white = apply_move(black, white, cell, nxt, cap)
        else:
            white, black = apply_move(white, black, cell, nxt, cap)
        for w in range(len(black)):
            st[0, w] = black[w]
            st[1, w] = white[w]
        meta[1] += 1
    meta[0] = 1 - meta[0]
    refresh(st, meta, like, masks, shifts, nxt, cap, turn_limit)


@njit(cache=True)
def fill_mask(st, out):
    """out[i] = 1 where the side to move may place (row 2 of st)."""
    for i in range(out.shape[0]):
        out[i] = (st[2, i >> 6] >> np.uint64(i & 63)) & ONE


@njit(cache=True)
def fill_observation(st, side, obstacles, out):
    """out (3, cells) float32 = own, opponent, obstacles from the side to move."""
    own = 0 if side == 0 else 1
    for i in range(out.shape[1]):
        w = i >> 6
        b = np.uint64(i & 63)
        out[0, i] = np.float32((st[own, w] >> b) & ONE)
        out[1, i] = np.float32((st[1 - own, w] >> b) & ONE)
        out[2, i] = obstacles[i]


@njit(cache=True)
def fill_view(st, side, obstacles, obs_out, mask_out):
    """fill_observation and fill_mask in one call: what an agent is sent for one move."""
    fill_observation(st, side, obstacles, obs_out)
    fill_mask(st, mask_out)


# Registered last: the overloads name the Python functions defined above.
_register_bit_intrinsics()
