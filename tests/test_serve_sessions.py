"""The supervisor with real peers: the fake Tenhou server as a subprocess on a real socket
(dropped mid-game and started again), the practice worker process (killed), and `mjbot serve`
itself as a subprocess (SIGTERM in the middle of a hand, SIGHUP with a changed config)."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapter.serve.config import ConfigError, loads
from adapter.serve.practice import PracticeSettings, play_one
from adapter.serve.supervisor import Supervisor
from brain.rules.variant import variant_of
from protocols import events as ev
from replay.log import DecisionFrame, EventFrame, Footer, GameLogWriter, Header, TxFrame, read_log
from tests.in_process import mjbot_here
from tests.narrowing import header_of
from tests.serve_helpers import (
    PYTHON_ENV,
    ROOMY,
    ROOT,
    ServeProcess,
    assert_complete,
    free_port,
    game_logs,
    stop_process,
    tenhou_server,
)
from tests.serve_helpers import until as shared_until
from tests.shared_data import MJAI_GAME

# the sessions here run real subprocesses: a longer deadline
until = functools.partial(shared_until, timeout=60.0)


def practice_pids(session: str, log_dir: Path) -> list[int]:
    """The practice worker processes of one session whose logs go under ``log_dir``, from
    /proc: another serve on the machine (a soak, a second test run) may have a session of
    the same name, and its worker is not this test's."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if ("adapter.serve.practice" in cmd and f'"session": "{session}"' in cmd
                and f'"log_dir": "{log_dir}/' in cmd):
            out.append(int(entry.name))
    return out


async def test_a_session_whose_server_drops_is_restarted_and_resumes(tmp_path: Path) -> None:
    port = free_port()
    config = loads(f"""
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
reconnect_tries = 1
connect_timeout = 30
games = 15
pause = 0.2
[sessions.ladder.limits]
backoff_initial = 0.3
backoff_max = 2
""", environ={})
    server = tenhou_server(port, games=20, length="east")
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        handle = sup.handles["ladder"]
        # an east-only test game takes well under a second: after the first, the run is in
        # its second (a run of 15 games: under load, 3 had ended before the kill landed)
        await until(lambda: handle.games_played >= 1)
        server.kill()
        server.wait(10)
        await until(lambda: handle.failures >= 1)
        assert handle.games_played < 15 and handle.last_outcome == "dropped"
        assert "connect" in handle.last_error.lower()
        played = handle.games_played
        # the server is back: the session takes it up
        server = tenhou_server(port, games=20, length="east")
        await until(lambda: handle.games_played >= played + 3, timeout=90)
        assert handle.restarts >= 1 and handle.runs >= 2
        assert sup.metrics.get("mjbot_restarts_total", session="ladder") >= 1
        assert sup.metrics.get("mjbot_games_total", session="ladder", kind="tenhou") >= 4
        decisions = sup.metrics.histogram("mjbot_decision_seconds", session="ladder",
                                          policy="rulebased")
        assert decisions is not None and decisions.count > 0
        result = handle.results[-1]
        assert result["scores"] is not None and sum(result["scores"]) >= 90000
    finally:
        await sup.stop(10)
        stop_process(server)
    footers = [assert_complete(p) for p in game_logs(tmp_path / "ladder")]
    finished = [f for f in footers if not f.get("unfinished") and not f.get("abandoned")]
    assert len(finished) >= 4


async def test_a_practice_worker_that_dies_is_restarted(tmp_path: Path) -> None:
    config = loads("""
[sessions.drill]
kind = "local"
variant = "mass"
pause = 0.05
[sessions.drill.limits]
backoff_initial = 0.2
""", environ={})
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        handle = sup.handles["drill"]
        await until(lambda: handle.games_played >= 1 and practice_pids("drill", tmp_path))
        (pid,) = practice_pids("drill", tmp_path)
        os.kill(pid, signal.SIGKILL)
        await until(lambda: handle.failures == 1)
        assert handle.last_error == "practice worker killed by signal 9"
        games = handle.games_played
        await until(lambda: handle.restarts == 1 and handle.games_played > games)
        assert practice_pids("drill", tmp_path) and practice_pids("drill", tmp_path) != [pid]
    finally:
        await sup.stop(10)
    assert not practice_pids("drill", tmp_path)
    logs = game_logs(tmp_path / "drill")
    assert len(logs) >= 2
    # the game the kill cut off reads back up to the cut; the others are whole
    complete = [p for p in logs if read_ok(p)]
    assert len(complete) >= len(logs) - 1
    # the restarted worker went on with the seed's sequence: no game dealt twice
    numbers = sorted(game_number(p) for p in logs)
    assert numbers == list(range(len(logs))), numbers


async def test_practice_goes_on_with_the_games_an_earlier_process_logged(
        tmp_path: Path) -> None:
    # the serve process started twice on the same log folder, the second time with a quota
    # of 4 (the day's count goes on from the 2 games logged: 2 more)
    for quota in (2, 4):
        config = loads(f"""
[sessions.drill]
kind = "local"
variant = "mass"
pause = 0
[sessions.drill.limits]
games_per_day = {quota}
""", environ={})
        sup = Supervisor(config, log_dir=str(tmp_path))
        try:
            sup.start()
            handle = sup.handles["drill"]
            await until(lambda: handle.state == "quota reached")  # noqa: B023
        finally:
            await sup.stop(10)
    numbers = sorted(game_number(p) for p in game_logs(tmp_path / "drill"))
    assert numbers == [0, 1, 2, 3]


def game_number(path: Path) -> int:
    header = read_log(path).header
    assert header is not None
    return int(header.policy_config["game"])


def read_ok(path: Path) -> bool:
    try:
        assert_complete(path)
    except AssertionError:
        return False
    return True


PRACTICE_HANDS = 64  # the most a config allows: the longest practice game


def test_sigterm_in_the_middle_of_a_hand_leaves_complete_logs(tmp_path: Path) -> None:
    port = free_port()
    server = tenhou_server(port, games=100)
    config = tmp_path / "serve.toml"
    config.write_text(f"""
[serve]
stop_deadline = 10
[sessions.practice]
kind = "local"
variant = "taiwan16"
hands = {PRACTICE_HANDS}
pause = 0
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
games = 100
""")
    logs = tmp_path / "logs"
    serve = ServeProcess(config, logs)
    try:
        # A practice game has a fixed number of hands: the stop is sent well inside one, so
        # that its game must be cut (how many games were finished before is up to the machine).
        status = serve.until(lambda s: s["sessions"]["ladder"]["hands"] >= 1
                             and (s["sessions"]["ladder"]["current"] or {}).get("in_hand")
                             and 1 <= s["sessions"]["practice"]["hands"] % PRACTICE_HANDS
                             <= PRACTICE_HANDS // 2)
        assert status["sessions"]["practice"]["state"] == "running"
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
        serve.wait_for(lambda e: e.get("event") == "serve: stopped", timeout=5)
    finally:
        serve.close()
        stop_process(server)
    footers = {p: assert_complete(p) for p in game_logs(logs)}
    ladder = [f for p, f in footers.items() if "ladder" in p.parts]
    practice = [f for p, f in footers.items() if "practice" in p.parts]
    assert ladder  # a game cut by the stop is closed with an "unfinished" footer
    serve_log = "".join(serve.raw)
    assert "said BYE" in serve_log
    assert [bool(f.get("stopped")) for f in practice].count(True) == 1  # the game in play
    assert not practice_pids("practice", logs)


@pytest.mark.parametrize("variant", ["riichi", "mass"])
def test_a_stop_before_a_games_first_hand_closes_its_log(tmp_path: Path, variant: str) -> None:
    """The stop can land between a game's log being opened and its first hand: the log is
    closed with a "stopped" footer at the start scores (it once had no footer and the worker
    died of an AttributeError, which the serve process took for a clean stop)."""
    stop = threading.Event()
    stop.set()
    reports: list[dict[str, Any]] = []
    settings = PracticeSettings(session="early", variant=variant, policy="greedy",
                                log_dir=str(tmp_path), pause=0)
    assert play_one(settings, 3, stop, reports.append) is False
    (path,) = game_logs(tmp_path)
    log = read_log(path)
    assert log.footer is not None and log.footer.result == {"stopped": True, "hands": 0}
    start = variant_of(variant).start_score
    assert list(log.footer.scores) == [start] * 4
    assert [r["t"] for r in reports if r["t"] != "live"] == ["game_start", "stopped"]
    assert reports[-1]["scores"] == [start] * 4


def _practice_worker(settings: dict[str, Any], stderr: int | None = None) \
        -> subprocess.Popen[str]:
    """A practice worker process (adapter/serve/practice.py) as serve starts one: its
    reports on a pipe, its stdin the serve process's line to it."""
    return subprocess.Popen([sys.executable, "-m", "adapter.serve.practice",
                             json.dumps(settings)], cwd=ROOT, env=PYTHON_ENV,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                            text=True)


def test_fast_practice_hands_are_seen_past_their_first_turn() -> None:
    """Hands far shorter than the live snapshot's period (greedy riichi: tens of ms) are
    caught at whatever turn they are at, not shown at turn 0 every time (the old fault: every
    snapshot at turn 0). On a loaded machine turn 0 is caught more often than its share of
    the time: the worker is often preempted at the report that ends a hand, so the first
    event after a period is a deal (about 10% of 30 snapshots on a quiet machine, 23% with
    three CPU burners beside it; 4 of 6 once in a full run). So 12 snapshots, a quarter of
    them past turn 0: all-zero as before fails, and a busy machine does not."""
    settings = {"session": "fast", "variant": "riichi", "policy": "greedy",
                "opponents": ["greedy"] * 3, "pause": 0, "live_every": 0.2}
    worker = _practice_worker(settings)
    assert worker.stdin is not None and worker.stdout is not None
    live: list[dict[str, Any]] = []
    hands = 0
    try:
        # on a loaded machine a hand can outlast a snapshot period: read on until more hands
        # than snapshots were seen (the premise), within a bound
        for _ in range(20000):
            if len(live) >= 12 and hands > len(live):
                break
            report = json.loads(worker.stdout.readline())
            hands += report["t"] == "hand"
            if report["t"] == "live":
                live.append(report)
    finally:
        worker.stdin.close()  # the serve process went away: the worker stops
        worker.stdout.read()
        assert worker.wait(30) == 0
    turns = [r["turn"] for r in live]
    assert hands > len(live) and sum(t > 0 for t in turns) >= len(turns) // 4, (hands, turns)


# The worker's own signal set-up, in a process of its own: the Event's lock is held as the
# main thread holds it inside stop.wait() (between two games), and the handler runs there,
# called and then raised for real. A handler that set the Event took that lock again, for ever.
_SIGNAL_UNDER_THE_EVENTS_LOCK = """
import signal, sys, threading
from adapter.serve.practice import stop_on_signals
sig = signal.Signals[sys.argv[1]]
stop = threading.Event()
stop_on_signals(stop)
handler = signal.getsignal(sig)
assert callable(handler)
with stop._cond:
    handler(sig, None)
    signal.raise_signal(sig)
    print("handled", flush=True)
print("stopped" if stop.wait(30) else "not stopped", flush=True)
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_while_the_worker_holds_its_stop_events_lock_stops_it(sig: str) -> None:
    """The practice worker's SIGTERM/SIGINT handler set its stop Event, which takes the
    Event's lock: a signal that came while the main thread held that lock (inside
    ``stop.wait``, between two games) deadlocked the worker, and ``mjbot serve`` killed it at
    the stop deadline (its game's log without a footer). The handler now takes no lock; the
    stop is still asked for. The process is killed if it hangs (the deadlock)."""
    try:
        done = subprocess.run([sys.executable, "-c", _SIGNAL_UNDER_THE_EVENTS_LOCK, sig],
                              cwd=ROOT, env=PYTHON_ENV, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"the {sig} handler deadlocked on the stop Event's lock: {hung.stdout!r}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["handled", "stopped"], (done.stdout, done.stderr)


def test_a_practice_worker_whose_serve_process_is_gone_finishes_its_hand(
        tmp_path: Path) -> None:
    """The serve process killed (or crashed) in the middle of a practice hand: the end of the
    worker's stdin asks it to stop, and no one reads its reports any more. The first report
    after that (a snapshot, the hand's, "stopped") met a broken pipe, which ended the worker
    with status 1, at once, mid-hand: its game's log had no footer. The serve process's ends
    of both pipes are closed here while a hand is in play (a snapshot was read)."""
    settings = {"session": "orphan", "variant": "riichi", "policy": "rulebased",
                "opponents": ["greedy"] * 3, "pause": 0, "log_dir": str(tmp_path)}
    worker = _practice_worker(settings, stderr=subprocess.PIPE)
    assert worker.stdin is not None and worker.stdout is not None
    try:
        while json.loads(worker.stdout.readline())["t"] != "live":
            pass
    finally:
        worker.stdin.close()  # the serve process is gone ...
        worker.stdout.close()  # ... and so is the reader of the reports
        code = worker.wait(60)
    assert worker.stderr is not None
    stderr = worker.stderr.read()
    worker.stderr.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    (path,) = game_logs(tmp_path)  # the game in play, closed with its footer; no next one
    assert_complete(path)


def test_platform_results_link_their_game_logs(tmp_path: Path) -> None:
    """The dashboard's results of a Tenhou session link each game's log in the viewer and
    hold its final scores and ranks, as a practice session's do (they had no log, and a game that
    ended between two looks was listed with the next game's table: no scores)."""
    port = free_port()
    server = tenhou_server(port, games=20, length="east")
    config = tmp_path / "serve.toml"
    config.write_text(f"""
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
games = 2
pause = 60
""")
    serve = ServeProcess(config, tmp_path / "logs")
    try:
        status = serve.until(lambda s: s["sessions"]["ladder"]["games"] >= 2)
        results = [r for r in status["results"] if r["session"] == "ladder"]
        assert len(results) == 2
        logged = {str(p.relative_to(tmp_path / "logs")) for p in game_logs(tmp_path / "logs")}
        for result in results:
            assert result["log"] in logged, (result, logged)
            assert result["scores"] is not None and sum(result["scores"]) >= 90000
            assert result["points"] == result["scores"][result["seat"]] - 25000
            ranks = result["ranks"]  # the dashboard's rank column (it was empty)
            assert sorted(ranks) == [1, 2, 3, 4] and all(
                result["scores"][a] >= result["scores"][b]
                for a in range(4) for b in range(4) if ranks[a] < ranks[b])
            game = "0~" + result["log"].replace("/", "~")
            assert serve.get(f"/api/games/{game}")  # the viewer opens it
        newest = max(results, key=lambda r: r["ended"])
        assert status["sessions"]["ladder"]["last_game"]["log"] == newest["log"]
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()
        stop_process(server)


def test_serve_takes_a_clients_finished_games_as_it_reads_them(tmp_path: Path) -> None:
    """A platform client noted every game of its run in finished_games, kept for the whole
    run (a tournament's), while serve's tracker read each entry once: it takes the entries
    it reads, so the list holds only the games not yet read. Each result still has its own
    game's log and scores, a game counted before its log closed too."""
    from adapter.platforms.tenhou import TenhouBot, TenhouSettings
    from adapter.serve.metrics import Metrics
    from adapter.serve.runners import RUNNERS, _Tracker
    from adapter.serve.supervisor import SessionHandle

    config = loads("""
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:1"
""", environ={})
    (spec,) = config.sessions
    handle = SessionHandle(spec, Metrics(), str(tmp_path), RUNNERS["tenhou"])
    bot = TenhouBot(TenhouSettings(policy="greedy"))
    tracker = _Tracker(bot, handle, lambda b: b.summary.games, "riichi")

    def scores(game: int) -> tuple[int, ...]:
        return (25000 + 100 * game, 25000, 25000, 25000 - 100 * game)

    for game in range(40):
        bot.summary.games += 1
        if game != 7:  # game 7 is counted before its log closes
            bot.game_logged(tmp_path / f"g{game}", scores(game))
        tracker.sync()
        if game == 7:
            bot.game_logged(tmp_path / "g7", scores(7))
        assert len(bot.finished_games) <= 1
    assert len(bot.finished_games) == 0
    logs = [r["log"] for r in handle.results]
    assert logs == [None if g == 7 else str(tmp_path / f"g{g}") for g in range(40)]
    assert all(r["scores"] == list(scores(g)) for g, r in enumerate(handle.results) if g != 7)


async def test_a_stop_between_two_hands_of_an_mjai_game_logs_it_as_stopped(
        tmp_path: Path) -> None:
    """serve's stop cuts an mjai game once no hand is in play: its log says the game was
    stopped, as a Tenhou or practice game's does (it read as a finished game)."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    first_hand = lines[:lines.index('{"type":"end_kyoku"}') + 1]
    sent = asyncio.Event()

    async def mjai_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        await reader.readline()
        for line in first_hand:
            message = json.loads(line)
            if message["type"] == "start_game":
                message["id"] = 0
            writer.write((json.dumps(message) + "\n").encode())
            await writer.drain()
            await reader.readline()
        sent.set()
        await reader.read()  # the table waits for the next hand

    server = await asyncio.start_server(mjai_server, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = loads(f"""
[sessions.table]
kind = "mjai"
server = "127.0.0.1:{port}"
""", environ={})
    async with server:
        sup = Supervisor(config, log_dir=str(tmp_path))
        try:
            sup.start()
            await until(sent.is_set)
        finally:
            await sup.stop(10)
    (path,) = game_logs(tmp_path)
    result = assert_complete(path)
    assert result.get("stopped") is True and result.get("unfinished") is True, result


async def test_a_silent_server_is_given_up_after_the_sessions_idle_limit(
        tmp_path: Path) -> None:
    """A session's `idle_limit` reaches its client: an mjai server that falls silent in a game
    (the line left open) is given up after it, and the session says why, not that the server
    closed the line; without the key serve's client waited its default 180 s."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    first_hand = lines[:lines.index('{"type":"end_kyoku"}') + 1]
    silent = asyncio.Event()

    async def mjai_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        await reader.readline()
        for line in first_hand:
            message = json.loads(line)
            if message["type"] == "start_game":
                message["id"] = 0
            writer.write((json.dumps(message) + "\n").encode())
            await writer.drain()
            await reader.readline()
        silent.set()
        await reader.read()  # silent from here, the line open

    server = await asyncio.start_server(mjai_server, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = loads(f"""
[sessions.table]
kind = "mjai"
server = "127.0.0.1:{port}"
idle_limit = 1.5
[sessions.table.limits]
backoff_initial = 30
""", environ={})
    async with server:
        sup = Supervisor(config, log_dir=str(tmp_path))
        try:
            sup.start()
            handle = sup.handles["table"]
            await until(silent.is_set)
            await until(lambda: handle.failures >= 1, timeout=20)
            assert handle.last_outcome == "dropped"
            assert handle.last_error == ("the server sent nothing for 1.5 s in a game; the line "
                                         "was given up"), handle.last_error
        finally:
            await sup.stop(10)
    (path,) = game_logs(tmp_path)
    assert assert_complete(path).get("unfinished") is True


def test_a_sessions_idle_limit_is_checked_as_a_number_of_seconds() -> None:
    for kind, extra in (("tenhou", ""), ("ntpu", 'server = "h:1"\n'), ("mjai", 'server = "h:1"\n')):
        text = f'[sessions.s]\nkind = "{kind}"\n{extra}idle_limit = '
        assert loads(text + "30\n", environ={}).sessions[0].option("idle_limit") == 30.0
        with pytest.raises(ConfigError, match=r"idle_limit.*must be more than 0"):
            loads(text + "0\n", environ={})


def test_a_log_folder_that_cannot_be_written_is_refused_at_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A log folder that cannot be made is one line and exit 1 before anything starts (the
    practice workers died of it, a traceback each, while the process ran on)."""
    config = tmp_path / "serve.toml"
    config.write_text('[sessions.p]\nkind = "local"\nvariant = "riichi"\npolicy = "greedy"\n')
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = mjbot_here(capsys, "serve", str(config), "--status", "127.0.0.1:0",
                      "--log-dir", str(blocker / "logs"))
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert f"mjbot serve: the log folder {blocker / 'logs'} cannot be written" in done.stderr
    assert "status server listening" not in done.stderr


def _ladder_with_a_quota(folder: Path, games_per_day: int, before: str = "") -> Path:
    """serve.toml of one local session, "ladder", one-hand greedy games without a pause, at
    most ``games_per_day`` a day (``before``: tables put ahead of it)."""
    config = folder / "serve.toml"
    config.write_text(before + f"""[sessions.ladder]
kind = "local"
variant = "riichi"
policy = "greedy"
hands = 1
pause = 0
[sessions.ladder.limits]
games_per_day = {games_per_day}
""")
    return config


def _stopped_at_the_quota(config: Path, logs: Path) -> dict[str, Any]:
    """A serve process of ``config`` run until its ladder session's quota is reached, then
    stopped by SIGTERM (exit 0): its status at the quota."""
    serve = ServeProcess(config, logs)
    try:
        status: dict[str, Any] = serve.until(
            lambda s: s["sessions"]["ladder"]["state"] == "quota reached")
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()
    return status


def test_the_days_quota_holds_across_a_restart(tmp_path: Path) -> None:
    """A serve process started again counts the games its log folder holds from today: a
    session whose quota was reached stays held (a restart began the day's count again)."""
    config = _ladder_with_a_quota(tmp_path, 1)
    logs = tmp_path / "logs"
    for _ in range(2):  # the second start: the day's one game is logged, none is played
        status = _stopped_at_the_quota(config, logs)
        assert status["sessions"]["ladder"]["quota"]["today"] == 1
        assert len(game_logs(logs)) == 1
    assert all(assert_complete(path) for path in game_logs(logs))


def test_a_disabled_sessions_quota_says_it_is_not_counted(tmp_path: Path) -> None:
    """A disabled session's games of the day are never counted (its task, which counts them,
    does not run): /health showed its quota's today as 0, though its log folder held a game
    finished today, read as none played. It now says null (not counted), as the dashboard
    does ("not counted"), and an enabled session beside it shows its count."""
    config = tmp_path / "serve.toml"
    logs = tmp_path / "logs"
    for name in ("ladder", "resting"):
        played = GameLogWriter.create(logs / name, Header("local", "riichi", seat=0))
        played.event(ev.GameStarted("riichi", 0))
        played.close(Footer({"rank": 1}, (0, 0, 0, 0)))
    table = "kind = \"local\"\nvariant = \"riichi\"\npolicy = \"greedy\"\nhands = 1\npause = 0\n"
    config.write_text(f"[sessions.ladder]\n{table}[sessions.ladder.limits]\ngames_per_day = 1\n"
                      f"[sessions.resting]\nenabled = false\n{table}"
                      "[sessions.resting.limits]\ngames_per_day = 3\n")
    status = _stopped_at_the_quota(config, logs)
    assert status["sessions"]["ladder"]["quota"] == {"games_per_day": 1, "today": 1,
                                                     "remaining": 0}
    resting = status["sessions"]["resting"]
    assert resting["state"] == "disabled", resting
    assert resting["quota"] == {"games_per_day": 3, "today": None, "remaining": None}, resting


def test_the_days_quota_is_counted_at_start_off_the_event_loop(tmp_path: Path) -> None:
    """At start the day's games were counted on the event loop, a footer a log and a
    compressed log inflated whole (0.2 ms each: 100,000 logs froze the status page and every
    platform session's line for 20 s). A log that takes its time to read (here a FIFO named
    as a compressed log of today's, its bytes given when the test says) now holds its own
    session only: /health answers meanwhile, the session waits for its count, and once the
    log reads its game is counted before any is played."""
    import gzip

    config = _ladder_with_a_quota(tmp_path, 1)
    logs = tmp_path / "logs"
    played = GameLogWriter.create(tmp_path / "elsewhere", Header("local", "riichi", seat=0))
    played.event(ev.GameStarted("riichi", 0))
    played.close(Footer({"rank": 1}, (0, 0, 0, 0)))
    slow = logs / "ladder" / "local" / f"{dt.date.today():%Y-%m-%d}" / \
        "000000-slow.mjlog.msgpack.gz"
    slow.parent.mkdir(parents=True)
    os.mkfifo(slow)
    serve = ServeProcess(config, logs)
    try:
        health = serve.get("/health")  # the loop is free while the count waits on the log
        assert health["sessions"]["ladder"]["runs"] == 0
        assert health["sessions"]["ladder"]["quota"]["today"] is None  # not counted yet
        with slow.open("wb") as fifo:  # the log reads: the count goes on
            fifo.write(gzip.compress(played.path.read_bytes()))
        status = serve.until(lambda s: s["sessions"]["ladder"]["state"] == "quota reached")
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()
    ladder = status["sessions"]["ladder"]
    assert ladder["quota"]["today"] == 1 and ladder["runs"] == 0 and ladder["games"] == 0
    assert not game_logs(logs)  # none played


def test_the_start_up_count_misses_no_game_the_first_upkeep_pass_compresses(
        tmp_path: Path) -> None:
    """At start the day's count now runs beside the log upkeep's first pass, which compresses
    each finished log (X.gz written, then X removed). A log the count listed as X and read
    once the pass had removed it was not counted (and one listed both ways counted twice):
    after a restart with logs waiting to be compressed, the session played past its daily
    quota. Here the count waits on a log that reads only when the test says (a FIFO named as
    a compressed log of today's, listed before the others) while the real pass compresses
    every other log; then it reads on: every game is counted, the quota holds the session."""
    import gzip

    logs = tmp_path / "logs"
    today = logs / "ladder" / "local" / f"{dt.date.today():%Y-%m-%d}"
    played = GameLogWriter.create(tmp_path / "elsewhere", Header("local", "riichi", seat=0))
    played.event(ev.GameStarted("riichi", 0))
    played.close(Footer({"rank": 1}, (0, 0, 0, 0)))
    data = played.path.read_bytes()
    today.mkdir(parents=True)
    old = time.time() - 7200  # finished two hours ago: the first pass compresses them
    for n in range(8):
        path = today / f"{n:06d}-ladder-s0-g{n}.mjlog.msgpack"
        path.write_bytes(data)
        os.utime(path, (old, old))
    for n in range(20):  # a FIFO the count meets before some of the logs (listing order)
        slow = today / f"000000-slow{n}.mjlog.msgpack.gz"
        os.mkfifo(slow)
        listing = os.listdir(today)
        after = len(listing) - 1 - listing.index(slow.name)
        if after >= 2:
            break
        slow.unlink()
    assert after >= 2, listing
    config = _ladder_with_a_quota(tmp_path, 9, "[logs]\ncompress_after = 60\nlow_disk_mb = 0\n")
    serve = ServeProcess(config, logs)
    try:  # the pass compresses every log while the count waits on the FIFO
        serve.until(lambda s: s["logs"]["compressed"] == 8)
        with slow.open("wb") as fifo:
            fifo.write(gzip.compress(data))
        status = serve.until(lambda s: s["sessions"]["ladder"]["state"] != "idle")
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()
    ladder = status["sessions"]["ladder"]
    assert ladder["quota"]["today"] == 9 and ladder["runs"] == 0, ladder
    assert ladder["state"] == "quota reached"


async def test_a_restart_counts_only_the_games_that_finished_today(tmp_path: Path) -> None:
    """The quota a restart restores counted every log file of the day (stopped, abandoned
    and never-dealt games too) while the live quota counts finished games: with a quota of
    3, two finished games and four that did not left the session held with none played.
    It counts the logs that read as finished games, on the day they ended (a game begun
    before midnight sits in the day before's folder)."""
    now = dt.datetime.now()
    yesterday = now - dt.timedelta(days=1)
    session = tmp_path / "drill"

    def logged(result: dict[str, Any] | None, started: dt.datetime = now,
               ended: dt.datetime = now) -> None:
        w = GameLogWriter.create(session, Header("local", "mass", seat=0), when=started)
        w.event(ev.GameStarted("mass", 0))
        if result is not None:
            w.close(Footer(result, (0, 0, 0, 0), ended.isoformat()))
        else:
            w.close()  # no footer: the process was killed in the game

    logged({"rank": 1})  # finished today
    logged({"rank": 2}, started=yesterday)  # began yesterday, finished today
    logged({"rank": 3}, started=yesterday, ended=yesterday)  # yesterday's game
    logged({"hands": 1, "unfinished": True, "stopped": True})
    logged({"hands": 2, "abandoned": True})
    logged({"hands": 0, "unfinished": True})  # never dealt
    logged(None)
    config = loads("""
[sessions.drill]
kind = "local"
variant = "mass"
pause = 0
[sessions.drill.limits]
games_per_day = 3
""", environ={})
    before = set(game_logs(session))
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        handle = sup.handles["drill"]
        await until(lambda: handle.counted)  # in the session's task, off the event loop
        assert handle.quota.count - handle.games_played == 2
        await until(lambda: handle.state == "quota reached")
        assert handle.games_played == 1 and handle.quota.count == 3
    finally:
        await sup.stop(10)
    assert len(set(game_logs(session)) - before) == 1


def test_practice_snapshots_show_a_hand_in_play_never_the_pause_before_it() -> None:
    """With a pause between games longer than the snapshot's period, the first event of the
    next game (before its deal: no hand, every score 0) took the snapshot, and the dashboard
    showed that for the whole game and the pause after it."""
    settings = {"session": "paused", "variant": "riichi", "policy": "greedy",
                "opponents": ["greedy"] * 3, "pause": 0.3, "live_every": 0.2}
    worker = _practice_worker(settings)
    assert worker.stdin is not None and worker.stdout is not None
    live, games = [], 0
    try:
        while games < 3:
            report = json.loads(worker.stdout.readline())
            games += report["t"] == "game_end"
            if report["t"] == "live":
                live.append(report)
    finally:
        worker.stdin.close()
        worker.stdout.read()
        assert worker.wait(30) == 0
    assert live
    for snapshot in live:
        assert snapshot["in_hand"] and snapshot["hand"], snapshot
        assert sum(snapshot["scores"]) > 0, snapshot


def test_no_practice_game_is_shown_in_play_between_games(tmp_path: Path) -> None:
    """After a game ends the session has no game in play until the next one starts (its last
    snapshot stayed on the dashboard through the pause)."""
    config = tmp_path / "serve.toml"
    config.write_text("""
[sessions.resting]
kind = "local"
variant = "riichi"
policy = "greedy"
pause = 60
""")
    serve = ServeProcess(config, tmp_path / "logs")
    try:
        status = serve.until(lambda s: s["sessions"]["resting"]["games"] >= 1)
        assert status["sessions"]["resting"]["current"] is None
        assert serve.get("/api/status")["sessions"]["resting"]["current"] is None
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()


def test_practice_reports_our_seat_only_and_the_turn_in_play(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text("""
[sessions.counted]
kind = "local"
variant = "riichi"
policy = "rulebased"
opponents = ["greedy", "greedy", "greedy"]
hands = 1
pause = 0
[sessions.counted.limits]
games_per_day = 2
[sessions.watched]
kind = "local"
variant = "riichi"
policy = "greedy"
pause = 0
live_every = 0.2
""")
    logs = tmp_path / "logs"
    serve = ServeProcess(config, logs)
    try:
        # hands far shorter than the live snapshot's period are still seen past turn 0
        serve.until(lambda s: (s["sessions"]["watched"]["current"] or {}).get("turn", 0) > 0)
        # the session's snapshot period reaches its worker
        (pid,) = practice_pids("watched", logs)
        assert b'"live_every": 0.2' in Path(f"/proc/{pid}/cmdline").read_bytes()
        serve.until(lambda s: s["sessions"]["counted"]["state"] == "quota reached")
        metrics = serve.get("/metrics")
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()
    counted = [(sample.labels["policy"], sample.value)
               for family in text_string_to_metric_families(metrics)
               for sample in family.samples
               if sample.name == "mjbot_decisions_total"
               and sample.labels.get("session") == "counted"]
    assert [policy for policy, _ in counted] == ["rulebased"]  # no opponent's decision
    ours = 0
    for path in game_logs(logs / "counted"):
        log = read_log(path)
        assert log.header is not None
        seat = log.header.extra["our_seat"]
        ours += sum(1 for f in log.frames if isinstance(f, DecisionFrame) and f.seat == seat
                    and len(f.legal) > 1)  # an only legal action: the policy was not asked
    assert int(counted[0][1]) == ours > 0


STOP_DEADLINE = 30


def test_sigterm_in_a_tenhou_hand_finishes_it_and_starts_no_new_one(tmp_path: Path) -> None:
    """Tenhou deals the next hand milliseconds after NEXTREADY: the stop must not wait for a
    gap between hands but answer the hand's end with BYE, well before the deadline."""
    port = free_port()
    server = tenhou_server(port, games=100)
    config = tmp_path / "serve.toml"
    config.write_text(f"""
[serve]
stop_deadline = {STOP_DEADLINE}
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
games = 100
""")
    logs = tmp_path / "logs"
    serve = ServeProcess(config, logs)
    try:
        serve.until(lambda s: s["sessions"]["ladder"]["hands"] >= 2
                    and (s["sessions"]["ladder"]["current"] or {}).get("in_hand"))
        asked = time.monotonic()
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(STOP_DEADLINE + 10) == 0
        took = time.monotonic() - asked
    finally:
        serve.close()
        stop_process(server)
    # a test hand takes well under a second: the stop did not run into the deadline
    assert took < STOP_DEADLINE / 2, took
    footers = {p: assert_complete(p) for p in game_logs(logs / "ladder")}
    logged = "".join(serve.raw)
    after_hand = "tenhou: stopped after the hand, said BYE" in logged
    # or the stop came in the few milliseconds with no hand in play: left at once
    assert after_hand or "tenhou: stopped, said BYE" in logged
    last = max(footers, key=lambda p: p.stat().st_mtime)
    if not footers[last].get("unfinished"):
        return  # the stop found the game's last hand (or none): it ended, none was joined
    assert footers[last].get("stopped"), footers[last]
    frames = read_log(last).frames
    events = [f.event for f in frames if isinstance(f, EventFrame)]
    sent = [str(f.raw) for f in frames if isinstance(f, TxFrame)]
    starts = [i for i, e in enumerate(events) if isinstance(e, ev.RoundStarted)]
    if not starts:  # the stop came as a game was being set up: left before its first hand
        assert not after_hand and sent[-1] == "<BYE/>", (sent[-3:], footers[last])
        return
    assert any(isinstance(e, ev.RoundWon | ev.RoundDrawn) for e in events[starts[-1]:]), \
        ("the last hand was cut", events[-3:], sent[-3:])
    assert sent[-1] == "<BYE/>", sent[-3:]
    if after_hand:  # the hand's end answered with BYE, not with NEXTREADY
        assert not sent[-2].startswith("<NEXTREADY"), sent[-3:]


def test_sighup_adds_and_removes_sessions(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    # one-hand games (a config key users have): each session's first game, which the test
    # waits for, comes sooner than a four-hand one, and the workers play less meanwhile
    body = """
[sessions.{name}]
kind = "local"
variant = "mass"
hands = 1
pause = 0.5
"""
    config.write_text(ROOMY + body.format(name="stay") + body.format(name="leave"))
    logs = tmp_path / "logs"
    serve = ServeProcess(config, logs)
    try:
        serve.until(lambda s: all(x["state"] in ("running", "pause") and x["games"] >= 1
                                  for x in s["sessions"].values()))
        assert 'mjbot_session_running{session="leave"}' in serve.get("/metrics")
        config.write_text(ROOMY + body.format(name="stay") + body.format(name="join"))
        serve.signal(signal.SIGHUP)
        reloaded = serve.wait_for(lambda e: e.get("event") == "serve: config reloaded")
        assert reloaded["added"] == ["join"] and reloaded["removed"] == ["leave"]
        assert reloaded["unchanged"] == ["stay"]
        # the removed session's series are gone (no "running" or "breaker open" left behind)
        metrics = serve.get("/metrics")
        assert 'session="leave"' not in metrics and 'session="stay"' in metrics
        status = serve.until(lambda s: s["sessions"].get("join", {}).get("games", 0) >= 1)
        assert list(status["sessions"]) == ["stay", "join"]
        assert status["sessions"]["stay"]["runs"] == 1  # never restarted
        assert not practice_pids("leave", logs)
        config.write_text("[sessions.stay]\nkind = 'local'\nvariant = 42\n")
        serve.signal(signal.SIGHUP)
        refused = serve.wait_for(lambda e: e.get("event", "").startswith("serve: reload refused"))
        assert "line 3" in refused["error"]
        assert serve.proc.poll() is None
        health = serve.get("/health")
        assert list(health["sessions"]) == ["stay", "join"]
        # the refused reload shows, with its error, until a reload succeeds
        assert health["status"] == "degraded" and "line 3" in health["reload_error"]["error"]
        config.write_text(ROOMY + body.format(name="stay") + body.format(name="join"))
        serve.signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while (health := serve.get("/health"))["reloads"] < 2:
            assert time.monotonic() < deadline, health
            time.sleep(0.05)
        assert health["reload_error"] is None and health["status"] == "ok"
        serve.signal(signal.SIGTERM)
        assert serve.proc.wait(20) == 0
    finally:
        serve.close()
    for path in game_logs(logs):
        assert_complete(path)
    assert {p.relative_to(logs).parts[0] for p in game_logs(logs)} == {"stay", "leave", "join"}


async def test_a_tenhou_id_never_reaches_a_log_or_the_status(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    ident = "ID0A1B2C3D-Zz9Yy8Xx"
    port = free_port()
    config = loads(f"""
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
id_env = "LADDER_ID"
games = 1
""", environ={"LADDER_ID": ident})
    server = tenhou_server(port, games=5, length="east")
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        handle = sup.handles["ladder"]
        await until(lambda: handle.games_played >= 1)
        shown = json.dumps(sup.status()) + json.dumps(sup.health()) + sup.metrics.exposition()
    finally:
        await sup.stop(10)
        stop_process(server)
    logged = capsys.readouterr()
    written = b"".join(p.read_bytes() for p in game_logs(tmp_path))
    assert written and "login" in logged.out + logged.err
    for form in (ident, ident.replace("-", "%2D"), "0A1B2C3D"):
        assert form not in shown and form not in logged.out + logged.err
        assert form.encode() not in written


async def test_a_platform_session_is_connecting_until_it_is_dealt(tmp_path: Path) -> None:
    """The dashboard showed an NTPU session as "running" from the moment it began to
    connect: a session still waiting for its server's first game, or one that never got
    through, looked as if it played (with a live table of a game it never had). It is
    "connecting" (no live table) until its first game is dealt, then "running"; a server that
    cannot be reached leaves it in backoff, the connect error shown."""
    accepted, release = asyncio.Event(), asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        await release.wait()  # connected, not yet dealt
        for line in ("/ready", "/start MJ 1 mjbot", "/initGame east east 1 1 0",
                     "/initCard 111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 "
                     "161"):
            writer.write((line + "\n").encode())
        await writer.drain()
        await reader.read()  # then the table stays quiet until the client leaves
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    closed = free_port()  # nothing listens there
    config = loads(f"""
[serve]
stop_deadline = {STOP_DEADLINE}
[sessions.table]
kind = "ntpu"
server = "127.0.0.1:{port}"
[sessions.nowhere]
kind = "ntpu"
server = "127.0.0.1:{closed}"
connect_timeout = 0.5
""", environ={})
    sup = Supervisor(config, log_dir=str(tmp_path))
    async with server:
        try:
            sup.start()
            table, nowhere = sup.handles["table"], sup.handles["nowhere"]
            await until(accepted.is_set)
            await asyncio.sleep(1.0)  # the client's tracker looks twice a second
            status = table.status()
            assert status["state"] == "connecting" and status["current"] is None, status
            release.set()
            await until(lambda: table.state == "running")
            await until(lambda: table.status()["current"] is not None)
            await until(lambda: nowhere.failures >= 1)
            status = nowhere.status()
            assert status["state"] in ("backoff", "connecting"), status
            assert status["last_error"].startswith(f"cannot connect to 127.0.0.1:{closed}")
        finally:
            await sup.stop(1)


async def test_a_stop_in_an_ntpu_hand_ends_the_session_once_the_hand_is_over(
        tmp_path: Path) -> None:
    """The other platform clients (no way to leave but closing the line) are stopped once
    their table says no hand is in play: well before the deadline, as a run that was
    stopped."""
    import threading

    from adapter.fakes.ntpu_server import run_match
    from tests.ntpu_helpers import BotClient

    port = free_port()
    others = [BotClient() for _ in range(3)]

    up = threading.Event()

    def listening(_port: int) -> None:
        for client in others:
            client.port = port
            client.start()
        up.set()

    match = threading.Thread(target=run_match, args=(40, []), daemon=True, kwargs={
        "transport": "external", "port": port, "time_limit": 5.0, "write_log": False,
        "on_listening": listening})
    match.start()
    # the session connects once the server listens: a refused first try costs a backoff that,
    # on a loaded machine, ate the wait for the second hand below
    assert await asyncio.to_thread(up.wait, 30)
    config = loads(f"""
[serve]
stop_deadline = {STOP_DEADLINE}
[sessions.table]
kind = "ntpu"
server = "127.0.0.1:{port}"
connect_timeout = 30
""", environ={})
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        handle = sup.handles["table"]
        await until(lambda: handle.hands_played >= 2 and (handle.current or {}).get("in_hand"),
                    timeout=30)
        asked = time.monotonic()
        await sup.stop()
        took = time.monotonic() - asked
    finally:
        await sup.stop(1)
        await asyncio.to_thread(match.join, 60)  # the others play the match out
    assert handle.last_outcome == "stopped"
    assert took < STOP_DEADLINE / 2, took


async def test_an_ntpu_sessions_games_have_the_points_the_server_scored(
        tmp_path: Path) -> None:
    """The NTPU server sends no scores: /health's ``last_game`` had ``scores`` and
    ``points`` null for every NTPU game, so the dashboard showed no points. A game's scores
    are now what our rules count its wins (as the log's notices say): here the same points
    as the server's own table gives our client over the match."""
    import threading

    from adapter.fakes.ntpu_server import MatchResult, run_match
    from tests.ntpu_helpers import BotClient

    port = free_port()
    others = [BotClient() for _ in range(3)]
    up = threading.Event()
    played: list[MatchResult] = []

    def listening(_port: int) -> None:
        for client in others:
            client.port = port
            client.start()
            # in before the session (the server seats in the order it accepts): a client
            # thread late to connect (a loaded machine) let the session in first, and its
            # points were compared with another client's
            assert client.connected.wait(10)
        up.set()

    hands = 4
    match = threading.Thread(target=lambda: played.append(run_match(
        hands, [], seed=51, transport="external", port=port, time_limit=5.0,
        write_log=False, on_listening=listening)), daemon=True)
    match.start()
    assert await asyncio.to_thread(up.wait, 30)
    config = loads(f"""
[serve]
stop_deadline = {STOP_DEADLINE}
[sessions.table]
kind = "ntpu"
server = "127.0.0.1:{port}"
connect_timeout = 30
""", environ={})
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        handle = sup.handles["table"]
        await until(lambda: len(handle.results) >= hands, timeout=60)
    finally:
        await sup.stop(1)
        await asyncio.to_thread(match.join, 60)
    (result,) = played
    ours = result.stats[3]  # the session connected fourth
    games = list(handle.results)
    assert handle.status()["last_game"] == games[-1]
    for game in games:
        assert game["scores"] is not None and sum(game["scores"]) == 0, game
        assert game["points"] == game["scores"][game["seat"]], game
    assert any(any(game["scores"]) for game in games), "seed 51's match has a win"
    assert sum(game["points"] for game in games) == ours.points


def test_a_full_disk_is_named_on_the_dashboard_without_a_traceback(tmp_path: Path) -> None:
    """A disk that fills while practice plays (here: files that may not grow past 4 KB, which
    fails a log's write as a full disk does): each run's failure names the cause in /health
    and in one log line. It was 'practice worker exit status 1' there and a traceback a run on
    serve's stderr."""
    import resource
    import urllib.request

    config = tmp_path / "serve.toml"
    config.write_text('[sessions.drill]\nkind = "local"\nvariant = "riichi"\npolicy = "greedy"\n'
                      'opponents = ["greedy", "greedy", "greedy"]\npause = 0\n'
                      '[sessions.drill.limits]\nbackoff_initial = 0.2\nbackoff_max = 0.5\n')

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "--log-json", "serve",
                             str(config), "--status", "127.0.0.1:0", "--log-dir",
                             str(tmp_path / "logs")], cwd=ROOT, env=PYTHON_ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=small_files, restore_signals=False)
    lines: list[str] = []
    stderr = proc.stderr
    assert stderr is not None
    threading.Thread(target=lambda: lines.extend(iter(stderr.readline, "")),
                     daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None:
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)
            url = next((json.loads(x)["url"] for x in list(lines) if "listening" in x), None)
            time.sleep(0.05)
        while True:
            with urllib.request.urlopen(url + "health", timeout=10) as response:
                session = json.loads(response.read())["sessions"]["drill"]
            if session["failures"] >= 2:
                break
            assert time.monotonic() < deadline, session
            time.sleep(0.1)
    finally:
        stop_process(proc)
    expected = f"cannot write its game logs under {tmp_path / 'logs' / 'drill'}: File too large"
    assert session["last_failure"]["error"] == f"practice worker exit status 1: {expected}"
    failed = [json.loads(x) for x in lines if "run failed" in x]
    assert failed and all(expected in f["error"] for f in failed), lines
    assert not any("Traceback" in x for x in lines), "".join(lines)


async def test_a_policy_that_fails_at_every_decision_is_counted_shown_and_logged(
        tmp_path: Path) -> None:
    """A practice session whose policy raises at every decision (nn@ a file that is no weights
    file, which the config check lets through: the file exists) plays on on fallbacks. It was
    shown running and healthy, with nothing in /health, /api/status, the dashboard or the log
    to say so (only /metrics counted it). Its fallbacks, the last reason and one warning now
    say so, and the count is the one the game logs hold."""
    from structlog.testing import capture_logs

    weights = tmp_path / "broken.npz"
    weights.write_text("not weights\n")
    config = loads(f"""
[sessions.broken]
kind = "local"
variant = "riichi"
policy = "nn@{weights}"
pause = 0
""", environ={})
    sup = Supervisor(config, log_dir=str(tmp_path / "logs"))
    with capture_logs() as logs:
        try:
            sup.start()
            handle = sup.handles["broken"]
            await until(lambda: handle.games_played >= 1)
        finally:
            await sup.stop(10)
    status = sup.status()["sessions"]["broken"]
    # every decision the policy was asked (a forced one, a single legal answer, is not)
    assert status["decisions"] / 2 < status["fallbacks"] <= status["decisions"], status
    assert "is not a weights file" in status["last_fallback"]["reason"]
    assert status["last_fallback"]["policy"] == "nn"
    warned = [e for e in logs if e["event"] == "serve: the policy's answers were replaced by a "
              "fallback"]
    assert len(warned) == 1 and warned[0]["session"] == "broken", warned  # not one a decision
    assert "is not a weights file" in warned[0]["reason"]
    # the same count as the game logs' decisions of our seat answered by a fallback
    logged = 0
    for path in game_logs(tmp_path / "logs"):
        game = read_log(path)
        ours = header_of(game).extra["our_seat"]
        logged += sum(1 for f in game.frames if isinstance(f, DecisionFrame)
                      and f.seat == ours and f.fallback)
    assert logged == status["fallbacks"]


async def test_a_platform_clients_own_log_lines_name_their_session(tmp_path: Path) -> None:
    """Two Tenhou sessions at one server: the client's own lines (its login, each game logged)
    name the session they come from. They named none, so an operator could not tell which
    session lost its line or logged in again."""
    import structlog
    from structlog.testing import capture_logs

    port = free_port()
    server = tenhou_server(port, games=20, length="east")
    config = loads("".join(f"""
[sessions.{name}]
kind = "tenhou"
server = "127.0.0.1:{port}"
games = 1
pause = 30
""" for name in ("east-a", "east-b")), environ={})
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
            sup.start()
            await until(lambda: all(h.games_played >= 1 for h in sup.handles.values()))
            await sup.stop(10)
    finally:
        await sup.stop(1)
        stop_process(server)
    for event in ("tenhou: login", "tenhou: game logged"):
        lines = [e for e in logs if e["event"] == event]
        assert sorted(str(e.get("session")) for e in lines) == ["east-a", "east-b"], lines
    logged = [e for e in logs if e["event"] == "tenhou: game logged"]
    assert all(f"/{e['session']}/" in e["path"] for e in logged)


async def test_an_only_legal_action_is_no_decision_of_the_policys(tmp_path: Path) -> None:
    """The brain plays an only legal action without asking the policy (brain/tally.py), but
    serve counted it as a decision: the dashboard's fallback share, /metrics and `mjbot bench
    serve` divided the fallbacks by too many decisions. A platform session and a practice
    session each count their seat's decisions with more than one legal action, and nothing
    else."""
    port = free_port()
    config = loads(f"""
[sessions.ladder]
kind = "tenhou"
server = "127.0.0.1:{port}"
connect_timeout = 30
games = 1
[sessions.practice]
kind = "local"
variant = "riichi"
pause = 0
hands = 4
[sessions.practice.limits]
games_per_day = 2
""", environ={})
    server = tenhou_server(port, games=1, length="east")
    sup = Supervisor(config, log_dir=str(tmp_path))
    try:
        sup.start()
        await until(lambda: sup.handles["ladder"].games_played >= 1
                    and sup.handles["practice"].games_played >= 2, timeout=120)
        await until(lambda: all(h.last_outcome for h in sup.handles.values()), timeout=30)
    finally:
        await sup.stop(10)
        stop_process(server)
    forced_seen = 0
    for name in ("ladder", "practice"):
        frames = []
        for path in game_logs(tmp_path / name):
            log = read_log(path)
            assert log.header is not None
            seat = log.header.extra.get("our_seat", log.header.seat)
            frames += [f for f in log.frames if isinstance(f, DecisionFrame)
                       and f.seat in (None, seat)]
        asked = [f for f in frames if len(f.legal) > 1]
        forced_seen += len(frames) - len(asked)
        handle = sup.handles[name]
        assert handle.decisions_made == len(asked) > 0, (name, len(frames))
        decisions = sup.metrics.histogram("mjbot_decision_seconds", session=name,
                                          policy="rulebased")
        assert decisions is not None and decisions.count == len(asked)
    assert forced_seen > 0  # the games had answers the policy was not asked for
