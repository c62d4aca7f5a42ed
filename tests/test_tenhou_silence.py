"""`mjbot tenhou` when the line goes quiet without closing (a NAT that forgot it, a server that
hangs): in a game the silence is a lost line, reconnected as a drop is, and the game goes on;
in the lobby it is no fault. Real loopback sockets: our client, the fake Tenhou server and a
relay between them that goes dead as such a line does."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from adapter.fakes.tenhou_server import FakeTenhouServer
from adapter.platforms.tenhou import TenhouBot, TenhouSettings, run
from protocols.tenhou import TagStream, parse_tag
from replay.log import RxFrame, read_log

# an ID: Tenhou (and the fake server) give a seat back to the same ID while its old line is
# still open, as it is here (the dead line never closed); an anonymous login waits for it
ID = "ID0123ABCD-abcd1234"


class _DeadRelay:
    """Relays between a client and the server; the first line goes dead both ways once the
    server has sent ``after`` tags on it: what either side sends is read and dropped, and
    nothing is closed, so neither end hears of it. Later lines are relayed as they come."""

    def __init__(self, upstream: int, after: int) -> None:
        self.upstream, self.after = upstream, after
        self.lines = 0
        self.dead = False
        self.tasks: set[asyncio.Task[None]] = set()

    async def line(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.lines += 1
        first = self.lines == 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        told = 0

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter,
                       down: bool) -> None:
            nonlocal told
            while data := await src.read(65536):
                if first and self.dead:
                    continue  # into the void
                dst.write(data)
                await dst.drain()
                if down and first:
                    told += data.count(b"\0")
                    self.dead = told >= self.after

        try:
            await asyncio.gather(pump(up_reader, writer, True), pump(reader, up_writer, False),
                                 return_exceptions=True)
        finally:
            for w in (writer, up_writer):
                w.close()
                with contextlib.suppress(ConnectionError, OSError):
                    await w.wait_closed()


async def test_a_line_that_goes_quiet_in_a_game_is_reconnected_and_the_game_goes_on(
        tmp_path: Path) -> None:
    """The line went dead mid-hand without closing: the client's keep-alives went into the
    void, the kernel reported nothing, and ``mjbot tenhou`` waited for ever. Now a server
    silent for the idle limit in a game is a lost line: the client logs in again, the server
    gives the seat back (SAIKAI, REINIT) and the game is played to its end in the same log."""
    server = FakeTenhouServer(seed=1, time_limit=2, absent=5, log_dir=str(tmp_path / "server"))
    port = await server.start_tcp()
    relay = _DeadRelay(port, after=40)
    listener = await asyncio.start_server(relay.line, "127.0.0.1", 0)
    settings = TenhouSettings(server=f"127.0.0.1:{listener.sockets[0].getsockname()[1]}",
                              name=ID, log_dir=str(tmp_path / "client"), budget=0.5,
                              reconnect_delay=0.1, idle_limit=1.0)
    bot = TenhouBot(settings)
    try:
        async with listener:
            summary = await asyncio.wait_for(run(settings, bot), 90)  # a guard: it hung
            await asyncio.wait_for(server.finished.wait(), 10)
    finally:
        await server.close()
    assert relay.dead and relay.lines == 2
    assert summary.finished and summary.games == 1 and summary.reconnects == 1
    assert bot.line_lost == "the server sent nothing for 1 s in a game"
    assert server.stats.reconnects == 1 and server.stats.games == 1
    (path,) = list((tmp_path / "client").rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and log.truncated is None
    rx = [f.raw for f in log.frames if isinstance(f, RxFrame)]
    assert any("SAIKAI" in r for r in rx) and any("REINIT" in r for r in rx)
    assert any("owari" in r for r in rx)
    assert not summary.errors, summary.errors


async def test_a_quiet_lobby_is_waited_in_and_the_line_kept() -> None:
    """In the lobby the wait for a table has no bound (a human lobby at a quiet hour) and
    Tenhou owes us nothing while we queue: silence there, many idle limits long, is no lost
    line. The client keeps the line and its keep-alives, and does not log in again."""
    logins = 0
    keepalives = asyncio.Event()

    async def queue_for_ever(reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> None:
        nonlocal logins
        stream, heard = TagStream(), []
        zs = 0
        try:
            while data := await reader.read(65536):
                for text in stream.feed(data):
                    tag = parse_tag(text)
                    heard.append(tag.name)
                    if tag.name == "HELO":
                        logins += 1
                        writer.write(b'<HELO uname="%4E%6F%4E%61%6D%65"/>\0'
                                     b'<LN n="BgC1BXv1Zs1Gf" j="C1B2D1" g="EM3I1Jo1E2U1"/>\0')
                    elif tag.name == "JOIN" and "r" not in tag.attrs.get("t", ""):
                        writer.write(b'<REJOIN t="0,64,r"/>\0')
                    elif tag.name == "Z" and "JOIN" in heard:
                        zs += 1  # queueing, and the server says nothing
                        if zs >= 40:
                            keepalives.set()
        finally:
            writer.close()

    listener = await asyncio.start_server(queue_for_ever, "127.0.0.1", 0)
    settings = TenhouSettings(server=f"127.0.0.1:{listener.sockets[0].getsockname()[1]}",
                              write_log=False, keepalive=0.02, idle_limit=0.1,
                              reconnect_delay=0.01)
    bot = TenhouBot(settings)
    async with listener:
        client = asyncio.ensure_future(run(settings, bot))
        # 40 keep-alives 0.02 s apart: a silence of eight idle limits at the least
        await asyncio.wait_for(keepalives.wait(), 30)
        assert not client.done(), client
        client.cancel()
        with pytest.raises(asyncio.CancelledError):
            await client
    assert logins == 1 and bot.summary.reconnects == 0 and bot.line_lost is None
