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
import socket
import subprocess
import tempfile
import time
from collections import deque

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


# The process groups of the outside programs this process runs: a worker process ended by
# its pool (SIGTERM) kills them on its way out, where no ``close`` would run.
_LIVE_GROUPS: set[int] = set()


def kill_live_groups() -> None:
    """Kill every outside program this process started and has not closed, with all it
    started (for a worker that is being ended)."""
    for group in list(_LIVE_GROUPS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
        _LIVE_GROUPS.discard(group)


class LineProcess:
    """One run of an outside program. ``send`` writes text; ``read_line`` returns the next
    line (without its newline) or raises :class:`SeatFault` (late: nothing within the limit;
    crashed: the program exited or closed its output). ``heard``, when set, gets every line
    read (the seat logs what a program said when its move is refused)."""

    heard: deque[str] | None = None

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
        _LIVE_GROUPS.add(self.proc.pid)
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

    def _fd(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def _read(self) -> bytes:
        return os.read(self._fd(), 65536)

    def _exited(self) -> bool:
        return self.proc.poll() is not None

    def end_input(self) -> None:
        """Close its stdin: the end of input a one-shot program reads to."""
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def read_line(self, limit: float) -> str | None:
        """The next line; None at the end of its output (the program is done)."""
        deadline = time.monotonic() + limit
        fd = self._fd()
        while b"\n" not in self.buffer:
            if self.eof:
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return self._heard(line.decode("utf-8", errors="replace"))
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise SeatFault("late", f"no answer within {limit:g} s",
                                self.buffer.decode("utf-8", errors="replace"))
            ready, _, _ = select.select([fd], [], [], min(left, EXIT_POLL))
            if not ready:
                if self._exited():  # a program's children may still hold its pipe
                    ready, _, _ = select.select([fd], [], [], 0)
                    if not ready:
                        self.eof = True
                continue
            chunk = self._read()
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True
            if len(self.buffer) > MAX_LINE and b"\n" not in self.buffer:
                raise SeatFault("garbage", f"a line longer than {MAX_LINE} bytes",
                                self.buffer[:200].decode("utf-8", errors="replace"),
                                fatal=True)
        raw, _, self.buffer = self.buffer.partition(b"\n")
        return self._heard(raw.decode("utf-8", errors="replace").rstrip("\r"))

    def _heard(self, line: str) -> str:
        if self.heard is not None:
            self.heard.append(line)
        return line

    def waiting_lines(self) -> list[str]:
        """The complete lines already sent, read without waiting."""
        lines: list[str] = []
        while True:
            while b"\n" in self.buffer:
                raw, _, self.buffer = self.buffer.partition(b"\n")
                lines.append(raw.decode("utf-8", errors="replace").rstrip("\r"))
            if self.eof:
                return lines
            ready, _, _ = select.select([self._fd()], [], [], 0)
            if not ready:
                return lines
            chunk = self._read()
            if not chunk:
                self.eof = True
            self.buffer += chunk

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
        _LIVE_GROUPS.discard(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        return code


class LineSocket(LineProcess):
    """A bot on the other end of a TCP connection, read and written as a program's pipes.
    ``listen`` waits (up to ``limit`` seconds) for one bot to connect to ``host:port``."""

    def __init__(self, sock: socket.socket, peer: str) -> None:  # a socket, not a process
        self.sock, self.peer = sock, peer
        self.buffer = b""
        self.eof = False

    @classmethod
    def listen(cls, host: str, port: int, limit: float) -> LineSocket:
        server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        try:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind((host, port))
            server.listen(1)
            server.settimeout(limit)
            sock, peer = server.accept()
        except TimeoutError:
            raise SeatFault("crashed", f"no bot connected to {host}:{port} within "
                            f"{limit:g} s") from None
        except OSError as exc:
            raise SeatFault("crashed", f"cannot listen on {host}:{port}: "
                            f"{exc.strerror or exc}") from None
        finally:
            server.close()
        sock.setblocking(True)
        return cls(sock, f"{peer[0]}:{peer[1]}")

    @property
    def pid(self) -> int:
        return 0

    def _fd(self) -> int:
        return self.sock.fileno()

    def _read(self) -> bytes:
        try:
            return self.sock.recv(65536)
        except OSError:
            return b""

    def _exited(self) -> bool:
        return False

    def send(self, text: str) -> None:
        try:
            self.sock.sendall(text.encode())
        except OSError:
            raise SeatFault("crashed", f"the bot at {self.peer} closed the connection") \
                from None

    def end_input(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def exit_note(self, what: str) -> str:
        return f"the bot at {self.peer} {what} (connection closed)"

    def stderr_tail(self) -> str:
        return ""

    def close(self, grace: float = EXIT_GRACE) -> int | None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        return None
