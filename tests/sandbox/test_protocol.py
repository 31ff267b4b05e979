"""The wire: framing round trips, malformed frames, and the runner's replies."""

from __future__ import annotations

import time

import numpy as np
import pytest

from grader.common import protocol
from grader.common.faults import FaultKind
from grader.common.protocol import FrameReader, WireError, encode

from .conftest import ENV_INFO, board

pytestmark = pytest.mark.timeout(60)


def test_round_trip_with_arrays_byte_by_byte():
    obs = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    mask = np.array([0, 1] * 10, dtype=np.int8)
    frame = encode({"op": "act"}, (obs, mask))
    reader = FrameReader()
    for i in range(len(frame) - 1):
        reader.feed(frame[i : i + 1])
        assert reader.pop() is None
    reader.feed(frame[-1:])
    header, (o, m) = reader.pop()
    assert header["op"] == "act" and header["arrays"] == [["<f4", [3, 4, 5]], ["|i1", [20]]]
    assert o.dtype == np.float32 and np.array_equal(o, obs) and np.array_equal(m, mask)
    o[0, 0, 0] = 42.0  # the agent gets arrays it may write to
    assert reader.pending() == 0


def test_two_frames_in_one_read_and_cached_header():
    obs, mask = board()
    head = protocol.act_header(8, 8)
    frame = protocol.encode_raw(head, obs.tobytes(), mask.tobytes())
    reader = FrameReader(cached_ops=frozenset({"act"}))
    reader.feed(frame + frame)
    first, second = reader.pop(), reader.pop()
    assert first[0] is second[0]  # the second header came from the cache
    assert np.array_equal(second[1][1], mask) and reader.pop() is None


@pytest.mark.parametrize(
    "frame, message",
    [
        (protocol.PREFIX.pack(5, 0) + b"{nope", "not JSON"),
        (protocol.PREFIX.pack(2, 0) + b"[]", "JSON object"),
        (protocol.PREFIX.pack(10, 0) + b'{"op": 1}', "string 'op'"),
        (protocol.PREFIX.pack(1 << 30, 0), "header of"),
        (protocol.PREFIX.pack(2, 1 << 30) + b"{}", "body of"),
    ],
)
def test_malformed_frames_are_wire_errors(frame, message):
    reader = FrameReader()
    reader.feed(frame + b" " * 16)
    with pytest.raises(WireError, match=message):
        reader.pop()


def test_body_must_match_announced_arrays():
    good = encode({"op": "act"}, (np.zeros(4, np.int8),))
    head_len = protocol.PREFIX.unpack_from(good)[0]
    short = protocol.PREFIX.pack(head_len, 3) + good[8 : 8 + head_len] + b"\0\0\0"
    reader = FrameReader()
    reader.feed(short)
    with pytest.raises(WireError, match="arrays need"):
        reader.pop()
    stray = encode({"op": "ok"})
    stray = protocol.PREFIX.pack(len(stray) - 8, 2) + stray[8:] + b"xx"
    reader = FrameReader()
    reader.feed(stray)
    with pytest.raises(WireError, match="announces no arrays"):
        reader.pop()


def test_object_dtypes_never_travel():
    with pytest.raises(WireError, match="cannot travel"):
        encode({"op": "act"}, (np.array([object()]),))
    reader = FrameReader()
    reader.feed(protocol.encode_raw(b'{"op":"act","arrays":[["|O",[1]]]}', b"x" * 8))
    with pytest.raises(WireError, match="dtype"):
        reader.pop()


def test_runner_action_frames():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(protocol.__file__).parent.parent / "sandboxed"))
    import runner

    for value, expected in [
        (7, {"op": "action", "action": 7}),
        (np.int64(9), {"op": "action", "action": 9}),
        (5000, {"op": "action", "action": 5000}),
    ]:
        reader = FrameReader()
        reader.feed(runner.action_frame(value))
        assert reader.pop()[0] == expected
    for value in (True, 1.5, "3", None, np.float32(2.0), 10**30):
        reader = FrameReader()
        reader.feed(runner.action_frame(value))
        assert reader.pop()[0]["op"] == "bad_action"


def test_runner_refuses_outcomes_after_freeze(launch):
    handle = launch("random_agent")
    assert handle.prepare(ENV_INFO) is None
    assert (
        handle.observe_outcome({"winner": "black", "black_discs": 40, "white_discs": 24, "your_color": "black"}) is None
    )
    assert handle.freeze() is None
    with pytest.raises(ValueError, match="after freeze"):
        handle.observe_outcome({"winner": None, "black_discs": 32, "white_discs": 32, "your_color": "white"})
    # Below the handle's own guard, the runner refuses as well.
    reply = handle.transport.call({"op": "outcome", "outcome": {}}, time.monotonic() + 5.0, "observe_outcome")
    assert reply == {"op": "refused", "detail": "outcome after freeze"}
    assert handle.begin_pairing() is None
    action, fault = handle.act(*board())
    assert fault is None and action in (19, 26, 37, 44)  # a frozen agent still plays, in a pairing


def test_unknown_op_is_refused_and_a_protocol_fault(launch):
    handle = launch("random_agent")
    fault = handle._simple_call({"op": "unknown-op"}, "probe")
    assert fault is not None and fault.kind is FaultKind.PROTOCOL and "refused" in fault.detail


def test_an_act_frame_sent_from_a_games_views_is_the_frame_built_by_copying():
    """`act` writes its head and the game's own view arrays in one writev: the bytes are
    those of the frame encoded from copies, and what the runner decodes is the view."""
    import os

    from engine import Game, public_tier
    from engine.opponents import EngineSeats
    from grader.play.seat.transport import ActFrame

    spec = public_tier()[3]
    game = Game(spec)
    game.play_to_agent(EngineSeats(spec, None, None))
    obs, mask = game.view
    rows, cols = spec.layout.rows, spec.layout.cols
    act_frame = ActFrame((rows, cols))
    read_end, write_end = os.pipe()
    try:
        assert os.writev(write_end, (act_frame.head, obs, mask)) == act_frame.length
        sent = os.read(read_end, 1 << 16)
    finally:
        os.close(read_end)
        os.close(write_end)
    expected = protocol.encode_raw(protocol.act_header(rows, cols), obs.tobytes(), mask.tobytes())
    assert sent == expected
    reader = protocol.FrameReader()
    reader.feed(sent)
    header, arrays = reader.pop()
    assert header["op"] == "act" and np.array_equal(arrays[0], game.agent_view()[0])
    assert np.array_equal(arrays[1], game.agent_view()[1])


def _pairing_moves(handle, moves: int = 15) -> list[int]:
    assert handle.begin_pairing() is None
    played = []
    for _ in range(moves):
        action, fault = handle.act(*board())
        assert fault is None, fault
        played.append(action)
    assert handle.end_pairing() is None
    return played


def test_every_pairing_starts_from_the_frozen_agent(launch):
    handle = launch("stateful_counter")
    assert handle.prepare(ENV_INFO) is None
    for _ in range(7):  # the frozen state is not the state after prepare
        assert handle.act(*board())[1] is None
    assert handle.freeze() is None
    first = _pairing_moves(handle)
    assert len(set(first)) > 1  # the RNG moves within a pairing
    assert _pairing_moves(handle) == first
    assert _pairing_moves(handle) == first
    # Each pairing's buffered print reached the log once, from the fork.
    assert handle.stderr_text().count("moves 8 in a pairing") == 3
    # Outside a pairing the frozen agent plays no more: none of its code runs in it again.
    action, fault = handle.act(*board())
    assert action is None and fault.kind is FaultKind.PROTOCOL and "'refused'" in fault.detail, fault


def test_a_pairing_needs_the_frozen_agent_and_cannot_nest(launch):
    handle = launch("random_agent")
    assert handle.prepare(ENV_INFO) is None
    with pytest.raises(ValueError, match="before freeze"):
        handle.begin_pairing()
    # Below the handle's own guard, the runner refuses as well.
    reply = handle.transport.call({"op": "pairing"}, time.monotonic() + 5.0, "the start of a pairing")
    assert reply["op"] == "refused" and "before freeze" in reply["detail"]
    assert handle.freeze() is None
    assert handle.begin_pairing() is None
    # In a pairing the handle continues its stopped sandbox for each call; this one goes below it.
    handle.transport.turn(True)
    reply = handle.transport.call({"op": "pairing"}, time.monotonic() + 5.0, "the start of a pairing")
    assert reply["op"] == "refused" and "inside another pairing" in reply["detail"]
    assert handle.end_pairing() is None
    reply = handle.transport.call({"op": "end_pairing"}, time.monotonic() + 5.0, "the end of a pairing")
    assert reply["op"] == "refused"
    assert handle.begin_pairing() is None and handle.act(*board())[1] is None


def test_an_agent_that_exits_in_a_pairing_ends_its_session_at_once(launch):
    handle = launch("exit_mid_game")
    assert handle.prepare(ENV_INFO) is None
    assert handle.freeze() is None
    assert handle.begin_pairing() is None
    faults = [handle.act(*board())[1] for _ in range(4)]
    assert faults[:3] == [None, None, None]
    # End of file (not a deadline's timeout): the runner ended with its fork, as without one.
    assert faults[3] is not None and faults[3].kind is FaultKind.EOF, faults[3]
