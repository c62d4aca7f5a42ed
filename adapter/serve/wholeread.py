"""The viewer's idle whole reads of listed logs (viewer.py's _read_listed), done in a child
process at the lowest CPU priority.

Read in a thread of the serve process, a whole read (pure Python: a 40-game match log, about a
second of CPU) held the interpreter lock against the event loop that drives the sessions: in a
serve-like process (a Tenhou session against the fake server, the viewer listing a folder of
40-game logs) the loop's lag rose and the session's decisions fell by more than half while the
reads ran, though the viewer was "idle". The child holds no lock of ours, and ``os.nice(19)``
(on Linux the SCHED_IDLE class too), done before it imports anything, leaves it only the CPU
the sessions do not use. It answers
where the log stops and why, one JSON line per path asked, after a line (BEGUN) saying it
began to read it (a child that dies before that, as it starts or while idle, is no verdict on
the log: ChildGone; one that dies after it died reading the log: ChildDied); nothing else
crosses.

The child is started as a new interpreter (``subprocess``: fork and exec at once), never a
plain fork of the serve process (its loop, its threads), nor the thinking workers' fork server
(its preload is the first start's: started here first, it would lack the policy modules). It
is kept between reads, and killed where a read is given up (a viewer request came, the server
stops: :func:`replay.progress.check`, asked every POLL seconds while it reads), so that a
stop never waits on it. Where the platform's pipes cannot be waited on with a timeout
(Windows), the read is done in this process as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import IO, Any

from adapter.own_python import own_env, own_python

NICE = 19  # the child's niceness added (the kernel caps it at 19: the lowest priority)
POLL = 0.05  # seconds between two looks at the give-up check while the child reads
ERROR_CHARS = 200
END_WAIT = 1.0  # seconds a child whose answer ended is given to end, its status read
BEGUN = b'{"reading": true}\n'  # the child's line as it begins a read, its imports done


class ReadFailed(Exception):
    """The child's read failed in a way a log's own damage does not explain (its reason)."""


class ChildGone(Exception):
    """The child ended (or answered no JSON) before it answered, or could not be started: no
    verdict on the log."""


class ChildDied(ChildGone):
    """The child was killed by a signal while it read the log (a crash, the kernel's
    out-of-memory kill under a memory limit): the log's doing where a fresh child dies on it
    too (the viewer's _read_listed), a stray kill's where not."""

    def __init__(self, signal_number: int) -> None:
        try:
            name = signal.Signals(signal_number).name
        except ValueError:
            name = f"signal {signal_number}"
        super().__init__(f"the reading process died on the log (killed by {name})")
        self.how = f"killed by {name}"
        self.signal_number = signal_number

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(message)
        return type(self), (self.signal_number,), self.__dict__


def read_here(path: str) -> str:
    """Where the log at ``path`` stops ("" at its end): read in this process, each frame
    checked and dropped (``keep=False``). OSError, ValueError: gone, or no log."""
    from replay.log import read_log  # (the child imports it after its nice)

    truncated = read_log(path, keep=False).truncated
    return "" if truncated is None else truncated.note()


class ChildReader:
    """One low-priority child that reads logs whole, started at the first read and kept;
    ``reads``: the answers it gave, ``started``: children started, ``nice``: the last child's
    niceness as it reported it (what the tests and the bench look at)."""

    def __init__(self, command: tuple[str, ...] | None = None) -> None:
        self.command = command or own_python("-m", "adapter.serve.wholeread")
        self.apart = os.name == "posix"  # poll() on a pipe; else read_here
        self.reads = 0
        self.started = 0
        self.nice: int | None = None
        self.idle: bool | None = None  # the child runs in Linux's idle scheduling class
        self.pid: int | None = None
        self._child: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # one read at a time; close() from the loop
        self._closed = False

    def read(self, path: str) -> str:
        """Where the log at ``path`` stops ("": it reads to its end), read by the child;
        OSError or ValueError as :func:`read_here` raises them; :class:`ReadFailed` where the
        child's read failed otherwise, :class:`ChildGone` where it ended first (or never
        started); what :func:`replay.progress.check` raises (the child then killed)."""
        if not self.apart:
            return read_here(path)
        with self._lock:
            if self._closed:
                raise ChildGone("the reader is closed")
            child = self._start()
            assert child.stdin is not None and child.stdout is not None
            try:
                child.stdin.write(json.dumps(path).encode() + b"\n")
                child.stdin.flush()
                line = self._line(child)
                # died before this line (killed as it started: a memory limit reached, or
                # while idle): not the log's doing, where every listed log was marked so
                began = line == BEGUN
                if began:
                    line = self._line(child)
            except BaseException:
                self._kill()  # given up (or its pipe broke): a fresh child for the next
                raise
            if not line:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(END_WAIT)  # its own end's status, not that of our kill
                self._kill()
                if began and child.returncode is not None and child.returncode < 0:
                    raise ChildDied(-child.returncode)
                raise ChildGone(f"the reading process ended (exit {child.returncode})")
            try:
                answer = json.loads(line)
            except ValueError:
                self._kill()
                raise ChildGone(f"the reading process answered {line[:80]!r}") from None
        self.reads += 1
        self.nice = answer.get("nice")
        self.idle = answer.get("idle")
        if "cut" in answer:
            return str(answer["cut"])
        if answer.get("error") == "OSError":
            raise OSError(answer.get("reason", ""))
        if answer.get("error") == "ValueError":
            raise ValueError(answer.get("reason", ""))
        raise ReadFailed(str(answer.get("reason", "")))

    @staticmethod
    def _line(child: subprocess.Popen[bytes]) -> bytes:
        """The child's next line (b"" where it ended), :func:`replay.progress.check` asked
        every POLL seconds meanwhile."""
        from adapter.local.external.process import ready_fds  # (poll: no FD_SETSIZE)
        from replay import progress

        assert child.stdout is not None
        while not ready_fds([child.stdout.fileno()], timeout=POLL)[0]:
            progress.check()
        return child.stdout.readline()

    def close(self) -> None:
        """Kill the child (the server stops): never waited for."""
        self._closed = True
        self._kill()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._child is not None and self._child.poll() is None:
            return self._child
        try:
            # unbuffered: a readline takes no more than its line (BEGUN and the answer come
            # at once from a quick read), none left in a buffer that poll() cannot see
            self._child = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                           env=own_env(), bufsize=0)
        except OSError as exc:  # not the log's OSError (gone): no verdict on it
            raise ChildGone(f"the reading process cannot be started: {exc}") from None
        self.started += 1
        self.pid = self._child.pid
        return self._child

    def _kill(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        with contextlib.suppress(OSError):
            child.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(1)  # (SIGKILL: reaped at once)
        for pipe in (child.stdin, child.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


def serve(lines: IO[bytes], out: IO[bytes]) -> None:
    """The child's loop: a JSON path a line in, a JSON answer a line out, until its input
    ends (its parent closed the pipe or died)."""
    import replay.log  # noqa: F401  (the reader's imports, before the first BEGUN)

    nice = os.nice(0)
    idle = hasattr(os, "SCHED_IDLE") and os.sched_getscheduler(0) == os.SCHED_IDLE
    for line in lines:
        answer: dict[str, Any] = {"nice": nice, "idle": idle}
        out.write(BEGUN)  # a death from here on is this read's
        out.flush()
        try:
            answer["cut"] = read_here(json.loads(line))
        except (OSError, ValueError) as exc:  # (LogError is a ValueError)
            answer.update(error="OSError" if isinstance(exc, OSError) else "ValueError",
                          reason=str(exc)[:ERROR_CHARS])
        except Exception as exc:  # the parent records it as the log's failure
            answer.update(error="failed",
                          reason=f"{type(exc).__name__}: {str(exc)[:ERROR_CHARS]}")
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()


def main() -> None:
    """The child: lowest priority first (and Linux's idle class, which runs it only on a
    CPU nothing else wants), then the reader's imports and its loop. Ctrl-C reaches the whole
    process group: the parent ends this process itself (its stop, a read given up), which
    killed by it ended the read in hand as ChildGone while serve stopped its sessions."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    nice = getattr(os, "nice", None)  # (Windows has none: not taken at import)
    if nice is not None:
        with contextlib.suppress(OSError):
            nice(NICE)
    if hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
