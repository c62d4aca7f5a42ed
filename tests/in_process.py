"""`mjbot` run through its entry point inside the test process, for tests that send it no
signal and need no process of its own: a child paid Python's start and torch's import (about
3 s of CPU) on every call. What the CLI sets process-wide is scoped: the logging setup is
restored after each test (conftest.py, :func:`logging_restored`), the stop's signal handlers
after each run (StopRequest.on_signals), torch's thread count and random state by nn train
itself."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """What `mjbot`'s logging setup changes process-wide (structlog's configuration, the root
    logger's handlers and level, whether --log-json was given: ``json_asked``) comes back
    after the block."""
    from adapter import logging_setup

    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    asked = logging_setup._JSON_ASKED[0]
    try:
        yield
    finally:
        structlog.configure(**saved)
        root.handlers[:] = handlers
        root.setLevel(level)
        logging_setup._JSON_ASKED[0] = asked


def _exit_status(args: tuple[str, ...]) -> int:
    """``main(ARGS)``'s return, or a usage error's SystemExit status; an uncaught exception
    fails the test, as a traceback would."""
    from adapter.cli import main

    try:
        return main(list(args))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1


def mjbot_here(capsys: pytest.CaptureFixture[str], *args: str
               ) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS``'s exit status, stdout and stderr, as ``subprocess.run`` gives them."""
    capsys.readouterr()  # what the test printed before is not the command's
    code = _exit_status(args)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["mjbot", *args], code, out, err)


def mjbot_captured(*args: str) -> subprocess.CompletedProcess[str]:
    """:func:`mjbot_here` where no capsys is at hand (a module's fixture): stdout and stderr
    caught here, and the run's logging setup undone after it."""
    out, err = io.StringIO(), io.StringIO()
    with logging_restored(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _exit_status(args)
    return subprocess.CompletedProcess(["mjbot", *args], code, out.getvalue(), err.getvalue())


def replay_summary(capsys: pytest.CaptureFixture[str], path: Path
                   ) -> tuple[int, dict[str, Any]]:
    """`mjbot replay --json PATH`'s exit status and summary, no traceback on its stderr."""
    run = mjbot_here(capsys, "replay", "--json", str(path))
    assert "Traceback" not in run.stderr
    return run.returncode, json.loads(run.stdout)["summary"]
