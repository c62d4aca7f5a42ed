"""SIGTERM before a command has a handler of its own: one line, then the signal's death.

`mjbot` spends its first second or so importing its modules; a command installs its SIGTERM
handler only after that (`mjbot tenhou`, `serve`, `ntpu` ... then say `stopped (SIGTERM ...)`
and exit 128 + 15). A SIGTERM before then met the default action: the process ended with no
line at all, a supervisor's log showing nothing. The CLI installs this handler first, before
its own imports; it ends the process as the default did (nothing to clean up yet: a command
that has begun something installs its own handler first), with one line naming the command.

The CLI imports this module first, and the import installs it, but only in the `mjbot`
program (its console script, or ``python -m adapter.cli``), never in a process that merely
imports the CLI (the tests call its main). Only the standard library: nothing runs before it.
"""

from __future__ import annotations

import contextlib
import json  # here, not in the handler: a signal met inside the CLI's own import of json
import os
import signal
import sys
import time
from collections.abc import Sequence
from types import FrameType

# the commands that hold commands of their own, and theirs: a stop line names the whole
# command as typed (`mjbot nn iterate`, it said `mjbot nn`); only words of this table beyond
# the first, never an option's value (one may be a secret). The parser is not built yet when
# this handler speaks: tests/test_cli_leftovers14.py holds this table to the parser's own.
NESTED = {"dataset": ("import", "stats"), "models": ("train", "eval"),
          "nn": ("train", "iterate", "probe-expert")}


class _State:
    pid = 0  # the process that installed it (a forked child inherits the handler)
    name = ""  # the command, for the line
    json = False  # `mjbot --log-json ...`: the line is a JSON log line, as the command's are


def install(argv: Sequence[str]) -> None:
    """Say `mjbot COMMAND: stopped (SIGTERM)` and die of it on a SIGTERM from now until a
    command's own handler replaces this one (``argv``: the arguments, for the command's
    words: ``nn iterate``, ``bench`` for ``bench idleread``, as the command names itself)."""
    _State.pid = os.getpid()
    _State.name = _command(argv)
    # `mjbot botzone` keeps its lines plain under --log-json (it configures no structlog)
    _State.json = _json_asked(argv) and _State.name != "botzone"
    signal.signal(signal.SIGTERM, _stopped)


def _json_asked(argv: Sequence[str]) -> bool:
    """Whether ``--log-json`` (an option of `mjbot` itself) comes before the command."""
    words = iter(argv)
    for word in words:
        if word == "--log-json":
            return True
        if word == "--log-level":
            next(words, None)
        elif not word.startswith("-"):
            return False
    return False


def _command(argv: Sequence[str]) -> str:
    """The first word that is no option (nor ``--log-level``'s value): the command; and the
    next such word where it is one of that command's own (:data:`NESTED`)."""
    words = iter(argv)
    for word in words:
        if word == "--log-level":
            next(words, None)
        elif not word.startswith("-"):
            inner = next((w for w in words if not w.startswith("-")), "")
            return f"{word} {inner}" if inner in NESTED.get(word, ()) else word
    return ""


def json_line(event: str, level: str, **fields: object) -> str:
    """One JSON log line as structlog's renderer writes it under ``--log-json`` (``fields``,
    ``event``, ``level``, an ISO ``timestamp`` in UTC), with its newline: for a signal
    handler, which writes with ``os.write`` rather than log through structlog."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
    return json.dumps({**fields, "event": event, "level": level, "timestamp": stamp}) + "\n"


def _stopped(signum: int, _frame: FrameType | None) -> None:
    if os.getpid() != _State.pid:
        # a child forked before it set a handler of its own: the default, as it had
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    name = f"mjbot {_State.name}" if _State.name else "mjbot"
    line = f"{name}: stopped ({signal.Signals(signum).name})\n"
    if _State.json:  # as adapter.commands.stopped_status says it under --log-json
        line = json_line("stopped", "error", command=_State.name or None,
                         error=f"stopped ({signal.Signals(signum).name})")
    with contextlib.suppress(OSError):  # no stderr to say it on: the exit status says it
        os.write(2, line.encode())
    # then killed by the signal, as the default did: an exit 143 (_exit) read as a failure
    # where the signal's death is a clean stop (systemd's unit: `systemctl stop` in serve's
    # first second left it failed, "status=143"; a parent's returncode -15 became 143)
    signal.signal(signum, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # Windows has no masks (nor a signal's death)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # where the signal did not end it


def _in_the_program() -> bool:
    """This process is `mjbot` itself: its console script, or ``python -m adapter.cli``."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return (getattr(spec, "name", None) == "adapter.cli"
            or os.path.basename(sys.argv[0]).removesuffix(".exe") == "mjbot")


if _in_the_program():
    install(sys.argv[1:])
