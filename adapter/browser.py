"""`mjbot view --open`'s browser: opened by Python's webbrowser (its choice of browser,
$BROWSER, its fallbacks), with a note of the programs it started, so that the view, when
stopped, ends a console browser it is still waiting for (lynx, w3m: they run in the
foreground and would outlive the view, asking a server that is gone) and leaves alone a GUI
browser that was asked to open a tab and returned."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import webbrowser
from typing import Any

from adapter.own_python import outside_env

_STOP_WAIT_S = 5.0  # how long a console browser has to end on SIGTERM before SIGKILL


def _stat(pid: int | str) -> list[bytes] | None:
    """/proc's fields of ``pid`` after its name (state, ppid, ..., [19] start time); None
    where it is gone or there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _descendants(pid: int) -> list[tuple[int, bytes]]:
    """The processes ``pid`` started, and theirs, each with its start time (which tells it
    from a later process given the same pid): a $BROWSER that is a wrapper (xdg-open where
    there is no display, a script) runs the console browser as its child, which SIGTERM to
    the wrapper alone leaves running on the terminal. From /proc (Linux); elsewhere none."""
    parents: dict[int, list[tuple[int, bytes]]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            fields = _stat(name) if name.isdigit() else None
            if fields is not None and len(fields) > 19:
                parents.setdefault(int(fields[1]), []).append((int(name), fields[19]))
    found: list[tuple[int, bytes]] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def _still(pid: int, started: bytes) -> bool:
    """Whether the process ``pid`` that started at ``started`` still runs (not a zombie)."""
    fields = _stat(pid)
    return fields is not None and len(fields) > 19 and fields[19] == started \
        and fields[0] != b"Z"


def _end(tree: list[tuple[int, bytes]], signum: int) -> None:
    for pid, started in tree:
        if _still(pid, started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)


class _Recording:
    """webbrowser's view of the subprocess module: the same, except that Popen notes each
    program started with our terminal (stdin not redirected: a console browser; GUI
    browsers are started on DEVNULL or in the background), and starts none once stopping."""

    def __init__(self, opener: BrowserOpener) -> None:
        self._opener = opener

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def Popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen[Any]:
        return self._opener._started(args, kwargs)


class BrowserOpener:
    """Opens a URL in a browser on a daemon thread (webbrowser waits for a console browser
    to end, and on the event loop it held the server that browser asks for the page), and
    ends, on ``stop``, the console browser that thread still waits for."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._stopping = False
        self._waited: list[subprocess.Popen[Any]] = []
        # a daemon thread, not asyncio.to_thread: the executor's threads are joined at exit
        self._thread = threading.Thread(target=self._open, daemon=True,
                                        name="mjbot view --open")

    def start(self) -> None:
        self._thread.start()

    def _started(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> subprocess.Popen[Any]:
        with self._lock:
            if self._stopping:  # webbrowser tries the next browser when one ended badly
                raise OSError("mjbot view is stopping")
            # the user's browser is an outside program: no secret of ours (the status token)
            kwargs["env"] = outside_env(kwargs.get("env"))
            process: subprocess.Popen[Any] = subprocess.Popen(*args, **kwargs)
            if kwargs.get("stdin") is None:
                self._waited.append(process)
            return process

    def _open(self) -> None:
        recording = _Recording(self)
        # typeshed does not declare webbrowser's own `subprocess`, hence setattr
        setattr(webbrowser, "subprocess", recording)  # noqa: B010
        try:
            opened = webbrowser.open(self.url)
        except (webbrowser.Error, OSError):
            opened = False
        finally:
            if getattr(webbrowser, "subprocess", None) is recording:
                setattr(webbrowser, "subprocess", subprocess)  # noqa: B010
        if not opened and not self._stopping:
            print("mjbot view: no browser could be opened here; open the address above in "
                  "one", file=sys.stderr, flush=True)

    def stop(self) -> list[int]:
        """End the console browsers the opening still waits for, with what they started
        (SIGTERM, then SIGKILL after a few seconds), start no other; the pids ended. A
        browser whose opening returned (a GUI one, asked for a tab) is the user's and
        stays."""
        with self._lock:
            self._stopping = True
            waiting = self._thread.is_alive()
            ended = [p for p in self._waited if waiting and p.poll() is None]
        # listed before any ends: a wrapper's browser is re-parented once the wrapper goes
        tree = [child for p in ended for child in _descendants(p.pid)]
        deadline = time.monotonic() + _STOP_WAIT_S
        for process in ended:
            process.terminate()
        _end(tree, signal.SIGTERM)
        for process in ended:
            try:
                process.wait(timeout=_STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if tree:  # (none without /proc: signal.SIGKILL is not on Windows)
            while any(_still(*child) for child in tree) and time.monotonic() < deadline:
                time.sleep(0.05)
            _end(tree, signal.SIGKILL)
        if waiting:
            self._thread.join(timeout=_STOP_WAIT_S)
        return [p.pid for p in ended] + [pid for pid, _ in tree]
