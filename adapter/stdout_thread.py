"""Replies to a referee on stdout, written by a thread of their own.

A write on the event loop (``sys.stdout.write`` and ``flush``) to a referee that stops reading
without closing the pipe (a stalled tournament script: 64 KiB of our replies unread fill the
pipe) blocked the loop for ever: the thinking worker's messages, the session's deadlines and
the game log's footer waited, and SIGTERM or Ctrl-C was not even seen (asyncio's handler only
notes a signal for the loop, and the interrupted write is retried). Here the thread waits on
the pipe; the loop awaits the write, for at most the limit given.

A thread, not asyncio's pipe transport: that one sets O_NONBLOCK on the open file, which
stdout shares with stderr at a terminal or under ``2>&1`` (a log line there then fails with
EAGAIN) and with the program that started us (a shell left non-blocking after we exit), and it
refuses a regular file (``> replies.txt``). The thread writes to whatever stdout is, with the
plain blocking writes the loop made before. It is a daemon: a write still blocked when the
session ends holds nothing up (the process exits; the reply was not taken anyway).

The limit holds only where stdout is a pipe or a socket, where a referee reads it and can stop:
a terminal paused with Ctrl-S (or a slow ssh link) and a file on a slow disk block a write for
a while with nobody gone, and the write waits there as it did (the limit, mjai's 2 s, ended
such a session as a referee that went away).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import stat
import threading
from collections.abc import Callable
from typing import TextIO

Settle = Callable[[OSError | None], None]


class StdoutWriter:
    """``await write(text, limit)``: ``text`` written whole to ``stream`` (stdout), its
    ``OSError`` raised (EPIPE: the reader closed its end), or TimeoutError where the reader
    has not taken it all within ``limit`` seconds (None: no limit; none either where ``stream``
    is no pipe or socket, a terminal or a file, see the module's docstring). Writes keep their
    order.
    A stream without a file descriptor (a test's StringIO) never blocks: written in place."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._fd = _fileno(stream)
        self._limited = self._fd is not None and _read_by_a_peer(self._fd)
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._errors = getattr(stream, "errors", None) or "strict"  # as the stream encodes
        self._items: queue.SimpleQueue[tuple[bytes, Settle]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    async def write(self, text: str, limit: float | None) -> None:
        if self._fd is None:
            self._stream.write(text)
            self._stream.flush()
            return
        if not self._limited:
            limit = None
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: OSError | None) -> None:
            if done.done():  # given up on at its limit, or the session was stopped
                return
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        def settle_threadsafe(error: OSError | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, error)

        self._start()
        self._items.put((text.encode(self._encoding, self._errors), settle_threadsafe))
        # asyncio.wait, as adapter/thinking/thinker.py's within: the mjai.app upload carries
        # this module to Python 3.10 (no asyncio.timeout; wait_for raises asyncio's own
        # TimeoutError there, and on 3.11 swallows a stop that lands as the wait ends)
        try:
            await asyncio.wait({done}, timeout=limit)
        finally:
            if not done.done():  # given up (its limit, a stop): the thread tells nobody
                done.cancel()
        if done.cancelled():
            raise TimeoutError(f"none taken for {limit:g} s")
        done.result()

    def write_now(self, text: str, limit: float | None) -> None:
        """The same for a synchronous session (the mjai stdin form): the calling thread waits
        for the write, for at most ``limit`` seconds. A signal handler that raises (a stop)
        ends the wait, as it ends a blocked write."""
        if self._fd is None:
            self._stream.write(text)
            self._stream.flush()
            return
        if not self._limited:
            limit = None
        done = threading.Event()
        errors: list[OSError | None] = []

        def settle(error: OSError | None) -> None:
            errors.append(error)
            done.set()

        self._start()
        self._items.put((text.encode(self._encoding, self._errors), settle))
        if not done.wait(limit):
            raise TimeoutError(f"none taken for {limit:g} s")
        if errors[0] is not None:
            raise errors[0]

    def _start(self) -> None:
        if self._thread is not None:
            return
        with contextlib.suppress(OSError, ValueError):  # text printed before: first out
            self._stream.flush()
        self._thread = threading.Thread(target=self._run, name="stdout-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        assert self._fd is not None
        while True:
            data, settle = self._items.get()
            error: OSError | None = None
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError as exc:
                error = exc
            settle(error)


def _fileno(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None


def _read_by_a_peer(fd: int) -> bool:
    """``fd`` is a pipe or a socket: a program at its other end reads it, and can stop."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return True  # unknown: limited, as every stdout was
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
