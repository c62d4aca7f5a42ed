"""A stop signal ends `mjbot view` and `mjbot serve` without a cycle collection over what the
viewer holds (replay/gcpause.py ``off_until_exit``): with a 300-game log's export given up
by the stop, the collections on the way out (one when the given-up read's pause ended, the
interpreter's last one at exit) walked a million objects, and the process ended 1.3 to 2.9 s
after SIGTERM (0.16 to 0.26 s now: README "Replay viewer", `mjbot view`'s paragraph, and
`mjbot bench viewstop`). Each process here is the real command, run under a probe that
reports the collector's state as the interpreter exits (after every atexit handler of the
command's own: the log writers' and the pools')."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tests.serve_helpers import (
    PYTHON_ENV,
    ROOMY,
    ROOT,
    assert_complete,
    game_logs,
    stop_process,
)
from tests.viewer_fixtures import practice_game

# mjbot's own CLI, with an atexit handler registered before it (so run after all of its
# own) that prints the collector's state: on or off, objects frozen, objects it would walk
PROBE = """
import atexit, gc, os, sys
def report():
    line = json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                       "tracked": len(gc.get_objects())})
    os.write(2, ("COLLECTOR " + line + "\\n").encode())
import json
atexit.register(report)
from adapter.cli import main
sys.exit(main(sys.argv[1:]))
"""


# serve's probe also says what the log folder held when the collector was turned off: every
# file's size then, to be compared with the logs as the process leaves them
SERVE_PROBE = PROBE.replace("from adapter.cli import main", """
from pathlib import Path
import replay.gcpause
turn_off = replay.gcpause.off_until_exit
def off_until_exit():
    logs = Path(sys.argv[sys.argv.index("--log-dir") + 1])
    sizes = {str(p): p.stat().st_size for p in logs.rglob("*") if p.is_file()}
    os.write(2, ("AT_OFF " + json.dumps(sizes) + "\\n").encode())
    turn_off()
replay.gcpause.off_until_exit = off_until_exit  # (before serve imports it)
from adapter.cli import main""")


def _collector_at_exit(stderr: str) -> dict[str, int]:
    found = re.findall(r"^COLLECTOR (\{.*\})$", stderr, re.MULTILINE)
    assert len(found) == 1, stderr[-2000:]
    state: dict[str, int] = json.loads(found[0])
    return state


def _started(*args: str, probe: str = PROBE) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", probe, "--log-json", *args], cwd=ROOT,
                            env=PYTHON_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def test_view_stopped_walks_none_of_its_games_on_the_way_out(tmp_path: Path) -> None:
    log = practice_game(tmp_path / "logs")
    proc = _started("view", str(log))
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)games", line)
        assert found, line
        url = found.group(1)
        with urllib.request.urlopen(url + "api/games", timeout=30) as response:
            game = urllib.parse.quote(json.loads(response.read())["games"][0]["id"])
        for path in (f"api/games/{game}", f"api/games/{game}/hands/0",
                     f"games/{game}/export/tenhou6"):  # a game parsed and kept, an export
            with urllib.request.urlopen(url + path, timeout=60) as response:
                assert response.status == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        state = _collector_at_exit(proc.stderr.read())
    finally:
        stop_process(proc)
    # off, and what the process held at the stop frozen: the interpreter's last collection
    # walks only what was made after it (before: on, nothing frozen, everything walked)
    assert not state["enabled"]
    assert state["frozen"] > 10 * state["tracked"], state


def test_serve_closes_its_session_logs_then_stops_the_collector(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + """
[serve]
stop_deadline = 10
[sessions.practice]
kind = "local"
variant = "riichi"
hands = 64
pause = 0
""")
    logs = tmp_path / "logs"
    proc = _started("serve", str(config), "--status", "127.0.0.1:0", "--log-dir", str(logs),
                    probe=SERVE_PROBE)
    said: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not any(p.stat().st_size for p in game_logs(logs)):  # a game in play
            assert proc.poll() is None and time.monotonic() < deadline, "".join(said)[-2000:]
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        reader.join(30)
        stderr = "".join(said)
    finally:
        stop_process(proc)
    state = _collector_at_exit(stderr)
    assert not state["enabled"] and state["frozen"] > 10 * state["tracked"], state
    # the collector turned off after the sessions stopped: every log whole, with its footer
    # (the game in play cut by the stop closed with a "stopped" one), and each as it was
    # when the collector went off (the footer written before, not after)
    assert game_logs(logs)
    for path in game_logs(logs):
        assert_complete(path)
    found = re.findall(r"^AT_OFF (\{.*\})$", stderr, re.MULTILINE)
    assert len(found) == 1, stderr[-2000:]
    at_off = json.loads(found[0])
    assert {str(p): p.stat().st_size for p in game_logs(logs)} == {
        path: size for path, size in at_off.items() if path in map(str, game_logs(logs))}
    lines = [json.loads(x) for x in stderr.splitlines() if x.startswith("{")]
    assert "serve: stopped" in [x.get("event") for x in lines]


def test_reads_and_commentaries_still_in_flight_do_not_turn_it_on_again() -> None:
    """A read whose pause began before the stop, and a commentary's freeze, end after it (the
    viewer's pool threads finish their part): the collector stays off and nothing is thawed.
    In a process of its own: the stop is for good."""
    script = """
import gc, threading
from replay.gcpause import collector_paused, freeze_kept, off_until_exit, thaw
inside, leave = threading.Event(), threading.Event()
def read():
    with collector_paused():
        inside.set()
        leave.wait(10)
reader = threading.Thread(target=read)
reader.start()
inside.wait(10)
token = freeze_kept()
off_until_exit()
frozen = gc.get_freeze_count()
leave.set()
reader.join(10)
thaw(token)
print(gc.isenabled(), gc.get_freeze_count() > frozen // 2 > 0)  # (the thread's own freed)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=PYTHON_ENV,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True"], done.stderr
