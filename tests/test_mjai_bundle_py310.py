"""Everything the mjai.app upload carries must run on the image's Python 3.10, where mjbot
itself needs 3.11, and so must the Botzone zip (its entry says it needs 3.10 or later, and
Botzone names only "Python 3"): its syntax is parsed as 3.10's grammar, and mypy checks its
modules against 3.10's standard library (typeshed marks what came in 3.11: tomllib, typing.Self,
ExceptionGroup, StrEnum, datetime.UTC, asyncio.timeout, Task.cancelling, ...).

Two 3.11 calls stay, in asyncio code the upload never runs: bot.py plays the synchronous
stdin form, and these belong to the TCP client's paths (connecting, and stopping the line
reader). They are named here; any other 3.11-only use in a carried module fails the test."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adapter.platforms import botzone_bundle
from adapter.platforms.botzone_bundle import ROOT
from adapter.platforms.mjai_bundle import (
    BOT,
    MODULES,
    NN_MODULES,
    VENDOR,
    vendored_mahjong,
)

CARRIED = sorted({m for m in (*MODULES, *NN_MODULES, *botzone_bundle.MODULES,
                                *botzone_bundle.NN_MODULES) if m.endswith(".py")})
TCP_ONLY = {
    ("adapter/session.py", 'Module has no attribute "timeout"'),  # open_connection_retrying
    ("adapter/tasks.py", 'has no attribute "cancelling"'),  # cancel_and_wait (Inbox, TCP)
}


def test_every_carried_source_is_python_3_10_syntax() -> None:
    sources = [(m, (ROOT / m).read_text(encoding="utf-8")) for m in CARRIED]
    sources += [(name, path.read_text(encoding="utf-8")) for path, name in vendored_mahjong()
                if name.endswith(".py")]
    sources.append(("bot.py", BOT.format(vendor=VENDOR, policy="rulebased", options="")))
    sources.append(("the Botzone zip's __main__.py",
                    botzone_bundle.MAIN.format(policy="rulebased", options="")))
    assert len(sources) > len(CARRIED) + 20  # mahjong's own modules are among them
    for name, text in sources:
        try:
            ast.parse(text, filename=name, feature_version=(3, 10))
        except SyntaxError as exc:
            pytest.fail(f"{name}: not Python 3.10 syntax: {exc}")


def test_no_carried_module_uses_what_came_in_python_3_11(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="needs mypy (the [dev] extra)")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-version", "3.10", "--cache-dir", str(tmp_path),
         # numpy's stubs type a few results as Any under 3.10: not a 3.11 use
         "--disable-error-code", "no-any-return", *CARRIED],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [(m["file"], m["message"]) for m in (
        re.match(r"(?P<file>[^:]+):\d+: error: (?P<message>.*)", line)
        for line in done.stdout.splitlines()) if m]
    assert done.returncode in (0, 1) and (done.returncode == 0) == (not errors), done.stdout
    unexpected = [(f, msg) for f, msg in errors
                  if not any(f == known and part in msg for known, part in TCP_ONLY)]
    assert not unexpected, "\n".join(f"{f}: {msg}" for f, msg in unexpected)
