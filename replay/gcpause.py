"""Python's cycle collector paused while a game log is read into objects that all live on.

Reading a log builds a few hundred objects per move (frames, events, each decision's legal
moves and candidates), every one of them kept: each full collection their allocation
triggers walks all of those made so far again and frees none, and the walks grow with the
file. On a 1,602-hand local-table log the read took 21 s, 8 s of it without the collector;
its cost per hand was 4 times a 42-hand log's (``mjbot bench view``). Paused, nothing is
lost: reference counting still frees what dies at once, and the collector, on again when the
last read ends, finds any cycle made meanwhile (by this thread or another). Reads in several
threads at once (the viewer's build pool) share one pause; a collector the program turned
off stays off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_reads = 0  # reads in progress, in every thread
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off until this read and every other one begun meanwhile have ended."""
    global _reads, _resume
    with _lock:
        if _reads == 0:
            _resume = gc.isenabled()
            gc.disable()
        _reads += 1
    try:
        yield
    finally:
        with _lock:
            _reads -= 1
            if _reads == 0 and _resume:
                gc.enable()
