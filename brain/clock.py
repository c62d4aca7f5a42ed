"""The clock that deadlines are kept on, passed in rather than read from ``time``, so that a
test can drive time by hand and assert exactly what happens at a deadline.

A :class:`Clock` gives monotonic seconds (``now``), waits for a thread's future until a time
on it (``wait``: the brain's thread path), and says when its time jumps (``watch``: how the
async waits in adapter/thinking/ notice a :class:`ManualClock` moved). Production code takes
one as a constructor argument whose default is :data:`MONOTONIC`, the real clock; tests pass a
:class:`ManualClock` and :meth:`~ManualClock.advance` it. No asyncio here (the one-shot
Botzone path imports this module): the async wait is adapter/thinking/deadline.py.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

Unwatch = Callable[[], None]


class Clock(Protocol):
    """Monotonic seconds, and waiting on them."""

    def now(self) -> float:
        """Seconds on this clock (only differences mean anything)."""
        ...

    def wait(self, future: concurrent.futures.Future[Any], until: float) -> bool:
        """Block until ``future`` is done or the clock reads ``until``; whether it is done."""
        ...

    def watch(self, callback: Callable[[], None]) -> Unwatch:
        """Call ``callback`` (from any thread) whenever the time jumps rather than flows;
        returns what stops it."""
        ...


def _nothing() -> None:
    return None


class MonotonicClock:
    """The real clock: ``time.monotonic``; its time flows and never jumps."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, future: concurrent.futures.Future[Any], until: float) -> bool:
        concurrent.futures.wait([future], timeout=max(0.0, until - time.monotonic()))
        return future.done()

    def watch(self, callback: Callable[[], None]) -> Unwatch:
        return _nothing

    def __repr__(self) -> str:
        return "MONOTONIC"


MONOTONIC = MonotonicClock()


class ManualClockStuck(RuntimeError):
    """A wait on a :class:`ManualClock` saw neither its future end nor the clock advance."""


class ManualClock:
    """A clock that moves only when told (:meth:`advance`, from any thread): the tests' way
    to put a decision exactly at, before or past its deadline. A blocking :meth:`wait` gives up
    with :class:`ManualClockStuck` after ``guard`` real seconds without an answer, so a test
    that forgets to advance fails instead of hanging."""

    def __init__(self, start: float = 0.0, guard: float = 30.0) -> None:
        self._now = start
        self.guard = guard
        self._cond = threading.Condition()
        self._watchers: dict[int, Callable[[], None]] = {}
        self._next = 0

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move the time on by ``seconds`` and wake whatever waits on it; the new time."""
        if seconds < 0:
            raise ValueError(f"a clock does not go back ({seconds} s)")
        with self._cond:
            self._now += seconds
            now = self._now
            watchers = list(self._watchers.values())
            self._cond.notify_all()
        for callback in watchers:
            callback()
        return now

    def wait(self, future: concurrent.futures.Future[Any], until: float) -> bool:
        future.add_done_callback(lambda _f: self._poke())
        with self._cond:
            if not self._cond.wait_for(lambda: future.done() or self._now >= until,
                                       timeout=self.guard):
                raise ManualClockStuck(f"waited {self.guard} s for the clock to reach {until} "
                                       f"(it reads {self._now})")
        return future.done()

    def watch(self, callback: Callable[[], None]) -> Unwatch:
        with self._cond:
            key, self._next = self._next, self._next + 1
            self._watchers[key] = callback

        def unwatch() -> None:
            with self._cond:
                self._watchers.pop(key, None)
        return unwatch

    @property
    def watchers(self) -> int:
        """How many waits are watching this clock now."""
        with self._cond:
            return len(self._watchers)

    def _poke(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def __repr__(self) -> str:
        return f"ManualClock({self.now()})"
