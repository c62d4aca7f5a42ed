"""One process at a time in a folder: the OS lock that `mjbot selfplay --out` and `mjbot nn
iterate --dir` hold while they write there, released by the OS when the process ends or dies
(a file's mere presence would outlive a killed run and refuse its resume). And a game log's
writer's lock on its file (hold_while_writing, being_written): serve's log upkeep leaves a log
whose game is in play, however long it has waited (a worker suspended) and whatever its last
bytes read as."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

# what a lock taken by another process raises (flock: EWOULDBLOCK; msvcrt: EACCES, EDEADLOCK)
BUSY = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES, errno.EDEADLK})


class Busy(Exception):
    """Another process holds the lock."""


def lock_now(fd: int) -> str | None:
    """Lock ``fd`` for this process at once (no waiting): None once held; :class:`Busy` where
    another process holds it; why no lock could be taken where the filesystem takes none (an
    NFS mount without its lock service: ENOLCK), for the caller to say so and go on unguarded
    rather than refuse as if another run held it."""
    try:
        if sys.platform == "win32":
            import msvcrt
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in BUSY:
            raise Busy from None
        return exc.strerror or str(exc)
    return None


def hold_while_writing(fd: int) -> None:
    """An advisory lock (flock, POSIX) on a file being written, which the OS drops as the file
    is closed or its process dies: being_written tells a log in play from one a crash left.
    Nothing where the file system takes none (an NFS mount without its lock service) nor on
    Windows, which refuses to remove a file held open anyway; it never stops the writing."""
    if sys.platform == "win32":
        return
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def being_written(path: str | Path,
                  unchecked: Callable[[OSError], None] | None = None) -> bool:
    """Whether a writer (of this process or another) holds ``path`` open with
    hold_while_writing's lock. A flock is one open file's, not a process's, so the writer's
    own process sees it too. False where the file is gone or no lock can be asked (no lock
    service). Where it is there but cannot be opened for the check (out of file descriptors,
    no permission) it is taken as held, the safe side: "not held" let the upkeep remove a
    game in play; ``unchecked`` is told why."""
    if sys.platform == "win32":
        return False
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return False  # gone: nobody writes it
    except OSError as exc:
        if unchecked is not None:
            unchecked(exc)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in BUSY
    finally:
        os.close(fd)  # the probe's lock goes with it
    return False
