"""Platform leftovers (left13): each test runs the real command or component the user meets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replay import replayer

HAND = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161"


@pytest.mark.parametrize("owed", ["/ready", "/mo 171\n/ask throw", "/exit\n/ready"])
def test_ntpu_stdio_whose_referee_stops_reading_exits_1_saying_so(tmp_path: Path,
                                                                   owed: str) -> None:
    """`mjbot ntpu --stdio` whose referee closed its end of our stdout (EPIPE on a reply):
    a lost ``/ready`` answer ended the session as the input's end does (exit 0, as after a
    finished match) and a lost ``/throw`` said only "[Errno 32] Broken pipe". Both now exit 1
    with one line saying the referee went away, and the game's log says it was cut, also
    between two hands (it read as a game played to its end)."""
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                             "--log-dir", str(tmp_path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(f"/ready\n/start MJ 2 mjbot\n/initGame east east 1 1 0\n"
                         f"/initCard {HAND}\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "/ready\n"
        proc.stdout.close()  # the referee stops reading, and sends one more line owing a reply
        proc.stdin.write(owed + "\n")
        proc.stdin.flush()
        code = proc.wait(30)  # stdin stays open: only the failed reply can end the session
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 1, err[-2000:]
    said = [line for line in err.splitlines() if line.startswith("mjbot ntpu:")]
    assert said == ["mjbot ntpu: the referee went away: it stopped reading our replies "
                    "(stdout: Broken pipe)"]
    assert "Traceback" not in err and "Exception ignored" not in err
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert replayer.summarize(replayer.load(str(path)))["unfinished"]
