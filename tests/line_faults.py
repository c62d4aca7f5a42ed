"""A line that fails the way a real one does: the error a socket read gives when the peer
vanished (ETIMEDOUT after the kernel's retries, EHOSTUNREACH), which is an OSError but not a
ConnectionError. asyncio hands a failed read to the connection's StreamReader with
``set_exception``; the tests do the same to the client's real reader, which they get by
wrapping ``asyncio.open_connection`` (the library's, not ours). And a server that never
answers a connect (:func:`silent_server`)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
from collections.abc import Iterator
from typing import Any

import pytest


def capture_client_readers(monkeypatch: pytest.MonkeyPatch) -> list[asyncio.StreamReader]:
    """Every StreamReader ``asyncio.open_connection`` opens from now on, in order."""
    readers: list[asyncio.StreamReader] = []
    real = asyncio.open_connection

    async def opening(*args: Any, **kwargs: Any
                      ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await real(*args, **kwargs)
        readers.append(reader)
        return reader, writer

    monkeypatch.setattr(asyncio, "open_connection", opening)
    return readers


def time_out(reader: asyncio.StreamReader) -> None:
    """The read fails as when the kernel gave up on the peer (errno ETIMEDOUT)."""
    reader.set_exception(TimeoutError(errno.ETIMEDOUT, os.strerror(errno.ETIMEDOUT)))


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A loopback port whose accept queue is full: a further connect gets no answer at all
    (its SYNs are dropped), as from a black-holed address or behind a firewall."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    queued = []
    try:
        for _ in range(3):  # fill the accept queue: later SYNs are dropped
            line = socket.socket()
            line.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                line.connect(("127.0.0.1", port))
            queued.append(line)
        yield port
    finally:
        for line in [*queued, listener]:
            line.close()
