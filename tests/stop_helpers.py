"""A long `mjbot` run (arena, league, selfplay) stopped by a signal, as a terminal or a
scheduler stops it: once its progress bar shows a finished wall set."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

WALL_SETS_DONE = re.compile(rb"\] (\d+)/\d+ wall sets")
# what arena, league and selfplay say (exit status 1) when --stop-after passed before a wall
# set had finished
NONE_FINISHED = re.compile(r"stopped \(--stop-after passed\) before the first (wall set was "
                           r"finished|arena had a finished wall set)")


def stopped_by_deadline(run: Callable[[float], subprocess.CompletedProcess[str]],
                        first: float = 1.5, most: float = 48.0
                        ) -> subprocess.CompletedProcess[str]:
    """``run(seconds)``, a run given ``--stop-after SECONDS`` that must finish a wall set
    before its deadline, with the shortest deadline that let one finish: ``first``, doubled
    (up to ``most``) while the run answers that none had finished, as it must where the
    machine is too loaded for one in that time. Its workers play to the deadline, so its
    length is their CPU: a fixed 6 s (3 s once let none finish under a load of 9) cost
    ~12 s of CPU a run, where a wall set finishes in well under a second on an idle
    machine. Any other answer is returned, for the test to check."""
    seconds = first
    while True:
        r = run(seconds)
        if not (r.returncode == 1 and NONE_FINISHED.search(r.stderr) and seconds < most):
            return r
        seconds *= 2


def _started(args: list[str]) -> tuple[subprocess.Popen[bytes], bytearray, threading.Thread]:
    """``mjbot ARGS --progress`` in its own session, its stderr gathered by a thread (which
    ends once every process that holds the stderr has ended)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", *args, "--progress"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = bytearray()

    def read() -> None:
        stderr = proc.stderr
        assert isinstance(stderr, io.BufferedReader)  # Popen's default buffering: read1 exists
        while chunk := stderr.read1(4096):
            seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return proc, seen, reader


def _all_said(seen: bytearray, reader: threading.Thread) -> str:
    """The run's whole stderr, read to its end: called once no process of the group is
    left (a fixed pause instead could take the text before the run's last line was read)."""
    reader.join(timeout=60)
    assert not reader.is_alive(), "the run's stderr never ended"
    return bytes(seen).decode(errors="replace")


def _wait_for_wall_sets(proc: subprocess.Popen[bytes], seen: bytearray, after: int) -> None:
    deadline = time.monotonic() + 120
    while max(map(int, WALL_SETS_DONE.findall(bytes(seen))), default=0) < after:
        assert time.monotonic() < deadline and proc.poll() is None, bytes(seen)[-2000:]
        time.sleep(0.05)


def _nothing_left(proc: subprocess.Popen[bytes]) -> None:
    with pytest.raises(ProcessLookupError):  # the workers went with it
        for _ in range(50):
            os.killpg(proc.pid, 0)
            time.sleep(0.1)


def kill_a_worker(args: list[str]) -> tuple[int, str]:
    """Run ``mjbot ARGS --progress`` with worker processes, kill one of them (SIGKILL, as
    the kernel's out-of-memory killer does) once a wall set has finished, and return the
    run's exit status and stderr: it must end by itself, leaving no process behind."""
    proc, seen, reader = _started(args)
    try:
        _wait_for_wall_sets(proc, seen, 1)
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split()
        assert children, "no worker process"
        os.kill(int(children[0]), signal.SIGKILL)
        proc.wait(timeout=60)
        _nothing_left(proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, _all_said(seen, reader)


def stop_by_signal(args: list[str], signum: int, after: int = 1) -> tuple[int, str]:
    """Run ``mjbot ARGS --progress``, send ``signum`` to its process group (workers
    included, as a terminal's Ctrl-C or ``timeout`` does) once ``after`` wall sets have
    finished, and return its exit status and stdout; no process of the group may be left
    behind.

    A stopped run keeps the wall sets finished from the first on (a duplicate prefix), and
    with several workers the first may be the one still playing: there ``after`` is taken
    large enough that the first wall set has surely finished (one worker playing six while
    another plays the first would need a first wall set six times the usual length). SIGINT
    is made the default in the child, as in a terminal's foreground job (pytest-xdist's
    workers ignore it, and a process that inherits an ignored SIGINT keeps ignoring it)."""
    proc, seen, reader = _started(args)
    try:
        _wait_for_wall_sets(proc, seen, after)
        os.killpg(proc.pid, signum)  # as a terminal's Ctrl-C or `timeout` sends it
        proc.wait(timeout=60)
        assert proc.stdout is not None
        stdout = proc.stdout.read()  # stderr is the reader thread's
        _nothing_left(proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever failed above, nothing is left
    said = _all_said(seen, reader)
    assert "Traceback" not in said, said[-3000:]
    return proc.returncode, stdout.decode()


def kill_outright(args: list[str], after: int = 1) -> int:
    """Run ``mjbot ARGS --progress`` and SIGKILL its whole process group (workers included,
    as a power cut ends them: nothing of the run answers) once ``after`` wall sets have
    finished; returns, once no process of the group is left, the wall sets its progress bar
    had shown done when the kill was sent."""
    proc, seen, _ = _started(args)
    try:
        _wait_for_wall_sets(proc, seen, after)
        os.killpg(proc.pid, signal.SIGKILL)
        shown = max(map(int, WALL_SETS_DONE.findall(bytes(seen))))
        proc.wait(timeout=60)
        _nothing_left(proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return shown
