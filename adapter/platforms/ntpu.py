"""NTPU / Cycgame Taiwan tournament client: ``mjbot ntpu`` over TCP or stdin/stdout.

The server speaks first and the client only answers: ``/ready`` to a readiness check and one
reply to every ``/ask`` (../shared/protocols/ntpu.md). Many games run over one connection until
``/close`` or the end of the stream. Each line goes through the sans-IO codec
(protocols/ntpu.py); the events build our :class:`~brain.state.TableState`; an ``/ask`` goes to
the brain with the per-decision budget and its fallback. A line we cannot read is logged with
the reason and, where an answer is owed, gets a safe one (``/pass``, or a discard of the drawn
tile); the connection is kept.

Every game (from one ``/start`` to the next, ``/close`` or the end) is written to a game log:
the raw lines both ways, the events and every decision.

The async forms read all the time (adapter/thinking/inbox.py): while the brain thinks (a slow policy
in a worker process, adapter/thinking/thinker.py), a ``/ready`` readiness check is answered at once
and every other line waits its turn. ``handle`` (decisions taken on the spot) serves the tests'
thread clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from adapter.session import (
    CodecSession,
    SessionSummary,
    SilentLine,
    connect_thinking,
    dropped_line,
    idle_limited,
    serve_lines,
)
from adapter.stdout_thread import StdoutWriter
from brain.brain import Answer, Brain, safest_action
from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError
from protocols.ntpu import Closed, LineBuffer, NtpuCodec, Ready
from replay.formats.ntpu_log import value_win
from replay.log import Footer, Header
from replay.replayer import step_pass

log = structlog.get_logger("mjbot.ntpu")

DEFAULT_BUDGET = 2.0  # seconds per decision (the servers publish none; a lab client uses 2.5)
DEFAULT_MARGIN = 0.3
# the stdin form: seconds a reply may wait for the referee to take it (it waits only where the
# pipe is full: 64 KiB of our replies unread). NTPU publishes no limit; the longest any referee
# we know gives a reply is 30 s (ntpu-server's first /ready, while a client starts up): a reply
# not taken by then is late by every referee's clock, and the referee is gone
REPLY_LIMIT = 30.0


@dataclass
class NtpuSettings:
    policy: str = "rulebased"
    budget: float = DEFAULT_BUDGET
    margin: float = DEFAULT_MARGIN
    tiles: T.NtpuTiles = field(default_factory=T.NtpuTiles)
    log_dir: str | None = None
    write_log: bool = True


class NtpuBot(CodecSession):
    """One connection's session (adapter/session.py runs the loop: ``handle(line)``, or
    ``handle_async(line)`` awaiting the decision, returns the reply line owed, or None).
    What is NTPU's own: ``keepalive(line)`` answers a readiness check ahead of the lines
    waiting, a game runs from one ``/start`` to the next, and every win is valued by our
    rules (the server sends no value)."""

    codec: NtpuCodec

    def __init__(self, settings: NtpuSettings | None = None) -> None:
        self.settings = settings or NtpuSettings()
        super().__init__(NtpuCodec(self.settings.tiles),
                         Brain("taiwan16", self.settings.policy, limit=self.settings.budget,
                               margin=self.settings.margin), self.settings.budget)
        self.rules = rules_for("taiwan16")
        self.before: Any = None  # the table event before the next (robbing an added kan)
        self.ending = False  # the session is closing (see close)
        self.close_owed = False  # TCP: the server ends a session with /close (see close)
        # the stdin form: why the referee is known gone (it stopped reading our replies), if
        # it is: the command exits 1 saying so, where it exited 0 as after a finished match
        self.referee_gone: str | None = None
        # the game's scores as our rules count its wins (the server sends none); None once a
        # win could not be valued: what serve's /health gives as the game's scores and points
        self.tally: list[int] | None = [0, 0, 0, 0]
        self.unread_log = False  # the open log holds only lines refused outside any game

    # ------------------------------------------------------------------ lines

    def keepalive(self, line: str) -> str | None:
        """``/ready`` (the server checks that we are alive): logged and answered now."""
        if line.split() != ["/ready"]:
            return None
        self.pending.rx(self.game_log, line)
        return self.send("/ready")

    def take(self, line: str) -> tuple[str | None, ev.DecisionRequest | None]:
        if line.startswith("/start"):
            self.finish_game()  # the line belongs to the game it starts
        self.pending.rx(self.game_log, line)
        try:
            items = self.codec.feed(line)
        except ProtocolError as exc:
            reply = self.codec.safe_reply(line)
            if self.game_log is None and self.settings.write_log:
                # a refused /start (a bad seat) opened no log: the raw line was on stderr only
                self._open_log(self.state.seat, unread=True)
            self.error(str(exc), safe_reply=reply)
            return reply, None
        reply, request = None, None
        for item in items:
            if isinstance(item, ev.GameStarted):
                self._start_game(item)
            elif isinstance(item, Ready):
                reply = "/ready"
            elif isinstance(item, Closed):
                self.summary.finished = True
            elif isinstance(item, ev.DecisionRequest):
                request = item
            else:
                self.apply(item)
        if request is not None:
            self._check_offer(request, line)
        return reply, request

    def _check_offer(self, request: ev.DecisionRequest, line: str) -> None:
        """An ``/ask`` for a move our rules do not allow with our hand (a ``/ask hu`` we
        cannot win, a ``/ask pong`` without the pair) still gets its safe answer (``/pass``,
        as the brain gives), but it means the server's table and ours differ (a wrong
        ``--honour-order``, a rule of its own, a line we missed): said, not passed silently.
        A table the rules cannot read at all (a hand of no possible size after lines that
        gave us more tiles than a hand holds) is said as such: asked unguarded, the rules
        raised out of the session (a traceback, the tournament line lost)."""
        offered = set(request.offered or ()) - {"discard"}
        if not offered:
            return
        legal, problem = self.brain.checked_legal(self.state, request)
        if problem:
            self.error(f"{line.strip()!r}: {problem}; answered with the safest move")
            return
        if not any(ev.action_kind(a) in offered for a in legal):
            hand = T.to_mpsz(sorted(self.state.hand, key=T.sort_key))
            self.error(f"{line.strip()!r} offers a move our rules do not allow with our "
                       f"hand {hand} (our table may differ from the server's); answered "
                       f"with a pass")

    # ------------------------------------------------------------------ games and events

    def _start_game(self, started: ev.GameStarted) -> None:
        self.finish_game()
        self.summary.games += 1
        self.state = TableState("taiwan16", started.seat)
        self.tally = [0, 0, 0, 0]
        self._open_log(started.seat)
        self.apply(started)

    def _open_log(self, seat: int | None, unread: bool = False) -> None:
        """A game's log; ``unread``: one for lines refused outside any game (no game of the
        session's count: not one serve lists)."""
        if not self.settings.write_log:
            return
        self.unread_log = unread
        name = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.codec.name)
        header = Header(platform="ntpu", variant="taiwan16", seat=seat,
                        policy=self.brain.name,
                        policy_config={"budget": self.settings.budget},
                        game_id=f"{name or 'mjbot'}-g{self.summary.games + unread}-"
                                + ("unread" if unread else "seat"
                                   f"{seat + 1 if seat is not None else 'unknown'}"),
                        extra={"honour_order": list(self.settings.tiles.honour_kinds),
                               "suit_order": self.settings.tiles.suit_order,
                               "name": self.codec.name})
        if not self.open_log(self.settings.log_dir, header):
            self.settings.write_log = False

    def close(self) -> None:
        """The session ends. Over TCP, without ``/close`` (the line dropped, a stop) the game
        in play was cut even between two hands: its log says so (it read as a game played to
        its end). The stdin form's input may end without one (the protocol stops there)."""
        self.ending = True
        super().close()

    def finish_game(self) -> None:
        dropped = (self.ending and (self.close_owed or self.referee_gone is not None)
                   and not self.summary.finished)
        result = self.cut_game({"hands": self.state.hand_count,
                                "errors": self.summary.error_count},
                               cut=self.state.round_active or not self.state.hand_count
                               or dropped)
        # the server sends no scores: ours, for a game played out with every win valued, in
        # the footer (`mjbot view`'s list showed no points or rank for an NTPU game) and in
        # /health's last_game (whose scores and points were null for every NTPU game)
        whole = not result.get("unfinished", False) and not self.unread_log
        scores = tuple(self.tally) if whole and self.tally is not None else ()
        path = self.close_log(Footer(result, scores))
        if path is not None and self.unread_log:
            log.info("ntpu: lines refused outside a game logged", path=str(path), **result)
        elif path is not None:
            log.info("ntpu: game logged", path=str(path), **result)
            self.game_logged(path, scores or None)

    def apply(self, event: Any) -> None:
        if self.game_log is None and self.settings.write_log:
            self._open_log(self.state.seat)  # a server that never says /start
        if isinstance(event, ev.RoundStarted):
            self.summary.hands += 1
        if isinstance(event, ev.RoundWon):
            self._note_value(event)
        super().apply(event)
        if not isinstance(event, ev.PlatformNotice):
            self.before = event

    def _note_value(self, won: ev.RoundWon) -> None:
        """The server sends no value: log what our rules make of the win, ours or another
        seat's (as replay values it from the log), or what kept it from being valued (another
        seat's concealed kong is never shown). The event itself stays as the codec read it,
        so that ``--reparse`` finds the log identical."""
        score, reason = value_win(self.rules, self.state, won, self.before)
        if score is None or self.tally is None:
            self.tally = None  # a win not valued: the game's scores are not known
        else:
            self.tally = [t + d for t, d in zip(self.tally, score.deltas, strict=True)]
        whose = "our win" if won.winner == self.state.seat else f"seat {won.winner}'s win"
        items = " ".join(score.item_texts()) if score is not None else ""
        text = (f"{whose} by mjbot's rules: {score.value} tai{', ' + items if items else ''}"
                + ("" if won.winner == self.state.seat else
                   f"; deltas {list(score.deltas)} (computed by mjbot, not sent by the server)")
                if score is not None
                else f"{whose} could not be valued: {reason}")
        if self.game_log is not None:
            self.game_log.event(ev.PlatformNotice(text))

    # ------------------------------------------------------------------ decisions

    def reply(self, request: ev.DecisionRequest, answer: Answer, line: str) -> str:
        action = answer.action
        # our own turn is asked in steps (/ask hu, /ask gong, then /ask throw): a discard
        # chosen at an earlier step is a pass there (replay and review read it so too)
        if step_pass(request, action):
            action = ev.Pass()
        try:
            return self.codec.encode(action)
        except ValueError as exc:
            reply = self._fallback_reply(list(answer.legal), line)
            self.error(f"cannot reply {action!r}: {exc}", safe_reply=reply)
            return reply

    def _fallback_reply(self, legal: list[Any], line: str) -> str:
        try:
            return self.codec.encode(safest_action(self.state, legal))
        except ValueError:
            return self.codec.safe_reply(line) or "/pass"


# ---------------------------------------------------------------------- transports

Reader = Callable[[], Awaitable[bytes]]
Writer = Callable[[str], Awaitable[None]]


async def run_session(read: Reader, write: Writer, bot: NtpuBot) -> SessionSummary:
    """Answer lines until ``/close`` or the end of the stream."""
    lines = LineBuffer()

    async def read_lines() -> list[str]:
        data = await read()
        if not data:
            batch = lines.close()  # a last unterminated line; the next read ends the session
            if not batch:
                raise EOFError
            return batch
        return lines.feed(data)

    async def urgent(line: str) -> bool:
        reply = bot.keepalive(line)
        if reply is not None:
            await write(reply + "\n")
        return reply is not None

    return await serve_lines(bot, read_lines, write, urgent)


async def run_tcp(host: str, port: int, bot: NtpuBot, connect_timeout: float = 10.0,
                  idle_limit: float | None = None) -> SessionSummary:
    """Connect (retrying while the server is not up yet, for ``connect_timeout`` seconds) and
    play until the server closes. With ``idle_limit``, a server silent that long inside a
    hand (from its deal to its end) is a lost line (``bot.line_lost`` says so), where the
    client waited for it for ever; between hands and before the match silence is no fault.
    None by default: NTPU publishes no time limit of its own."""
    reader, writer = await connect_thinking(bot, host, port, connect_timeout)
    log.info("ntpu: connected", server=f"{host}:{port}")
    bot.close_owed = True

    async def write(text: str) -> None:
        writer.write(text.encode())
        try:
            await writer.drain()
        except OSError as exc:  # a timeout or an unreachable host: the line is gone
            raise dropped_line(exc) from None

    async def read_or_end() -> bytes:
        try:
            return await reader.read(65536)
        except OSError as exc:  # reset, timed out, unreachable: the end of the stream
            log.warning("ntpu: connection lost", error=str(exc) or type(exc).__name__)
            return b""  # (never a TimeoutError out of here: that is the silence's)

    watched = idle_limited(read_or_end, idle_limit, lambda: bot.state.round_active,
                           "in a hand")

    async def read() -> bytes:
        try:
            data: bytes = await watched()
        except SilentLine as exc:
            bot.give_up_line(exc)
            return b""
        return data

    try:
        return await run_session(read, write, bot)
    except ConnectionError as exc:  # a reply met the closed line before a read did: the
        # same dropped line (it ended the command with asyncio's "Connection lost" alone)
        log.warning("ntpu: connection lost", error=str(exc) or type(exc).__name__)
        return bot.summary
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


async def run_stdio(bot: NtpuBot, reply_limit: float | None = REPLY_LIMIT) -> SessionSummary:
    """The original wrapper form: server lines on stdin, replies on stdout, the first taken
    once the session's worker is ready (or after 10 s, said). Stdin is read by a
    daemon thread of its own, from the raw descriptor: a read still blocked when the session
    is stopped holds nothing up (``asyncio.to_thread``'s was waited for at the loop's close,
    so a Ctrl-C while the referee was silent hung until its next line). Replies are written by
    one too (adapter/stdout_thread.py), so that a referee that stops reading holds up no more
    than its reply: one it has not taken within ``reply_limit`` seconds (its pipe full) ends
    the session as a referee that closed our stdout does."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    fd = sys.stdin.fileno()

    def pump() -> None:
        data = b"x"
        while data:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, data)
            except RuntimeError:  # the loop is closed: the session is over
                return

    threading.Thread(target=pump, name="ntpu-stdin", daemon=True).start()
    # the worker started and waited for (up to 10 s) before the first line is taken, as the
    # TCP form does before it connects: the referee's first line is its /ready check, whose
    # answer then says the policy is ready (its start-up allows 30 s), where the worker was
    # started as the lines were read and the match's first decisions fell back (not-ready)
    try:
        await bot.thinker.ready_before_connecting(before="reading its first line")
    except BaseException:  # stopped meanwhile: no session loop is there to close it
        bot.thinker.close()
        raise

    async def read() -> bytes:
        data = await chunks.get()
        if not data:  # the end stays the end: every later read sees it (the pump has gone)
            chunks.put_nowait(b"")
        return data

    out = StdoutWriter(sys.stdout)

    async def write(text: str) -> None:
        try:
            await out.write(text, reply_limit)
        except TimeoutError:  # (an OSError too) its pipe full, and none of it read meanwhile
            raise referee_went_away(bot, f"none taken for {reply_limit:g} s") from None
        except OSError as exc:  # EPIPE: the referee closed its end of our stdout
            raise referee_went_away(bot, exc.strerror or type(exc).__name__) from None

    return await run_session(read, write, bot)


def referee_went_away(bot: NtpuBot, why: str) -> ConnectionError:
    """A reply the stdin form's referee no longer reads (``why``: its end of our stdout
    closed, or nothing taken within the reply limit): noted on ``bot`` (the command exits 1
    saying so; a lost ``/ready`` answer ended the session as its input's end does, exit 0, as
    after a finished match), and stdout pointed at /dev/null, so that the interpreter's last
    flush of the reply still buffered prints no second error."""
    bot.referee_gone = f"the referee went away: it stopped reading our replies (stdout: {why})"
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return ConnectionError(bot.referee_gone)
