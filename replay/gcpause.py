"""Python's cycle collector paused while a game log is read into objects that all live on.

Reading a log builds a few hundred objects per move (frames, events, each decision's legal
moves and candidates), every one of them kept: each full collection their allocation
triggers walks all of those made so far again and frees none, and the walks grow with the
file. On a 1,602-hand local-table log the read took 21 s, 8 s of it without the collector;
its cost per hand was 4 times a 42-hand log's (``mjbot bench view``). Paused, nothing is
lost: reference counting still frees what dies at once, and the collector, on again when the
last read ends, finds any cycle made meanwhile (by this thread or another). Reads in several
threads at once (the viewer's build pool) share one pause, but only those begun while the
read that began it goes on: a read begun later runs with the collector as the pause leaves it, so
that a steady stream of overlapping reads (two analysts opening long games one after the
other) cannot keep it off for good in a long-lived process (``mjbot serve``), every cycle
the process makes meanwhile kept. A collector the program turned off stays off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_reads = 0  # reads in the pause now on, in every thread
_open = False  # whether a read beginning now joins it: until the read that began it ends
_resume = False  # whether the collector was on when the pause began


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off until this read and every other one that joined its pause have
    ended (a read begun once the read that began the pause has ended runs in it without
    extending it)."""
    global _reads, _open, _resume
    with _lock:
        began = _reads == 0
        joined = began or _open
        if began:
            _resume = gc.isenabled()
            gc.disable()
            _open = True
        if joined:
            _reads += 1
    try:
        yield
    finally:
        if joined:
            with _lock:
                _reads -= 1
                _open = _open and not began
                if _reads == 0 and _resume:
                    gc.enable()


_frozen = 0  # holders of the freeze now on (kept_frozen), in every thread
_freezer: object | None = None  # the holder that began it: its end thaws, whoever else holds


def freeze_kept() -> object:
    """Everything the collector tracks now moved out of its walks (``gc.freeze``) until
    :func:`thaw` with the token returned: for a read's objects that live on after its pause
    (the viewer's commentary holds every seat's replay for a minute, a part at a time).
    Made while the collector was off, they were all in the youngest generation when it came
    on again, and the next collections walked every one of them (0.6 s, then 0.9 s, on a
    480-hand file) with the interpreter held; frozen, they are never walked, and the
    collector goes on with everything made after. Holders share one freeze, but the first
    holder's thaw ends it for all (as a pause is not extended by reads that join it): a
    steady stream of overlapping commentaries cannot keep the process's objects frozen for
    good, their cycles never collected."""
    global _frozen, _freezer
    token = object()
    with _lock:
        _frozen += 1
        if _freezer is None:
            _freezer = token
        gc.freeze()
    return token


def thaw(token: object) -> None:
    """The end of :func:`freeze_kept`'s hold ``token``: the frozen objects go back to the
    collector (its oldest generation) once the holder that began the freeze, or the last
    holder, ends."""
    global _frozen, _freezer
    with _lock:
        _frozen -= 1
        if token is _freezer or _frozen == 0:
            _freezer = None
            gc.unfreeze()
