"""adapter/thinking/frames.py: a worker pipe's messages as the event loop reads them, from
whatever bytes are there, over a real pipe and in multiprocessing's own wire format (a real
Connection writes them)."""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
from collections.abc import Iterator
from multiprocessing.connection import Connection

import pytest

from adapter.thinking.frames import Frames, Garbled


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
