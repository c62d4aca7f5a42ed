"""The messages of a worker's pipe as the event loop reads them: whatever bytes are there, kept
until a whole message has come (adapter/thinking/worker_process.py).

``Connection.recv`` reads a message whole: a worker that had written a message's length and
stalled before the rest (a policy paused mid-write, a process stopped) held the session's whole
event loop in that read until the rest came, and bytes with a bogus length held it for ever.
The loop reads only what is there instead (one ``os.read`` per readiness, which never waits)
and keeps a partial message for the next; a worker that stays stalled past its job's deadline
is replaced as a late one (Thinker.decide). The wire format is multiprocessing's own: a 4-byte
big-endian signed length (-1: an 8-byte unsigned one follows), then the pickle.
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Iterator
from typing import Any

READ_SIZE = 1 << 16  # bytes taken per readiness of the pipe
_SHORT = struct.Struct("!i")
_LONG = struct.Struct("!Q")


class Garbled(Exception):
    """The pipe carries a length no message has: nothing after it can be read."""


class Frames:
    """The bytes read from one worker's pipe, and the whole messages among them."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.garbled = ""  # why the stream cannot be read any more ("" while it can)

    def read(self, fd: int) -> bool:
        """Take what the pipe ``fd`` holds, in one read (call it only when the pipe is
        readable: then it does not wait); False at the end of the pipe."""
        data = os.read(fd, READ_SIZE)
        if not data:
            return False
        if not self.garbled:  # after a bogus length only the end of the pipe matters
            self._buffer += data
        return True

    def messages(self) -> Iterator[Any]:
        """Each whole message read so far, unpickled, in order; a message that cannot be
        unpickled is raised (the next call goes on after it); :class:`Garbled` once the
        stream has a length that no message has."""
        while not self.garbled:
            taken = self._whole()
            if taken is None:
                return
            payload, used = taken
            del self._buffer[:used]
            yield pickle.loads(payload)

    def _whole(self) -> tuple[bytes, int] | None:
        buffer = self._buffer
        if len(buffer) < _SHORT.size:
            return None
        (size,) = _SHORT.unpack_from(buffer)
        start = _SHORT.size
        if size == -1:
            if len(buffer) < start + _LONG.size:
                return None
            (size,) = _LONG.unpack_from(buffer, start)
            start += _LONG.size
        elif size < 0:
            self.garbled = f"a message length of {size} bytes"
            self._buffer.clear()
            raise Garbled(self.garbled)
        if len(buffer) < start + size:
            return None
        return bytes(buffer[start:start + size]), start + size
