"""A game's state, its tables, its seats and its agent's view in one int64 record.

An agent's turn on the engine's side is one kernel call (`Game.play_to_agent`). Numba
checks the type of every argument on every call, so passing the game as one array, not as
the seventeen arrays and numbers `search.engine_turns` takes, is what keeps that call
cheap. The record is laid out once per layout and rules (`opening_record`, cached); each
game copies it, and both its kernel (`turns_kernel`) and `engine.game.Game` read the
pieces as views of the same memory.

Layout: a header of the sizes and offsets below, then each piece at its offset, all in
int64 words (a float32 or int8 piece takes whole words, its tail unused).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .bitboard import ZERO
from .search import engine_turns

# Header: sizes, then the offsets of the pieces.
CAP, TURN_LIMIT, WORDS, CELLS, MASK_ROWS, SHIFTS_LEN, NXT_COLS = range(7)
ST, META, MASKS, SHIFTS, NXT, OBSTACLES, SEATS, STATES, TURNS, OBS, MASK = range(7, 18)
HEADER = 18
OVER = 2  # the kernel's code for a finished game (0 and 1 are the side to move)
SEATS_LEN = 11  # as opponents.pack_seats packs them


def _words_for(n: int, itemsize: int) -> int:
    return -(-n * itemsize // 8)


@dataclass(frozen=True)
class Views:
    """The pieces of one record, as numpy views of it."""

    st: np.ndarray  # uint64 (3, words): black, white, legal cells of the side to move
    meta: np.ndarray  # int64 (4,): side to move, placements, termination, has a legal move
    seats: np.ndarray  # int64 (11,): the seats as pack_seats packs them
    states: np.ndarray  # uint64 (2, 1): each seat's xorshift state
    turns: np.ndarray  # int64 (2 cells + 2,): the moves of the last kernel call
    obs: np.ndarray  # float32 (3, cells): the view of the agent to move
    mask: np.ndarray  # int8 (cells,): its legal cells


def layout_record(
    cap: int,
    turn_limit: int,
    masks: np.ndarray,
    shifts: np.ndarray,
    nxt: np.ndarray,
    obstacles: np.ndarray,
    st: np.ndarray,
    meta: np.ndarray,
) -> np.ndarray:
    """A new record holding these tables and this position (seats zero, no view yet)."""
    words, cells = st.shape[1], obstacles.shape[0]
    sizes = [
        (ST, 3 * words),
        (META, 4),
        (MASKS, masks.size),
        (SHIFTS, shifts.size),
        (NXT, _words_for(nxt.size, 4)),
        (OBSTACLES, _words_for(cells, 4)),
        (SEATS, SEATS_LEN),
        (STATES, 2),
        (TURNS, 2 * cells + 2),
        (OBS, _words_for(3 * cells, 4)),
        (MASK, _words_for(cells, 1)),
    ]
    record = np.zeros(HEADER + sum(n for _, n in sizes), dtype=np.int64)
    record[[CAP, TURN_LIMIT, WORDS, CELLS, MASK_ROWS, SHIFTS_LEN, NXT_COLS]] = (
        cap,
        turn_limit,
        words,
        cells,
        masks.shape[0],
        shifts.size,
        nxt.shape[1],
    )
    at = HEADER
    for field, n in sizes:
        record[field] = at
        at += n
    record[record[MASKS] : record[MASKS] + masks.size].view(np.uint64)[:] = masks.reshape(-1)
    record[record[SHIFTS] : record[SHIFTS] + shifts.size] = shifts
    piece(record, NXT, np.int32, nxt.size)[:] = nxt.reshape(-1)
    piece(record, OBSTACLES, np.float32, cells)[:] = obstacles
    views = views_of(record)
    views.st[:] = st
    views.meta[:] = meta
    return record


def piece(record: np.ndarray, field: int, dtype, n: int) -> np.ndarray:
    """The first n items of type `dtype` of piece `field` of `record`: a view."""
    start = int(record[field])
    return record[start : start + _words_for(n, np.dtype(dtype).itemsize)].view(dtype)[:n]


def views_of(record: np.ndarray) -> Views:
    """The pieces of `record` a game reads and writes from Python."""
    words, cells = int(record[WORDS]), int(record[CELLS])
    return Views(
        st=piece(record, ST, np.uint64, 3 * words).reshape(3, words),
        meta=piece(record, META, np.int64, 4),
        seats=piece(record, SEATS, np.int64, SEATS_LEN),
        states=piece(record, STATES, np.uint64, 2).reshape(2, 1),
        turns=piece(record, TURNS, np.int64, 2 * cells + 2),
        obs=piece(record, OBS, np.float32, 3 * cells).reshape(3, cells),
        mask=piece(record, MASK, np.int8, cells),
    )


@njit(cache=True, inline="always")
def _piece(record, field, n):
    start = record[field]
    return record[start : start + n]


@njit(cache=True, inline="always")
def _record_turns(record, like, first) -> int:
    """`search.engine_turns` on the game in `record` (its seats, its move buffer, its one
    view pair for both colours); `like` is a bitboard of as many words as the game's, which
    the kernels are compiled for."""
    words, cells = record[WORDS], record[CELLS]
    st = _piece(record, ST, 3 * words).view(np.uint64).reshape((3, words))
    meta = _piece(record, META, 4)
    masks = _piece(record, MASKS, record[MASK_ROWS] * words).view(np.uint64).reshape((record[MASK_ROWS], words))
    shifts = _piece(record, SHIFTS, record[SHIFTS_LEN])
    nxt_n = cells * record[NXT_COLS]
    nxt = _piece(record, NXT, (nxt_n + 1) // 2).view(np.int32)[:nxt_n].reshape((cells, record[NXT_COLS]))
    obstacles = _piece(record, OBSTACLES, (cells + 1) // 2).view(np.float32)[:cells]
    seats = _piece(record, SEATS, SEATS_LEN)
    states = _piece(record, STATES, 2).view(np.uint64).reshape((2, 1))
    turns = _piece(record, TURNS, 2 * cells + 2)
    obs = _piece(record, OBS, (3 * cells + 1) // 2).view(np.float32)[: 3 * cells].reshape((3, cells))
    mask = _piece(record, MASK, (cells + 7) // 8).view(np.int8)[:cells]
    n = engine_turns(
        st,
        meta,
        like,
        masks,
        shifts,
        nxt,
        record[CAP],
        record[TURN_LIMIT],
        first,
        seats,
        states,
        turns,
        obstacles,
        obs,
        mask,
        obs,
        mask,
    )
    if n < 0:
        return -1
    return 4 * n + (OVER if meta[2] >= 0 else meta[0])


# One entry point per bitboard length (1 to 3 words), each with its `like` built in: numba
# types a tuple argument in Python on every call, an array and an int in C.
@njit(cache=True)
def _turns_1(record, first) -> int:
    return _record_turns(record, (ZERO,), first)


@njit(cache=True)
def _turns_2(record, first) -> int:
    return _record_turns(record, (ZERO, ZERO), first)


@njit(cache=True)
def _turns_3(record, first) -> int:
    return _record_turns(record, (ZERO, ZERO, ZERO), first)


RECORD_TURNS = {1: _turns_1, 2: _turns_2, 3: _turns_3}


def turns_kernel(record: np.ndarray):
    """The compiled kernel for the bitboard length of `record`, called `kernel(record, first)`:
    it plays the game on as `search.engine_turns` does (first placing `first` when it is >= 0)
    and returns -1 when `first` is not legal (nothing changed), else 4 x the moves the engine
    played (in the record's turns) + the side to move next, or OVER. One int, so that the
    caller reads no array."""
    return RECORD_TURNS[int(record[WORDS])]
