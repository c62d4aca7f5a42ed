"""Who watches a worker process's pipe and its end: the event loop where it can
(``add_reader``: no thread, a death seen the moment it happens), else a thread per worker
that reads the pipe and hands each message to the loop (``call_soon_threadsafe``).

Windows' default loop (Proactor) has no ``add_reader`` (NotImplementedError), and its
selector loop watches sockets only, never a pipe's handle. Where the loop was asked anyway,
every worker's start failed: every decision fell back as "cannot start a worker process",
and each one started a fresh interpreter. A thread keeps the policy in a process of its own:
one that overruns is still killed and its CPU given back, and its work never holds the
session's GIL. Running the policy itself on a thread of the session (the stdin forms' path,
brain/brain.py) would give up both: a policy stuck in a C call cannot be stopped there.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

REAP_WITHIN = 5.0  # seconds the thread waits for a killed worker's status before it leaves it


def why_not_on_the_loop(loop: Any) -> str:
    """Why ``loop`` cannot watch a worker's pipe ("" where it can): asked once per thinker,
    with a pipe of its own, never with a worker's."""
    if sys.platform == "win32":  # the selector loop would take a pipe, then fail in select()
        return "Windows' event loops cannot watch a pipe"
    read, write = os.pipe()
    try:
        loop.add_reader(read, _nothing)
    except (NotImplementedError, OSError, ValueError) as exc:
        said = f": {exc}" if str(exc) else ""
        return f"{type(loop).__name__}.add_reader: {type(exc).__name__}{said}"
    else:
        loop.remove_reader(read)
    finally:
        os.close(read)
        os.close(write)
    return ""


def _nothing() -> None:
    """The probe's reader: never called (nothing is written to its pipe)."""


def exit_code(process: Any, within: float) -> int | None:
    """The exit code of a process whose sentinel has fired, looked for up to ``within``
    seconds (None: not there by then). A spawned worker's sentinel is a pipe that the child
    holds, readable as its files are closed, a moment before the kernel has its status: one
    look (``join(0)``) found nothing, the status was never read, the killed worker stayed a
    zombie until the next start, and one that died was reported with no signal. A fork-server
    child's sentinel carries its status: the first look has it."""
    give_up = time.monotonic() + within
    while True:
        with contextlib.suppress(OSError, ValueError):
            process.join(0)
        code: int | None = process.exitcode
        if code is not None or time.monotonic() >= give_up:
            return code
        time.sleep(0.001)


class PipeThread:
    """Reads one worker's pipe on a thread of its own and hands the loop, in order, each
    message (``on_message``), a message it cannot unpickle (``on_unreadable``, why) and the
    process's end after what it sent before (``on_ended``, its exit code or None). The owner
    :meth:`stop`\\ s it and kills the process: the thread wakes at the process's end, reaps it
    and ends; nothing it read after the stop reaches the loop. The pipe is closed by whichever
    of the two, the stop or the thread's end, comes last: the loop sends jobs on it until the
    stop."""

    def __init__(self, loop: Any, conn: Connection, process: Any,
                 on_message: Callable[[tuple[Any, ...]], None],
                 on_unreadable: Callable[[str], None],
                 on_ended: Callable[[int | None], None]) -> None:
        self.loop, self.conn, self.process = loop, conn, process
        self.on_message, self.on_unreadable, self.on_ended = on_message, on_unreadable, on_ended
        self._lock = threading.Lock()
        self._stopped = self._finished = False
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"mjbot-worker-pipe-{process.pid}")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        """Hand nothing more to the loop; the thread ends at the process's end (kill it)."""
        with self._lock:
            self._stopped = True
            finished = self._finished
        if finished:
            self.conn.close()

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: no one to tell
            self.loop.call_soon_threadsafe(self._deliver, callback, args)

    def _deliver(self, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        if not self._stopped:  # on the loop: a stop there came before it
            callback(*args)

    def _run(self) -> None:
        conn, sentinel = self.conn, self.process.sentinel
        try:
            while not self._stopped:
                ready = wait([conn, sentinel])
                if conn in ready:
                    try:
                        message = conn.recv()
                    except (EOFError, OSError):  # the pipe's end: the process is gone
                        break
                    except Exception as exc:  # a message this process cannot unpickle
                        self._post(self.on_unreadable, f"{type(exc).__name__}: {exc}")
                        continue
                    self._post(self.on_message, message)
                elif sentinel in ready:
                    with contextlib.suppress(EOFError, OSError):
                        while conn.poll():  # what it sent before it went
                            self._post(self.on_message, conn.recv())
                    break
            if not self._stopped:
                self._post(self.on_ended, exit_code(self.process, 0.1))
            exit_code(self.process, REAP_WITHIN)  # reaped: no zombie left behind
        finally:
            with self._lock:
                self._finished = True
                stopped = self._stopped
            if stopped:
                conn.close()
