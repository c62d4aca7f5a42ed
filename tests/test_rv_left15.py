"""Review of left15: what its changes did on paths its own tests did not take."""

from __future__ import annotations

import subprocess
import sys

PY = sys.executable

# `mjbot --log-json botzone` in a fresh process, Ctrl-C met while it waits for its turn on
# stdin (a stdin whose read raises KeyboardInterrupt: the signal's effect, without the race
# of a real signal against the interpreter's start)
INTERRUPTED_TURN = """
import sys
from adapter.cli import main

class Interrupted:
    def __getattr__(self, name):
        raise KeyboardInterrupt
    def __iter__(self):
        raise KeyboardInterrupt

sys.stdin = Interrupted()
sys.exit(main(["--log-json", "botzone"]))
"""


def test_an_interrupted_botzone_bot_under_log_json_writes_nothing_on_its_answer_channel():
    """`mjbot botzone` logs plain lines whatever --log-json says (it configures no structlog:
    each turn pays its imports), so tell()'s JSON branch wrote through structlog's default
    logger, which prints on stdout, the channel the judge reads answers from: a console line
    ('[error    ] stopped  command=botzone error=interrupted') where the plain 'mjbot botzone:
    interrupted' used to go to stderr."""
    done = subprocess.run([PY, "-c", INTERRUPTED_TURN], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stdout == ""
    assert done.stderr.splitlines() == ["mjbot botzone: interrupted"]


def test_a_botzone_bot_refusing_its_options_under_log_json_writes_nothing_on_stdout():
    """The same for a refused option value: report_user_error wrote 'bad input' through the
    unconfigured structlog, on stdout."""
    done = subprocess.run([PY, "-m", "adapter.cli", "--log-json", "botzone", "--policy",
                           "nosuch"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("mjbot botzone: unknown policy 'nosuch'"), line
