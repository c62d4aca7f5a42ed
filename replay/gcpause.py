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
the process makes meanwhile kept. A collector the program turned off stays off, and so does
one turned off for the process's end (:func:`off_until_exit`).
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
_exiting = False  # off_until_exit: no pause's end turns the collector on, no thaw unfreezes


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
                if _reads == 0 and _resume and not _exiting:
                    gc.enable()


_frozen = 0  # holders of the freeze now on (kept_frozen), in every thread
_freezer: object | None = None  # the holder that began it: its end thaws, whoever else holds


def freeze_kept() -> object:
    """Everything the collector tracks now moved out of its walks (``gc.freeze``) until
    :func:`thaw` with the token returned: for a read's objects that live on after its pause
    (the viewer's commentary holds every seat's replay to its end, a part at a time).
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
            if not _exiting:
                gc.unfreeze()


def off_until_exit() -> None:
    """The process is stopping (``mjbot view``, ``mjbot serve`` once its sessions' logs are
    closed): the collector off for good and everything it tracks frozen, so that neither a
    collection on the way out nor the interpreter's last one at exit walks the viewer's
    parsed games (a 300-game log's export given up by the stop: a million objects, 0.8 to
    3.9 s between SIGTERM and the exit, the loop held meanwhile). Reads and commentaries
    still in flight end without turning it on again or thawing. Nothing is lost:
    reference counting still frees what dies, the files are closed by their owners, and the
    memory goes back to the system with the process."""
    global _exiting
    with _lock:
        _exiting = True
        gc.disable()
        gc.freeze()
