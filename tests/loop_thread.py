"""An event loop in a thread of its own, for a fake server that measures a client's answers:
had it shared the client's loop, a client that blocked the loop would also hold back the
server's probes, and its delays would look short."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

Result = TypeVar("Result")


class LoopThread:
    """``async with LoopThread() as other: await other.run(coro)`` runs ``coro`` there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name="server-loop")

    async def __aenter__(self) -> LoopThread:
        self._thread.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.run(_cancel_the_rest())
        self.loop.call_soon_threadsafe(self.loop.stop)
        await asyncio.to_thread(self._thread.join, 10)
        self.loop.close()

    async def run(self, coro: Coroutine[Any, Any, Result]) -> Result:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))


async def _cancel_the_rest() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
