"""A line that fails the way a real one does: the error a socket read gives when the peer
vanished (ETIMEDOUT after the kernel's retries, EHOSTUNREACH), which is an OSError but not a
ConnectionError. asyncio hands a failed read to the connection's StreamReader with
``set_exception``; the tests do the same to the client's real reader, which they get by
wrapping ``asyncio.open_connection`` (the library's, not ours)."""

from __future__ import annotations

import asyncio
import errno
import os

import pytest


def capture_client_readers(monkeypatch: pytest.MonkeyPatch) -> list[asyncio.StreamReader]:
    """Every StreamReader ``asyncio.open_connection`` opens from now on, in order."""
    readers: list[asyncio.StreamReader] = []
    real = asyncio.open_connection

    async def opening(*args, **kwargs):  # type: ignore[no-untyped-def]
        reader, writer = await real(*args, **kwargs)
        readers.append(reader)
        return reader, writer

    monkeypatch.setattr(asyncio, "open_connection", opening)
    return readers


def time_out(reader: asyncio.StreamReader) -> None:
    """The read fails as when the kernel gave up on the peer (errno ETIMEDOUT)."""
    reader.set_exception(TimeoutError(errno.ETIMEDOUT, os.strerror(errno.ETIMEDOUT)))
