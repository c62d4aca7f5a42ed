"""A fake Tenhou server: the server side of the Tenhou protocol over real TCP (NUL-framed tags)
and WebSocket (JSON tags) sockets. Test games (type 64) are dealt by the local table's riichi
referee (tenhou_table.py); ``humans`` seats of a table wait for clients (several clients at one
table can be compared), the others are played by mjbot's policies. (Recorded server streams
are played by tenhou_recording.py.)

It is a measuring instrument, so it behaves as Tenhou does, down to what arrives in one read
(../shared/protocols/tenhou.md and the real captures): HELO with an ``auth`` challenge that it
checks, LN after PXR and again on a <Z/> in the lobby or the queue, REJOIN once before the
table is found (a JOIN while queueing, or one for a lobby the line has not entered with
``<CHAT text="/lobby%20N"/>``, is counted as a problem), GO + UN + TAIKYOKU in one
write, the hands (see
tenhou_table.py: what happens between two decisions of any seat in one write, a discard with
the next draw; a kan's DORA before the discard after it; FURITEN when the seat becomes furiten
or stops), PROF with the last AGARI / RYUUKYOKU (``owari``) in one write. A client that
drops is taken back by the same HELO: GO + UN + SAIKAI in one write, and after its GOK a REINIT
of the table and the request it still owes (no REINIT before the first hand). A HELO after
``owari`` is a new login: the game is over when ``owari`` is sent. A seat whose client is
away is played for it after ``absent`` seconds; a reply that is not allowed, or none within
``time_limit``, is counted and the seat plays its safest move (as Tenhou ignores it); an answer
to nothing, a second answer, or a late repeat of an earlier one (tenhou_seat.py) is logged,
counted and dropped. :meth:`FakeTenhouServer.close` lets connected clients say BYE (bounded)
and closes their lines cleanly. Reports name a client by its login and seat.

``drop_after``: the server cuts the connection once, after that many tags sent to the client
(at a moment when nothing is asked of it), to test reconnection.

``keepalive_every``: a probe of the client's liveness, which Tenhou itself does not send (in
the real captures only the client sends ``<Z/>``): every that many seconds, on every
connection, a ``<Z/>`` (and on WebSocket a WebSocket ping as well); the delay of each answer is
recorded in the stats (a client's ``<Z/>`` answers the oldest probe not yet answered).
``transcript``: every tag sent and received, per connection, for tests that check a client
logged them all, and the tags of each write (``writes``), for tests of what goes together.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.server import ServerConnection, serve

from adapter.fakes.tenhou_seat import ANONYMOUS, RemoteSeat, SeatLink, shown_name
from adapter.fakes.tenhou_table import TenhouTable
from adapter.local.game import GameResult, placement
from adapter.ws_log import ScrubbedLog
from protocols.codec import ProtocolError
from protocols.tenhou import (
    TEST_GAME,
    Tag,
    TagStream,
    auth_reply,
    format_tag,
    parse_tag,
    tag_from_json,
    tag_to_json,
)
from protocols.tenhou_values import game_points
from replay.log import GameLogWriter, Header

AUTH_CHALLENGE = "20180120-be208bdd"
DEFAULT_ABSENT = 1.5  # seconds a request waits for a dropped client before its seat is played
# seconds a write may wait for a client that reads nothing (its socket and our buffer full):
# then its line is cut as a dead one, as a real server drops it (Tenhou's own limit is unknown)
WRITE_LIMIT = 30.0
# bytes read from a line after its end (what the client sent before: its BYE, a few bytes; a
# client that writes on to a line we cut would give more for ever)
LAST_WORDS = 256 * 1024


@dataclass
class GameReport:
    """One finished game, for ``mjbot tenhou-server``: per seat who played it (a client as
    its login and seat, ``NoName@seat2``; mjbot's seats by policy), the final score, Tenhou's
    game points, and the client's illegal answers and timeouts. ``logins``: per seat the login
    alone (a client's) or the policy, to add up a program's games."""

    index: int
    players: list[str]
    scores: list[int]
    points: list[float]
    illegal: list[int]
    timeouts: list[int]
    logins: list[str] = field(default_factory=list)


@dataclass
class ServerStats:
    """What the clients did, for the tests and the command's summary."""

    games: int = 0
    hands: int = 0
    illegal: int = 0
    timeouts: int = 0
    absent: int = 0  # moves played for a seat whose client was away
    dropped: int = 0  # answers to nothing: a second, a late, a stale or an unasked one
    reconnects: int = 0
    auth_ok: bool | None = None
    keepalives: int = 0
    probes: int = 0  # <Z/> sent by the keep-alive probe
    keepalive_delays: list[float] = field(default_factory=list)  # seconds to each answer
    probes_unanswered: int = 0  # at the connections' ends
    ws_ping_delays: list[float] = field(default_factory=list)  # WebSocket ping -> pong
    byes: int = 0
    stalled: int = 0  # lines cut for reading nothing while a write waited (write_limit)
    problems: list[str] = field(default_factory=list)
    result: GameResult | None = None
    reports: list[GameReport] = field(default_factory=list)


Send = Callable[[Sequence[Tag | str]], Coroutine[Any, Any, None]]


@dataclass(eq=False)
class _Conn:
    """One client connection: its login, and the seat it plays or returns to. ``cut`` drops
    the line (a reset, as a network fault), ``hang_up`` closes it politely."""

    send: Send
    cut: Callable[[], None]
    hang_up: Callable[[], None]
    name: str = ""
    joins: int = 0
    seat: RemoteSeat | None = None
    returning: bool = False  # taken back by its HELO, GOK still to come
    lobby: bool = False  # logged in (LN sent): LN again on its <Z/> while not at a table
    room: int = 0  # the lobby number it is in: 0, or one entered with <CHAT text="/lobby N"/>
    stalled: bool = False  # cut for reading nothing while a write waited (write_limit)
    probes: deque[float] = field(default_factory=deque)  # when each unanswered <Z/> was sent
    transcript: list[tuple[str, str]] | None = None  # ("tx" | "rx", tag) when recorded


def _ln() -> Tag:
    """The lobby's news (who is online, the tables): Tenhou sends it after PXR and again while
    the client stays in the lobby or queues (the captures: most often after its <Z/>)."""
    return Tag("LN", {"n": "x", "j": "y", "g": "z"})


class FakeTenhouServer:
    """Serves test games, over TCP and / or WebSocket: a table starts when ``humans`` clients
    have joined; after ``games`` tables (None: no limit) later joins wait forever."""

    def __init__(self, seed: int = 0, length: str = "east",
                 opponents: tuple[str, str, str] = ("greedy", "rulebased", "greedy"),
                 time_limit: float = 10.0, absent: float = DEFAULT_ABSENT, humans: int = 1,
                 games: int | None = None, drop_after: int | None = None,
                 log_dir: str | None = None, junk: tuple[str, ...] = (),
                 keepalive_every: float | None = None, transcript: bool = False,
                 write_limit: float = WRITE_LIMIT) -> None:
        if not 1 <= humans <= 4:
            raise ValueError(f"humans must be 1..4, got {humans}")
        self.seed, self.length = seed, length
        self.opponents = opponents
        self.time_limit, self.absent = time_limit, absent
        self.humans, self.max_games = humans, games
        self.game_type = TEST_GAME
        self.drop_after = drop_after
        self.dropped = False
        self.log_dir = log_dir
        self.junk = list(junk)  # raw tags sent once, mid-game, to test the client's resilience
        self.keepalive_every = keepalive_every
        self.write_limit = write_limit
        self.record = transcript
        self.transcripts: list[list[tuple[str, str]]] = []  # per connection, in order
        self.writes: list[list[list[str]]] = []  # per connection, each write's tags
        self.stats = ServerStats()
        self.tables: list[TenhouTable] = []
        self.waiting: list[_Conn] = []  # joined, no table yet
        self.games_started = self.games_done = 0
        self.finished = asyncio.Event()  # a game has ended
        self._changed = asyncio.Event()
        self._notices: set[asyncio.Future[None]] = set()  # BYE / UN being sent to others
        self._servers: list[Any] = []
        self._conns: set[_Conn] = set()  # connected now
        self._ids: dict[str, int] = {}  # an ID's number in reports ("ID1"): the ID is a secret
        self._sessions: set[asyncio.Task[Any]] = set()  # their handlers
        self._writers: set[asyncio.Task[None]] = set()  # the game threads' writes (SeatLink)

    def open_log(self, game_index: int) -> GameLogWriter | None:
        if self.log_dir is None:
            return None
        header = Header(platform="tenhou-server", variant="riichi", seat=None,
                        policy="fake-tenhou", game_id=f"fake-s{self.seed}-g{game_index}",
                        extra={"full_information": True, "humans": self.humans})
        return GameLogWriter.create(self.log_dir, header, flush_per_hand=True)

    def maybe_cut(self, remote: RemoteSeat) -> None:
        """From the game thread after a send: the test's one cut of the client's line."""
        conn = remote.link.conn
        if self.drop_after is None or self.dropped or remote.owed is not None or conn is None \
                or remote.link.sent < self.drop_after:
            return
        self.dropped = True
        self.stats.problems.append(f"(test) connection cut by the server after "
                                   f"{remote.link.sent} game tags")
        remote.link.then(conn.cut)  # after the tags counted, as a line cut between reads

    async def wait_games(self, count: int) -> None:
        """Until ``count`` games have ended."""
        while self.games_done < count:
            self._changed.clear()
            await self._changed.wait()

    # ------------------------------------------------------------------ transports

    async def start_tcp(self, host: str = "127.0.0.1", port: int = 0) -> int:
        def protocol() -> asyncio.StreamReaderProtocol:  # asyncio.start_server's, but
            return asyncio.StreamReaderProtocol(_ReadToTheEnd(), self._tcp_client)  # its reader

        server = await asyncio.get_running_loop().create_server(protocol, host, port)
        self._servers.append(server)
        bound: int = server.sockets[0].getsockname()[1]  # an IP address: (host, port, ...)
        return bound

    async def start_ws(self, host: str = "127.0.0.1", port: int = 0) -> int:
        server = await serve(self._ws_client, host, port,
                             logger=ScrubbedLog(logging.getLogger("websockets.server"),
                                                _masked_ids, lambda text: _AN_ID.sub("ID-", text)))
        self._servers.append(server)
        bound: int = next(iter(server.sockets)).getsockname()[1]
        return bound

    async def close(self, grace: float = 0.0) -> None:
        """Stop listening; give the clients still connected up to ``grace`` seconds to leave
        (BYE, or their own close), then close their lines politely and let every session end,
        so that a late BYE is read, not met by a reset, and nothing is left cancelled."""
        for server in self._servers:  # listen no more; the lines stay open for now
            if isinstance(server, asyncio.Server):
                server.close()
            else:
                server.close(close_connections=False)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while self._sessions and loop.time() < deadline:
            await asyncio.wait(set(self._sessions), timeout=deadline - loop.time())
        for conn in list(self._conns):
            conn.hang_up()
        if self._sessions:
            await asyncio.wait(set(self._sessions), timeout=5)
        for conn in list(self._conns):  # a client that reads nothing: its close never ends
            conn.cut()
        if self._sessions:
            await asyncio.wait(set(self._sessions), timeout=1)
        for task in [*self._sessions, *self._notices, *self._writers]:
            task.cancel()  # a line that would not close: the last resort
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _tcp_client(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        async def send(tags: Sequence[Tag | str]) -> None:
            if writer.transport.is_closing():
                # cut (a dead line) or closed: the bytes would go nowhere, and asyncio, which
                # drops them, warns on stderr from the fifth ("socket.send() raised
                # exception."), as the writes queued for a stalled seat went on after its cut
                raise ConnectionError("closed")
            # one write: what Tenhou sends together arrives in one read
            writer.write(b"".join((t if isinstance(t, str) else format_tag(t)).encode() + b"\0"
                                  for t in tags))  # str: raw test input
            await writer.drain()

        def cut() -> None:
            writer.transport.abort()

        stream = TagStream()
        # A write to a line the client has reset fails, and asyncio then stops reading the
        # socket: what the client sent before (its BYE) would stay unread in the kernel. A
        # second handle on the socket reads it still (see :func:`_unread`).
        spare = writer.get_extra_info("socket").dup()
        spare.setblocking(False)

        left = LAST_WORDS  # bytes the second handle may still give once the line has ended

        async def receive() -> list[Tag | str]:
            nonlocal left
            data = await reader.read(65536)  # what came before a failure, then b""
            if not data and left > 0:
                # the line has ended: what the client sent before, bounded, and the loop given
                # back between reads (a client that goes on writing to a line we cut, read
                # without end and without a pause, froze the whole server)
                await asyncio.sleep(0)
                data = _unread(spare, left)
                left -= len(data)
            if not data:
                raise ConnectionError("closed")
            return list(stream.feed(data))

        try:
            await self._session(send, receive, cut, writer.close)
        finally:
            spare.close()
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _ws_client(self, connection: ServerConnection) -> None:
        async def send(tags: Sequence[Tag | str]) -> None:
            try:
                for tag in tags:  # one JSON object per frame, as the HTML5 client reads them
                    await connection.send(tag if isinstance(tag, str)
                                          else json.dumps(tag_to_json(tag)))
            except websockets.ConnectionClosed:
                raise ConnectionError("closed") from None

        def cut() -> None:
            transport = connection.transport
            if transport is not None:
                transport.abort()

        def hang_up() -> None:
            closing = asyncio.ensure_future(connection.close())
            self._notices.add(closing)
            closing.add_done_callback(self._notices.discard)

        async def receive() -> list[Tag | str]:
            try:
                message = await connection.recv()
            except websockets.ConnectionClosed:
                raise ConnectionError("closed") from None
            text = message if isinstance(message, str) else message.decode("utf-8", "replace")
            if text.lstrip().startswith("<"):
                return [text]
            try:
                return [tag_from_json(text)]
            except ProtocolError as exc:
                self.stats.problems.append(f"from a client: {exc}")
                return []

        async def ping() -> float:
            try:
                return await asyncio.wait_for(await connection.ping(), 10)
            except websockets.ConnectionClosed:
                raise ConnectionError("closed") from None

        await self._session(send, receive, cut, hang_up, ping)

    # ------------------------------------------------------------------ the session

    async def _session(self, send: Send, receive: Callable[[], Awaitable[list[Tag | str]]],
                       cut: Callable[[], None], hang_up: Callable[[], None],
                       ping: Callable[[], Awaitable[float]] | None = None) -> None:
        """One connection: login, queue, games (or the return of a dropped client). The game
        answers of one read are taken together: one of them answers what is owed."""
        if self.record:
            transcript: list[tuple[str, str]] = []
            writes: list[list[str]] = []
            self.transcripts.append(transcript)
            self.writes.append(writes)
            send, receive = _recorded(send, receive, transcript, writes)
        conn = _Conn(send, cut, hang_up)
        conn.send = self._bounded(conn, send)
        task = asyncio.current_task()
        if task is not None:
            self._sessions.add(task)
        self._conns.add(conn)
        probe = (asyncio.ensure_future(self._probe(conn, ping))
                 if self.keepalive_every is not None else None)
        items: list[Tag | str] = []
        try:
            while True:
                answers: list[Tag] = []
                items = await receive()
                while items:
                    item = items.pop(0)
                    try:
                        tag = item if isinstance(item, Tag) else parse_tag(item)
                    except ProtocolError as exc:
                        self.stats.problems.append(f"from a client: {exc}")
                        continue
                    if tag.name in ("D", "N", "REACH"):
                        answers.append(tag)
                    elif not await self._handle(conn, tag):
                        return
                if answers:
                    self._answers(conn, answers)
                    await self._send_junk(conn)
        except (ConnectionError, asyncio.IncompleteReadError):
            await self._last_words(items, receive)
        finally:
            if probe is not None:
                probe.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
                    await probe
            self.stats.probes_unanswered += len(conn.probes)
            self._gone(conn)
            self._conns.discard(conn)
            self._sessions.discard(task)

    def _bounded(self, conn: _Conn, send: Send) -> Send:
        """``send`` that waits at most ``write_limit`` seconds for a client that reads nothing
        (a drain would wait for ever, and the seat would wait its time limit at every
        request): then the line is cut, as a dead one, and the seat is played for it."""
        async def bounded(tags: Sequence[Tag | str]) -> None:
            try:
                async with asyncio.timeout(self.write_limit):
                    await send(tags)
            except TimeoutError:
                if not conn.stalled:  # said once, by the first write that gave up
                    conn.stalled = True
                    self.stats.stalled += 1
                    self.stats.problems.append(
                        f"{self._conn_label(conn)} read nothing while a write waited "
                        f"{self.write_limit:g} s: its line was cut")
                conn.cut()
                raise ConnectionError("the client reads nothing: line cut") from None

        return bounded

    def _conn_label(self, conn: _Conn) -> str:
        """A connection as reports name it: its seat's label, else its login."""
        seat = self._seat_of(conn)
        if seat is not None:
            return seat.label
        return shown_name(conn.name) if conn.name else "a client not logged in"

    async def _last_words(self, items: list[Tag | str],
                          receive: Callable[[], Awaitable[list[Tag | str]]]) -> None:
        """The line failed (a write to it, or the read): what the client sent before the
        failure still counts, its BYE above all (a clean goodbye, not a drop). The rest of the
        read in hand, then what the line still holds (a failed line gives it back at once,
        then the end; bounded all the same)."""
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            async with asyncio.timeout(1.0):
                while True:
                    for item in items:
                        text = item if isinstance(item, str) else format_tag(item)
                        if re.match(r"<BYE\b", text):
                            self.stats.byes += 1
                            return
                    items = await receive()

    async def _probe(self, conn: _Conn, ping: Callable[[], Awaitable[float]] | None) -> None:
        """The keep-alive probe: a <Z/> every ``keepalive_every`` seconds (its answer is timed
        in :meth:`_handle`) and, on WebSocket, a ping whose pong is timed here."""
        assert self.keepalive_every is not None
        pings: set[asyncio.Future[None]] = set()

        async def timed_ping() -> None:
            with contextlib.suppress(ConnectionError, TimeoutError):
                assert ping is not None
                self.stats.ws_ping_delays.append(await ping())

        try:
            while True:
                await asyncio.sleep(self.keepalive_every)
                conn.probes.append(time.monotonic())
                self.stats.probes += 1
                await conn.send([Tag("Z")])
                if ping is not None:
                    task = asyncio.ensure_future(timed_ping())
                    pings.add(task)
                    task.add_done_callback(pings.discard)
        finally:
            for pending in pings:
                pending.cancel()

    async def _handle(self, conn: _Conn, tag: Tag) -> bool:
        """One tag that is not a game answer; False when the client said BYE."""
        if tag.name == "HELO":
            await self._helo(conn, tag)
        elif tag.name == "AUTH":
            self.stats.auth_ok = tag.attrs.get("val") == auth_reply(AUTH_CHALLENGE)
        elif tag.name == "PXR":
            conn.lobby = True
            await conn.send([_ln()])
        elif tag.name == "CHAT":
            self._chat(conn, tag)
        elif tag.name == "JOIN":
            await self._join(conn, tag)
        elif tag.name == "GOK" and conn.returning:
            await self._welcome_back(conn)
        elif tag.name == "NEXTREADY":
            seat = self._seat_of(conn)
            if seat is not None:
                seat.link.ready.set()
        elif tag.name == "BYE":
            self.stats.byes += 1
            return False
        elif tag.name == "Z":
            self.stats.keepalives += 1
            if conn.probes:
                self.stats.keepalive_delays.append(time.monotonic() - conn.probes.popleft())
            seat = self._seat_of(conn)
            if conn.lobby and (seat is None or seat.table.over):  # in the lobby or queueing
                await conn.send([_ln()])
        return True

    def _seat_of(self, conn: _Conn) -> RemoteSeat | None:
        """The seat this connection holds now (None after another took it over)."""
        seat = conn.seat
        return seat if seat is not None and seat.link.conn is conn else None

    def _answers(self, conn: _Conn, tags: list[Tag]) -> None:
        seat = self._seat_of(conn)
        if seat is None or conn.returning or seat.table.over:
            for tag in tags:
                self.stats.dropped += 1
                self.stats.problems.append(f"dropped, unasked: {format_tag(tag)}")
            return
        seat.accept(tags)

    async def _send_junk(self, conn: _Conn) -> None:
        """Test input: raw bad tags, sent once each, between the client's moves."""
        while self.junk and self._seat_of(conn) is not None:
            await conn.send([self.junk.pop(0)])

    def _gone(self, conn: _Conn) -> None:
        if conn in self.waiting:
            self.waiting.remove(conn)
        seat = self._seat_of(conn)
        if seat is not None:  # a dropped client: its seat waits for it a little, then plays
            seat.link.detach()
            seat.link.conn = None
            if not conn.returning:
                self._tell_others(seat, lambda rel: Tag("BYE", {"who": str(rel)}))

    def _tell_others(self, seat: RemoteSeat, tag_for: Callable[[int], Tag]) -> None:
        """The other clients at the table hear of a player leaving (BYE) or back (UN with one
        name), the seat given relative to each of them, as Tenhou tells them."""
        if seat.table.over:
            return
        for other in seat.table.remotes.values():
            conn = other.link.conn
            if other is not seat and isinstance(conn, _Conn) and other.link.connected.is_set():
                task = asyncio.ensure_future(self._send_quietly(conn,
                                                                tag_for(other.rel(seat.seat))))
                self._notices.add(task)
                task.add_done_callback(self._notices.discard)

    @staticmethod
    async def _send_quietly(conn: _Conn, tag: Tag) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await conn.send([tag])

    # ------------------------------------------------------------------ logins and tables

    async def _helo(self, conn: _Conn, tag: Tag) -> None:
        conn.name = urllib.parse.unquote(tag.attrs.get("name", ""))
        seat = self._returning_to(conn)
        if seat is not None:
            await self._resume(conn, seat)
            return
        await conn.send([Tag("HELO", {"uname": urllib.parse.quote(shown_name(conn.name)),
                                      "auth": AUTH_CHALLENGE})])

    def _returning_to(self, conn: _Conn) -> RemoteSeat | None:
        """The seat of a game not over that this login takes back: one left by its client, or
        (an ID, which is one person) one still held by another connection."""
        seats = [s for t in self.tables if not t.over for s in t.remotes.values()
                 if s.login == conn.name and s.link.conn is not conn]
        seats.sort(key=lambda s: s.link.conn is not None)
        if seats and (seats[0].link.conn is None or conn.name != ANONYMOUS):
            return seats[0]
        return None

    async def _resume(self, conn: _Conn, seat: RemoteSeat) -> None:
        """GO + UN + SAIKAI in one write; the table follows the client's GOK."""
        old = seat.link.conn
        seat.link.detach()  # away until its GOK
        seat.link.conn, conn.seat, conn.returning = conn, seat, True
        if old is not None:
            old.cut()  # the same ID logged in again: the old line is dropped
        self.stats.reconnects += 1
        table = seat.table
        await conn.send([self._go(table), self._un(table, seat.seat), seat.saikai()])

    async def _welcome_back(self, conn: _Conn) -> None:
        """After a returning client's GOK: the table as its seat sees it (with the request it
        still owes), then the live line again. No REINIT before the first hand is dealt."""
        conn.returning = False
        seat = self._seat_of(conn)
        if seat is None:
            return
        table = seat.table
        await asyncio.to_thread(table.lock.acquire)
        try:
            if self._seat_of(conn) is not seat or table.over:
                return
            if table.dealt:
                await conn.send(list(seat.reinit()))
            seat.link.attach(conn.send)
            seat.link.ready.set()  # its GOK: nothing else to wait for
        finally:
            table.lock.release()
        name = urllib.parse.quote(seat.name)
        self._tell_others(seat, lambda rel: Tag("UN", {f"n{rel}": name}))

    @staticmethod
    def _chat(conn: _Conn, tag: Tag) -> None:
        """A lobby command in the chat: ``/lobby N`` (URL-encoded) moves the connection to
        lobby N, as Tenhou's own client does before its JOIN there (the capture
        f5182_2018-01-22: ``<CHAT text="/lobby%207994"/>``, then ``<JOIN t="7994,9"/>``)."""
        words = urllib.parse.unquote(tag.attrs.get("text", "")).split()
        if len(words) == 2 and words[0] == "/lobby" and words[1].isdigit():
            conn.room = int(words[1])

    async def _join(self, conn: _Conn, tag: Tag) -> None:
        t = tag.attrs.get("t")
        if t is None:  # <JOIN/> leaves the queue
            if conn in self.waiting:
                self.waiting.remove(conn)
            return
        lobby = t.split(",")[0]
        if lobby.isdigit() and int(lobby) != conn.room:  # seated all the same
            self.stats.problems.append(
                f"a JOIN for lobby {lobby} from lobby {conn.room} (a client enters it first, "
                f'<CHAT text="/lobby%20{lobby}"/>): {format_tag(tag)}')
        conn.joins += 1
        if conn.joins == 1 and "r" not in t.split(","):
            await conn.send([Tag("REJOIN", {"t": t + ",r"})])
            return
        seat = self._seat_of(conn)
        if conn in self.waiting:
            self.stats.problems.append(f"a JOIN while already queueing: {format_tag(tag)}")
            return
        if seat is not None and not seat.table.over:
            return
        self.waiting.append(conn)
        while len(self.waiting) >= self.humans and (self.max_games is None
                                                    or self.games_started < self.max_games):
            group, self.waiting = self.waiting[:self.humans], self.waiting[self.humans:]
            await self._start_table(group)

    def _login_label(self, name: str) -> str:
        """A login as reports show it: "NoName", or an ID as "ID1", "ID2"... in the order of
        their first game here (the ID itself is a secret)."""
        if name == ANONYMOUS:
            return name
        return f"ID{self._ids.setdefault(name, len(self._ids) + 1)}"

    def _go(self, table: TenhouTable) -> Tag:
        return Tag("GO", {"type": str(self.game_type), "lobby": "0",
                          "gpid": f"{self.seed & 0xFFFFFFFF:08X}-{table.game_index:08X}"})

    def _un(self, table: TenhouTable, seat: int) -> Tag:
        return Tag("UN", {**table.names(seat), "dan": "0,0,0,0",
                          "rate": "1500.00,1500.00,1500.00,1500.00", "sx": "M,M,M,M"})

    async def _start_table(self, group: list[_Conn]) -> None:
        """Seat the clients (spread round the table), tell each GO + UN + TAIKYOKU in one
        write, and start the game thread."""
        index = self.games_started
        self.games_started += 1
        base, step = (self.seed + index) % 4, 4 // len(group)
        loop = asyncio.get_running_loop()
        seated: dict[int, tuple[str, SeatLink]] = {}
        for i, conn in enumerate(group):
            link = SeatLink(loop, self.absent, self._writers)
            link.conn = conn
            seated[(base + i * step) % 4] = (conn.name, link)
        table = TenhouTable(self, index, seated)
        self.tables.append(table)
        for conn, (seat, remote) in zip(group, table.remotes.items(), strict=True):
            conn.seat, remote.login_label = remote, self._login_label(conn.name)
            remote.label = f"{remote.login_label}@seat{seat}"
            try:
                await conn.send([self._go(table), self._un(table, seat), Tag("TAIKYOKU", {
                    "oya": str((0 - seat) % 4), "log": f"fake-{self.seed}-{index}"})])
            except (ConnectionError, OSError):
                remote.link.detach()
                remote.link.conn = None
                continue
            remote.link.attach(conn.send)
        threading.Thread(target=self._run_table, args=(table, loop), daemon=True).start()

    def _run_table(self, table: TenhouTable, loop: asyncio.AbstractEventLoop) -> None:
        try:
            table.run()
        finally:
            with contextlib.suppress(RuntimeError):  # the loop closed first: nobody to tell
                loop.call_soon_threadsafe(self._table_done, table)

    def _table_done(self, table: TenhouTable) -> None:
        self.tables.remove(table)
        self.games_done += 1
        if table.result is not None:
            scores = list(table.result.scores)
            remotes = [table.remotes.get(s) for s in range(4)]
            players = [r.label if r else table.players[s].name for s, r in enumerate(remotes)]
            logins = [r.login_label if r else table.players[s].name
                      for s, r in enumerate(remotes)]
            self.stats.reports.append(GameReport(
                table.game_index, players, scores, game_points(scores, placement(scores)),
                [r.illegal if r else 0 for r in remotes],
                [r.timeouts if r else 0 for r in remotes], logins))
        self.finished.set()
        self._changed.set()



# a Tenhou ID (a secret, as the clients' logins are): reports show it as "ID1", "ID2"...
_AN_ID = re.compile(r"ID[0-9A-Fa-f]{8}-[0-9A-Za-z]{8}")
_AN_ID_BYTES = re.compile(_AN_ID.pattern.encode())


def _masked_ids(payload: bytes) -> bytes:
    """A frame's payload with every ID masked to its length (the trace tells the length)."""
    return _AN_ID_BYTES.sub(lambda m: b"*" * len(m.group()), payload)


class _ReadToTheEnd(asyncio.StreamReader):
    """A reader that gives back what it received before the line failed, then the end (b""):
    asyncio's own raises the failure at the next read, ahead of the bytes still in its buffer
    (the second form of the BYE race: a BYE read in while the session was busy, then a
    reset, was lost). The failure itself is the transport's: a write says it."""

    def set_exception(self, exc: BaseException) -> None:
        self.feed_eof()


def _unread(sock: socket.socket, limit: int) -> bytes:
    """What the client sent that the failed line left unread, at most ``limit`` bytes: the
    kernel keeps a reset socket's received bytes readable (Linux: the data, then
    ECONNRESET)."""
    chunks = []
    while limit > 0:
        try:
            chunk = sock.recv(min(65536, limit))
        except OSError:  # nothing more now (BlockingIOError), or the reset itself
            break
        if not chunk:
            break
        chunks.append(chunk)
        limit -= len(chunk)
    return b"".join(chunks)


def _recorded(send: Send, receive: Callable[[], Awaitable[list[Tag | str]]],
              transcript: list[tuple[str, str]], writes: list[list[str]]) \
        -> tuple[Send, Callable[[], Awaitable[list[Tag | str]]]]:
    """``send`` and ``receive`` that also write every tag into ``transcript`` (and the tags of
    each write, together, into ``writes``)."""
    def text(item: Tag | str) -> str:
        return item if isinstance(item, str) else format_tag(item)

    async def send_recorded(tags: Sequence[Tag | str]) -> None:
        await send(tags)
        transcript.extend(("tx", text(t)) for t in tags)
        writes.append([text(t) for t in tags])

    async def receive_recorded() -> list[Tag | str]:
        items = await receive()
        transcript.extend(("rx", text(t)) for t in items)
        return items

    return send_recorded, receive_recorded
