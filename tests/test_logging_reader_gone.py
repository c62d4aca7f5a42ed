"""A log line whose stderr has no reader any more (the process's parent killed outright: an
`nn iterate` run's self-play phase, an arena worker's) is dropped. Raised, the error went into
the code that logged it: an outside program's fault noted in a game under way ended that game
as a referee error in the dataset."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOG_INTO_A_PIPE_WITH_NO_READER = textwrap.dedent("""
    import os, sys
    read, write = os.pipe()
    os.close(read)  # the reader gone: a write now fails (EPIPE; Python ignores SIGPIPE)
    sys.stderr = open(write, "w")
    from adapter.logging_setup import configure_logging, get_logger
    configure_logging(json_lines=True)
    log = get_logger("game")
    for _ in range(3):
        log.warning("outside program fault", reason="garbage")
    print("the game went on")
""")


def test_a_log_line_with_no_reader_is_dropped_not_raised_into_the_game() -> None:
    run = subprocess.run([sys.executable, "-c", LOG_INTO_A_PIPE_WITH_NO_READER],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert run.stdout.strip() == "the game went on", (run.returncode, run.stderr[-600:])
