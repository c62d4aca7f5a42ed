"""A long read's cancellation point: a hook its caller sets, asked between hands.

A read of a long log (a 300-game match log: seconds; a 1,602-hand one: tens of seconds) and
an export written from it ran to their end once started: the viewer, whose client had hung
up, could not stop them, and each held one of its two build slots for nobody meanwhile. The
readers and writers now call :func:`check` every :data:`EVERY` frames or events (a hand is
some 150 frames) and once a hand; where the caller set a hook (:func:`checking`), the hook
raises to give the read up (the viewer's BuildCache.check: Abandoned, Stopping). A context
variable, not a parameter: it reaches every reader and writer under a read without each
passing it on, and each thread of a pool sees its own run's hook. Unset (every caller but
the viewer), a check is one context variable read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

EVERY = 512  # frames or events between two checks: a few hands of a log

_HOOK: ContextVar[Callable[[], None] | None] = ContextVar("replay_progress", default=None)


@contextmanager
def checking(hook: Callable[[], None]) -> Iterator[None]:
    """``hook`` asked at every :func:`check` made in this context meanwhile; what it raises
    ends the read."""
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


def hook() -> Callable[[], None] | None:
    """The hook set for this context, if any: a loop reads it once and calls it itself."""
    return _HOOK.get()


def check() -> None:
    """The hook asked, if one is set."""
    ask = _HOOK.get()
    if ask is not None:
        ask()
