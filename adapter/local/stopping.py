"""A request to end a long run before its last unit, made by a deadline or a signal and
answered by the run itself at its next safe point.

The arena can stop anywhere (an exception from a signal handler: nothing is half-written),
but self-play writes shards: a stop that raised inside a write would leave a torn file. So a
self-play run asks :class:`StopRequest` between units and while it waits for one, and a
signal only records that a stop was asked for.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator


class StopRequest:
    """Why the run should stop ("time", "SIGTERM", "SIGINT"), or "" to go on; calling it
    asks (and notes a passed deadline). The first reason given stays."""

    def __init__(self, stop_after: float | None = None) -> None:
        self.deadline = None if stop_after is None else time.monotonic() + stop_after
        self.reason = ""

    def __call__(self) -> str:
        if not self.reason and self.deadline is not None and time.monotonic() >= self.deadline:
            self.reason = "time"
        return self.reason

    def _signalled(self, signum: int, frame: object) -> None:
        self.reason = self.reason or signal.Signals(signum).name

    @contextlib.contextmanager
    def on_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT (Ctrl-C) only set the reason for the time of the run; the
        previous handlers come back afterwards."""
        previous = {s: signal.signal(s, self._signalled) for s in (signal.SIGTERM,
                                                                   signal.SIGINT)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def exit_status(reason: str | None) -> int:
    """The exit status of a run stopped for ``reason``: 128 + the signal's number after
    SIGTERM or SIGINT, as a shell reports a signalled process; 0 when it ran to its end or
    its deadline (a deadline is no failure)."""
    return 128 + int(signal.Signals[reason]) if reason and reason.startswith("SIG") else 0


def stop_reason_text(reason: str) -> str:
    """How a report names why a run stopped: the signal, or the option whose time passed."""
    return "--stop-after passed" if reason == "time" else reason
