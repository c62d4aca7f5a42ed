"""`mjbot tenhou` against the fake Tenhou server over real loopback sockets (TCP and
WebSocket): whole games, a line dropped in the middle of a hand and the game resumed, bad tags,
recorded server streams, the permission guard and the secret ID."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from adapter.fakes.tenhou_recording import CUT, ReplayStats, recorded_stream, serve_recording
from adapter.fakes.tenhou_server import FakeTenhouServer, ServerStats
from adapter.platforms.tenhou import (
    ANONYMOUS,
    ID_ENV,
    PermissionRefused,
    TenhouBot,
    TenhouSettings,
    check_permission,
    load_config,
    run,
)
from adapter.session import SessionSummary
from protocols import events as ev
from protocols.tenhou import TagStream, parse_tag
from replay import replayer
from replay.log import DecisionFrame, EventFrame, GameLog, RxFrame, TxFrame, read_log
from tests.line_faults import capture_client_readers, silent_server, time_out
from tests.narrowing import footer_of, header_of, text_of
from tests.serve_helpers import free_port
from tests.shared_data import TENHOU_CAPTURES as CAPTURES
from tests.test_tenhou_codec import REINIT_CALLS, REINIT_IN_RIICHI


async def _game(tmp_path: Path, transport: str, seed: int = 1, drop: int | None = None,
                junk: tuple[str, ...] = (), name: str = "NoName",
                keepalive: float = 15.0) -> tuple[SessionSummary, ServerStats]:
    server = FakeTenhouServer(seed=seed, drop_after=drop, time_limit=5, absent=10,
                              log_dir=str(tmp_path / "server"), junk=junk)
    port = await (server.start_tcp() if transport == "tcp" else server.start_ws())
    settings = TenhouSettings(server=f"127.0.0.1:{port}", transport=transport, name=name,
                              log_dir=str(tmp_path / "client"), budget=1.0,
                              reconnect_delay=0.2, keepalive=keepalive)
    try:
        summary = await asyncio.wait_for(run(settings), 120)
        await asyncio.wait_for(server.finished.wait(), 10)
    finally:
        await server.close()
    return summary, server.stats


def _client_log(tmp_path: Path) -> GameLog:
    (path,) = list((tmp_path / "client").rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and log.truncated is None
    return log


@pytest.mark.parametrize("transport", ["tcp", "ws"])
async def test_a_whole_game_with_a_dropped_line_resumed(tmp_path: Path, transport: str) -> None:
    summary, stats = await _game(tmp_path, transport, drop=50)
    assert summary.finished and summary.games == 1 and summary.reconnects == 1
    assert stats.reconnects == 1 and stats.games == 1
    assert (stats.illegal, stats.timeouts) == (0, 0), stats.problems
    assert stats.auth_ok
    assert not summary.errors
    log = _client_log(tmp_path)
    rx = [f.raw for f in log.frames if isinstance(f, RxFrame)]
    assert any("REINIT" in r for r in rx) and any("SAIKAI" in r for r in rx)
    events = [f.event for f in log.frames if isinstance(f, EventFrame)]
    assert isinstance(events[0], ev.GameStarted)
    assert isinstance(events[-1], ev.GameEnded)
    assert stats.result is not None, stats.problems
    assert sum(isinstance(e, ev.RoundWon | ev.RoundDrawn) for e in events) == \
        len(stats.result.hands)
    # the server's word that the game is over is told as a sentence, not a Python repr
    notices = [e.text for e in events if isinstance(e, ev.PlatformNotice)]
    assert any(n.startswith("the server says the game is over (PROF, game type ")
               for n in notices), notices
    assert not any("GameOver(" in n for n in notices), notices
    # the recorded raw tags, fed through a fresh codec, give the logged events again
    (path,) = list((tmp_path / "client").rglob("*.mjlog.msgpack"))
    assert replayer.reparse(replayer.load(str(path)))["identical"]


@pytest.mark.parametrize("transport", ["tcp", "ws"])
async def test_a_lobby_other_than_0_is_entered_before_the_join(tmp_path: Path,
                                                               transport: str) -> None:
    """``--lobby 7994`` sent ``<JOIN t="7994,64"/>`` from lobby 0: Tenhou's own client (the
    capture f5182_2018-01-22) and every bot client we know enter it first with
    ``<CHAT text="/lobby%207994"/>``, which the fake server now asks (it counted nothing).
    Once a line: the REJOIN's JOIN and the line's next game stay in it; a new line (here the
    one that resumed game 1 after a drop, then joins game 2) enters it again first."""
    server = FakeTenhouServer(seed=3, time_limit=5, absent=10, transcript=True, drop_after=60,
                              log_dir=str(tmp_path / "server"))
    port = await (server.start_tcp() if transport == "tcp" else server.start_ws())
    settings = TenhouSettings(server=f"127.0.0.1:{port}", transport=transport, lobby=7994,
                              games=2, log_dir=str(tmp_path / "client"), budget=1.0,
                              reconnect_delay=0.2)
    try:
        summary = await asyncio.wait_for(run(settings), 120)
        await asyncio.wait_for(server.finished.wait(), 10)
    finally:
        await server.close()
    assert summary.finished and summary.games == 2 and summary.reconnects == 1
    assert not [p for p in server.stats.problems if "lobby" in p], server.stats.problems
    sent = [[t for d, t in conn if d == "rx" and t.startswith(("<CHAT", "<JOIN"))]
            for conn in server.transcripts]
    enter, first, again = '<CHAT text="/lobby%207994"/>', '<JOIN t="7994,64"/>', \
        '<JOIN t="7994,64,r"/>'
    # the first line: in, join, rejoin; then the drop in game 1
    assert sent[0] == [enter, first, again], sent
    assert sent[0].count(enter) == 1 and all(t == enter or t.startswith("<JOIN t=\"7994,64")
                                             for conn in sent for t in conn), sent
    # the line that resumed game 1 enters again before its JOIN for game 2
    assert sent[1] == [enter, first, again], sent


async def test_a_hand_cut_by_a_dropped_line_reads_as_resumed_not_as_the_logs_end(
        tmp_path: Path) -> None:
    """``mjbot replay`` of a game whose line dropped in a hand showed that hand twice, the
    first part "unfinished (the log ends inside this hand)" though the log goes on with the
    same hand as the server gave it back (REINIT). Now the first part says so; the game's
    hands are the server's, each with its result, and no hand reads unfinished."""
    summary, stats = await _game(tmp_path, "tcp", drop=50)
    assert summary.finished and summary.reconnects == 1 and stats.result is not None
    (path,) = list((tmp_path / "client").rglob("*.mjlog.msgpack"))
    hands = replayer.summarize(replayer.load(str(path)))["hands"]
    cut = [h for h in hands if h["resumed_below"]]
    assert len(cut) == 1 and not any(h["unfinished"] for h in hands), hands
    assert len(hands) == len(stats.result.hands) + 1  # the cut part, and the hand given back
    at = hands.index(cut[0])
    assert not cut[0]["results"] and hands[at + 1]["results"]
    assert (cut[0]["round"], cut[0]["honba"]) == (hands[at + 1]["round"],
                                                  hands[at + 1]["honba"])
    text = replayer.format_summary(replayer.summarize(replayer.load(str(path))))
    assert "the log ends inside this hand" not in text
    assert "line dropped: the hand goes on below, as the server gave it back" in text


async def test_a_result_lost_with_the_line_is_not_read_as_the_logs_end(tmp_path: Path) -> None:
    """A line dropped as a hand ended (its AGARI lost with it; the fake server then gives
    the finished hand back, REINIT, and deals the next): that hand has no result in the log,
    and ``mjbot replay`` said "the log ends inside this hand" with more hands below it."""
    for drop in range(304, 313):  # a drop in these tags falls as E3-0 ends (seed 1)
        summary, _stats = await _game(tmp_path / str(drop), "tcp", drop=drop)
        assert summary.finished and summary.reconnects == 1
        (path,) = list((tmp_path / str(drop) / "client").rglob("*.mjlog.msgpack"))
        result = replayer.summarize(replayer.load(str(path)))
        lost = [i for i, h in enumerate(result["hands"][:-1]) if h["unfinished"]]
        if lost:
            break
    assert lost, "no drop in 304..312 loses a result any more: find others"
    text = replayer.format_summary(result)
    assert "the log ends inside this hand" not in text
    assert text.count("unfinished (no result in the log, which goes on with the next hand)") \
        == len(lost)


async def test_resuming_anywhere_plays_the_same_game(tmp_path: Path) -> None:
    """A line dropped at any of many points: the game goes on exactly as without the drop."""
    _, clean = await _game(tmp_path / "clean", "tcp", seed=1)
    assert clean.result is not None, clean.problems
    for i, drop in enumerate(range(12, 140, 16)):
        transport = "tcp" if i % 2 else "ws"
        summary, stats = await _game(tmp_path / f"drop{drop}", transport, seed=1, drop=drop)
        assert stats.reconnects == 1, drop
        assert (stats.illegal, stats.timeouts) == (0, 0), (drop, stats.problems)
        assert stats.result is not None, (drop, stats.problems)
        assert stats.result.scores == clean.result.scores, drop
        assert not summary.errors, (drop, summary.errors)


@pytest.mark.parametrize("transport, junk", [
    ("tcp", ("<BOGUS a=\"1\"/>", '<N who="1" m="70000"/>', "<E999/>", '<E12 t="x"/>', "hello")),
    ("ws", ('{"tag": "BOGUS"}', "not json", '{"tag": "E999"}', '{"tag": "N", "who": "9"}')),
])
async def test_bad_tags_are_logged_and_the_game_goes_on(tmp_path: Path, transport: str,
                                                       junk: tuple[str, ...]) -> None:
    summary, stats = await _game(tmp_path, transport, junk=junk)
    assert summary.finished
    assert len(summary.errors) == len(junk), summary.errors
    assert (stats.illegal, stats.timeouts) == (0, 0), stats.problems
    log = _client_log(tmp_path)
    notices = [f.event.text for f in log.frames if isinstance(f, EventFrame)
               and isinstance(f.event, ev.PlatformNotice) and f.event.text.startswith("error")]
    assert len(notices) == len(junk)
    rx = [f.raw for f in log.frames if isinstance(f, RxFrame)]
    assert all(j in rx for j in junk)  # every raw message kept
    # the log re-reads to the same events; the bad messages fail again, as in the game
    # (reparse said 'identical: False' for a game whose every event it read again)
    again = replayer.reparse(replayer.load(str(log.path)))
    assert again["identical"] and again["errors"] == [], again
    assert len(again["unreadable_in_the_game"]) == len(junk)
    if transport == "tcp":  # '<E12 t="x"/>' owed an answer: a pass, which the server ignored
        # (as unasked, as a second answer to the request just answered, or, once the game
        # thread has asked this seat's next draw, as a repeat of a pass given earlier in the
        # game: which one depends on how far the server's game thread has got when it arrives)
        assert any(p.startswith(("dropped, unasked: <N", "dropped, a second answer: <N",
                                 "dropped, stale, a repeat of an earlier answer: <N"))
                   for p in stats.problems), stats.problems


async def test_the_id_never_reaches_a_log(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    secret = "ID1A2B3C4D-s3cr3tXY"
    summary, _stats = await _game(tmp_path, "tcp", name=secret)
    assert summary.finished
    for path in tmp_path.rglob("*.mjlog.msgpack"):
        data = path.read_bytes()
        assert secret.encode() not in data
        assert b"s3cr3tXY" not in data
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err


async def test_the_id_never_reaches_the_websocket_librarys_debug_trace(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """At ``--log-level debug`` the websockets library traces every frame it sends: our
    HELO's carried the ID to stderr. Its log now goes through our scrubber: the trace is
    still there, the ID is not."""
    import logging

    caplog.set_level(logging.DEBUG, logger="websockets")
    secret = "ID1A2B3C4D-s3cr3tXY"
    summary, _stats = await _game(tmp_path, "ws", name=secret)
    assert summary.finished
    traced = [r.getMessage() for r in caplog.records if r.name == "websockets.client"]
    assert any("HELO" in m for m in traced), traced[:5]
    assert not [m for m in traced if "s3cr3tXY" in m], traced[:5]
    # the fake server's trace of what it received (the client's HELO) names no ID either
    served = [r.getMessage() for r in caplog.records if r.name == "websockets.server"]
    assert any("HELO" in m for m in served), served[:5]
    assert not [m for m in served if "s3cr3tXY" in m], served[:5]
    # the HELO's frame as both traces show it: its length is the real frame's (the scrubbed
    # payload, shorter, made the trace say '[41 bytes]' of a 57-byte frame)
    sent = json.dumps({"tag": "HELO", "name": secret, "sx": "M"})
    for lines in (traced, served):
        (helo,) = [m for m in lines if '"HELO", "name"' in m and "TEXT" in m]
        assert helo.endswith(f"[{len(sent)} bytes]"), (helo, len(sent))


async def _played_to(tmp_path: Path, tags: list[str], within: float) -> ReplayStats:
    """The client played to a server that sends ``tags`` as recorded, until the recording
    ends (the line closes and stays closed) or ``within`` seconds: the server's tallies."""
    server, port, stats = await serve_recording(tags)
    settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(tmp_path), budget=1.0,
                              reconnect_tries=1, reconnect_delay=0.1, game_type=9,
                              permission_granted=True)
    async with server:
        with contextlib.suppress(ConnectionError):
            await asyncio.wait_for(run(settings), within)
    return stats


@pytest.mark.parametrize("name", ["first.log", "kokushi.log", "82093_2018-01-17_11_03_35.log"])
async def test_recorded_server_streams_are_answered(tmp_path: Path, name: str) -> None:
    tags = recorded_stream((CAPTURES / name).read_text(encoding="utf-8"))
    stats = await _played_to(tmp_path, tags, 120)
    assert stats.sent == len(tags)
    # our play differs from the recorded player's, so later tags may contradict our table
    # (logged errors), but every draw and every offer got an answer
    assert stats.owed > 0 and stats.answered == stats.owed


async def test_a_ron_offered_after_a_reconnect_in_riichi_is_claimed(tmp_path: Path) -> None:
    """Back at the table in riichi (GO, UN, SAIKAI, then REINIT, as in second.log), over a real
    socket: the table rebuilt from the REINIT guessed the order of the rivers and took a 5p
    passed before our riichi for one passed after it (riichi furiten); the ron Tenhou offered
    on the next 5p was passed up. The offer is Tenhou's own furiten judgement: we take it."""
    tags = ['<GO type="9" lobby="0" gpid="2FF64D8A-A9692044"/>',
            '<UN n0="%4E%6F%4E%61%6D%65" n1="%43%4F%4D" n2="%43%4F%4D" n3="%43%4F%4D" '
            'dan="0,0,0,0" rate="1500.00,1500.00,1500.00,1500.00" sx="M,C,C,C"/>',
            '<SAIKAI ba="0,1" oya="0" sc="240,0,250,0,250,0,250,0"/>',
            REINIT_IN_RIICHI, "<T60/>", "<D60/>", "<U/>", '<E54 t="8"/>']
    stats = await _played_to(tmp_path, tags, 60)
    assert stats.answered == stats.owed == 2, stats
    assert [parse_tag(r) for r in stats.replies] == [parse_tag('<D p="60"/>'),
                                                     parse_tag('<N type="6"/>')], stats.replies
    # a game resumed with no TAIKYOKU (a new client after a serve reload) is named by GO's
    # gpid: it was logged as "HHMMSS-tenhou-game", as every such game
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert path.name.endswith("-tenhou-2FF64D8A-A9692044.mjlog.msgpack"), path.name
    assert header_of(read_log(path)).game_id == "tenhou-2FF64D8A-A9692044"


# The hand of REINIT_IN_RIICHI played live in its true order (tests/test_tenhou_codec.py): the
# 5p of seat 2 (id 55) comes while we wait on a South, before our riichi on the 5p. The line is
# then cut, and the reconnect's REINIT gives each river on its own.
LIVE_TO_RIICHI = [
    '<GO type="9" lobby="0"/>', '<UN n0="%4E%6F%4E%61%6D%65" n1="a" n2="b" n3="c"/>',
    '<TAIKYOKU oya="0"/>',
    '<INIT seed="0,0,0,3,2,60" ten="250,250,250,250" oya="0" '
    'hai="0,4,8,12,17,20,24,28,32,36,40,108,112"/>',
    "<T44/>", "<D108/>", "<U/>", "<e116/>", "<V/>", "<f124/>", "<W/>", "<g128/>",
    '<N who="2" m="49257"/>', "<F55/>", "<W/>", "<g132/>",
    '<T53 t="32"/>', '<REACH who="0" step="1"/>', "<D112/>",
    '<REACH who="0" step="2" ten="240,250,250,250"/>',
    "<U/>", "<e120/>", "<V/>", "<f125/>", "<W/>", "<g133/>"]


async def test_the_servers_furiten_word_stands_after_a_reconnect(tmp_path: Path) -> None:
    """Tenhou said nothing of furiten in this hand (the 5p passed before we waited on it). The
    table rebuilt from the reconnect's REINIT replays the rivers in a guessed order, the 5p
    after our riichi: riichi furiten for the rest of the hand, which the rules and the
    network's furiten plane read. The codec now says Tenhou's last word again after the
    REINIT (a FuritenShown, in the game log), and the table takes it: not furiten."""
    from brain.nn.encoding import PLANE, encode
    from brain.rules.riichi import is_furiten
    from brain.state import TableState

    tags = [*LIVE_TO_RIICHI, CUT, '<GO type="9" lobby="0"/>',
            '<UN n0="%4E%6F%4E%61%6D%65" n1="a" n2="b" n3="c"/>',
            '<SAIKAI ba="0,1" oya="0" sc="240,0,250,0,250,0,250,0"/>',
            REINIT_IN_RIICHI, "<T60/>", "<D60/>", "<U/>", '<E54 t="8"/>']
    stats = await _played_to(tmp_path, tags, 60)
    assert stats.answered == stats.owed == 4, stats
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    state, seen = TableState(), []
    for f in read_log(path).frames:
        if isinstance(f, EventFrame):
            state.apply(f.event)
        elif isinstance(f, DecisionFrame) and f.request.kind == "claim":
            seen.append((state.me.riichi, is_furiten(state),
                         encode(state, f.request)[PLANE["furiten"]].max()))
    assert seen == [(True, False, 0.0)]  # the claim of the 5p after the reconnect
    events = [f.event for f in read_log(path).frames if isinstance(f, EventFrame)]
    shown = [i for i, e in enumerate(events) if isinstance(e, ev.FuritenShown)]
    reinit = max(i for i, e in enumerate(events) if isinstance(e, ev.RoundStarted))
    assert len(shown) == 1 and shown[0] > reinit
    assert events[shown[0]] == ev.FuritenShown(0, False)
    # the replay shows the word among the hand's notices; the raw tags give the events again
    replay = replayer.load(str(path))
    hand = replayer.summarize(replay)["hands"][-1]  # the hand as the REINIT resumed it
    assert "the server shows seat 0 not furiten" in hand["notices"], hand["notices"]
    assert replayer.reparse(replay)["identical"]


def _furiten_readings(log: Any) -> dict[tuple[object, ...], tuple[bool, bool]]:
    """At each decision of a logged game with 13 tiles held, keyed by where it falls (hand,
    discards so far, request): the passed-up-win flags (the network's plane) and furiten."""
    from brain.rules.riichi import is_furiten
    from brain.state import TableState

    state = TableState()
    out: dict[tuple[object, ...], tuple[bool, bool]] = {}
    for f in log.frames:
        if isinstance(f, EventFrame):
            state.apply(f.event)
        elif isinstance(f, DecisionFrame) and state.round_active and len(state.hand) % 3 == 1:
            key = (state.hand_count, sum(len(s.river) for s in state.seats), f.request.kind,
                   f.request.tile)
            out[key] = (state.temporary_furiten or state.riichi_furiten, is_furiten(state))
    return out


async def test_the_fake_servers_furiten_is_said_again_after_its_reinit(tmp_path: Path) -> None:
    """The fake server's game of seed 3, cut after its 337th tag: our seat had been shown
    furiten (a wait in its river) and still is. The REINIT does not say so; the codec says
    the word again after it, and the table reads at every decision what it read in the
    unbroken game."""
    _, clean = await _game(tmp_path / "clean", "tcp", seed=3)
    summary, stats = await _game(tmp_path / "cut", "tcp", seed=3, drop=337)
    assert not summary.errors and stats.reconnects == 1
    assert stats.result is not None and clean.result is not None
    assert stats.result.scores == clean.result.scores
    cut = _client_log(tmp_path / "cut")
    events = [f.event for f in cut.frames if isinstance(f, EventFrame)]
    back = next(i for i, e in enumerate(events) if isinstance(e, ev.PlatformNotice)
                and e.text.startswith("reconnected"))
    assert events[back + 1] == ev.FuritenShown(events[0].seat, True)
    from brain.rules.riichi import is_furiten
    from brain.state import TableState

    table = TableState()
    for e in events[:back + 2]:
        table.apply(e)
    assert is_furiten(table)
    unbroken = _furiten_readings(_client_log(tmp_path / "clean"))
    readings = _furiten_readings(cut)
    assert {k: v for k, v in readings.items() if k in unbroken} == \
        {k: unbroken[k] for k in readings if k in unbroken}


async def test_keepalives_and_a_goodbye(tmp_path: Path) -> None:
    summary, stats = await _game(tmp_path, "tcp", keepalive=0.02)
    assert summary.finished
    assert stats.keepalives > 0  # <Z/> while the game ran
    assert stats.byes == 1  # and BYE after the last game


async def test_a_signal_says_what_was_left_a_queue_or_no_line(tmp_path: Path) -> None:
    """Stopped while queueing (no table yet), ``mjbot tenhou`` said "left the table with BYE";
    stopped while still connecting, it logged "no BYE to say" and then said "left the table
    with BYE" too. The closing line now says what was done."""
    server = FakeTenhouServer(seed=2, time_limit=5, absent=1, humans=2)  # a table never full
    port = await server.start_tcp()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapter.cli", "tenhou", "--server", f"127.0.0.1:{port}",
        "--no-log", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    for _ in range(600):
        if server.waiting:
            break
        await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    await server.close()
    assert proc.returncode == 128 + signal.SIGINT, err.decode()[-1500:]
    assert err.decode().splitlines()[-1] == "mjbot tenhou: stopped (SIGINT; left the queue " \
        "with BYE)", err.decode()[-1500:]
    assert server.stats.byes == 1
    # a server that is not there: the client is still trying to connect (10 s) when stopped
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapter.cli", "--log-level", "debug", "tenhou", "--server",
        f"127.0.0.1:{free_port()}", "--no-log", stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    said = b""  # its stop's handlers set (a process has one from its start: adapter/early_stop)
    while b"tenhou: connecting" not in said:
        line = await asyncio.wait_for(proc.stderr.readline(), 60)
        assert line, said.decode()[-1500:]
        said += line
    proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    last = err.decode().splitlines()[-1]
    assert "BYE" in last and "left" not in last and "Traceback" not in err.decode(), last
    assert last == "mjbot tenhou: stopped (SIGTERM; not connected, no BYE to say)", last


async def test_a_signal_leaves_the_table_with_bye(tmp_path: Path) -> None:
    server = FakeTenhouServer(seed=2, time_limit=5, absent=1)
    port = await server.start_tcp()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapter.cli", "tenhou", "--server", f"127.0.0.1:{port}",
        "--games", "20", "--log-dir", str(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    for _ in range(600):
        if server.stats.hands >= 2:
            break
        await asyncio.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    await server.close()
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()[-1500:]
    assert b"stopped (SIGTERM; left the table with BYE)" in err
    assert b"Traceback" not in err
    assert server.stats.byes == 1
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete  # closed with its footer, nothing cut
    # and says the game was stopped (it read "the session ended before the game did")
    assert log.footer is not None and log.footer.result.get("stopped") is True
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == "stopped on request"


async def test_a_bye_the_line_did_not_take_is_not_said_to_have_left(tmp_path: Path) -> None:
    """Stopped while it thinks and the line broke under it (a reset the session reads only after
    its decision): the BYE's send failed, and the error was swallowed: the closing line said
    "left the table with BYE" all the same. It now says the BYE was not sent."""
    import socket
    import struct

    from adapter.thinking.thinker import Thinker
    from brain.brain import Brain
    from tests.anytime_policies import SlowThinker

    reset = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)  # the HELO
        for text in LIVE_TO_RIICHI[:5]:  # GO, UN, TAIKYOKU, INIT and our draw: we think
            writer.write(text.encode() + b"\0")
        await writer.drain()
        await asyncio.sleep(0.3)
        sock = writer.get_extra_info("socket")  # a reset, not a close
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        reset.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(tmp_path), budget=8.0,
                              game_type=9, permission_granted=True)
    bot = TenhouBot(settings)
    bot.brain = Brain("riichi", SlowThinker(tmp_path / "count", think=6.0), limit=8.0)
    bot.thinker = Thinker(bot.brain)
    async with server:
        task = asyncio.ensure_future(run(settings, bot))
        await asyncio.wait_for(reset.wait(), 30)
        await asyncio.sleep(0.5)  # the reset is the transport's; the session still thinks
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)
    assert bot.farewell.startswith("BYE not sent: "), bot.farewell
    assert bot.farewell.endswith("; the line closed at the table"), bot.farewell


@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"])
async def test_a_websocket_address_with_no_websocket_server(tmp_path: Path,
                                                            answer: bytes) -> None:
    """--transport ws to a line that is up but no WebSocket server's (it closes at once, or
    answers HTTP 404): a ConnectionError naming the address, which the CLI prints as one line
    (the handshake's exception ended `mjbot tenhou` with a traceback)."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"ws://127.0.0.1:{port}", transport="ws",
                              connect_timeout=0.5, log_dir=str(tmp_path))
    async with server:
        with pytest.raises(ConnectionError, match=f"ws://127.0.0.1:{port}"):
            await asyncio.wait_for(run(settings), 30)


async def test_a_server_that_never_answers_the_connect_is_given_up_after_connect_timeout(
        tmp_path: Path) -> None:
    """A listener whose accept queue is full drops our SYNs, as a black-holed address or a
    firewall does: the TCP connect waited for the kernel (about two minutes an attempt), past
    the 10 s the client keeps trying for. Now each attempt is bounded by what is left of
    ``connect_timeout``, and the error names the silence."""
    with silent_server() as port, pytest.raises(ConnectionError, match="no answer in 1 s"):
        settings = TenhouSettings(server=f"127.0.0.1:{port}", connect_timeout=1.0,
                                  log_dir=str(tmp_path))
        await asyncio.wait_for(run(settings), 30)


async def test_a_stop_while_connecting_says_no_bye(tmp_path: Path) -> None:
    """Stopped while its server is not up yet: it says it stopped unconnected (it logged
    'stopped, said BYE' and wrote a BYE it never sent into its frames)."""
    settings = TenhouSettings(server=f"127.0.0.1:{free_port()}", connect_timeout=30,
                              log_dir=str(tmp_path))
    bot = TenhouBot(settings)
    with capture_logs() as logs:
        task = asyncio.ensure_future(run(settings, bot))
        await asyncio.sleep(0.5)  # refused, tried again every 0.2 s
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    events = [entry["event"] for entry in logs]
    assert "tenhou: stopped while not connected, no BYE to say" in events, events
    assert "tenhou: stopped, said BYE" not in events
    assert not list(tmp_path.rglob("*.mjlog.msgpack"))


async def test_a_game_of_a_refused_type_is_left_with_bye(tmp_path: Path) -> None:
    """A server that seats us in a game we may not play (GO of the Phoenix lobby): the session
    ends with the refusal, as before, but it ended without a BYE; it now says BYE first."""
    server = FakeTenhouServer(seed=2, time_limit=5, absent=1)
    server.game_type = 169
    port = await server.start_tcp()
    settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(tmp_path),
                              connect_timeout=5)
    try:
        with pytest.raises(PermissionRefused, match="Phoenix"):
            await asyncio.wait_for(run(settings), 30)
        for _ in range(100):  # the server reads the BYE on its own time
            if server.stats.byes:
                break
            await asyncio.sleep(0.05)
    finally:
        await server.close()
    assert server.stats.byes == 1


def test_permission_guard() -> None:
    check_permission(64, False)
    check_permission(9 & ~1, False)
    with pytest.raises(PermissionRefused, match="permission"):
        check_permission(9, False)
    check_permission(9, True)
    with pytest.raises(PermissionRefused, match="Phoenix"):
        check_permission(0xA9, True)


def test_config_file_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "mjbot.toml"
    config.write_text('[tenhou]\nid = "ID0123ABCD-abcdefgh"\npermission_granted = true\n'
                      "game_type = 9\n")
    monkeypatch.delenv(ID_ENV, raising=False)
    settings = load_config(str(config), TenhouSettings())
    assert settings.name == "ID0123ABCD-abcdefgh" and settings.permission_granted
    assert settings.game_type == 9 and settings.secrets == ["ID0123ABCD-abcdefgh"]
    monkeypatch.setenv(ID_ENV, "ID99999999-zzzzzzzz")
    assert load_config(None, TenhouSettings()).name == "ID99999999-zzzzzzzz"
    monkeypatch.setenv(ID_ENV, "not-an-id")
    with pytest.raises(ValueError, match="IDxxxxxxxx"):
        load_config(None, TenhouSettings())


def test_a_malformed_id_is_refused_naming_where_it_came_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment's ID wins over the file's: a stale ``$MJBOT_TENHOU_ID`` beside a good
    config file was refused as "the Tenhou ID must look like ...", and the user edited the
    file in vain. The message names the source (never the value: it is a secret)."""
    config = tmp_path / "mjbot.toml"
    config.write_text('[tenhou]\nid = "ID0123ABCD-abcdefgh"\n')
    monkeypatch.setenv(ID_ENV, "ID0123-secret")
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert f"${ID_ENV}" in str(refused.value) and "secret" not in str(refused.value)
    monkeypatch.delenv(ID_ENV)
    config.write_text('[tenhou]\nid = "ID0123-secret"\n')
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert f"config file {config}: id" in str(refused.value)
    assert "secret" not in str(refused.value)


def test_an_empty_id_is_refused_naming_its_source_not_played_anonymously(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``id = ""`` or an empty ``$MJBOT_TENHOU_ID`` (an unset variable expanded) logged in
    anonymously, as if no ID were given; anonymous play is the ID left out."""
    config = tmp_path / "mjbot.toml"
    config.write_text('[tenhou]\nid = ""\n')
    monkeypatch.delenv(ID_ENV, raising=False)
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert str(refused.value) == (f"the Tenhou ID (config file {config}: id) is empty: give "
                                  "the ID, or leave it out to log in anonymously")
    config.write_text('[tenhou]\nid = "ID0123ABCD-abcdefgh"\n')
    monkeypatch.setenv(ID_ENV, "")  # beside a good file: the environment still wins
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert f"(${ID_ENV}) is empty" in str(refused.value)
    assert "abcdefgh" not in str(refused.value)
    monkeypatch.delenv(ID_ENV)
    assert load_config(None, TenhouSettings()).name == ANONYMOUS


def test_the_readmes_placeholder_id_is_named_as_such_and_a_bad_id_said_in_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's config with its ``id = "IDxxxxxxxx-xxxxxxxx"`` left as it is was refused
    as "must look like IDxxxxxxxx-xxxxxxxx", which it does: the placeholder is named as one,
    and any other bad ID is told the shape in words (never its own value)."""
    config = tmp_path / "mjbot.toml"
    config.write_text('[tenhou]\nid = "IDxxxxxxxx-xxxxxxxx"\n')
    monkeypatch.delenv(ID_ENV, raising=False)
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert str(refused.value) == (
        f"the Tenhou ID (config file {config}: id) is the placeholder IDxxxxxxxx-xxxxxxxx "
        "(the README's form, not an ID): give your own ID")
    monkeypatch.setenv(ID_ENV, "ID0123abcd-secret")
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert str(refused.value) == (
        f"the Tenhou ID (${ID_ENV}) must be ID, 8 hexadecimal digits, a dash and 8 letters "
        "or digits (IDxxxxxxxx-xxxxxxxx with each x one of those)")


@pytest.mark.parametrize(("text", "said"), [
    ("lobyy = 1234\n", "unknown key 'lobyy' in [tenhou] (known: id, permission_granted"),
    ('lobby = "1234"\n', "[tenhou] lobby must be a whole number >= 0"),
    ("game_type = -1\n", "[tenhou] game_type must be a whole number >= 0"),
    ('permission_granted = "yes"\n', "[tenhou] permission_granted must be true or false"),
    ("id = 7\n", "[tenhou] id must be a string"),
])
def test_a_config_key_misspelt_or_of_the_wrong_type_is_refused(
        tmp_path: Path, text: str, said: str) -> None:
    """Ignored, `lobyy = 1234` would have joined lobby 0 and `permission_granted = "yes"`
    played as not granted, each without a word."""
    config = tmp_path / "mjbot.toml"
    config.write_text("[tenhou]\n" + text)
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert said in str(refused.value)


@pytest.mark.parametrize(("text", "holds"), [
    ('[tenhuo]\nid = "ID0123ABCD-abcdefgh"\npermission_granted = true\n', "tenhuo"),
    ('id = "ID0123ABCD-abcdefgh"\n', "id"),  # the keys above any table
    ('[serve]\nlog_dir = "logs"\n[sessions.a]\nkind = "local"\n', "serve, sessions"),
    ("", "nothing"),
])
def test_a_config_file_without_a_tenhou_table_is_refused_not_played_anonymously(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, holds: str) -> None:
    """``--config`` with its table misspelt (``[tenhuo]``), its keys above any table, or
    serve's config given instead was read as no settings at all: the ID in it ignored, the
    client logged in anonymously, without a word. Refused in one line, no value repeated."""
    config = tmp_path / "mjbot.toml"
    config.write_text(text)
    monkeypatch.delenv(ID_ENV, raising=False)
    with pytest.raises(ValueError) as refused:
        load_config(str(config), TenhouSettings())
    assert str(refused.value) == (
        f"config file {config} has no [tenhou] table (it holds: {holds}); the ID and the rest "
        "go in [tenhou]: id, permission_granted, lobby, game_type")
    assert "abcdefgh" not in str(refused.value)


async def test_a_config_file_that_is_not_utf8_is_named_in_one_line(tmp_path: Path) -> None:
    """A config file saved in another encoding was refused as "'utf-8' codec can't decode
    byte 0xff ...", naming no file: the user could not tell the config from anything else."""
    config = tmp_path / "mjbot.toml"
    config.write_bytes(b'[tenhou]\n# \xff\xfe\ngame_type = 64\n')
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapter.cli", "tenhou", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _out, err = await asyncio.wait_for(proc.communicate(), 60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"mjbot tenhou: config file {config}: 'utf-8' codec")


async def test_cli_refuses_games_it_may_not_join(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != ID_ENV}
    for args, expected in ((["--game-type", "9"], "permission"),
                           (["--game-type", str(0xA9), "--permission-granted"], "Phoenix")):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapter.cli", "tenhou", "--server", "127.0.0.1:9", *args,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        _out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 2
        assert expected in err.decode()
        assert b"Traceback" not in err


async def test_cli_plays_a_game_over_websocket(tmp_path: Path) -> None:
    server = FakeTenhouServer(seed=4, time_limit=5)
    port = await server.start_ws()
    env = {**os.environ, ID_ENV: "ID0F0F0F0F-cliSECRT"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapter.cli", "--log-json", "tenhou", "--transport", "ws",
        "--server", f"ws://127.0.0.1:{port}", "--log-dir", str(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    await server.close()
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"cliSECRT" not in out + err
    assert server.stats.games == 1 and server.stats.illegal == 0
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert b"cliSECRT" not in path.read_bytes()
    assert read_log(path).complete


# ---------------------------------------------------------------------- a game abandoned


class _ScriptedServer:
    """One client, one script (tag shapes as in the captures): sends tags, waits for the tags
    the client owes, and checks that each discard names an id the script dealt it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.stream = TagStream()
        self.inbox: list[str] = []
        self.discards: list[int] = []
        self.problems: list[str] = []

    async def send(self, *texts: str) -> None:
        self.writer.write(b"".join(t.encode() + b"\0" for t in texts))
        await self.writer.drain()

    async def expect(self, name: str) -> dict[str, str]:
        while True:
            while self.inbox:
                tag = parse_tag(self.inbox.pop(0))
                if tag.name == name:
                    return tag.attrs
            data = await asyncio.wait_for(self.reader.read(65536), 30)
            if not data:
                raise ConnectionError(f"the client left while {name} was owed")
            self.inbox += self.stream.feed(data)

    async def log_in_and_queue(self) -> None:
        """Answer the client's HELO as the captures do (HELO, then the lobby's LN) and take
        the JOIN that puts it in the queue."""
        await self.send('<HELO uname="%4E%6F%4E%61%6D%65"/>',
                        '<LN n="BgC1BXv1Zs1Gf" j="C1B2D1" g="EM3I1Jo1E2U1"/>')
        await self.expect("JOIN")

    async def start_game(self) -> None:
        """Seat the queued client at a game (GO, TAIKYOKU with seat 0 the first dealer) and
        take its GOK."""
        await self.send('<GO type="64" lobby="0"/>',
                        '<TAIKYOKU oya="0" log="2018013112gm-0040-0000-0a1b2c3d"/>')
        await self.expect("GOK")

    async def log_in_to_a_game(self) -> None:
        """From the client's HELO to its GOK: logged in, queued and seated."""
        await self.expect("HELO")
        await self.log_in_and_queue()
        await self.start_game()

    async def our_turn(self, draw: int, hand: set[int]) -> None:
        """Deal ``draw``, take the client's discard, echo it as Tenhou does."""
        hand.add(draw)
        await self.send(f"<T{draw}/>")
        tile_id = int((await self.expect("D"))["p"])
        if tile_id not in hand:
            self.problems.append(f"discarded id {tile_id}, not in hand {sorted(hand)}")
        hand.discard(tile_id)
        self.discards.append(tile_id)
        await self.send(f"<D{tile_id}/>")


async def _abandoned_then_new(server: _ScriptedServer) -> None:
    await server.expect("HELO")
    # right after login: a game in progress, at seat 0, resumed with no GO / SAIKAI before it
    old_hand = {1, 5, 9, 13, 41, 45, 53, 77, 81, 93, 109, 113, 125}
    await server.send('<HELO uname="%4E%6F%4E%61%6D%65"/>',
                      '<REINIT seed="0,0,0,3,2,34" ten="250,250,250,250" oya="0" '
                      f'hai="{",".join(map(str, sorted(old_hand)))}" kawa0="120" kawa1="121" '
                      'kawa2="122" kawa3="123"/>')
    await server.our_turn(0, old_hand)
    # that game never ends for us: the lobby, queueing, and a new game at seat 2
    await server.send('<LN n="BgC1BXv1Zs1Gf" j="C1B2D1" g="EM3I1Jo1E2U1"/>')
    await server.expect("JOIN")
    await server.send('<REJOIN t="0,64,r"/>')
    await server.expect("JOIN")
    await server.send('<GO type="64" lobby="0"/>',
                      '<UN n0="%4E%6F%4E%61%6D%65" n1="%43%4F%4D" n2="%43%4F%4D" '
                      'n3="%43%4F%4D" dan="0,0,0,0" rate="1500.00,1500.00,1500.00,1500.00" '
                      'sx="M,C,C,C"/>',
                      '<TAIKYOKU oya="2" log="2018013112gm-0040-0000-0a1b2c3d"/>')
    await server.expect("GOK")
    hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
    await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="2" '
                      f'hai="{",".join(map(str, sorted(hand)))}"/>',
                      "<V/>", "<F130/>", "<W/>", "<G131/>")
    await server.our_turn(12, hand)
    await server.send("<U/>", "<E132/>", "<V/>", "<f133/>", "<W/>", "<G134/>")
    await server.our_turn(48, hand)
    await server.send("<U/>", "<e135/>",
                      '<PROF lobby="0" type="64" add="-38.0,0,0,0,1,0,8,1,1,4,2"/>',
                      '<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" '
                      'owari="250,0.0,250,0.0,250,0.0,250,0.0"/>')
    await server.expect("BYE")


async def _played_against(client: Callable[[asyncio.StreamReader, asyncio.StreamWriter],
                                          Awaitable[None]], done: asyncio.Event, tmp_path: Path,
                          reconnect_tries: int) -> tuple[SessionSummary, TenhouBot]:
    """Our client's session against a scripted server on loopback (``client`` serves each
    connection, ``done`` set once its script has run), logs in ``tmp_path``: its summary
    and the bot, whose table the test reads."""
    listener = await asyncio.start_server(client, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(tmp_path), budget=1.0,
                              reconnect_tries=reconnect_tries, reconnect_delay=0.1)
    bot = TenhouBot(settings)
    async with listener:
        summary = await asyncio.wait_for(run(settings, bot), 60)
        await asyncio.wait_for(done.wait(), 10)
    return summary, bot


async def test_a_new_game_after_a_resumed_game_that_never_ended(tmp_path: Path) -> None:
    """Issue 14.1: a REINIT right after login (seat 0), never finished; then REJOIN and GO /
    UN / TAIKYOKU start a game at seat 2. The old game's log is closed as abandoned, the new
    one has its own log at seat 2, and every answer is the bot's own, without an error."""
    scripted: list[_ScriptedServer] = []
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        scripted.append(server)
        try:
            await _abandoned_then_new(server)
        finally:
            done.set()
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=1)
    (server,) = scripted
    assert summary.finished and summary.games == 1
    assert summary.errors == [] and summary.fallbacks == 0
    assert len(server.discards) == 3 and server.problems == []
    logs = [read_log(p) for p in tmp_path.rglob("*.mjlog.msgpack")]
    assert len(logs) == 2 and all(log.complete for log in logs)
    (old,) = [log for log in logs if footer_of(log).result.get("abandoned")]
    (new,) = [log for log in logs if log is not old]
    assert header_of(old).seat == 0 and isinstance(next(old.events()), ev.GameStarted)
    assert header_of(new).seat == 2 and header_of(new).game_id.endswith("0a1b2c3d")
    events = list(new.events())
    assert events[0] == ev.GameStarted("riichi", 2, ("COM", "COM", "NoName", "COM"),
                                       events[0].rules)
    assert isinstance(events[-1], ev.GameEnded) and not events[-1].abandoned
    decisions = [f for log in logs for f in log.frames if isinstance(f, DecisionFrame)]
    assert len(decisions) == 3 and not any(d.fallback for d in decisions)
    for log in logs:  # each log re-parses from its own raw tags to its own events
        assert replayer.reparse(replayer.load(str(log.path)))["identical"], log.path


# ---------------------------------------------------------------------- a reconnect with calls


async def _reconnect_with_calls(server: _ScriptedServer, first: bool) -> None:
    """The first line: login, a game at seat 0 (dealer), its first hand dealt, then the line
    drops. The second: HELO -> GO / UN / SAIKAI, GOK -> the hand-written REINIT in Tenhou's
    form (chi, pon, our open kan, a riichi; the called tiles out of the rivers), then the
    hand goes on: seat 3 draws and discards, we draw and discard, and the game ends."""
    await server.expect("HELO")
    un = ('<UN n0="%4E%6F%4E%61%6D%65" n1="%43%4F%4D" n2="%43%4F%4D" n3="%43%4F%4D" '
          'dan="0,0,0,0" rate="1500.00,1500.00,1500.00,1500.00" sx="M,C,C,C"/>')
    if first:
        await server.send('<HELO uname="%4E%6F%4E%61%6D%65"/>')
        await server.expect("PXR")
        await server.send('<LN n="BgC1BXv1Zs1Gf" j="C1B2D1" g="EM3I1Jo1E2U1"/>')
        await server.expect("JOIN")
        await server.send('<GO type="64" lobby="0"/>', un, '<TAIKYOKU oya="0" log="x"/>')
        await server.expect("GOK")
        await server.send('<INIT seed="0,0,0,3,2,60" ten="250,250,250,250" oya="0" '
                          'hai="12,13,17,21,48,53,56,80,81,82,83,96,100"/>')
        server.writer.transport.abort()  # the line drops
        return
    await server.send('<GO type="64" lobby="0"/>', un,
                      '<SAIKAI ba="0,1" oya="0" sc="250,0,240,0,250,0,250,0"/>')
    await server.expect("GOK")
    await server.send(REINIT_CALLS["real"], "<W/>", "<G125/>")
    hand = {12, 13, 17, 21, 48, 53, 56, 96, 100, 104}
    await server.our_turn(64, hand)
    await server.send("<U/>", "<e65/>",
                      '<PROF lobby="0" type="64" add="0.0,0,0,0,1,0,8,1,1,4,2"/>',
                      '<RYUUKYOKU ba="0,1" sc="250,0,240,0,250,0,250,0" '
                      'owari="250,5.0,240,-10.0,250,5.0,250,0.0"/>')
    await server.expect("BYE")


async def test_our_client_resumes_a_hand_with_chi_pon_and_open_kan(tmp_path: Path) -> None:
    """Issue 24: the REINIT in Tenhou's form leaves called tiles out of the rivers; our client
    puts them back once and counts the wall right (it ended 1 too high per chi, pon and open
    kan), and plays on from the resumed hand without an error."""
    scripted: list[_ScriptedServer] = []
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        scripted.append(server)
        try:
            await _reconnect_with_calls(server, first=len(scripted) == 1)
        finally:
            if len(scripted) == 2:
                done.set()
            writer.close()

    summary, bot = await _played_against(client, done, tmp_path, reconnect_tries=3)
    assert summary.finished and summary.reconnects == 1
    assert summary.errors == [] and summary.fallbacks == 0
    assert len(scripted[1].discards) == 1 and scripted[1].problems == []
    state = bot.state
    # 12 draws before the line dropped; then seat 3's, ours and seat 1's
    assert state.wall_remaining == 70 - 12 - 3
    assert [(m.kind, m.from_seat) for m in state.seats[0].melds] == [("open_kan", 2)]
    assert [state.unseen(k) for k in (9, 18, 20)] == [3, 1, 0]  # chi'd 1p, pon'd 1s, our kan
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert read_log(path).complete
    assert replayer.reparse(replayer.load(str(path)))["identical"]


async def test_a_second_cancel_while_leaving_still_closes_the_log(tmp_path: Path) -> None:
    """The serve supervisor cancels a session past its stop deadline while the client is
    still saying BYE and closing its line (the client was cancelled once already): the game
    log must still get its footer, not be left open by the second CancelledError."""
    server = FakeTenhouServer(seed=2, time_limit=5, absent=1)
    port = await server.start_tcp()
    settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(tmp_path), budget=1.0,
                              games=20)
    bot = TenhouBot(settings)
    task = asyncio.ensure_future(run(settings, bot))
    try:
        for _ in range(600):
            if bot.game_log is not None and server.stats.hands >= 1:
                break
            await asyncio.sleep(0.05)
        assert bot.game_log is not None
        while not task.done():  # a cancel at every step of the way out
            task.cancel()
            await asyncio.sleep(0)
        with contextlib.suppress(asyncio.CancelledError):
            await task
    finally:
        await server.close()
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and log.truncated is None


# ---------------------------------------------------------------------- a server that deals twice


async def test_a_second_draw_in_a_row_is_answered_with_a_tile_we_hold(tmp_path: Path) -> None:
    """A buggy server deals us two draws without our discard echoed between them: our hand
    then has 15 tiles, which the rules cannot read (the brain raised out of legal_actions and
    the client exited with a traceback). Each draw is now answered with a discard of a tile
    we were dealt, the second as a fallback with its reason, and the game goes on."""
    done = asyncio.Event()
    problems: list[str] = []

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        try:
            await server.log_in_to_a_game()
            hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
            await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                              f'hai="{",".join(map(str, sorted(hand)))}"/>', "<T5/>", "<T6/>")
            for _ in range(2):
                tile_id = int((await server.expect("D"))["p"])
                if tile_id not in hand | {5, 6}:
                    problems.append(f"discarded id {tile_id}, never dealt")
                hand.discard(tile_id)
            await server.send('<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" '
                              'owari="250,0.0,250,0.0,250,0.0,250,0.0"/>')
            await server.expect("BYE")
        finally:
            done.set()
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=1)
    assert summary.finished and summary.games == 1 and problems == []
    assert summary.fallbacks == 1
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    decisions = [f for f in read_log(path).frames if isinstance(f, DecisionFrame)]
    assert "cannot read our table" in decisions[-1].fallback


async def test_a_server_that_never_answers_our_helo_is_a_connection_error() -> None:
    """A server that takes the connection and then says nothing held the client at the
    login for ever (only a signal ended it); Tenhou answers a HELO at once."""
    heard: list[bytes] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            heard.append(data)
        writer.close()

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", write_log=False, login_timeout=0.5)
    async with listener:
        with pytest.raises(ConnectionError, match=r"sent nothing in the 0.5 s after our HELO"):
            await asyncio.wait_for(run(settings), 20)
    assert heard and heard[0].startswith(b"<HELO ")


async def test_a_server_that_answers_our_helo_and_then_nothing_is_a_connection_error() -> None:
    """A server that answers the HELO and then says nothing more (no LN after our PXR), the
    line kept open: the login limit covered only the first message, so the client waited in
    a login that never ended, for ever. Tenhou answers the PXR with LN at once: the login is
    now waited for until it is through, and its silence is a dead line."""
    heard: list[bytes] = []

    async def half_login(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await reader.read(65536):
            writer.write(b'<HELO uname="%4E%6F%4E%61%6D%65" auth="20180120-be208bdd"/>\0')
        while data := await reader.read(65536):
            heard.append(data)
        writer.close()

    listener = await asyncio.start_server(half_login, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", write_log=False, login_timeout=0.5)
    async with listener:
        with pytest.raises(ConnectionError, match=r"did not finish our login: nothing for "
                                                  r"0.5 s after its last message"):
            await asyncio.wait_for(run(settings), 20)  # a guard: it hung
    assert b"<PXR " in b"".join(heard)


async def test_a_line_that_times_out_in_a_game_is_reconnected(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that fails with ETIMEDOUT (the line dropped for good: an OSError, not a
    ConnectionError) ended the client with a traceback instead of the reconnect a dropped
    line gets; now the client logs in again and the game goes on to its end."""
    readers = capture_client_readers(monkeypatch)
    helos = 0
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal helos
        server = _ScriptedServer(reader, writer)
        try:
            await server.expect("HELO")
            helos += 1
            if helos == 1:
                await server.log_in_and_queue()
                await server.start_game()
                hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
                await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                                  f'hai="{",".join(map(str, sorted(hand)))}"/>')
                await server.our_turn(5, hand)
                time_out(readers[0])
                await asyncio.sleep(5)
            else:  # the game resumed: it ends at once
                await server.send('<HELO uname="%4E%6F%4E%61%6D%65"/>',
                                  '<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" '
                                  'owari="250,0.0,250,0.0,250,0.0,250,0.0"/>')
                await server.expect("BYE")
                done.set()
        finally:
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=2)
    assert summary.reconnects == 1 and summary.finished and summary.games == 1


async def test_a_reconnect_the_server_answers_with_the_lobby_closes_the_lost_game_and_joins(
        tmp_path: Path) -> None:
    """The line dropped in a game and the game went on, and ended, without us: the server
    answered the reconnect's HELO with a lobby login (HELO, LN), not the GO of a game given
    back. The client, sure it was still in a game, joined nothing and waited in the lobby for
    ever. Now the lost game's log is closed as abandoned and the client joins a new game,
    which it plays to its end."""
    helos = 0
    done = asyncio.Event()
    joined_again: list[dict[str, str]] = []

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal helos
        server = _ScriptedServer(reader, writer)
        try:
            await server.expect("HELO")
            helos += 1
            if helos == 1:
                await server.log_in_and_queue()
                await server.start_game()
                hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
                await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                                  f'hai="{",".join(map(str, sorted(hand)))}"/>')
                await server.our_turn(5, hand)
                return  # the line drops; the game ends without us
            await server.log_in_and_queue()  # HELO, LN: no game to give back
            joined_again.append({})
            await server.start_game()
            await server.expect("NEXTREADY")
            await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                              'hai="0,4,8,36,40,44,72,76,80,108,112,116,124"/>',
                              '<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" '
                              'owari="250,0.0,250,0.0,250,0.0,250,0.0"/>')
            await server.expect("BYE")
            done.set()
        finally:
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=2)
    assert joined_again and helos == 2
    assert summary.finished and summary.games == 1 and summary.reconnects == 1
    assert not summary.errors, summary.errors
    logs = sorted((read_log(p) for p in tmp_path.rglob("*.mjlog.msgpack")),
                  key=lambda lg: footer_of(lg).result.get("abandoned", False))
    assert len(logs) == 2
    played, lost = logs
    assert footer_of(lost).result["abandoned"] and lost.complete
    assert not footer_of(played).result.get("abandoned") and played.complete
    notices = [f.event.text for f in lost.frames
               if isinstance(f, EventFrame) and isinstance(f.event, ev.PlatformNotice)]
    assert any("gave no game back" in n for n in notices), notices


async def test_a_stop_asked_for_in_a_game_lost_while_the_line_was_down_joins_no_new_one(
        tmp_path: Path) -> None:
    """serve's stop in a hand (leave_after_hand: BYE once the hand is over) while the line was
    down, and the game went on without us: the reconnect's lobby login (HELO, LN) closed the
    lost game, and the client then queued for a new game (JOIN) where the stop had asked it to
    leave; the stop waited its deadline, and cut a table the client may have sat at by then.
    Now it says BYE and the session ends."""
    helos = 0
    after_login: list[str] = []
    bot_box: list[TenhouBot] = []

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal helos
        server = _ScriptedServer(reader, writer)
        try:
            await server.expect("HELO")
            helos += 1
            if helos == 1:
                await server.log_in_and_queue()
                await server.start_game()
                hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
                await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                                  f'hai="{",".join(map(str, sorted(hand)))}"/>')
                await server.our_turn(5, hand)
                (bot,) = bot_box
                bot.stop_requested = True
                assert bot.leave_after_hand()  # the hand is in play: BYE at its end
                return  # the line drops; the game ends without us
            await server.send('<HELO uname="%4E%6F%4E%61%6D%65"/>',
                              '<LN n="BgC1BXv1Zs1Gf" j="C1B2D1" g="EM3I1Jo1E2U1"/>')
            while True:  # the client's answer to the lobby, its login and keep-alives aside
                data = await asyncio.wait_for(reader.read(65536), 10)
                if not data:
                    break
                server.inbox += server.stream.feed(data)
                names = [n for n in (parse_tag(t).name for t in server.inbox)
                         if n not in ("Z", "PXR", "AUTH")]
                if names:
                    after_login.append(names[0])
                    break
        finally:
            writer.close()

    listener = await asyncio.start_server(client, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", log_dir=str(tmp_path), budget=1.0,
                              reconnect_tries=1, reconnect_delay=0.1)
    bot = TenhouBot(settings)
    bot_box.append(bot)
    async with listener:
        with contextlib.suppress(ConnectionError):
            await asyncio.wait_for(run(settings, bot), 60)
    assert after_login[:1] == ["BYE"], after_login
    assert bot.left and helos == 2 and bot.summary.games == 0
    (log,) = [read_log(p) for p in tmp_path.rglob("*.mjlog.msgpack")]
    assert footer_of(log).result["abandoned"] and log.complete


async def test_a_line_that_drops_after_every_login_is_not_reconnected_for_ever() -> None:
    """A server that answers the login and then closes the line while we queue (a refusal,
    maintenance) was reconnected to at once and for ever: each line had brought something (HELO,
    LN), so the count of failed reconnects began again at every one; against the fake server
    it logged in 15,000 times in 40 s, hammering a server that blocks addresses that do so. A
    reconnect after which the game did not move on (no decision asked, no hand ended) now
    counts against ``reconnect_tries``; the session then ends with the dropped line."""
    logins = 0

    async def refusing(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal logins
        server = _ScriptedServer(reader, writer)
        try:
            await server.expect("HELO")
            logins += 1
            if logins > 20:  # the defect: give up on the client, its reconnect is refused
                listener.close()
                return
            await server.log_in_and_queue()
        finally:
            writer.close()

    listener = await asyncio.start_server(refusing, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", write_log=False, reconnect_tries=3,
                              reconnect_delay=0.01)
    bot = TenhouBot(settings)
    async with listener:
        with pytest.raises(ConnectionError, match="the server closed the connection"):
            await asyncio.wait_for(run(settings, bot), 60)
    assert logins == 4 and bot.summary.reconnects == 3


async def test_a_lobby_update_while_we_queue_is_no_second_join(tmp_path: Path) -> None:
    """Tenhou sends LN again and again in the lobby, also after our JOIN (the capture
    f5182: JOIN, then RANKING, CHAT and a new LN); the client joined the queue again at every
    LN, so it sent JOIN "0,64" while queueing (after a REJOIN, the first form again). Only the
    first LN of a login is answered with a JOIN now; the queue goes on with REJOIN's form."""
    joins: list[str] = []
    done = asyncio.Event()

    class Counting(_ScriptedServer):  # every JOIN the client sends, whatever is expected
        async def expect(self, name: str) -> dict[str, str]:
            while True:
                while self.inbox:
                    tag = parse_tag(self.inbox.pop(0))
                    if tag.name == "JOIN":
                        joins.append(tag.attrs.get("t", ""))
                    if tag.name == name:
                        return tag.attrs
                data = await asyncio.wait_for(self.reader.read(65536), 30)
                if not data:
                    raise ConnectionError(f"the client left while {name} was owed")
                self.inbox += self.stream.feed(data)

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = Counting(reader, writer)
        try:
            await server.expect("HELO")
            await server.log_in_and_queue()
            await server.send('<LN n="Bey1BXB1ZG1Fx" j="3B2B2B1D4B8" g="EI3I1Jw1E2U1"/>',
                              '<REJOIN t="0,64,r"/>')
            await server.expect("JOIN")
            await server.send('<LN n="BfX1BXW1ZW1Ga" j="C3B1B1B2B1D4" g="EI3I1Js1E2U1"/>',
                              '<GO type="64" lobby="0"/>',
                              '<TAIKYOKU oya="0" log="2018013112gm-0040-0000-0a1b2c3d"/>')
            await server.expect("GOK")
            hand = {0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124}
            await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                              f'hai="{",".join(map(str, sorted(hand)))}"/>')
            await server.our_turn(5, hand)
            await server.send('<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" '
                              'owari="250,0.0,250,0.0,250,0.0,250,0.0"/>')
            await server.expect("BYE")
            done.set()
        finally:
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=1)
    assert summary.finished and summary.games == 1
    assert joins == ["0,64", "0,64,r"]


@pytest.mark.parametrize(("draw", "offer"), [
    ("<T-1/>", '<E-5 t="1"/>'),  # ids no tag can hold
    ('<T37 t="16"', '<e38 t="4"'),  # cut short: no "/>"
    ('<T37 t=16/>', '<E38 t=1/>'),  # an attribute without its quotes
])
async def test_a_draw_or_an_offer_that_is_no_tag_still_gets_its_answer(
        tmp_path: Path, draw: str, offer: str) -> None:
    """Text that fails to parse as a tag but is plainly our draw (``<T...``) or a discard
    offering us a call (``<E... t=``) owes an answer, yet the client only logged it: the
    server (Tenhou, which plays for us only once its clock runs out) waited for a discard or a
    pass that never came. A draw now gets a discard of the drawn id where the text still
    gives it, an offer a pass. A draw with no id is left to the clock, whose discard of the
    drawn tile is read as that draw: a held tile discarded for it left our hand a tile short
    of the server's for the rest of the hand."""
    answers: list[dict[str, str]] = []
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        try:
            await server.log_in_to_a_game()
            hand = [0, 4, 8, 36, 40, 44, 72, 76, 80, 108, 112, 116, 124]
            await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                              f'hai="{",".join(map(str, hand))}"/>', draw)
            if draw.startswith("<T37"):
                answers.append(await server.expect("D"))
                await server.send(f'<D{answers[0]["p"]}/>', "<U/>", offer)
            else:  # no answer: the clock discards the drawn tile (128) and echoes it
                answers.append({})
                await server.send("<D128/>", "<U/>", offer)
            answers.append(await server.expect("N"))
            await server.send('<RYUUKYOKU ba="0,0" sc="250,0,250,0,250,0,250,0" '
                              'owari="250,0.0,250,0.0,250,0.0,250,0.0"/>')
            await server.expect("BYE")
            done.set()
        finally:
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=1)
    assert summary.finished and len(summary.errors) == 2, summary.errors  # not the echo's
    if draw.startswith("<T37"):  # the drawn id, still in the text: its tsumogiri
        assert answers[0]["p"] == "37"
    assert answers[1] == {}  # a pass
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    sent = [text_of(f.raw) for f in log.frames if isinstance(f, TxFrame)]
    discards = [raw for raw in sent if raw.startswith("<D")]
    assert discards == (['<D p="37"/>'] if draw.startswith("<T37") else []), discards
    events = list(log.events())
    drawn = [e.tile for e in events if isinstance(e, ev.TileDrawn) and e.seat == 0]
    gone = [e.tile for e in events if isinstance(e, ev.TileDiscarded) and e.seat == 0]
    assert drawn == gone  # the drawn tile went, as the server has it: our hand is its hand
    # and a re-read of the log comes to the same events: the draw read from the unreadable
    # tag (or from the echo of the clock's discard) too, where it came to two fewer
    again = replayer.reparse(replayer.load(str(path)))
    assert again["identical"] and again["errors"] == [], again
    assert len(again["unreadable_in_the_game"]) == 2, again


async def test_a_websocket_draw_or_offer_that_is_no_tag_still_gets_its_answer() -> None:
    """The same over the WebSocket, whose frames are JSON: a draw whose tag name is no name
    (``{"tag": "T-1"}``) or cut JSON with an offer's ``t`` are answered, not only logged."""
    bot = TenhouBot(TenhouSettings(transport="ws", write_log=False))
    hand = "0,4,8,36,40,44,72,76,80,108,112,116,124"
    for text in ('<GO type="64" lobby="0"/>', '<TAIKYOKU oya="0" log="x"/>',
                 f'<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" hai="{hand}"/>'):
        await bot.handle(text, parse_tag(text))
    assert await bot.handle('{"tag": "T-1"}', None) == []  # the clock discards the draw
    await bot.handle('{"tag": "D128"}', parse_tag("<D128/>"))  # which its echo names
    assert sorted(bot.state.hand) == sorted(bot.codec.tile(int(i)) for i in hand.split(",")) \
        and len(bot.summary.errors) == 1, (bot.state.hand, bot.summary.errors)
    assert await bot.handle('{"tag": "E38", "t": "1"', None) == [parse_tag("<N/>")]
    assert await bot.handle('{"tag": "E38"', None) == []  # no offer: nothing owed
    bot.close()


async def test_a_login_refused_in_words_we_do_not_read_is_named_when_the_line_closes(
        tmp_path: Path) -> None:
    """The server answers our HELO with a message we cannot read (an ERR whose codes no
    capture shows) and closes: the user was told only 'the server closed the connection'.
    The last message, when it was one we could not read, is now named with it."""
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        await server.expect("HELO")
        await server.send('<ERR code="1001"/>')
        writer.close()
        done.set()

    with pytest.raises(ConnectionError) as refused:
        await _played_against(client, done, tmp_path, reconnect_tries=1)
    assert str(refused.value) == ('the server closed the connection (its last message, which '
                                  'mjbot does not read: <ERR code="1001"/>)')


SECRET_ID = "ID0123ABCD-abcdefgh"


async def _refused_with_our_id(tmp_path: Path, *messages: str) -> list[str]:
    """Log in with SECRET_ID to a loopback server that answers HELO with ``messages`` and
    closes: the session's last line, then its errors (what reaches stderr)."""
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        await server.expect("HELO")
        await server.send(*messages)
        writer.close()
        done.set()

    listener = await asyncio.start_server(client, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    settings = TenhouSettings(server=f"127.0.0.1:{port}", name=SECRET_ID, log_dir=str(tmp_path),
                              reconnect_tries=1, reconnect_delay=0.1)
    bot = TenhouBot(settings)
    async with listener:
        with pytest.raises(ConnectionError) as refused:
            await asyncio.wait_for(run(settings, bot), 60)
        await asyncio.wait_for(done.wait(), 10)
    return [str(refused.value), *bot.summary.errors]


async def test_a_server_message_that_echoes_our_id_is_scrubbed_where_we_quote_it(
        tmp_path: Path) -> None:
    """A message we cannot read is quoted in the session's errors (logged to stderr) and in
    the line that ends it; a server that echoes the ID there put it on stderr."""
    said = await _refused_with_our_id(tmp_path, f'<ERR code="1001" id="{SECRET_ID}"/>',
                                      f"<{SECRET_ID}")
    assert len(said) == 3 and all(SECRET_ID not in text for text in said), said
    assert said[0].endswith("which mjbot does not read: <***)")


async def test_an_id_the_server_echoes_where_we_cut_its_message_is_scrubbed_whole(
        tmp_path: Path) -> None:
    """An unreadable message is quoted cut to 200 characters; it was scrubbed after the cut,
    so an ID the cut went through was no longer found, and its first part was logged."""
    pad = 200 - 10  # the ID's first ten characters before the cut, the rest after it
    said = await _refused_with_our_id(
        tmp_path, "<" + "x" * (pad - 1) + SECRET_ID,
        '<ERR msg="' + "y" * (pad - len('<ERR msg="')) + SECRET_ID + '"/>')
    assert len(said) >= 2 and all(SECRET_ID[:8] not in text for text in said), said


async def test_a_message_we_could_not_read_is_named_only_for_the_line_it_came_on(
        tmp_path: Path) -> None:
    """A line that brought a message we cannot read dropped while we queued; the next line
    closed at once, with nothing said: its end was put down to the first line's message."""
    lines = 0
    done = asyncio.Event()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal lines
        lines += 1
        server = _ScriptedServer(reader, writer)
        await server.expect("HELO")
        if lines == 1:
            await server.log_in_and_queue()
            await server.send('<ERR code="1001"/>')
        else:
            done.set()
        writer.close()

    with pytest.raises(ConnectionError) as dropped:
        await _played_against(client, done, tmp_path, reconnect_tries=1)
    assert str(dropped.value) == "the server closed the connection"


async def test_an_unreadable_draw_in_riichi_is_not_answered_with_a_held_tile(
        tmp_path: Path) -> None:
    """In riichi only the drawn tile may go. An unreadable draw was answered with a discard of
    a tile we held, which Tenhou refuses (its clock then discards the drawn tile for us), and
    the echo of that discard was then an error of its own. Now a draw whose id can be read
    from the broken text (``<T120 t="16"``) is answered with that id, and one whose id cannot
    (``<T-1/>``) gets no answer in riichi: the clock's discard is the legal one, and its echo
    is read as the draw we could not read."""
    received: list[dict[str, str] | str] = []
    done = asyncio.Event()
    hand = [4, 8, 12, 53, 56, 60, 68, 69, 80, 84, 89, 92, 96]  # 234m 567p 99p 345s 67s

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = _ScriptedServer(reader, writer)
        try:
            await server.log_in_to_a_game()
            await server.send('<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" '
                              f'hai="{",".join(map(str, hand))}"/>', '<T108 t="32"/>')
            riichi = await server.expect("REACH")
            discard = (await server.expect("D"))["p"]
            assert riichi["hai"] == discard == "108", (riichi, discard)
            await server.send('<REACH who="0" step="1"/>', "<D108/>",
                              '<REACH who="0" ten="240,250,250,250" step="2"/>',
                              "<U/>", "<e109/>", "<V/>", "<f110/>", "<W/>", "<g111/>")
            await server.send('<T120 t="16"')  # cut short: the id is there, the tag is not
            received.append(await server.expect("D"))
            await server.send("<D120/>", "<U/>", "<e121/>", "<V/>", "<f122/>", "<W/>",
                              "<g123/>", "<T-1/>", "<D124/>",  # the clock's discard
                              '<RYUUKYOKU ba="0,1" sc="240,0,250,0,250,0,250,0" '
                              'owari="240,-16.0,250,5.0,250,5.0,250,5.0"/>')
            while True:  # what the client sent after the unreadable draw, up to its BYE
                while not server.inbox:
                    data = await asyncio.wait_for(reader.read(65536), 30)
                    if not data:
                        raise ConnectionError("the client left before its BYE")
                    server.inbox += server.stream.feed(data)
                tag = parse_tag(server.inbox.pop(0))
                if tag.name == "BYE":
                    break
                received.append(str(tag))
            done.set()
        finally:
            writer.close()

    summary, _ = await _played_against(client, done, tmp_path, reconnect_tries=1)
    assert summary.finished and summary.games == 1
    assert received == [{"p": "120"}], received  # the id read from the broken draw, then
    # nothing for the draw whose id is unknown (no Z: its keep-alive is 15 s away)
    assert len(summary.errors) == 2, summary.errors  # the two tags, not their echoes
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete
    river = [e.tile for e in log.events() if isinstance(e, ev.TileDiscarded) and e.seat == 0]
    assert len(river) == 3  # the riichi tile, then both draws of the unreadable tags


async def test_a_draw_with_a_bad_flag_is_answered_with_its_id_and_followed_on() -> None:
    """``<T37 t="x"/>``: a tag whose id reads but whose flag does not. The codec had put 37 in
    our hand before the flag failed, the table never saw the draw, and the answer was another
    held tile. Now the draw is told to the table and its id is discarded; the echo reads."""
    bot = TenhouBot(TenhouSettings(write_log=False))
    hand = "0,4,8,36,40,44,72,76,80,108,112,116,124"
    for text in ('<GO type="64" lobby="0"/>', '<TAIKYOKU oya="0" log="x"/>',
                 f'<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" hai="{hand}"/>'):
        await bot.handle(text, parse_tag(text))
    assert await bot.handle('<T37 t="x"/>', parse_tag('<T37 t="x"/>')) == \
        [parse_tag('<D p="37"/>')]
    assert len(bot.state.hand) == 14
    await bot.handle("<D37/>", parse_tag("<D37/>"))
    assert len(bot.state.hand) == 13 and len(bot.summary.errors) == 1, bot.summary.errors
    bot.close()


async def test_an_unreadable_draw_that_offers_a_win_our_rules_accept_is_answered_with_it(
) -> None:
    """``<T100 t="16"`` cut short: the id and the offer still read, and 100 (8s) completes the
    hand (234m 567p 99p 345s 67s: menzen tsumo). It was answered with a discard of 100, the
    win thrown away (and the hand furiten). Now the win is answered where Tenhou offers it
    and our rules accept it for the hand as we know it; without the offer, or when our
    rules do not accept it, the drawn id is discarded as before."""
    hand = "4,8,12,53,56,60,68,69,80,84,89,92,96"
    start = ('<GO type="64" lobby="0"/>', '<TAIKYOKU oya="0" log="x"/>',
             f'<INIT seed="0,0,0,1,4,20" ten="250,250,250,250" oya="0" hai="{hand}"/>')
    for broken, answer in (('<T100 t="16"', '<N type="7"/>'),  # offered, a win: taken
                           ('{"tag": "T100", "t": "16"', '<N type="7"/>'),  # the same in JSON
                           ('<T100 x=', '<D p="100"/>'),  # not offered: not claimed
                           ('<T120 t="16"', '<D p="120"/>')):  # offered, no win: discarded
        bot = TenhouBot(TenhouSettings(write_log=False,
                                       transport="ws" if broken.startswith("{") else "tcp"))
        for text in start:
            await bot.handle(text, parse_tag(text))
        assert await bot.handle(broken, None) == [parse_tag(answer)], broken
        assert len(bot.state.hand) == 14 and len(bot.summary.errors) == 1, bot.summary.errors
        bot.close()
