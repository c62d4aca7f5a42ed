"""A long `mjbot` run (arena, league, selfplay) stopped by a signal, as a terminal or a
scheduler stops it: once its progress bar shows a finished wall set."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

WALL_SETS_DONE = re.compile(rb"\] (\d+)/\d+ wall sets")


def stop_by_signal(args: list[str], signum: int, after: int = 1) -> tuple[int, str]:
    """Run ``mjbot ARGS --progress``, send ``signum`` once ``after`` wall sets have finished,
    and return its exit status and stdout; no process of its group may be left behind.

    A stopped run keeps the wall sets finished from the first on (a duplicate prefix), and
    with several workers the first may be the one still playing: there ``after`` is taken
    large enough that the first wall set has surely finished (one worker playing six while
    another plays the first would need a first wall set six times the usual length). SIGINT
    is made the default in the child, as in a terminal's foreground job (pytest-xdist's
    workers ignore it, and a process that inherits an ignored SIGINT keeps ignoring it)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter.cli", *args, "--progress"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = bytearray()

    def read() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(4096):
            seen.extend(chunk)

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while max(map(int, WALL_SETS_DONE.findall(bytes(seen))), default=0) < after:
            assert time.monotonic() < deadline and proc.poll() is None, bytes(seen)[-2000:]
            time.sleep(0.05)
        proc.send_signal(signum)
        proc.wait(timeout=60)
        assert proc.stdout is not None
        stdout = proc.stdout.read()  # stderr is the reader thread's
        with pytest.raises(ProcessLookupError):  # the workers went with it
            for _ in range(50):
                os.killpg(proc.pid, 0)
                time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever failed above, nothing is left
    assert "Traceback" not in bytes(seen).decode(errors="replace")
    return proc.returncode, stdout.decode()
