"""The supervisor's timing rules, without I/O so that they are tested on a fake clock: when to
restart after a failure (exponential backoff with jitter), when to stop trying for a while
(a circuit breaker over a window of failures), and how many games a day may still start."""

from __future__ import annotations

import datetime as dt
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Backoff:
    """Delays ``initial * 2**(n-1)`` for the n-th failure in a row, capped at ``maximum``, each
    multiplied by a jitter factor in [0.5, 1.5) so that sessions failing together (a server
    that went down) do not all come back in the same second."""

    initial: float
    maximum: float
    rng: random.Random | None = None
    failures: int = 0

    def next_delay(self) -> float:
        self.failures += 1
        # 2.0: int ** int is Any in the stubs (a negative power would be a float)
        base = min(self.maximum, self.initial * 2.0 ** min(self.failures - 1, 60))
        jitter = 0.5 + (self.rng or random).random()
        return min(self.maximum, base * jitter)

    def reset(self) -> None:
        self.failures = 0


class CircuitBreaker:
    """Opens after ``threshold`` failures within ``window`` seconds; stays open ``cooldown``
    seconds; then lets one run through (half-open): a success closes it, a failure opens it
    again for another cooldown."""

    def __init__(self, threshold: int, window: float, cooldown: float,
                 clock: Callable[[], float]) -> None:
        self.threshold, self.window, self.cooldown = threshold, window, cooldown
        self.clock = clock
        self.failures: deque[float] = deque()
        self.opened_at: float | None = None
        self.trips = 0

    @property
    def state(self) -> str:
        if self.opened_at is None:
            return "closed"
        return "open" if self.clock() < self.opened_at + self.cooldown else "half-open"

    def wait(self) -> float:
        """Seconds until a run may start (0 when closed or half-open)."""
        if self.opened_at is None:
            return 0.0
        return max(0.0, self.opened_at + self.cooldown - self.clock())

    def recent_failures(self) -> int:
        now = self.clock()
        while self.failures and self.failures[0] <= now - self.window:
            self.failures.popleft()
        return len(self.failures)

    def failure(self) -> bool:
        """Record a failure; True when this one opened the breaker."""
        now = self.clock()
        if self.opened_at is not None:  # the half-open trial failed
            self.opened_at = now
            self.trips += 1
            return True
        self.failures.append(now)
        if self.recent_failures() >= self.threshold:
            self.opened_at = now
            self.failures.clear()
            self.trips += 1
            return True
        return False

    def success(self) -> None:
        self.opened_at = None
        self.failures.clear()


class DailyQuota:
    """Games started per local calendar day; ``limit`` 0 is no quota."""

    def __init__(self, limit: int, now: Callable[[], dt.datetime] = dt.datetime.now) -> None:
        self.limit = limit
        self.now = now
        self.day = now().date()
        self.count = 0

    def _roll(self) -> None:
        today = self.now().date()
        if today != self.day:
            self.day, self.count = today, 0

    def add(self, games: int = 1) -> None:
        self._roll()
        self.count += games

    def today(self) -> int:
        """Games counted today, the day rolled first: ``count`` itself is the day's as last
        rolled, so the first status after midnight showed yesterday's."""
        self._roll()
        return self.count

    def remaining(self) -> int | None:
        """Games still allowed today (None: no quota)."""
        if self.limit <= 0:
            return None
        self._roll()
        return max(0, self.limit - self.count)

    def seconds_to_reset(self) -> float:
        now = self.now()
        midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(),
                                       tzinfo=now.tzinfo)
        return max(1.0, (midnight - now).total_seconds())
