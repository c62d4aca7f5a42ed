"""`mjbot ntpu` against servers that misbehave: a scripted server on a real loopback socket
(the client in-process, asyncio), and the stdin/stdout form as a real subprocess."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.platforms.ntpu import NtpuBot, NtpuSettings, run_tcp
from adapter.session import SessionSummary
from protocols import events as ev
from protocols import tiles as T
from replay import replayer
from replay.log import EventFrame, RxFrame, TxFrame, read_log
from tests.line_faults import capture_client_readers, time_out
from tests.narrowing import header_of

DEALER_HAND = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161 171"
OTHER_IDS = ("211", "212")  # tiles the bot does not hold


async def _scripted_server(script: list[tuple[str, bool]], replies: list[str | None],
                           close_early: bool = True) -> tuple[asyncio.Server, int]:
    """Send each line; where the bool says a reply is owed, wait for it (None: none came)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for line, owed in script:
            writer.write((line + "\n").encode())
            await writer.drain()
            if owed:
                try:
                    raw = await asyncio.wait_for(reader.readline(), 10)
                    replies.append(raw.decode().strip() or None)
                except TimeoutError:
                    replies.append(None)
        writer.close()  # mid-hand: no /exit, no /close

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _played(script: list[tuple[str, bool]], tmp_path: Path,
                  policy: str | None = None) -> tuple[list[str | None], SessionSummary]:
    """Our client (``policy``, or the default) against the scripted server, logging under
    ``tmp_path``: the replies the server got, and the session's summary."""
    replies: list[str | None] = []
    server, port = await _scripted_server(script, replies)
    plain = NtpuSettings(budget=1.0, log_dir=str(tmp_path))
    bot = NtpuBot(plain if policy is None else dataclasses.replace(plain, policy=policy))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 30)
    return replies, summary


async def test_bad_server_lines_get_logged_errors_and_safe_replies(tmp_path: Path) -> None:
    script = [
        ("/ready", True),
        ("/start MJ 1 mjbot", False),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {DEALER_HAND}", False),
        ("/hello there", False),                  # unknown command: logged, nothing owed
        ("/ask dance", True),                     # unknown ask: /pass
        ("/ask throw", True),                     # a real decision
        ("/throw 1 " + OTHER_IDS[0], False),      # the server moves an id we do not hold
        ("/throw 2 2", False),                    # malformed id
        ("/ask pong", True),                      # nothing to claim: /pass
        ("/initCard 111", False),                 # truncated
        ("/mo 222", False),
        ("/ask throw", True),                     # still answered with an id we hold
    ]
    replies, summary = await _played(script, tmp_path)
    assert replies[0] == "/ready"
    assert replies[1] == "/pass"
    held = set(DEALER_HAND.split())
    first_throw = replies[2]
    assert first_throw is not None and first_throw.startswith("/throw ")
    assert first_throw.split()[1] in held
    assert replies[3] == "/pass"
    last_throw = replies[4]
    assert last_throw is not None and last_throw.split()[1] in held | {"222"}
    # six bad lines, each logged with its reason; the connection was kept to the end
    assert len(summary.errors) == 6, summary.errors
    assert any("unknown command '/hello'" in e for e in summary.errors)
    assert any("which we do not hold" in e for e in summary.errors)
    assert not summary.finished
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and log.truncated is None
    # the server left in the middle of the hand: the footer says the game did not end
    assert log.footer is not None and log.footer.result.get("unfinished") is True
    assert "stopped" not in log.footer.result
    rx = [f.raw for f in log.frames if isinstance(f, RxFrame)]
    assert rx == [line for line, _ in script]  # every raw line, the bad ones included
    tx = [f.raw for f in log.frames if isinstance(f, TxFrame)]
    assert tx == [r for r in replies if r is not None]
    notices = [f.event.text for f in log.frames if isinstance(f, EventFrame)
               and isinstance(f.event, ev.PlatformNotice)]
    assert sum(n.startswith("error:") for n in notices) == 6


async def test_an_ask_for_a_move_our_hand_cannot_make_is_an_error_answered_pass(
        tmp_path: Path) -> None:
    """``/ask hu`` with no win, ``/ask gong`` with no four of a kind, ``/ask pong`` without the
    pair: the server's table differs from ours (a wrong --honour-order, say). They were
    answered /pass with nothing said; now each is logged as an error (the pass stays), and a
    pong we can make is no error."""
    script = [
        ("/ready", True),
        ("/start MJ 1 mjbot", False),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {DEALER_HAND}", False),
        ("/ask hu", True),                        # 111 222 333 444 567 55m wins: no error
        ("/ask gong", True),                      # three of each: no kong
        ("/ask throw", True),
        ("/throw 1 171", False),
        ("/throw 2 211", False),
        ("/ask hu", True),                        # no win on 1p
        ("/ask pong", True),                      # no pair of 1p
        ("/throw 3 110", False),
        ("/ask pong", True),                      # three 1m held: a pong we can make
    ]
    replies, summary = await _played(script, tmp_path)
    assert replies[1:3] == ["/hu", "/pass"] and replies[4:6] == ["/pass", "/pass"]
    assert replies[6] is not None and replies[6].split()[0] in ("/pong", "/pass")
    offers = [e for e in summary.errors if "offers a move our rules do not allow" in e]
    assert len(offers) == 3 and len(summary.errors) == 3, summary.errors
    assert "'/ask gong'" in offers[0] and "11122233344455567m" in offers[0]
    assert "'/ask hu'" in offers[1] and "'/ask pong'" in offers[2]


async def test_an_ask_on_a_table_our_rules_cannot_read_is_an_error_not_a_crash(
        tmp_path: Path) -> None:
    """Three draws in a row leave us 19 tiles, a hand of no possible size; the next ``/ask
    pong`` went to the rules unguarded (the check that an offer is one our hand can make),
    whose HandError ended the client with a traceback and lost the tournament line. It is a
    logged error now, answered /pass, and the session goes on to the server's /close."""
    script = [
        ("/ready", True),
        ("/start MJ 2 mjbot", False),
        ("/initGame east east 1 1 0", False),
        ("/initCard 211 212 213 221 222 223 231 232 233 241 242 243 251 252 253 261", False),
        ("/mo 311", False), ("/mo 312", False), ("/mo 313", False),
        ("/throw 1 111", False),
        ("/ask pong", True),
        ("/throw 2 311", False),
        ("/exit", False),
        ("/ready", True),
        ("/close", False),
    ]
    replies, summary = await _played(script, tmp_path)
    assert replies == ["/ready", "/pass", "/ready"]
    assert summary.finished  # the server's /close ended it, not a raise
    assert any("'/ask pong': the rules cannot read our table (HandError" in e
               for e in summary.errors), summary.errors
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and log.footer is not None
    assert "unfinished" not in log.footer.result


async def test_commentary_on_a_win_passed_at_the_hu_ask_blames_no_rule(
        tmp_path: Path) -> None:
    """NTPU asks our turn in steps: ``/ask hu``, then ``/ask throw``, whose legal set has no
    win (not offered there). A client that passed the win (tsumogiri never wins) then
    discarded; ``replay --commentary`` said of the discard 'cannot win on the drawn 7m (the
    rules refuse the win)', when our rules allow that win (11122233344455567m): it was only
    not offered at that ask, which the sentence says now."""
    script = [
        ("/ready", True),
        ("/start MJ 1 mjbot", False),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {DEALER_HAND}", False),
        ("/ask hu", True),
        ("/ask throw", True),
        ("/throw 1 171", False),
        ("/exit", False),
        ("/close", False),
    ]
    replies, _ = await _played(script, tmp_path, "tsumogiri")
    assert replies == ["/ready", "/pass", "/throw 171"]
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", str(path),
                           "--commentary", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["commentary"]
    throw = rows[-1]
    assert throw["facts"]["drawn"] == "7m", rows
    assert "refuse" not in throw["sentence"]
    assert "does not win on the drawn 7m (the win is not offered at this ask); discards 7m" \
        in throw["sentence"]
    assert throw["facts"]["win_not_offered"] is True


async def test_a_kong_passed_at_the_gong_ask_is_one_choice_in_replay_and_review(
        tmp_path: Path) -> None:
    """NTPU asks our turn in steps: ``/ask gong`` (four 1m held), then ``/ask throw``. The
    client weighs the whole turn at each step; the discard it chose at the gong step went
    out as /pass. ``replay --policy`` and ``review`` compared that step's discard tile with
    the policy's, so one discard was a disagreement twice (0/2) and its loss counted twice;
    at the gong step any discard is the same choice (no kong), as the wire says."""
    script = [
        ("/ready", True),
        ("/start MJ 1 mjbot", False),
        ("/initGame east east 1 1 0", False),
        ("/initCard 110 111 112 113 121 131 151 161 191 221 241 271 321 351 381 411 471",
         False),
        ("/ask gong", True),
        ("/ask throw", True),
        ("/throw 1 471", False),
        ("/exit", False),
        ("/close", False),
    ]
    replies, _ = await _played(script, tmp_path, "tsumogiri")
    assert replies == ["/ready", "/pass", "/throw 471"]  # the kong passed, then 5z thrown
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))

    def mjbot(*args: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-m", "adapter.cli", *args],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    agreement = mjbot("replay", str(path), "--policy", "rulebased", "--json")["agreement"]
    assert isinstance(agreement, dict)
    assert (agreement["decisions"], agreement["agree"]) == (2, 1), agreement
    (differs,) = agreement["disagreements"]  # the throw step's, once
    assert differs["recorded"] == "discard 5z"
    review = mjbot("review", str(path), "--policy", "rulebased", "--json", "-")
    rows = review["rows"]
    assert isinstance(rows, list) and [r["agree"] for r in rows] == [True, False], rows
    assert rows[0]["loss"] == 0 and review["agree"] == 1
    # the commentary says the pass (it said 'discards 5z: 4-shanten ...' at both steps)
    commented = mjbot("replay", str(path), "--commentary", "--json")["commentary"]
    assert isinstance(commented, list)
    step, throw = commented
    assert "passes at the ask for a kan" in step["sentence"] and step["facts"]["step_pass"]
    assert step["hit"] is True  # the predictor's first choice passes the kong too
    assert "discards 5z" in throw["sentence"]


async def test_a_game_started_again_mid_hand_forgets_the_old_hand(tmp_path: Path) -> None:
    """A server that starts a game again in the middle of our turn, then asks us to throw:
    the client's table was new but the codec still held the old ids and our turn, so the
    brain was asked to discard from an empty hand and the client exited with a traceback
    (min() of no legal action). The ask is now out of turn: logged, answered /pass."""
    script = [
        ("/start MJ 1 mjbot", False),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {DEALER_HAND}", False),
        ("/start MJ 1 mjbot", False),
        ("/ask throw", True),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {DEALER_HAND}", False),
        ("/ask throw", True),
    ]
    replies, summary = await _played(script, tmp_path)
    assert replies[0] == "/pass"
    assert replies[1] is not None and replies[1].split()[1] in DEALER_HAND.split()
    assert summary.games == 2 and summary.errors == [
        "asked to throw when it is not our turn: '/ask throw'"]


async def test_a_game_that_never_dealt_is_logged_unfinished(tmp_path: Path) -> None:
    """A /start and then the end of the line (serve's stop between two games does this): the
    empty game's log says it did not finish (it read as a finished game)."""
    replies: list[str | None] = []
    server, port = await _scripted_server([("/ready", True), ("/start MJ 1 mjbot", False)],
                                          replies)
    async with server:
        await asyncio.wait_for(run_tcp("127.0.0.1", port, NtpuBot(
            NtpuSettings(budget=1.0, log_dir=str(tmp_path)))), 30)
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    footer = read_log(path).footer
    assert footer is not None and footer.result["hands"] == 0
    assert footer.result.get("unfinished") is True


async def test_a_refused_start_line_is_kept_in_a_log_of_its_own(tmp_path: Path) -> None:
    """A ``/start`` the codec refuses (seat 7) opened no game log: the raw line and why it was
    refused were on stderr only. They are now in a log of their own (``-unread``), which is
    no game of the session's count; the next game is logged as ever."""
    replies: list[str | None] = []
    server, port = await _scripted_server(
        [("/ready", True), ("/start MJ 7 mjbot", False), ("/start MJ 1 mjbot", False),
         ("/close", False)], replies)
    bot = NtpuBot(NtpuSettings(budget=1.0, log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 30)
    assert summary.games == 1 and len(summary.errors) == 1
    assert [g["log"] for g in bot.finished_games] == [
        str(p) for p in tmp_path.rglob("*-g1-seat1.mjlog.msgpack")]
    (unread,) = list(tmp_path.rglob("*-g1-unread.mjlog.msgpack"))
    log = read_log(unread)
    assert [f.raw for f in log.frames if isinstance(f, RxFrame)][-1] == "/start MJ 7 mjbot"
    notes = [f.event.text for f in log.frames if isinstance(f, EventFrame)]
    assert notes == ["error: seat must be 1..4, got '7': '/start MJ 7 mjbot'"]
    assert log.complete
    # while that log is open, serve counts no game in it (it counted one less: -1 here)
    from adapter.serve.runners import _games_in_open_log

    bot = NtpuBot(NtpuSettings(budget=1.0, log_dir=str(tmp_path / "open")))
    bot.take("/start MJ 7 mjbot")
    assert bot.game_log is not None and _games_in_open_log(bot) == 0
    bot.close()


async def test_a_server_that_is_not_there_is_a_clear_error(tmp_path: Path) -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    bot = NtpuBot(NtpuSettings(write_log=False))
    try:
        await run_tcp("127.0.0.1", port, bot, connect_timeout=0.5)
    except ConnectionError as exc:
        assert f"127.0.0.1:{port}" in str(exc)
    else:  # pragma: no cover - the port was just freed
        raise AssertionError("connected to a closed port")


def test_stdio_input_ending_without_a_newline_ends_the_session() -> None:
    """The last line is answered and the session ends: the reader saw the end of input once
    and then waited for ever for a second one (the pump thread had gone)."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio", "--no-log"],
                          input="/ready", capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == "/ready\n"


def test_stdio_mode_answers_in_order_and_survives_garbage(tmp_path: Path) -> None:
    hand = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161"
    lines = ["/ready", "/start MJ 2 mjbot", "/initGame east east 1 1 0", f"/initCard {hand}",
             "/throw 1 411", "/ask pong", "garbage \x01\x02", "/ask hu",
             "/throw 2 999", "/mo 171", "/ask throw", "/exit", "/close", "/ask throw"]
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                           "--log-dir", str(tmp_path)],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout.split("\n")
    assert out[0] == "/ready"
    assert out[1] == "/pass"   # /ask pong: we hold no 1z pair
    assert out[2] == "/pass"   # /ask hu on a 1z: no win
    assert out[3].startswith("/throw ") and out[3].split()[1] in f"{hand} 171".split(" ")
    assert out[4:] == [""]     # nothing after /close
    assert "unknown command 'garbage'" in done.stderr
    assert "bad tile id" in done.stderr
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert read_log(path).complete


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_in_a_game_closes_its_log_as_stopped(tmp_path: Path, signum: int) -> None:
    """SIGTERM (a service manager's stop) or Ctrl-C in the middle of a hand, the referee
    silent: the process ends at once with 128 + the signal, the game's log has its footer
    and says the game was stopped. SIGTERM ended the process where it stood (no footer), and
    Ctrl-C waited for the referee's next line (the stdin reader was waited for)."""
    hand = "111 112 113 121 122 123 131 132 133 141 142 143 151 152 153 161"
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "ntpu", "--stdio",
                             "--log-dir", str(tmp_path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line in ["/start MJ 2 mjbot", "/initGame east east 1 1 0", f"/initCard {hand}",
                     "/mo 171", "/ask throw"]:
            proc.stdin.write(line + "\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("/throw ")  # in the hand, deciding
        proc.send_signal(signum)
        code = proc.wait(20)  # stdin stays open: the referee says nothing more
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + signum, err[-2000:]
    assert f"stopped ({signal.Signals(signum).name})" in err and "Traceback" not in err
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.footer is not None and log.truncated is None
    assert log.footer.result.get("stopped") is True
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == "stopped on request"


async def test_a_server_that_drops_the_line_without_close_is_a_failed_session(
        tmp_path: Path) -> None:
    """A hand played out (``/exit``), then the server closes the line without ``/close``:
    ``mjbot ntpu`` exited 0 and the game's log read as a game played to its end. It now
    exits 1 with one line that says so, and the log says the session ended inside the game;
    the same session ended by ``/close`` still exits 0 with a complete game."""
    script = [("/ready", True), ("/start MJ 1 mjbot", False),
              ("/initGame east east 1 1 0", False), (f"/initCard {DEALER_HAND}", False),
              ("/ask throw", True), ("/exit", False)]
    for closed, code in ((False, 1), (True, 0)):
        folder = tmp_path / str(closed)
        replies: list[str | None] = []
        server, port = await _scripted_server(script + [("/close", False)] * closed, replies)
        async with server:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "adapter.cli", "ntpu", "--server", f"127.0.0.1:{port}",
                "--log-dir", str(folder), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _out, err = await asyncio.wait_for(proc.communicate(), 60)
        text = err.decode()
        assert proc.returncode == code, text[-2000:]
        assert "Traceback" not in text
        said = [line for line in text.splitlines() if line.startswith("mjbot ntpu:")]
        assert said == ([] if closed else
                        ["mjbot ntpu: the server closed the connection without /close"])
        (path,) = list(folder.rglob("*.mjlog.msgpack"))
        log = read_log(path)
        assert log.footer is not None and log.footer.result["hands"] == 1
        assert replayer.summarize(replayer.load(str(path)))["unfinished"] == (
            None if closed else "the session ended before the game did")


async def test_a_line_dropped_under_a_reply_is_said_as_a_dropped_line(tmp_path: Path) -> None:
    """The server sends asks and closes before reading the replies: the client's reply
    meets the closed line before its read does. That ended `mjbot ntpu` with asyncio's
    words alone, "mjbot ntpu: Connection lost"; it is now the same one line as a close
    seen by the read (exit 1), and the game is logged as the session ended inside it."""
    lines = ["/ready", "/start MJ 1 mjbot", "/initGame east east 1 1 0",
             f"/initCard {DEALER_HAND}", *["/ask throw"] * 20]

    async def serve(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write("".join(f"{line}\n" for line in lines).encode())
        await writer.drain()
        writer.close()  # the replies are never read: a write after them is refused

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapter.cli", "ntpu", "--server", f"127.0.0.1:{port}",
            "--log-dir", str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _out, err = await asyncio.wait_for(proc.communicate(), 60)
    text = err.decode()
    assert proc.returncode == 1 and "Traceback" not in text, text[-2000:]
    said = [line for line in text.splitlines() if line.startswith("mjbot ntpu:")]
    assert said == ["mjbot ntpu: the server closed the connection without /close"], said
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert replayer.summarize(replayer.load(str(path)))["unfinished"] == (
        "the session ended before the game did")


async def test_a_server_silent_in_a_hand_is_given_up_with_idle_limit(tmp_path: Path) -> None:
    """With --idle-limit, a server silent that long inside a hand (it hung, or the line died
    without a FIN) is a lost line: exit 1 with one line, the game logged unfinished; the
    client waited for ever. A pause before the first deal (a server waiting for its players)
    is no fault: that session runs to its /close."""
    hand = [("/start MJ 1 mjbot", False), ("/initGame east east 1 1 0", False),
            (f"/initCard {DEALER_HAND}", False), ("/ask throw", True)]
    for pause_first, code in ((False, 1), (True, 0)):
        folder = tmp_path / str(pause_first)
        held = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        pause_first: bool = pause_first, held: asyncio.Event = held) -> None:
            if pause_first:
                await asyncio.sleep(1.0)  # twice the limit, before any hand
            for line, owed in hand + ([("/exit", False), ("/close", False)]
                                      if pause_first else []):
                writer.write((line + "\n").encode())
                await writer.drain()
                if owed:
                    await reader.readline()
            await held.wait()  # silent, the line kept open
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "adapter.cli", "ntpu", "--server", f"127.0.0.1:{port}",
                "--idle-limit", "0.5", "--log-dir", str(folder),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _out, err = await asyncio.wait_for(proc.communicate(), 60)
            held.set()
        text = err.decode()
        assert proc.returncode == code and "Traceback" not in text, text[-2000:]
        said = [line for line in text.splitlines() if line.startswith("mjbot ntpu:")]
        assert said == ([] if pause_first else [
            "mjbot ntpu: the server sent nothing for 0.5 s in a hand; the line was given up "
            "without /close"])
        (path,) = list(folder.rglob("*.mjlog.msgpack"))
        assert replayer.summarize(replayer.load(str(path)))["unfinished"] == (
            None if pause_first else "the session ended before the game did")


# ---------------------------------------------------------------------- the lab referee's words

# 123m 456m 789m 123p 456p 55s: a dealer's 17 dealt tiles that win as dealt (天胡)
HEAVENLY = "110 120 130 140 150 160 170 180 190 210 220 230 240 250 260 350 351"
OTHERS_HEAVENLY = "110 123 130 140 150 160 170 180 190 211 221 231 240 250 261 352 353"
OUR_SIXTEEN = "111 112 113 121 122 132 133 141 142 143 151 152 153 161 171 172"


async def test_a_dealer_win_on_the_deal_and_draw_lines_are_recorded(tmp_path: Path) -> None:
    """Issue 14.2: ``/hu <dealer> -1 <17 ids>`` is a win (ours valued in tai by our rules,
    another dealer's recorded too), not an error and an exhaustive draw; ``/draw`` is /mo."""
    replies: list[str | None] = []

    def echo_throw() -> str:
        return f"/throw 2 {(replies[-1] or '/throw 0').split()[1]}"

    script: list[tuple[str | Callable[[], str], bool]] = [
        ("/ready", True),
        # game 1: we are the dealer and the deal wins
        ("/start MJ 1 mjbot", False),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {HEAVENLY}", False),
        ("/ask hu", True),
        (f"/hu 1 -1 {HEAVENLY}", False),
        ("/exit", False),
        # game 2, seat 2: the dealer (seat 1) wins on the deal; then a hand with /draw lines
        ("/start MJ 2 mjbot", False),
        ("/initGame east east 1 1 0", False),
        (f"/initCard {OUR_SIXTEEN}", False),
        (f"/hu 1 -1 {OTHERS_HEAVENLY}", False),
        ("/exit", False),
        ("/initGame east south 1 1 0", False),
        (f"/initCard {OUR_SIXTEEN}", False),
        ("/throw 1 411", False),
        ("/draw 173", False),
        ("/ask throw", True),
        (echo_throw, False),
        ("/exit", False),
        ("/close", False),
    ]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for item, owed in script:
            line = item() if callable(item) else item
            writer.write((line + "\n").encode())
            await writer.drain()
            if owed:
                raw = await asyncio.wait_for(reader.readline(), 10)
                replies.append(raw.decode().strip() or None)
        await reader.read()  # until the client leaves
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = NtpuBot(NtpuSettings(budget=1.0, log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 30)
    assert summary.errors == [] and summary.finished and summary.games == 2
    assert replies[:2] == ["/ready", "/hu"]
    assert replies[2] is not None and replies[2].split()[1] in f"{OUR_SIXTEEN} 173".split()
    logs = {header_of(log).seat: log for log in map(read_log, tmp_path.rglob("*.mjlog.msgpack"))}
    assert set(logs) == {0, 1} and all(log.complete for log in logs.values())
    ours = list(logs[0].events())
    (won,) = [e for e in ours if isinstance(e, ev.RoundWon)]
    assert won.winner == 0 and won.from_seat is None and len(won.hand) == 17
    assert not any(isinstance(e, ev.RoundDrawn) for e in ours)
    (value,) = [e.text for e in ours if isinstance(e, ev.PlatformNotice)
                and e.text.startswith("our win")]
    assert "天胡(16)" in value and " tai" in value, value
    theirs = list(logs[1].events())
    results = [e for e in theirs if isinstance(e, ev.RoundWon | ev.RoundDrawn)]
    assert [type(e) for e in results] == [ev.RoundWon, ev.RoundDrawn]
    assert isinstance(results[0], ev.RoundWon)
    assert results[0].winner == 0 and results[0].from_seat is None
    assert ev.TileDrawn(1, T.parse_mpsz("7m")[0]) in theirs  # the /draw line


async def test_a_line_that_times_out_ends_the_session_with_the_log_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that fails with ETIMEDOUT (a TimeoutError, not a ConnectionError) went past the
    client's end-of-stream check: a traceback. It is now the end of the stream, logged."""
    readers = capture_client_readers(monkeypatch)
    went = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for line in ("/ready", "/start MJ 1 mjbot", "/initGame east east 1 1 0",
                     f"/initCard {DEALER_HAND}", "/ask throw"):
            writer.write((line + "\n").encode())
        await writer.drain()
        await reader.readline()  # /ready
        await reader.readline()  # the throw
        time_out(readers[0])
        went.set()
        await asyncio.sleep(5)  # the line stays open: only the failed read ends the session
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = NtpuBot(NtpuSettings(budget=1.0, log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 30)
    assert went.is_set() and summary.decisions == 1 and not summary.finished
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    assert read_log(path).complete


_SOUP = ["/start MJ 1 mjbot", "/start MJ 2 mjbot", "/initGame east east 1 1 0",
         "/initGame east south 1 2 0", f"/initCard {DEALER_HAND}",
         "/initCard 211 212 213 221 222 223 231 232 233 241 242 243 251 252 253 261",
         "/mo 311", "/mo 111", "/draw 312", "/ask throw", "/ask hu", "/ask gong", "/ask pong",
         "/ask eat", "/throw 1 111", "/throw 2 311", "/throw 4 121", "/pong 2 121 122 123",
         "/eat 2 111 121 131", "/gong 3 4 141 142 143 144", "/gong 1 0 111 112 113 121",
         "/gong 2 1 311", "/hu 3 311 111 112", "/exit", "/ready", "/ask x", "/mo 999"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_SOUP), max_size=25))
def test_fuzz_any_order_of_server_lines_is_answered_never_raised(lines: list[str]) -> None:
    """The session over the codec, the table and the brain: a server's lines in any order
    (a game started again mid-turn, asks out of turn, moves of ids we never held) are logged
    or answered, never raised; a throw names an id the server dealt us."""
    bot = NtpuBot(NtpuSettings(write_log=False))
    dealt: set[str] = set()
    try:
        for line in lines:
            words = line.split()
            if words[0] in ("/initCard", "/mo", "/draw"):
                dealt.update(words[1:])
            reply = bot.handle(line)
            if reply is not None and reply.startswith("/throw"):
                assert reply.split()[1] in dealt, (lines, reply)
    finally:
        bot.close()
