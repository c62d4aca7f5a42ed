"""What a soak of `mjbot serve` (many games, days of running, reloads) found grows or stalls,
each shown on a short run with a count rather than a clock."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import urllib.error
from pathlib import Path

from replay.log import SUFFIX
from tests.serve_helpers import (
    ROOMY,
    ServeProcess,
    assert_complete,
    free_port,
    game_logs,
    stop_process,
    tenhou_server,
)

PRACTICE = """
[sessions.drill]
kind = "local"
variant = "mass"
policy = "greedy"
hands = 1
pause = 0.2
"""


def _release(fifo: Path) -> None:
    """Give a reader blocked on ``fifo`` its end of file (a writer that opens and closes)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_reload_counts_the_days_games_while_the_process_goes_on_serving(
        tmp_path: Path) -> None:
    """A SIGHUP that gives a practice session a quota (or changes one that has it) counts the
    games its log folder holds from today. That count parsed every log of the day on the event
    loop: in the soak, with 1000 games logged, the whole process froze for 14 s (the status
    page, every session's line: four NTPU sessions lost their server for it). Here one log of
    the day is a FIFO no one writes to (a disk that does not answer): the count waits on it, and
    /health must still answer meanwhile."""
    config = tmp_path / "serve.toml"
    config.write_text(PRACTICE)
    logs = tmp_path / "logs"
    day = logs / "drill" / "local" / f"{dt.date.today():%Y-%m-%d}"
    fifo = day / f"000000-slow-disk{SUFFIX}"
    serve = ServeProcess(config, logs)
    try:
        serve.until(lambda s: s["sessions"]["drill"]["games"] >= 1)
        day.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
        config.write_text(PRACTICE + "[sessions.drill.limits]\ngames_per_day = 1000\n")
        serve.signal(signal.SIGHUP)
        serve.until(lambda s: s["sessions"]["drill"]["state"] == "stopped")
        # the reload now counts the day's games and waits on the FIFO: the process answers
        for _ in range(3):
            try:
                health = serve.get("/health")
            except (TimeoutError, urllib.error.URLError) as exc:
                raise AssertionError("/health did not answer while a reload counted the "
                                     "day's games") from exc
            assert health["reloads"] == 0, health  # the count is still waiting
        _release(fifo)
        reloaded = serve.wait_for(lambda e: e.get("event") == "serve: config reloaded")
        assert reloaded["changed"] == ["drill"]
        status = serve.until(lambda s: s["sessions"]["drill"]["state"] in ("running", "pause")
                             and s["reloads"] == 1)
        # the count is the day's finished games, read from the logs' footers
        assert status["sessions"]["drill"]["quota"]["today"] >= 1
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(30) == 0
    finally:
        _release(fifo)
        serve.close()
    fifo.unlink()
    for path in game_logs(logs):
        assert_complete(path)


def test_a_game_whose_log_cannot_be_begun_leaves_no_empty_file(tmp_path: Path) -> None:
    """A disk too full for a game log's header (the soak filled the log folder's disk for a
    minute) left the file that log had just made, empty: 80 of them, from the platform
    sessions (which play on without a log) and the practice workers (which stop and are
    restarted). The viewer listed each as a game that opens as "not a game log we know ...
    the file is empty", and the upkeep removes a log without a footer only after a day. Here
    every file write of serve and its workers fails at once (RLIMIT_FSIZE 0: EFBIG, as a full
    disk's ENOSPC): the games are played, and no file is left in the log folder."""
    port = free_port()
    server = tenhou_server(port, games=2, length="east")
    config = tmp_path / "serve.toml"
    config.write_text(ROOMY + PRACTICE + f"""
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
games = 2
""")
    logs = tmp_path / "logs"
    serve = ServeProcess(config, logs, file_size=0)
    try:
        status = serve.until(lambda s: s["sessions"]["ladder"]["games"] >= 2
                             and s["sessions"]["drill"]["failures"] >= 1, timeout=120)
        assert "cannot write its game logs" in status["sessions"]["drill"]["last_error"], status
        unavailable = [e for e in serve.lines if e.get("event") == "tenhou: game log unavailable"]
        assert len(unavailable) >= 2, unavailable  # the file write failed as a full disk's
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(30) == 0
    finally:
        serve.close()
        stop_process(server)
    left = [p for p in logs.rglob("*") if p.is_file()]
    assert left == [], [(str(p.relative_to(logs)), p.stat().st_size) for p in left]
