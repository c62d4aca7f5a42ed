"""Platform leftovers (left13): each test runs the real command or component the user meets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from replay import replayer
from tests.shared_data import LAB_REFEREE

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


def test_replay_of_an_ntpu_log_says_how_its_seats_match_ntpus(tmp_path: Path) -> None:
    """NTPU numbers its seats 1..4 and our client's log file names keep its number
    (``...-seat2``, from ``/start MJ 2``); `mjbot replay` counts from 0 as for every platform
    and showed that game as ``seat 1`` with nothing to say the two differ. The replay now
    says it beside the seat: ``seat 1 (NTPU seat 2: ...)``, the file's number. The file names
    are unchanged (logs already written keep reading as before)."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                           "--log-dir", str(tmp_path)],
                          input=f"/start MJ 2 mjbot\n/initGame east east 1 1 0\n"
                                f"/initCard {HAND}\n/exit\n/close\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert path.name.endswith("-seat2.mjlog.msgpack")  # NTPU's own number, as before
    shown = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(path)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.splitlines()[0] == (
        f"{path}  [ntpu, taiwan16] seat 1 (NTPU seat 2: NTPU counts from 1, replay from 0)  "
        "- / - / - / -")


def test_replay_of_the_lab_referees_player_log_names_its_ntpu_seat() -> None:
    """A real NTPU command log the lab referee wrote for its player 1 (../shared/data): seat 0
    in the replay, which now says it is NTPU seat 1 (tests/data/shared holds a copy)."""
    summary = replayer.summarize(replayer.load(LAB_REFEREE / "MJServerLog_1795525321_Player1.log"))
    assert (summary["seat"], summary["platform_seat"]) == (0, 1)
    assert " seat 0 (NTPU seat 1: " in replayer.format_summary(summary).splitlines()[0]
