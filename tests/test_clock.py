"""The clock deadlines are kept on (brain/clock.py) and the async wait on it
(adapter/thinking/deadline.py): a manual clock moves only when advanced, a wait on it ends
exactly when it reaches the deadline, and the real clock's waits behave as ``wait_for``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from adapter.thinking.deadline import within
from brain.clock import MONOTONIC, ManualClock, ManualClockStuck


def test_a_manual_clock_moves_only_when_advanced() -> None:
    clock = ManualClock(10.0)
    assert clock.now() == 10.0 == clock.now()
    assert clock.advance(0.5) == 10.5 == clock.now()
    with pytest.raises(ValueError, match="does not go back"):
        clock.advance(-1.0)
    assert clock.now() == 10.5


def test_a_thread_wait_ends_when_the_clock_reaches_the_deadline() -> None:
    clock = ManualClock()
    future: concurrent.futures.Future[int] = concurrent.futures.Future()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waited = pool.submit(clock.wait, future, 1.0)
        clock.until_waiting()
        clock.advance(0.75)  # returns once the wait has looked at 0.75
        assert clock.waiting == 1 and not waited.done()
        clock.advance(0.25)  # returns once the wait has seen its deadline and left
        assert clock.waiting == 0
        assert waited.result(30) is False and not future.done()


def test_a_thread_wait_ends_when_the_future_is_done() -> None:
    clock = ManualClock()
    future: concurrent.futures.Future[int] = concurrent.futures.Future()
    threading.Thread(target=future.set_result, args=(3,)).start()
    assert clock.wait(future, 1.0) is True and clock.now() == 0.0
    assert clock.wait(future, -1.0) is True  # an answer in hand wins over a past deadline


def test_a_wait_nobody_advances_fails_instead_of_hanging() -> None:
    clock = ManualClock(guard=0.05)
    with pytest.raises(ManualClockStuck, match=r"reach 1\.0"):
        clock.wait(concurrent.futures.Future(), 1.0)


def test_the_real_clock_waits_for_a_future() -> None:
    done: concurrent.futures.Future[int] = concurrent.futures.Future()
    done.set_result(1)
    assert MONOTONIC.wait(done, MONOTONIC.now() + 60) is True
    assert MONOTONIC.wait(concurrent.futures.Future(), MONOTONIC.now() - 1) is False
    MONOTONIC.watch(lambda: None)()  # its time never jumps: nothing to watch


async def test_an_async_wait_times_out_exactly_at_the_deadline() -> None:
    clock = ManualClock()
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(within(clock, never, 1.0))
    await asyncio.sleep(0)
    clock.advance(0.75)
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done() and clock.watchers == 1
    clock.advance(0.25)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(waiting, 30)
    assert never.cancelled() and clock.watchers == 0  # cancelled, as wait_for does


async def test_an_async_wait_gives_the_answer_that_comes_first() -> None:
    clock = ManualClock()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()
    waiting = asyncio.ensure_future(within(clock, answer, 1.0))
    await asyncio.sleep(0)
    answer.set_result("done")
    assert await waiting == "done" and clock.now() == 0.0
    ready: asyncio.Future[str] = loop.create_future()
    ready.set_result("in hand")
    clock.advance(5.0)
    assert await within(clock, ready, 1.0) == "in hand"  # wins over a past deadline
    assert await within(clock, asyncio.sleep(0, "no limit"), None) == "no limit"


async def test_an_async_wait_passes_on_errors_and_cancellation() -> None:
    clock = ManualClock()
    loop = asyncio.get_running_loop()
    failing: asyncio.Future[int] = loop.create_future()
    failing.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        await within(clock, failing, 1.0)
    inner: asyncio.Future[int] = loop.create_future()
    outer = asyncio.ensure_future(within(clock, inner, 1.0))
    await asyncio.sleep(0)
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    await asyncio.sleep(0)
    assert inner.cancelled()


async def test_the_real_clock_times_an_async_wait_out() -> None:
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    with pytest.raises(TimeoutError):
        await within(MONOTONIC, never, MONOTONIC.now())  # a deadline already here
    assert never.cancelled()
    assert await within(MONOTONIC, asyncio.sleep(0, 7), MONOTONIC.now() + 60) == 7
