"""Ending a long run (arena, league, self-play) before its last unit, and the worker
processes that play its units.

A stop is asked for by a deadline or a signal and answered by the run itself at its next
safe point: while it waits for a unit (at once, the units under way are abandoned) or, in one
process, once the unit under way has finished; there a signal also ends a wait on an outside
program at once (that unit is abandoned: a hung program would hold it for its whole limit,
again at every hand it is started for). A signal only records that a stop was asked for, so
nothing the run is writing (a shard, a league's arena file, the figures) is ever cut
in the middle; a second Ctrl-C raises KeyboardInterrupt as usual, for a run that must end now.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

from adapter.early_stop import json_line
from adapter.local.external.process import (
    WaitAbandoned,
    abandon_waits_when,
    die_with_parent,
    kill_live_groups,
)
from adapter.logging_setup import json_asked
from replay.dataset.stats import stop_reason_text as stop_reason_text  # one wording: re-exported


class StopRequest:
    """Why the run should stop ("time", "SIGTERM", "SIGINT"), or "" to go on; calling it
    asks (and notes a passed deadline). The first reason given stays. ``command``: the words
    its note on a signal names (``arena``), as the run's other lines do."""

    def __init__(self, stop_after: float | None = None, command: str = "") -> None:
        self.deadline = None if stop_after is None else time.monotonic() + stop_after
        self.reason = ""
        self.command = command

    def __call__(self) -> str:
        if not self.reason and self.deadline is not None and time.monotonic() >= self.deadline:
            self.reason = "time"
        return self.reason

    def _signalled(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if name == "SIGINT" and self.reason == "SIGINT":
            raise KeyboardInterrupt  # the second Ctrl-C: now
        self.reason = self.reason if self.reason.startswith("SIG") else name
        # a note nobody can read is dropped: raised here, in the game under way (a run
        # whose parent was killed outright, its stderr a pipe to it), the error ended that
        # game as a referee error in the dataset
        with contextlib.suppress(OSError):
            if json_asked():  # --log-json: every line a log collector reads is JSON
                os.write(2, json_line("stopping with what has finished", "warning",
                                      command=self.command or None, signal=name).encode())
                return
            # one wording with the run's other stop lines, and the one SIGTERM in its first
            # second gets: `mjbot arena: stopped (SIGTERM)` (this said `mjbot: SIGTERM: ...`)
            os.write(2, f"\nmjbot{' ' + self.command if self.command else ''}: stopping "
                        f"({name}) with what has finished"
                        f"{' (Ctrl-C again: at once)' if name == 'SIGINT' else ''}\n".encode())

    @contextlib.contextmanager
    def on_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT (Ctrl-C) ask for the stop for the time of the run; the
        previous handlers come back afterwards. A SIGINT the process was started ignoring
        (a background job of a script) stays ignored, as Python leaves it."""
        kinds = [signal.SIGTERM]
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            kinds.append(signal.SIGINT)
        previous = {s: signal.signal(s, self._signalled) for s in kinds}
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


class SignalledEnd(KeyboardInterrupt):
    """SIGTERM where a run cannot stop between units (``selfplay --out-shared``): it ends at
    once, as a second Ctrl-C does, and the command exits 128 + ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.said = f"ended by {signal.Signals(signum).name}"  # cli.main's line


class WorkerDied(RuntimeError):
    """A worker process ended while it played a unit (killed, out of memory, a crash in a
    native library): the run cannot be completed and says so instead of waiting forever."""


# The signals a worker answers in its own way. The run's process holds them back while the
# executor forks its workers (in submit, all of them at the first with Python's fork start
# method): a forked worker has the run's handlers until worker_signals replaces them, and
# the run's SIGTERM handler only notes a stop. A worker signalled in that window (the pool
# closed by a stop at the very start, on a loaded machine) went on: it played a unit and
# waited for ever to send its 2 MB result to a run that no longer read it, while the run
# waited for it to exit. Held back, the signal reaches the worker's own handler instead.
_WORKER_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
# Windows has no signal masks (nor fork: a spawned worker starts with Python's own handlers)
_MASKS = hasattr(signal, "pthread_sigmask")


def worker_signals(parent: int | None) -> None:
    """In a worker: Ctrl-C is for the run's own process to answer, and SIGTERM (the pool
    closing, or a ``timeout`` that signals the whole group) ends the worker at once, with
    the outside programs it runs (each in its own process group, which no ``finally``
    would reach once the worker is ended). The worker is sent that SIGTERM by the kernel
    when the run's process (``parent``: its pid, taken before the fork) dies, even by
    SIGKILL, or now if it is gone already, so it never plays on (and keeps outside programs
    running) for a run that is gone. ``parent`` is None where the worker's parent is not the
    run (the forkserver start method, Python 3.14's default on Linux): the kernel's signal
    then comes with the forkserver's death, which follows the run's. The signals held back
    while it was forked (see UnitPool.submit) come now, to these handlers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    die_with_parent(signal.SIGTERM, parent)
    if _MASKS:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WORKER_SIGNALS)


def _end_worker(signum: int, frame: object) -> None:
    kill_live_groups()
    os._exit(128 + signum)


_DIED = ("a worker process ended abruptly (killed, out of memory, or a crash in native "
         "code) and {} could not be played: the run cannot finish")


class UnitPool:
    """Worker processes for a run's units, closed at once however the run ends. A
    ProcessPoolExecutor, not multiprocessing.Pool: a worker that dies breaks the executor,
    which this reports as :class:`WorkerDied`, where multiprocessing.Pool replaces the
    worker and the lost unit is awaited forever."""

    def __init__(self, workers: int) -> None:
        # The run's pid for a worker it forks itself (fork, spawn); a forkserver's worker is
        # the forkserver's child, and taking the run for its parent, it ended at once.
        context = multiprocessing.get_context()
        run = os.getpid() if context.get_start_method() in ("fork", "spawn") else None
        self.executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=worker_signals,
            initargs=(run,))

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _WORKER_SIGNALS) if _MASKS else None
        try:  # held back: see worker_signals
            return self.executor.submit(fn, *args)
        except concurrent.futures.process.BrokenProcessPool:
            raise WorkerDied(_DIED.format("a unit")) from None
        finally:
            if held is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)

    @staticmethod
    def result(future: concurrent.futures.Future[Any], unit: int) -> Any:
        """The unit's result; its own exception as it was raised; a dead worker as
        :class:`WorkerDied` naming the unit."""
        try:
            return future.result()
        except concurrent.futures.process.BrokenProcessPool:
            raise WorkerDied(_DIED.format(f"unit {unit}")) from None

    def _workers(self) -> list[Any]:
        """The executor's worker processes, taken as a list (its private ``_processes``)."""
        return list((getattr(self.executor, "_processes", None) or {}).values())

    def check_workers(self) -> None:
        """:class:`WorkerDied` if a worker has ended. The executor reports a dead worker
        itself, except one killed in the middle of sending a result (a self-play unit is
        2 MB, long to send when the run is slow to read it): the executor's thread then
        waits for the rest of that message for ever and never looks at the workers, and
        the run would wait for its units for ever. A worker of this pool never ends on its
        own before the close, so one that has ended died."""
        if multiprocessing.connection.wait([p.sentinel for p in self._workers()], timeout=0):
            raise WorkerDied(_DIED.format("a unit under way"))

    def close(self) -> None:
        """End the workers (SIGTERM: with the outside programs they run) without waiting for
        the units under way, then shut the executor down, the units not started cancelled.
        The processes are taken before the shutdown, which drops the executor's handle on
        them (``_processes``, private but the same since Python 3.2); a shutdown first would
        leave the workers to finish their units, and the interpreter's exit to wait for them
        (and race the executor's own thread, printing an ignored OSError)."""
        for process in self._workers():
            with contextlib.suppress(OSError, ValueError):
                process.terminate()
        # A worker ended in the middle of sending a result leaves half a message in the
        # result pipe, and the executor's thread waits for its rest for ever (the shutdown
        # below with it: a run that never ended). This process never writes to that pipe:
        # with its end closed, the pipe reads as ended once the workers are gone, and the
        # thread sees a broken pool and ends.
        results = getattr(self.executor, "_result_queue", None)
        with contextlib.suppress(AttributeError, OSError):
            results._writer.close()  # type: ignore[union-attr]
        self.executor.shutdown(wait=True, cancel_futures=True)


def play_in_process(play: Callable[[Any, int], Any], config: Any, units: int,
                    stop: StopRequest, first: int = 0) -> Iterator[Any]:
    """``play(config, unit)`` for every unit from ``first``, here, in order, until ``stop``
    asks: between units, or at once after a signal while an outside program is awaited (that
    unit is abandoned, as a worker's would be)."""
    with abandon_waits_when(lambda: stop.reason.startswith("SIG")):
        for unit in range(first, units):
            if stop():
                return
            try:
                result = play(config, unit)
            except WaitAbandoned:
                return
            yield result


def play_units(play: Callable[[Any, int], Any], config: Any, units: int, workers: int,
               stop: StopRequest, ordered: bool, first: int = 0) -> Iterator[Any]:
    """``play(config, unit)`` for every unit from ``first`` in ``workers`` processes, at most
    two a worker queued ahead of the units taken; the results in unit order (``ordered``: a
    self-play dataset) or as they finish (an arena). Ends where ``stop`` asks, at once (the
    units under way are abandoned), and however it ends, ends the workers. A worker that died is
    :class:`WorkerDied`, unless a stop was asked for: a SIGTERM to the whole group ends the
    workers too."""
    pool = UnitPool(workers)
    pending: dict[int, concurrent.futures.Future[Any]] = {}
    submitted = taken = first
    try:
        while taken < units:
            while submitted < units and submitted < taken + 2 * workers:
                pending[submitted] = pool.submit(play, config, submitted)
                submitted += 1
            if stop():
                return
            watched = [pending[taken]] if ordered else list(pending.values())
            finished, _ = concurrent.futures.wait(
                watched, timeout=0.25, return_when=concurrent.futures.FIRST_COMPLETED)
            for unit in [u for u, future in pending.items() if future in finished]:
                taken += 1
                yield pool.result(pending.pop(unit), unit)
            if not finished:
                pool.check_workers()
    except WorkerDied:
        if stop():
            return
        raise
    finally:
        pool.close()
