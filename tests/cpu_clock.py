"""A :class:`~brain.clock.Clock` on the CPU seconds this process has used
(``time.process_time``): what a decision cost, not how long a loaded machine kept the process
off its cores. A budget kept on it is a budget of work, the same at load 0 and load 20, so a
test can hold a brain and its policy to a limit without a wall-clock bound that a starved CPU
breaks; a policy or a brain that ignores its budget still spends the CPU past it."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any

from brain.clock import Unwatch

POLL = 0.002  # real seconds between looks at the CPU time while a policy's thread works
GUARD = 120.0  # real seconds a wait may last: a thread that burns no CPU fails, not hangs


class CpuClockStuck(RuntimeError):
    """A wait saw neither its future end nor the process spend the CPU up to its time."""


class CpuClock:
    """Process CPU seconds, and waiting on them."""

    def now(self) -> float:
        return time.process_time()

    def wait(self, future: concurrent.futures.Future[Any], until: float) -> bool:
        """Whether ``future`` ended by the CPU time ``until``: the time is taken as it ends,
        in its own thread, so a look here that a loaded machine delays cannot count a late
        answer as in time."""
        ended: list[float] = []
        done = threading.Event()

        def mark(_future: concurrent.futures.Future[Any]) -> None:
            ended.append(time.process_time())
            done.set()

        future.add_done_callback(mark)
        give_up = time.monotonic() + GUARD
        while not done.wait(POLL) and time.process_time() < until:
            if time.monotonic() > give_up:
                raise CpuClockStuck(f"waited {GUARD} s for the CPU time to reach {until}")
        return done.is_set() and ended[0] <= until

    def watch(self, callback: Callable[[], None]) -> Unwatch:
        return _nothing


def _nothing() -> None:
    return None
