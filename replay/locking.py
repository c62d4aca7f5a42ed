"""One process at a time in a folder: the OS lock that `mjbot selfplay --out` and `mjbot nn
iterate --dir` hold while they write there, released by the OS when the process ends or dies
(a file's mere presence would outlive a killed run and refuse its resume)."""

from __future__ import annotations

import errno
import sys

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
