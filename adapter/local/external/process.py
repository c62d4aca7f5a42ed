"""An outside program on stdin/stdout, read line by line under a deadline.

An arena must leave no process behind, whatever the program does. On Linux the program runs
under a keeper (keeper.py: its parent and a child subreaper), which kills and reaps the whole
tree the program started when the program exits or the seat ends it, a helper that left the
group (``setsid``, a daemon's double fork) included. Elsewhere the program runs in its own
process group (session), killed whole, and a helper that left it is its own to end. Its stderr
goes to a temporary file, read back (the last lines) when it dies, so that a crash is reported
with its own words; nothing is ever left unread in a pipe. On Linux the keeper keeps that file
within a fixed size (its head and its tail, keeper.py), whatever the program prints; the bytes
left out are counted (:meth:`LineProcess.stderr_left_out`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import structlog

from adapter.local.external.keeper import read_kept
from adapter.logging_setup import json_asked
from adapter.own_python import outside_env

EXIT_GRACE = 0.5  # seconds a program is given to exit by itself once its input is closed
STDERR_TAIL = 300
EXIT_POLL = 0.1  # how often a silent program is checked for having exited
MAX_LINE = 1 << 20  # bytes: a longer answer is garbage (and the stream is past saving)
UNASKED_LIMIT = 1 << 20  # bytes of lines answering no ask a run may send: past it, a flood
ANNOUNCE_AFTER = 1.0  # seconds a listening seat waits quietly for its bot before saying so
WRITE_LIMIT = 10.0  # seconds a program may leave its input unread (a full pipe) before it is late
WRITE_CHUNK = 4096  # bytes per write once the pipe or socket can take some: never blocks


class SeatFault(Exception):
    """What went wrong with an outside program's answer. ``reason``: late, crashed, garbage
    or illegal; ``raw``: what it sent, as sent (logged, never interpreted)."""

    def __init__(self, reason: str, detail: str, raw: str = "", fatal: bool = False) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail, self.raw = reason, detail, raw
        # the program is out of step with the table: stop it (always so when late or dead)
        self.fatal = fatal or reason in ("late", "crashed")

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__("reason: detail")
        return type(self), (self.reason, self.detail, self.raw, self.fatal), self.__dict__


class WaitAbandoned(BaseException):
    """The run was asked to stop (a signal) while an outside program was awaited: the unit
    under way is given up. Not an Exception, so that a game's error handling (a referee error
    is recorded and the unit goes on) does not take it for one."""


class NoClient(BaseException):
    """No bot connected to a listening seat in the time allowed: the run cannot go on (every
    later game would wait as long again), so it ends with this one line. Not an Exception,
    for the reason :class:`WaitAbandoned` is not."""


class CannotListen(NoClient):
    """A listening seat's address cannot be listened on (a port another program holds, a host
    not of this machine): no bot can ever connect, and every later game would fail as this
    one did, so the run ends with this one line, as where no bot came."""


# What ends a wait on an outside program before its limit (see :func:`abandon_waits_when`).
_ABANDON: list[Callable[[], bool]] = []


@contextlib.contextmanager
def abandon_waits_when(asked: Callable[[], bool]) -> Iterator[None]:
    """While inside, every wait on an outside program (an answer, a connection) raises
    :class:`WaitAbandoned` within :data:`EXIT_POLL` once ``asked()`` is true: a run in one
    process answers a stop at once even while a hung program is given its limit."""
    _ABANDON.append(asked)
    try:
        yield
    finally:
        _ABANDON.remove(asked)


def _check_abandon() -> None:
    if any(asked() for asked in _ABANDON):
        raise WaitAbandoned


# poll's events that select.select counts as ready (Linux's fs/select.c): a read finds data,
# or the other end closed (the read returns the end); a write takes some, or fails at once
_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR
_WRITABLE = select.POLLOUT | select.POLLERR


def ready_fds(reading: Sequence[int], writing: Sequence[int] = (),
              timeout: float | None = None) -> tuple[list[int], list[int]]:
    """select.select's answer, (readable, writable), got from poll: select refuses any
    descriptor of 1024 or more (FD_SETSIZE), which a long run holding many files, pipes and
    sockets reaches. Ready as select says it: a pipe whose writers all closed is POLLHUP
    (never POLLIN) and one whose reader closed is POLLERR, both ready, so that the read
    returns the end or the write fails; a closed descriptor is select's OSError (EBADF).
    ``timeout`` in seconds; None waits for ever."""
    poller = select.poll()
    events: dict[int, int] = {}
    for fd in reading:
        events[fd] = events.get(fd, 0) | select.POLLIN
    for fd in writing:
        events[fd] = events.get(fd, 0) | select.POLLOUT
    for fd, mask in events.items():
        poller.register(fd, mask)
    got = poller.poll(None if timeout is None else max(0.0, timeout) * 1000)
    if any(revents & select.POLLNVAL for _, revents in got):
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))
    readable = [fd for fd, revents in got if fd in reading and revents & _READABLE]
    writable = [fd for fd, revents in got if fd in writing and revents & _WRITABLE]
    return readable, writable


def _libc_prctl() -> Callable[..., int] | None:
    """Linux's prctl, looked up once here (never in a child between fork and exec, where
    loading a library may deadlock); None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL = _libc_prctl()
PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int, parent: int | None = None) -> None:
    """Have the kernel send ``signum`` to this process when its parent dies, however it dies
    (a SIGKILL included, which no handler of the parent can answer); Linux only, nothing
    elsewhere. If the parent (``parent``: its pid, taken before the fork) is already gone,
    the signal is sent now. The kernel ties it to the thread that forked this process: ours
    are forked by the main thread, which lives as long as the process."""
    if _PRCTL is None:
        return
    parent = os.getppid() if parent is None else parent
    _PRCTL(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)


def _child_setup(parent: int) -> None:
    """Runs in the program's process before its exec (no keeper: not Linux), after
    ``start_new_session`` made it the leader of its own session and group: the leader dies
    with us (SIGKILL), since a group kill (``close``, ``kill_live_groups``) cannot run when
    we are SIGKILLed ourselves. The setting survives the exec. What the program itself
    starts is not covered in a run that is one process; a worker process dies with the run
    (see stopping.worker_signals) and kills whole groups as it goes. SIGTERM, blocked by the
    parent while it starts us, is unblocked for the program."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    die_with_parent(signal.SIGKILL, parent)


# The keeper of every program on Linux (None elsewhere: a process group is all there is):
# keeper.py imported (its bytecode cached in __pycache__), not run as a script, which Python
# compiles at every start (a one-shot Botzone program starts a keeper every turn). Its first
# argument is our pid: the keeper has itself sent SIGTERM when we die, however we die, and
# ends the program's whole tree then; started after we died, it starts nothing (keeper.main).
# So it is started with no code of ours between fork and exec (no preexec_fn), which lets
# subprocess use vfork: a fork copied this process's page tables at every start (2 ms of our
# CPU at 45 MB, 12 ms at 545 MB: mjbot bench outsidestart --ballast-mb 500). SIGTERM, blocked
# by us while it starts, stays blocked until the keeper's handler is in place.
_HERE = os.path.dirname(os.path.abspath(__file__))
KEEPER: list[str] | None = None if _PRCTL is None else [
    sys.executable, "-I", "-S", "-c",
    f"import sys; sys.path.append({_HERE!r}); import keeper; "
    "keeper.main(sys.argv[2:], int(sys.argv[1]))"]
KEEPER_END = 5.0  # seconds a keeper asked to end gets to kill and reap its tree

# The outside programs this process runs (each its process group's leader), and whether a
# keeper runs it: a worker process ended by its pool (SIGTERM) ends them on its way out,
# where no ``close`` would run.
_LIVE_GROUPS: dict[int, bool] = {}


def kill_live_groups() -> None:
    """End every outside program this process started and has not closed, with all it
    started (for a worker that is being ended): a keeper is asked (it kills its tree, the
    helpers that left the group included, after we are gone), a group is killed."""
    for group, kept in list(_LIVE_GROUPS.items()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if kept and _keeper_alive(group):
                os.kill(group, signal.SIGTERM)
            else:  # no keeper, or one killed outright: what is left of its group goes now
                os.killpg(group, signal.SIGKILL)
        _LIVE_GROUPS.pop(group, None)


def _keeper_alive(pid: int) -> bool:
    """Whether our child ``pid`` (a keeper) still runs; one that has exited is reaped here."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == 0
    except ChildProcessError:  # reaped already
        return False


def _exited_within(proc: subprocess.Popen[bytes], limit: float) -> int | None:
    """``proc``'s exit status once it exits within ``limit`` seconds, else None. Woken the
    moment it exits (a pidfd, Linux), where Popen.wait's polling slept up to as long again as
    the exit took (~6 ms of a program's ~70 ms run, and a one-shot program runs every turn).
    Only while the group is ours (listed): a pid reaped elsewhere (kill_live_groups) may have
    been reused."""
    pidfd = getattr(os, "pidfd_open", None)
    if proc.returncode is None and pidfd is not None and proc.pid in _LIVE_GROUPS:
        try:
            fd = pidfd(proc.pid)
        except OSError:  # gone already, or a kernel without pidfds: Popen.wait's polling
            pass
        else:
            try:
                ready_fds([fd], timeout=limit)
            finally:
                os.close(fd)
            limit = 0  # exited (it is reaped now), or the limit was waited out
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        return None


class LineProcess:
    """One run of an outside program. ``send`` writes text; ``read_line`` returns the next
    line (without its newline) or raises :class:`SeatFault` (late: nothing within the limit;
    crashed: the program exited or closed its output). ``heard``, when set, gets every line
    read (the seat logs what a program said when its move is refused)."""

    heard: deque[str] | None = None
    left_out = 0  # bytes of its stderr left out (keeper.py), known once it is closed
    unasked = 0  # bytes of the lines waiting_lines took this run (what answered no ask)
    # its noise (what can be no answer) was its answer once: it is taken so (seat._answer)
    # until a line that can be an answer is left over, answering no ask (a late answer)
    answers_noise: Callable[[str], bool] | None = None

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        # a worker's SIGTERM waits until the group is listed for it to kill (see _end_worker)
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        self.kept = KEEPER is not None
        me = os.getpid()
        try:
            self.proc = subprocess.Popen(
                [*KEEPER, str(me), *argv] if KEEPER is not None else argv,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                env=outside_env(env), start_new_session=True,
                preexec_fn=None if self.kept else functools.partial(_child_setup, me))
            _LIVE_GROUPS[self.proc.pid] = self.kept
        except OSError as exc:
            self.stderr.close()
            raise SeatFault("crashed", f"cannot start {argv[0]!r}: {exc.strerror or exc}") \
                from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self._start_reading()

    def _start_reading(self) -> None:
        self.lines: deque[bytes] = deque()  # complete lines read and not yet taken
        self.buffer = bytearray()  # the line under way (no newline yet), grown in place
        self.eof = False

    def _take(self, chunk: bytes) -> None:
        """Queue ``chunk``'s complete lines, each byte copied once: taking a line at a time
        off one buffer copied all the rest of it each time (seconds of CPU for 1 MB of empty
        lines, a flood read past a short limit as late), and a long line read in small
        pieces was copied whole at each piece."""
        if b"\n" not in chunk:
            self.buffer += chunk
            return
        first, *done, last = chunk.split(b"\n")
        self.lines.append(bytes(self.buffer) + first)
        self.lines.extend(done)
        self.buffer = bytearray(last)

    def _unread_head(self, size: int = 200) -> str:
        """The first ``size`` bytes read and not yet taken (a fault's raw text)."""
        head = b""
        for line in self.lines:
            head += line + b"\n"
            if len(head) >= size:
                break
        else:
            head += self.buffer
        return head[:size].decode("utf-8", errors="replace")

    @staticmethod
    def _text(raw: bytes) -> str:
        return raw.decode("utf-8", errors="replace").rstrip("\r")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, text: str, limit: float = WRITE_LIMIT) -> None:
        """Write ``text`` whole within ``limit`` seconds. A program that stops reading its
        input fills the pipe (64 KB: a Botzone history, many mjai events): that is a late
        program, counted as such, not a write that blocks the table for ever."""
        data = memoryview(text.encode())
        deadline = time.monotonic() + limit
        while data:
            _check_abandon()
            left = deadline - time.monotonic()
            if left <= 0:
                raise SeatFault("late", f"did not read its input for {limit:g} s "
                                f"({len(data)} bytes left unsent)")
            try:
                _, ready = ready_fds([], [self._write_fd()], min(left, EXIT_POLL))
                if ready:
                    data = data[self._write_some(data[:WRITE_CHUNK]):]
            except (OSError, ValueError):
                raise SeatFault("crashed", self.exit_note("closed its input")) from None

    def _write_fd(self) -> int:
        assert self.proc.stdin is not None
        return self.proc.stdin.fileno()

    def _write_some(self, chunk: memoryview) -> int:
        """Bytes of ``chunk`` written; a pipe poll() called writable takes PIPE_BUF (4096)
        bytes without blocking."""
        return os.write(self._write_fd(), chunk)

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
        while not self.lines:
            _check_abandon()
            if self.eof:
                if self.buffer:
                    line, self.buffer = self.buffer, bytearray()
                    return self._heard(line.decode("utf-8", errors="replace"))
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise SeatFault("late", f"no answer within {limit:g} s",
                                self.buffer.decode("utf-8", errors="replace"))
            ready, _ = ready_fds([fd], timeout=min(left, EXIT_POLL))
            if not ready:
                if self._exited():  # a program's children may still hold its pipe
                    ready, _ = ready_fds([fd], timeout=0)
                    if not ready:
                        self.eof = True
                continue
            chunk = self._read()
            if chunk:
                self._take(chunk)
            else:
                self.eof = True
            if not self.lines and len(self.buffer) > MAX_LINE:
                raise SeatFault("garbage", f"a line longer than {MAX_LINE} bytes",
                                self._unread_head(), fatal=True)
        return self._heard(self._text(self.lines.popleft()))

    def _heard(self, line: str) -> str:
        if self.heard is not None:
            self.heard.append(line)
        return line

    def waiting_lines(self, keep: int) -> tuple[list[str], int]:
        """The complete lines already sent, read without waiting: the first ``keep`` of them
        and how many there were (a program may send thousands; each is a fault, but the log
        and memory take only ``keep``). A run that has sent more than :data:`UNASKED_LIMIT`
        bytes of them in all is flooding: a fatal garbage fault, so one call reads at most
        that much and an endless flood cannot hold the table (it read while data was ready,
        for as long as the flood lasted, each line a warning). Every line taken counts, those
        read with an answer (by :meth:`read_line`) too, and the line under way."""
        lines: list[str] = []
        count = 0
        while True:
            while self.lines:
                raw = self.lines.popleft()
                count += 1
                self.unasked += len(raw) + 1
                if len(lines) < keep:
                    lines.append(self._text(raw))
            if self.unasked + len(self.buffer) > UNASKED_LIMIT:
                raise SeatFault("garbage", f"more than {UNASKED_LIMIT} bytes of lines "
                                "answering no ask (a flood)",
                                "\n".join(lines) or self._unread_head(), fatal=True)
            if self.eof:
                return lines, count
            ready, _ = ready_fds([self._fd()], timeout=0)
            if not ready:
                return lines, count
            chunk = self._read()
            if chunk:
                self._take(chunk)
            else:
                self.eof = True

    def read_ready(self, most: int) -> None:
        """Take in what the program has sent, without waiting and without taking a line:
        its complete lines join :attr:`lines`, to be looked at before the next line is sent
        (a Botzone turn printed unasked). At most ``most`` bytes are read, so that a program
        writing without end cannot hold the table here."""
        read = 0
        while not self.eof and read < most:
            ready, _ = ready_fds([self._fd()], timeout=0)
            if not ready:
                return
            chunk = self._read()
            if chunk:
                read += len(chunk)
                self._take(chunk)
            else:
                self.eof = True

    def expect_line(self, limit: float) -> str:
        """The next line; its end of output is a crash."""
        line = self.read_line(limit)
        if line is None:
            raise SeatFault("crashed", self.exit_note("ended its output"))
        return line

    def exit_status(self, limit: float) -> int | None:
        """Its exit status once it exits within ``limit`` seconds (negative: the signal that
        ended it), else None."""
        return _exited_within(self.proc, limit)

    def exit_note(self, what: str) -> str:
        _exited_within(self.proc, EXIT_GRACE)
        code = self.proc.poll()
        status = "still running" if code is None else f"exit {code}"
        tail = self.stderr_tail()
        return f"the program {what} ({status})" + (f"; stderr: {tail!r}" if tail else "")

    def _kept_stderr(self) -> tuple[bytes, int]:
        """The program's stderr as kept (keeper.py: in order), and the bytes left out."""
        fd = self.stderr.fileno()
        if self.kept:
            return read_kept(fd)
        size = os.fstat(fd).st_size
        return os.pread(fd, STDERR_TAIL, max(0, size - STDERR_TAIL)), 0

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            said = self._kept_stderr()[0][-STDERR_TAIL:]
            return " ".join(said.decode("utf-8", errors="replace").split())
        return ""

    def stderr_left_out(self) -> int:
        """Bytes of the program's stderr left out so far (between the head and the tail the
        keeper keeps); 0 where all it wrote is there."""
        with contextlib.suppress(OSError, ValueError):
            return self._kept_stderr()[1]
        return 0

    def close(self, grace: float = EXIT_GRACE) -> int | None:
        """End the program: its input closed, ``grace`` seconds to exit, then all it started
        killed with it: its keeper's whole tree (Linux), else its process group. Returns its
        exit status (None when it had to be killed)."""
        code = self.proc.poll()
        if code is None and grace > 0:
            with contextlib.suppress(OSError, ValueError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            code = _exited_within(self.proc, grace)
        if self.kept and self.proc.poll() is None:  # an exited keeper has ended the tree
            self.proc.send_signal(signal.SIGTERM)
            _exited_within(self.proc, KEEPER_END)
        # the group outlives its leader: without a keeper, or where the keeper was killed
        # outright (SIGKILL: its program dies with it, a helper left in the group does not),
        # or did not end in time. A group id is not reused while the group has a member, so
        # this reaches only what is left of the program's group (none: ESRCH, one call).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        _LIVE_GROUPS.pop(self.proc.pid, None)
        if self.proc.poll() is None:
            self.proc.wait()
        self.left_out = self.stderr_left_out()
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
        self._start_reading()

    @classmethod
    def listen(cls, host: str, port: int, limit: float) -> LineSocket:
        """Accept one bot, waiting in short slices so that a stop is answered at once (see
        :func:`abandon_waits_when`); after :data:`ANNOUNCE_AFTER` s without one, say on
        stderr what is awaited (a person at the terminal sees why nothing moves). No bot
        within ``limit`` is :class:`NoClient`; an address that cannot be listened on,
        :class:`CannotListen` (it played every game with the seat crashed, the table's
        figures those of a bot that never sat); a failed accept, a crash of the seat."""
        server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        try:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                server.bind((host, port))
                server.listen(1)
            except OSError as exc:
                raise CannotListen(f"cannot listen on {host}:{port} for an mjai client: "
                                   f"{exc.strerror or exc}") from None
            sock, peer = cls._accept(server, f"{host}:{port}", limit)
        except OSError as exc:
            raise SeatFault("crashed", f"cannot accept a client on {host}:{port}: "
                            f"{exc.strerror or exc}") from None
        finally:
            server.close()
        sock.setblocking(True)
        return cls(sock, f"{peer[0]}:{peer[1]}")

    @staticmethod
    def _accept(server: socket.socket, address: str, limit: float) -> tuple[socket.socket, Any]:
        start = time.monotonic()
        announced = False
        while True:
            _check_abandon()
            waited = time.monotonic() - start
            if waited >= limit:
                raise NoClient(f"no mjai client connected to {address} within {limit:g} s "
                               f"(start one, e.g. mjbot mjai --server {address})")
            if waited >= ANNOUNCE_AFTER and not announced:
                announced = True
                if json_asked():  # --log-json: every line a log collector reads is JSON
                    structlog.get_logger("mjbot.external").warning(
                        "waiting for an mjai client", address=address, up_to_seconds=limit)
                else:
                    os.write(2, f"mjbot: waiting for an mjai client on {address} (up to "
                                f"{limit:g} s)\n".encode())
            server.settimeout(min(EXIT_POLL, limit - waited))
            with contextlib.suppress(TimeoutError):
                return server.accept()

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

    def _write_fd(self) -> int:
        return self.sock.fileno()

    def _write_some(self, chunk: memoryview) -> int:
        try:
            return self.sock.send(chunk, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return 0

    def end_input(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    def exit_status(self, limit: float) -> int | None:
        """0: a bot on a connection has no status; its closing it is all there is to see."""
        return 0

    def exit_note(self, what: str) -> str:
        return f"the bot at {self.peer} {what} (connection closed)"

    def stderr_tail(self) -> str:
        return ""

    def stderr_left_out(self) -> int:
        return 0

    def close(self, grace: float = EXIT_GRACE) -> int | None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        return None
