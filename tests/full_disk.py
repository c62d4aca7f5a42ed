"""`mjbot` as on a full disk, without filling one: a process that may write no file past a
size (RLIMIT_FSIZE, SIGXFSZ ignored), so a write past it fails with EFBIG as one on a full
disk fails with ENOSPC, at the same place."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys


def mjbot_on_a_full_disk(*args: str, file_bytes: int,
                         input: str | None = None) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS`` whose files cannot grow past ``file_bytes``, ``input`` on its stdin
    (None: none), its output captured."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))

    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], capture_output=True,
                          text=True, timeout=300, preexec_fn=limit, restore_signals=False,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)
