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

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # imported where a policy is waited on: a fast one never is (a one-shot
    import concurrent.futures  # Botzone turn's start saves its 3-4 ms, logging with it)

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
        import concurrent.futures

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
    to put a decision exactly at, before or past its deadline. :meth:`advance` returns once
    every blocking :meth:`wait` has looked at the new time (it is over, or :attr:`waiting`
    still counts it), so a test can tell "still waiting at 0.7 s" from "gave up" without a
    race. A wait gives up with :class:`ManualClockStuck` after ``guard`` real seconds without
    an answer, so a test that forgets to advance fails instead of hanging."""

    def __init__(self, start: float = 0.0, guard: float = 30.0) -> None:
        self._now = start
        self.guard = guard
        self._cond = threading.Condition()
        self._watchers: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._tick = 0  # advances so far
        self._seen: dict[int, int] = {}  # each blocking wait: the last advance it looked at

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move the time on by ``seconds``, wake whatever waits on it, and return the new
        time once every blocking wait has seen it."""
        if seconds < 0:
            raise ValueError(f"a clock does not go back ({seconds} s)")
        with self._cond:
            self._now += seconds
            self._tick += 1
            now, tick = self._now, self._tick
            watchers = list(self._watchers.values())
            self._cond.notify_all()
            self._cond.wait_for(lambda: all(seen >= tick for seen in self._seen.values()),
                                timeout=self.guard)
        for callback in watchers:
            callback()
        return now

    def wait(self, future: concurrent.futures.Future[Any], until: float) -> bool:
        future.add_done_callback(lambda _f: self._poke())
        give_up = time.monotonic() + self.guard
        with self._cond:
            key, self._next = self._next, self._next + 1
            looked = -1
            try:
                while True:
                    self._seen[key] = self._tick
                    if future.done() or self._now >= until:
                        return future.done()
                    if looked != self._tick:  # the advance that woke us waits for this look
                        looked = self._tick
                        self._cond.notify_all()
                    left = give_up - time.monotonic()
                    if left <= 0:
                        raise ManualClockStuck(f"waited {self.guard} s for the clock to reach "
                                               f"{until} (it reads {self._now})")
                    self._cond.wait(left)
            finally:
                del self._seen[key]
                self._cond.notify_all()

    @property
    def waiting(self) -> int:
        """How many blocking waits are in progress."""
        with self._cond:
            return len(self._seen)

    def until_waiting(self, count: int = 1) -> None:
        """Block until ``count`` blocking waits are in progress (a test that advances from
        the policy's own thread first lets the brain begin its wait)."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._seen) >= count, timeout=self.guard):
                raise ManualClockStuck(f"waited {self.guard} s for {count} waits to begin")

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
