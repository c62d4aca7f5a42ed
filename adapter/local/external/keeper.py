"""The keeper of one outside program, on Linux: ``python -I -S keeper.py PROGRAM ARGS...``.

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

Standalone, started with -I -S and importing only what it needs (no typing, no contextlib):
a one-shot Botzone program is started for every turn, each under a keeper.
"""

from __future__ import annotations

# signal's C half: the same functions and numbers, without the enums that cost a keeper's
# start a third more CPU (the keeper starts as often as a one-shot program does)
import _signal as signal  # type: ignore[import-not-found]
import ctypes
import os
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CANNOT_START = 127  # as a shell says a command could not be run
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


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


def main(argv: list[str]) -> None:
    if not argv:
        os.write(2, b"keeper: no program to run\n")
        os._exit(CANNOT_START)
    _PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # until the program runs
    signal.signal(signal.SIGTERM, _asked_to_end)
    status: int | None = None
    keeper = os.getpid()
    try:
        program = os.fork()
        if program == 0:
            _exec(argv, keeper)
        null = os.open(os.devnull, os.O_RDWR)  # the program alone holds the seat's pipes,
        os.dup2(null, 0)  # so that its end of output is seen the moment it exits
        os.dup2(null, 1)
        os.close(null)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # one sent meanwhile
        while True:
            pid, wait_status = os.wait()  # the program, or a helper re-parented to us
            if pid == program:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                status = wait_status
                break
    except _Ended:
        pass
    end_tree()
    _exit_as(status)


if __name__ == "__main__":
    main(sys.argv[1:])
