"""Stopping a helper task keeps a cancellation aimed at the caller (adapter/tasks.py), and the
Inbox, which stops its reader that way, no longer lets a session carry on past a cancel that
lands while the reader is being stopped."""

from __future__ import annotations

import asyncio

import pytest

from adapter.tasks import cancel_and_wait
from adapter.thinking.inbox import Inbox


async def _slow_to_stop(stopped: asyncio.Event, error: BaseException | None = None) -> None:
    """A helper that takes a moment to wind down once cancelled (a socket closing, say)."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        stopped.set()
        await asyncio.sleep(0.05)
        if error is not None:
            raise error from None
        raise


async def test_the_helper_is_cancelled_and_awaited():
    stopped = asyncio.Event()
    helper = asyncio.create_task(_slow_to_stop(stopped))
    await asyncio.sleep(0)
    assert await cancel_and_wait(helper) is None
    assert helper.cancelled() and stopped.is_set()


async def test_an_error_raised_on_the_way_out_is_returned_not_swallowed():
    helper = asyncio.create_task(_slow_to_stop(asyncio.Event(), RuntimeError("log not closed")))
    await asyncio.sleep(0)
    error = await cancel_and_wait(helper)
    assert isinstance(error, RuntimeError) and str(error) == "log not closed"


async def test_a_finished_helper_is_fine():
    helper = asyncio.create_task(asyncio.sleep(0))
    await helper
    assert await cancel_and_wait(helper) is None


async def test_a_cancel_aimed_at_the_caller_while_it_waits_is_kept():
    stopped = asyncio.Event()
    carried_on = []

    async def caller() -> None:
        helper = asyncio.create_task(_slow_to_stop(stopped))
        await asyncio.sleep(0)
        await cancel_and_wait(helper)
        carried_on.append(True)  # the old idiom came here: the caller's cancel was swallowed

    task = asyncio.create_task(caller())
    await stopped.wait()  # the caller is now waiting for its helper to wind down
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled() and carried_on == []


async def test_an_inbox_closing_under_a_cancel_does_not_let_the_session_carry_on():
    stopped = asyncio.Event()
    carried_on = []

    async def read() -> list[str]:
        await _slow_to_stop(stopped)
        return []

    async def session() -> None:
        async with Inbox(read):
            await asyncio.sleep(0)  # the block ends normally: the game is over
        carried_on.append(True)  # the next game would start here

    task = asyncio.create_task(session())
    await stopped.wait()  # the inbox is stopping its reader
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert carried_on == []
