"""`mjbot` run through its entry point inside the test process, for tests that send it no
signal and need no process of its own: a child paid Python's start and torch's import (about
3 s of CPU) on every call. What the CLI sets process-wide is scoped: the logging setup is
restored after each test (conftest.py), the stop's signal handlers after each run
(StopRequest.on_signals), torch's thread count by nn train itself."""

from __future__ import annotations

import subprocess

import pytest

from adapter.cli import main


def mjbot_here(capsys: pytest.CaptureFixture[str], *args: str
               ) -> subprocess.CompletedProcess[str]:
    """``mjbot ARGS``'s exit status, stdout and stderr, as ``subprocess.run`` gives them (a
    usage error's SystemExit is its status); an uncaught exception fails the test, as a
    traceback would."""
    capsys.readouterr()  # what the test printed before is not the command's
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["mjbot", *args], code, out, err)
