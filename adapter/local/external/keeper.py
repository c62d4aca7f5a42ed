"""The keeper of one outside program, on Linux: ``python -I -S keeper.py PROGRAM ARGS...``
(the seat imports it and calls :func:`main` instead, process.KEEPER: its cached bytecode, with
the seat's pid, whose death it answers).

A process group does not hold what a program starts: a helper that calls ``setsid`` (a
daemon's double fork) leaves it, is re-parented to init and outlived every arena, eating a
CPU. The keeper is the program's parent and a child subreaper (PR_SET_CHILD_SUBREAPER), so
whatever the program starts, however it detaches, stays a descendant of the keeper and
comes back to it when its own parent exits. When the program exits, when the keeper is
asked to end (SIGTERM: the seat closing it), or when the process that started it dies (its
parent-death signal), it kills that whole tree and reaps every process of it, then exits
with the program's own status (its exit code, or the signal that ended it), so that the seat
reports the program's crash, not the keeper's. Only this keeper's descendants are touched:
never the seat's process, its workers or any other program's tree.

The program's stderr is a pipe the keeper drains into its own stderr (the seat's file) within
a fixed size, so that a program printing debug output without end cannot fill the disk: the
first :data:`KEPT_HEAD` bytes as written, then a record of how many bytes the program wrote,
then the last :data:`KEPT_TAIL` bytes in a ring (:func:`read_kept` puts them in order). The
keeper reads whole pipefuls, never lines, and always reads, so the program never waits on it.

Standalone, started with -I -S and importing only what it needs (no typing, no contextlib):
a one-shot Botzone program is started for every turn, each under a keeper. prctl is called
through the public ctypes package, not its private C half (_ctypes: ~7 ms of CPU less a start,
but a layout that may change between Python versions, where a keeper that silently failed to
become a subreaper would let daemons escape again).
"""

from __future__ import annotations

# signal's C half: the same functions and numbers, without the enums that cost a keeper's
# start a third more CPU (the keeper starts as often as a one-shot program does)
import _signal as signal  # type: ignore[import-not-found]
import ctypes
import os
import select
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CANNOT_START = 127  # as a shell says a command could not be run


def _no_prctl(*args: object) -> int:
    """Not Linux: the keeper never runs there, its module is only read from (read_kept)."""
    return -1


_PRCTL = getattr(ctypes.CDLL(None, use_errno=True), "prctl", _no_prctl)
KEPT_HEAD = 16384  # bytes of a program's stderr kept from its start (what it said first)
KEPT_TAIL = 65536  # bytes kept from its end (why it failed), the rest counted and left out
_COUNT = 21  # the record of bytes written, at KEPT_HEAD once the head is full: 20 digits + \n
_CHUNK = 65536  # bytes read at once (a pipe's default size)
PIPE_FALLBACK = 1 << 20  # a pipe's size where it cannot be asked: Linux's largest without
# privileges (fs.pipe-max-size's default); other systems' pipes are smaller


class Kept:
    """A program's stderr as the keeper keeps it, in file ``fd`` (see the module docstring):
    ``written`` bytes in all, the head and the ring's tail on disk."""

    def __init__(self, fd: int) -> None:
        self.fd, self.written = fd, 0

    def add(self, data: bytes) -> None:
        try:
            self._add(data)
        except OSError:  # not a file (the keeper run by hand) or a full disk: none kept
            self.written += len(data)

    def _add(self, data: bytes) -> None:
        if self.written < KEPT_HEAD:
            head = data[:KEPT_HEAD - self.written]
            os.pwrite(self.fd, head, self.written)
            self.written += len(head)
            data = data[len(head):]
            if not data:
                return
        skipped = max(0, len(data) - KEPT_TAIL)  # what the ring would overwrite at once
        data = data[skipped:]
        start = self.written + skipped
        while data:
            at = (start - KEPT_HEAD) % KEPT_TAIL
            piece = data[:KEPT_TAIL - at]
            os.pwrite(self.fd, piece, KEPT_HEAD + _COUNT + at)
            data, start = data[len(piece):], start + len(piece)
        self.written = start
        os.pwrite(self.fd, b"%020d\n" % self.written, KEPT_HEAD)  # after the data it counts


def read_kept(fd: int) -> tuple[bytes, int]:
    """What a program's kept stderr (file ``fd``) holds, in order, and how many bytes of it
    were left out between its head and its tail."""
    size = os.fstat(fd).st_size
    if size <= KEPT_HEAD:
        return os.pread(fd, size, 0), 0
    head = os.pread(fd, KEPT_HEAD, 0)
    try:
        written = int(os.pread(fd, _COUNT, KEPT_HEAD))
    except ValueError:  # not yet recorded (the ring is written first)
        return head, 0
    tail = min(written - KEPT_HEAD, KEPT_TAIL)
    ring = os.pread(fd, tail, KEPT_HEAD + _COUNT)
    end = (written - KEPT_HEAD) % KEPT_TAIL  # the oldest byte, once the ring is full
    ordered = ring[end:] + ring[:end] if tail == KEPT_TAIL else ring
    return head + ordered, written - KEPT_HEAD - tail


class _Ended(Exception):
    """SIGTERM: the seat (or the death of the process that started us) ends the program."""


def _asked_to_end(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a second one (the parent-death
    raise _Ended  # signal after the seat's) cannot cut the clean-up short


def _children() -> list[int]:
    """This process's children (a zombie included), from /proc: those it started and those
    re-parented to it. The kernel's list of them where it keeps one (the keeper has one
    thread), else every process's parent read."""
    me, found = os.getpid(), []
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as listed:
            return [int(pid) for pid in listed.read().split()]
    except OSError:
        pass
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if ppid == me:
            found.append(int(name))
    return found


def end_tree() -> None:
    """Kill every descendant and reap it. Only children are killed: a child's pid cannot be
    reused before we reap it, so no unrelated process is hit; a grandchild comes to us (the
    subreaper) once its parent is killed, and is killed in the next round. With no child
    left (the usual end of a program that started nothing) it costs one system call."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # nothing cuts the clean-up short
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0]:
                continue  # one reaped: look again
        except ChildProcessError:  # none left, zombies included
            return
        for pid in _children():
            os.kill(pid, signal.SIGKILL)  # a child is there till we reap it, a zombie too
        try:
            os.wait()
        except ChildProcessError:
            return


def _exec(argv: list[str], keeper: int) -> None:
    """In the forked child: the program, with the signals a freshly started process has,
    dying with its keeper (if the keeper is killed outright, the program is not left)."""
    try:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != keeper:
            os._exit(CANNOT_START)
        for signum in (signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, f"cannot start {argv[0]!r}: {exc.strerror or exc}\n".encode())
    finally:
        os._exit(CANNOT_START)


def _exit_as(status: int | None) -> None:
    """Exit as the program did: its code, or killed by the same signal (no core file of
    ours); 128 + SIGTERM when it was ended on request."""
    code = -signal.SIGTERM if status is None else os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
        os.kill(os.getpid(), -code)
    except (OSError, ValueError):
        pass
    os._exit(128 - code)


def _woken(signum: int, frame: object) -> None:
    """SIGCHLD: nothing to do here; its wake-up byte ends the keeper's poll."""


def pipe_size(fd: int) -> int:
    """Bytes pipe ``fd`` can hold: its own size (F_GETPIPE_SZ, Linux), which a program may
    have raised (F_SETPIPE_SZ: up to fs.pipe-max-size, or past it with CAP_SYS_RESOURCE),
    else :data:`PIPE_FALLBACK`. A bound on reading what a pipe holds is exact only so: 16
    reads of 64 KiB assumed 1 MiB and left the rest, the program's last words, unread."""
    try:
        import fcntl  # only where it is needed: the keeper starts with every one-shot turn
        return max(1, fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ))
    except (ImportError, AttributeError, OSError):
        return PIPE_FALLBACK


def _drain(pipe: int, kept: Kept) -> None:
    """Keep what the pipe holds now, without waiting: at most as many bytes as it can hold
    (:func:`pipe_size`), so a helper still writing cannot hold the keeper here."""
    left = pipe_size(pipe)
    while left > 0:
        try:
            chunk = os.read(pipe, min(left, _CHUNK))
        except BlockingIOError:
            return
        if not chunk:
            return
        left -= len(chunk)
        kept.add(chunk)


def _die_with(parent: int) -> None:
    """Have the kernel send us SIGTERM when ``parent`` (the seat's process, whose pid we were
    given) dies, however it dies: a SIGKILL included. Set here, after the exec, not by the
    seat between its fork and our exec (code there made subprocess fork the seat whole, page
    tables and all, where vfork needs none): if the seat died before the setting, we are
    someone else's child by now, and we end (SIGTERM: blocked until our handler is in place,
    so it is taken as the seat's would be) without starting the program. A pid given is
    never our parent's by chance: a process we are handed to was there before ours died."""
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        _exit_as(None)


def main(argv: list[str], parent: int | None = None) -> None:
    """Run program ``argv`` (see the module docstring); ``parent``: the pid of the process
    that started us (the seat's), whose death ends the program's tree (none by hand)."""
    if not argv:
        os.write(2, b"keeper: no program to run\n")
        os._exit(CANNOT_START)
    _PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # until the program runs
    signal.signal(signal.SIGTERM, _asked_to_end)
    if parent is not None:
        _die_with(parent)
    status: int | None = None
    keeper = os.getpid()
    errors, into_errors = os.pipe()  # the program's stderr (neither is inherited by an exec)
    kept = Kept(2)
    try:
        program = os.fork()
        if program == 0:
            os.dup2(into_errors, 2)
            _exec(argv, keeper)
        os.close(into_errors)
        null = os.open(os.devnull, os.O_RDWR)  # the program alone holds the seat's pipes,
        os.dup2(null, 0)  # so that its end of output is seen the moment it exits
        os.dup2(null, 1)
        os.close(null)
        wake, waking = os.pipe()
        os.set_blocking(wake, False)
        os.set_blocking(waking, False)
        signal.set_wakeup_fd(waking)
        signal.signal(signal.SIGCHLD, _woken)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # one sent meanwhile
        # poll, not select: no limit on the descriptors' numbers (select's FD_SETSIZE); a
        # pipe whose writers have all closed is POLLHUP, read here as select read it: its end
        watched = select.poll()
        watched.register(errors, select.POLLIN)
        watched.register(wake, select.POLLIN)
        while True:
            while status is None:  # the program, or a helper re-parented to us, exited
                try:
                    pid, wait_status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid == program:
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                    status = wait_status
            if status is not None:
                break
            for ready, _ in watched.poll():
                chunk = os.read(ready, _CHUNK)
                if ready == errors:
                    if chunk:
                        kept.add(chunk)
                    else:  # every holder of the pipe has closed it
                        watched.unregister(errors)
    except _Ended:
        pass
    os.set_blocking(errors, False)
    _drain(errors, kept)  # what the program said last
    end_tree()
    _drain(errors, kept)  # and its helpers: all dead now, so the pipe ends
    _exit_as(status)


if __name__ == "__main__":
    main(sys.argv[1:])
