"""Review of left15: what its changes did on paths its own tests did not take."""

from __future__ import annotations

import json
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


def _first_line_then_stop(*args: str) -> tuple[str, str]:
    """The first stderr line of ``mjbot ARGS`` (a server announcing its port), then the rest
    once SIGTERM stopped it."""
    proc = subprocess.Popen([PY, "-m", "adapter.cli", *args], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    try:
        first = proc.stderr.readline()
    finally:
        proc.terminate()
        rest = proc.communicate(timeout=60)[1]
    return first, rest


def test_the_local_servers_waiting_lines_are_json_under_log_json():
    """ntpu-server's and tenhou-server's 'waiting for ... clients on HOST:PORT' stayed plain
    under --log-json, where left15 made the mjai-tcp seat's like line JSON: the one line a
    script reads for the port (--port 0) was the one a log collector could not parse."""
    for args, clients in ((("ntpu-server", "--clients", "external", "--hands", "1"), 4),
                          (("tenhou-server", "--games", "1"), 1)):
        first, _ = _first_line_then_stop("--log-json", *args, "--port", "0", "--no-log")
        line = json.loads(first)
        assert line["event"] == "waiting for clients" and line["command"] == args[0], line
        assert line["clients"] == clients and line["address"].startswith("127.0.0.1:"), line
        assert int(line["address"].rpartition(":")[2]) > 0
        # without --log-json: the plain line, as tests/test_cli.py reads it
        plain, _ = _first_line_then_stop(*args, "--port", "0", "--no-log")
        assert plain.startswith(f"mjbot {args[0]}: waiting for "), plain


def test_a_stop_by_the_early_handler_is_json_under_log_json():
    """A SIGTERM that meets the CLI's first handler (adapter/early_stop.py: a command's first
    second, and all of tenhou-server's run, which sets none of its own) said the plain
    'mjbot tenhou-server: stopped (SIGTERM)' under --log-json, where left15 says a signal's
    stop is one JSON line ('event': 'stopped')."""
    first, rest = _first_line_then_stop("--log-json", "tenhou-server", "--games", "1",
                                        "--port", "0", "--no-log")
    assert json.loads(first)["event"] == "waiting for clients"
    (line,) = [json.loads(x) for x in rest.splitlines()]
    assert line["event"] == "stopped" and line["level"] == "error", line
    assert line["command"] == "tenhou-server" and line["error"] == "stopped (SIGTERM)", line
    assert line["timestamp"].endswith("Z")
    _, plain = _first_line_then_stop("tenhou-server", "--games", "1", "--port", "0",
                                     "--no-log")
    assert plain.splitlines() == ["mjbot tenhou-server: stopped (SIGTERM)"]


# an arena's (or selfplay's, league's) stop asked by a real SIGTERM while the run is under way:
# the note its StopRequest handler writes, with JSON logging set up as `mjbot --log-json` does
STOPPING = """
import os, signal, sys
from adapter.logging_setup import configure_logging
from adapter.local.stopping import StopRequest

configure_logging(sys.argv[1] == "json")
stop = StopRequest(command="arena")
with stop.on_signals():
    os.kill(os.getpid(), signal.SIGTERM)
assert stop() == "SIGTERM"
"""


def test_an_arena_asked_to_stop_says_so_in_json_under_log_json():
    """'mjbot --log-json arena' sent SIGTERM wrote an empty line and the plain 'mjbot arena:
    stopping (SIGTERM) with what has finished' among its JSON lines (a real run showed it)."""
    done = subprocess.run([PY, "-c", STOPPING, "json"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [json.loads(x) for x in done.stderr.splitlines()]
    assert line["event"] == "stopping with what has finished", line
    assert line["command"] == "arena" and line["signal"] == "SIGTERM", line
    assert line["level"] == "warning" and line["timestamp"].endswith("Z"), line
    plain = subprocess.run([PY, "-c", STOPPING, "plain"], capture_output=True, text=True,
                           timeout=60)
    assert plain.stderr.split("\n") == ["", "mjbot arena: stopping (SIGTERM) with what has "
                                        "finished", ""], plain.stderr


def test_an_in_process_main_under_log_json_leaves_no_json_behind(capsys):
    """left15's json_asked() is process-wide, and tests/conftest.py's restore of the logging
    setup left it as main() set it: after an in-process `main(["--log-json", ...])` (as
    tests/test_cli.py runs one) every later test in that worker saw JSON asked, and a stop
    note, a tell() line or the mjai-tcp seat's wait line of its own came out as JSON."""
    from adapter.cli import main
    from adapter.logging_setup import json_asked
    from tests.in_process import logging_restored

    with logging_restored():
        assert main(["--log-json", "demo"]) == 0
        assert json_asked()
    assert not json_asked()
    capsys.readouterr()
