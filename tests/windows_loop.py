"""TEST FIXTURE: an event loop that, as Windows' Proactor loop, cannot watch a file
descriptor (``add_reader``) nor take a signal handler (``add_signal_handler``): both raise
NotImplementedError. It is a real selector loop otherwise (it watches its own sockets through
private methods, untouched), so code that runs on it runs as it would on Linux, less those.

``python -m tests.windows_loop ARGS`` runs ``mjbot ARGS`` with every loop it makes one of these;
with ``MJBOT_TEST_NO_SIGHUP=1`` in its environment the ``signal`` module has no SIGHUP, as on
Windows.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, TypeVarTuple

Ts = TypeVarTuple("Ts")


class ProactorLikeLoop(asyncio.SelectorEventLoop):
    """A loop with no public ``add_reader`` / ``remove_reader`` / ``add_signal_handler`` /
    ``remove_signal_handler``."""

    def add_reader(self, fd: Any, callback: Callable[[*Ts], Any],
                   *args: *Ts) -> None:
        raise NotImplementedError

    def remove_reader(self, *args: Any, **kwargs: Any) -> bool:
        raise NotImplementedError

    def add_signal_handler(self, sig: int, callback: Callable[[*Ts], object],
                           *args: *Ts) -> None:
        raise NotImplementedError

    def remove_signal_handler(self, *args: Any, **kwargs: Any) -> bool:
        raise NotImplementedError


class _Policy(asyncio.DefaultEventLoopPolicy):
    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return ProactorLikeLoop()


if __name__ == "__main__":
    asyncio.set_event_loop_policy(_Policy())
    if os.environ.get("MJBOT_TEST_NO_SIGHUP") == "1":
        del signal.SIGHUP
    from adapter.cli import main

    sys.exit(main(sys.argv[1:]))
