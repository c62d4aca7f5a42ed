"""Reading a connection while the session waits for a decision.

A session handles what it receives in order, and handling a request awaits the brain, which
may take seconds. The :class:`Inbox` reads in a task of its own meanwhile: a keep-alive is
answered the moment it arrives (``urgent`` returns True for what it has answered), everything
else waits in order for the session, which takes it with :meth:`Inbox.get`. The end of the
stream or a broken connection reaches the session from :meth:`Inbox.get` as the exception the
reader raised, after every frame read before it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from adapter.tasks import cancel_and_wait

Frame = TypeVar("Frame")


class _End:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class Inbox(Generic[Frame]):
    """``read()`` returns the frames of one read (raising at the end of the stream);
    ``urgent(frame)`` answers a keep-alive at once and says whether it did. Use as an
    ``async with`` block: the reader task lives as long as the block."""

    def __init__(self, read: Callable[[], Awaitable[list[Frame]]],
                 urgent: Callable[[Frame], Awaitable[bool]] | None = None) -> None:
        self._read = read
        self._urgent = urgent
        self._queue: asyncio.Queue[Frame | _End] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.received = 0  # frames read, keep-alives included

    async def __aenter__(self) -> Inbox[Frame]:
        self._task = asyncio.create_task(self._pump())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)  # the reader's own errors reached get()

    async def _pump(self) -> None:
        try:
            while True:
                for frame in await self._read():
                    self.received += 1
                    if self._urgent is not None and await self._urgent(frame):
                        continue
                    self._queue.put_nowait(frame)
        except Exception as exc:  # the end of the stream, or a broken line
            self._queue.put_nowait(_End(exc))

    async def get(self) -> Frame:
        """The next frame in order; the reader's exception once they are all taken."""
        item = await self._queue.get()
        if isinstance(item, _End):
            self._queue.put_nowait(item)  # every later get ends the same way
            raise item.error
        return item
