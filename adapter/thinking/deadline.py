"""Awaiting something until a time on a :class:`~brain.clock.Clock`: ``asyncio.wait_for`` with
a deadline read on the brain's clock instead of the loop's, so that the thinker's deadlines can
be driven by a :class:`~brain.clock.ManualClock` in tests (it wakes the wait when advanced).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from brain.clock import Clock

T = TypeVar("T")


async def within(clock: Clock, awaitable: Awaitable[T], until: float | None) -> T:
    """What ``awaitable`` gives if it comes before ``clock`` reads ``until`` (None: no limit),
    else TimeoutError, with the awaitable cancelled as ``asyncio.wait_for`` does; an answer
    that is already there wins over a deadline already past."""
    if until is None:
        return await awaitable
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(awaitable)
    try:
        while not task.done():
            left = until - clock.now()
            if left <= 0:
                break
            jumped = loop.create_future()

            def settle(jumped: asyncio.Future[None] = jumped) -> None:
                if not jumped.done():
                    jumped.set_result(None)

            def wake(settle: Callable[[], None] = settle) -> None:
                loop.call_soon_threadsafe(settle)
            unwatch = clock.watch(wake)
            try:
                await asyncio.wait({task, jumped}, timeout=left,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                unwatch()
                jumped.cancel()
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.wait({task})  # its end, without taking a cancellation of our own for it
    try:
        return task.result()  # it ended with an answer after all, as wait_for keeps it
    except asyncio.CancelledError as exc:
        raise TimeoutError from exc
