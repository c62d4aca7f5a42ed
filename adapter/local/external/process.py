"""An outside program on stdin/stdout, read line by line under a deadline.

The program runs in its own process group (session), so that killing it takes whatever it
started with it: an arena must leave no process behind, whatever the program does. Its stderr
goes to a temporary file, read back (the last lines) when it dies, so that a crash is reported
with its own words; nothing is ever left unread in a pipe.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time

EXIT_GRACE = 0.5  # seconds a program is given to exit by itself once its input is closed
STDERR_TAIL = 300
EXIT_POLL = 0.1  # how often a silent program is checked for having exited
MAX_LINE = 1 << 20  # bytes: a longer answer is garbage (and the stream is past saving)


class SeatFault(Exception):
    """What went wrong with an outside program's answer. ``reason``: late, crashed, garbage
    or illegal; ``raw``: what it sent, as sent (logged, never interpreted)."""

    def __init__(self, reason: str, detail: str, raw: str = "", fatal: bool = False) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail, self.raw = reason, detail, raw
        # the program is out of step with the table: stop it (always so when late or dead)
        self.fatal = fatal or reason in ("late", "crashed")


class LineProcess:
    """One run of an outside program. ``send`` writes text; ``read_line`` returns the next
    line (without its newline) or raises :class:`SeatFault` (late: nothing within the limit;
    crashed: the program exited or closed its output)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.stderr, env=env, start_new_session=True)
        except OSError as exc:
            self.stderr.close()
            raise SeatFault("crashed", f"cannot start {argv[0]!r}: {exc.strerror or exc}") \
                from None
        self.buffer = b""
        self.eof = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise SeatFault("crashed", self.exit_note("closed its input")) from None

    def end_input(self) -> None:
        """Close its stdin: the end of input a one-shot program reads to."""
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def read_line(self, limit: float) -> str | None:
        """The next line; None at the end of its output (the program is done)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + limit
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            if self.eof:
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return line.decode("utf-8", errors="replace")
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise SeatFault("late", f"no answer within {limit:g} s",
                                self.buffer.decode("utf-8", errors="replace"))
            ready, _, _ = select.select([fd], [], [], min(left, EXIT_POLL))
            if not ready:
                if self.proc.poll() is not None:  # exited: what it started may hold the pipe
                    ready, _, _ = select.select([fd], [], [], 0)
                    if not ready:
                        self.eof = True
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True
            if len(self.buffer) > MAX_LINE and b"\n" not in self.buffer:
                raise SeatFault("garbage", f"a line longer than {MAX_LINE} bytes",
                                self.buffer[:200].decode("utf-8", errors="replace"),
                                fatal=True)
        raw, _, self.buffer = self.buffer.partition(b"\n")
        return raw.decode("utf-8", errors="replace").rstrip("\r")

    def expect_line(self, limit: float) -> str:
        """The next line; its end of output is a crash."""
        line = self.read_line(limit)
        if line is None:
            raise SeatFault("crashed", self.exit_note("ended its output"))
        return line

    def exit_note(self, what: str) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=EXIT_GRACE)
        code = self.proc.poll()
        status = "still running" if code is None else f"exit {code}"
        tail = self.stderr_tail()
        return f"the program {what} ({status})" + (f"; stderr: {tail!r}" if tail else "")

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - STDERR_TAIL))
            return " ".join(self.stderr.read().decode("utf-8", errors="replace").split())
        return ""

    def close(self, grace: float = EXIT_GRACE) -> int | None:
        """End the program: its input closed, ``grace`` seconds to exit, then its whole
        process group killed (what it started included). Returns its exit status (None when
        it had to be killed)."""
        code = self.proc.poll()
        if code is None and grace > 0:
            with contextlib.suppress(OSError, ValueError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(timeout=grace)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group outlives its leader
        if self.proc.poll() is None:
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        return code
