"""adapter/thinking/frames.py: a worker pipe's messages as the event loop reads them, from
whatever bytes are there, over a real pipe and in multiprocessing's own wire format (a real
Connection writes them)."""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.thinking.frames import Frames, Garbled

_SHORT_LEN = 4  # the bytes of a short length: Connection's form below 2 GiB


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def _wire(obj: object) -> bytes:
    """``obj`` as Connection.send writes it."""
    read, write = os.pipe()
    with Connection(write, readable=False) as sender:
        sender.send(obj)
    data = os.read(read, 1 << 20)
    os.close(read)
    return data


def test_a_message_in_pieces_is_kept_until_whole(pipe: tuple[int, int]) -> None:
    read, write = pipe
    frames = Frames()
    progress, done = _wire(("progress", 3, b"x" * 100)), _wire(("done", 3, b"y"))
    wire, sent = progress + done, 0
    for upto in (2, 30, len(progress) + 3):  # in the length, in the body, into the next one
        os.write(write, wire[sent:upto])
        sent = upto
        assert frames.read(read)
        whole = [("progress", 3, b"x" * 100)] if upto > len(progress) else []
        assert list(frames.messages()) == whole
    os.write(write, wire[sent:])
    assert frames.read(read)
    assert list(frames.messages()) == [("done", 3, b"y")]
    os.close(write)
    assert not frames.read(read)  # the end of the pipe


def test_the_long_length_form_is_read(pipe: tuple[int, int]) -> None:
    """A length of -1 says an 8-byte one follows (multiprocessing's form past 2 GiB)."""
    read, write = pipe
    body = pickle.dumps(("ready", 42))
    os.write(write, struct.pack("!i", -1) + struct.pack("!Q", len(body)) + body)
    frames = Frames()
    assert frames.read(read)
    assert list(frames.messages()) == [("ready", 42)]


def test_a_length_no_message_has_garbles_the_rest(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, struct.pack("!i", -5) + _wire(("done", 1, b"")))
    frames = Frames()
    assert frames.read(read)
    with pytest.raises(Garbled, match="a message length of -5 bytes"):
        list(frames.messages())
    os.write(write, _wire(("done", 2, b"")))
    assert frames.read(read)
    assert list(frames.messages()) == [] and frames.garbled


def test_an_unreadable_message_is_raised_and_the_next_read_after_it(
        pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, struct.pack("!i", 4) + b"junk" + _wire(("done", 1, b"")))
    frames = Frames()
    assert frames.read(read)
    with pytest.raises(pickle.UnpicklingError):
        list(frames.messages())
    assert list(frames.messages()) == [("done", 1, b"")]


def _wire_of_any_size(obj: object) -> bytes:
    """``obj`` as Connection.send writes it, of any size (a thread drains the pipe: a message
    past the pipe's 64 KiB would block the write)."""
    read, write = os.pipe()
    chunks: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(read, 1 << 16):
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    with Connection(write, readable=False) as sender:
        sender.send(obj)
    reader.join()
    os.close(read)
    return b"".join(chunks)


_PAYLOADS = st.one_of(
    st.binary(max_size=2000),
    st.integers(0, 300_000).map(lambda n: b"z" * n),  # past 16 KiB (header apart), 64 KiB
    st.tuples(st.sampled_from(["ready", "progress", "done", "error"]), st.integers(),
              st.binary(max_size=500)))


@settings(max_examples=60, deadline=None)
@given(st.lists(_PAYLOADS, min_size=1, max_size=5), st.booleans())
def test_any_messages_written_by_a_real_connection_come_out_whole(
        objs: list[object], blocking: bool) -> None:
    """Random pickles of any size, sent by a real Connection on a thread into a real pipe
    that the reader takes as it comes (a readiness at a time, its read end blocking or
    not): each comes out whole, in order, and the end of the pipe is seen."""
    read, write = os.pipe()
    os.set_blocking(read, blocking)

    def send() -> None:
        with Connection(write, readable=False) as sender:
            for obj in objs:
                sender.send(obj)

    sender = threading.Thread(target=send)
    sender.start()
    frames, got, open_ = Frames(), [], True
    try:
        while open_:
            select.select([read], [], [], 5.0)
            try:
                open_ = frames.read(read)
            except BlockingIOError:
                continue
            got += list(frames.messages())
    finally:
        sender.join()
        os.close(read)
    assert got == objs


@settings(max_examples=100, deadline=None)
@given(st.lists(_PAYLOADS, min_size=1, max_size=4), st.booleans(), st.data())
def test_messages_cut_at_any_points_come_out_whole(
        objs: list[object], long: bool, data: st.DataObject) -> None:
    """The same bytes written in pieces cut anywhere (in a length, between two messages, in
    a pickle), in the short form as a Connection writes it or the long one (-1, then an
    8-byte length: past 2 GiB), read after each piece: every message once it is whole."""
    wire = b""
    for obj in objs:
        body = _wire_of_any_size(obj)[_SHORT_LEN:]
        head = struct.pack("!i", -1) + struct.pack("!Q", len(body)) if long \
            else struct.pack("!i", len(body))
        wire += head + body
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(wire) - 1), max_size=12))))
    read, write = os.pipe()
    frames, got, sent = Frames(), [], 0
    try:
        for cut in [*cuts, len(wire)]:
            piece = wire[sent:cut]
            sent = cut
            while piece:  # a piece past the pipe's 64 KiB goes in as the reader makes room
                written = os.write(write, piece[:1 << 16])
                piece = piece[written:]
                while select.select([read], [], [], 0)[0]:
                    assert frames.read(read)
                    got += list(frames.messages())
        os.close(write)
        assert not frames.read(read)  # the end of the pipe
    finally:
        os.close(read)
    assert got == objs
