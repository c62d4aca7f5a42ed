"""`mjbot ntpu` against servers that misbehave: a scripted server on a real loopback socket
(the client in-process, asyncio), and the stdin/stdout form as a real subprocess."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from adapter.ntpu import NtpuBot, NtpuSettings, run_tcp
from protocols import events as ev
from replay.log import EventFrame, RxFrame, TxFrame, read_log

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
    replies: list[str | None] = []
    server, port = await _scripted_server(script, replies)
    bot = NtpuBot(NtpuSettings(budget=1.0, log_dir=str(tmp_path)))
    async with server:
        summary = await asyncio.wait_for(run_tcp("127.0.0.1", port, bot), 30)
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
    rx = [f.raw for f in log.frames if isinstance(f, RxFrame)]
    assert rx == [line for line, _ in script]  # every raw line, the bad ones included
    tx = [f.raw for f in log.frames if isinstance(f, TxFrame)]
    assert tx == [r for r in replies if r is not None]
    notices = [f.event.text for f in log.frames if isinstance(f, EventFrame)
               and isinstance(f.event, ev.PlatformNotice)]
    assert sum(n.startswith("error:") for n in notices) == 6


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
