"""A signal handled on the running event loop, on every loop: ``loop.add_signal_handler``
where the loop has it, else ``signal.signal`` with a handler that hands the call to the loop.

Windows' event loops have no ``add_signal_handler`` (NotImplementedError). The commands that
asked for one and let that pass went on with no handler at all: Ctrl-C there reached asyncio's
own (the main task cancelled, then KeyboardInterrupt), so a session in a game was not told it
was stopped and its game log did not say so; and ``signal.SIGHUP`` does not exist there, so
``mjbot serve`` failed at its start. ``signal.signal`` works on every platform's main thread;
the loop is woken by the wakeup descriptor asyncio sets for its own loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import Any


def on_signal(sig: int | None, callback: Callable[..., object], *args: Any) -> Callable[[], None]:
    """Call ``callback(*args)`` on the running loop when ``sig`` comes (None, a signal this
    platform lacks: nothing); returns what undoes it. Nothing is installed where neither way
    can (not the main thread): the process's default stays."""
    if sig is None:
        return _nothing
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(sig, callback, *args)
    except NotImplementedError:
        pass
    except (RuntimeError, ValueError, OSError):  # not the main thread, or not a signal here
        return _nothing
    else:
        return lambda: _remove(loop, sig)

    def handler(_signum: int, _frame: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: its run is over
            loop.call_soon_threadsafe(callback, *args)

    try:
        before = signal.signal(sig, handler)
    except (ValueError, OSError):  # not the main thread
        return _nothing

    def undo() -> None:
        if signal.getsignal(sig) is handler:
            signal.signal(sig, signal.SIG_DFL if before is None else before)
    return undo


def _remove(loop: asyncio.AbstractEventLoop, sig: int) -> None:
    if not loop.is_closed():
        loop.remove_signal_handler(sig)


def _nothing() -> None:
    """Undo of a handler that was not installed."""
