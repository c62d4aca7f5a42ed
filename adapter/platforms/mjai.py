"""mjai bot: ``mjbot mjai`` on stdin/stdout (the mjai.app form) or as a TCP client of an mjai
server (``--server host:port``).

mjai.app writes one JSON array per line, the events since our last answer, and wants one
answer object per line within 2 s; the original server says ``hello``, takes ``join`` and then
sends one event per line, each answered. Either way the events build our table, the last one of
a message is the one to answer, and the brain answers it within the budget (with its fallback).
A message we cannot read is logged with the reason and answered ``{"type": "none"}`` (or, on our
own draw, with a discard of the drawn tile). Every game is logged.

The TCP client reads all the time (adapter/thinking/inbox.py) and awaits its decisions (a slow
policy thinks in a worker process, adapter/thinking/thinker.py), so its event loop stays free while
the policy thinks; mjai has no keep-alive, and a line that comes meanwhile waits its turn. The stdin
form stays synchronous.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from adapter.logging_setup import get_logger
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
from brain.brain import Answer as BrainAnswer
from brain.brain import Brain, safest_action
from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError, load_json
from protocols.mjai import NONE, Answer, Hello, MjaiCodec
from replay.formats.mjai_log import score_detail, value_own_win
from replay.log import Footer, Header

log = get_logger("mjbot.mjai")

DEFAULT_BUDGET = 1.5  # mjai.app allows 2 s per answer
# The original TCP server gives each player 60 s per answer and sends every event to all four,
# each answered before the next: in a game it is never silent much longer than that. Silence
# for three times as long is a server (or a line) that died without closing the connection.
IDLE_LIMIT = 180.0
# the stdin form: seconds an answer may wait for the referee to take it (only where the pipe
# is full): mjai.app's own limit on an answer; one not taken by then is late there anyway
REPLY_LIMIT = 2.0


@dataclass
class MjaiSettings:
    policy: str = "rulebased"
    budget: float = DEFAULT_BUDGET
    name: str = "mjbot"
    room: str = "default"
    log_dir: str | None = None
    write_log: bool = True
    # the seat we were started as (mjai.app's argument, `bot.py SEAT`), None where none was
    # given: our seat until a start_game says it. start_game's ``id`` wins where they differ
    # (the protocol's "my seat", sent in the stream whose hands and draws are masked for it,
    # as mjai.app's own Bot base class takes it); mjai.app sends the two equal
    seat: int | None = None


class MjaiBot(CodecSession):
    """One session (adapter/session.py runs the loop): ``handle(line)`` (or, the decision
    awaited, ``handle_async(line)``) takes one input line, the events of one message or of
    an array of them, and returns our answer line (JSON, no newline)."""

    codec: MjaiCodec
    error_event = "bad input"

    def __init__(self, settings: MjaiSettings | None = None) -> None:
        self.settings = settings or MjaiSettings()
        super().__init__(MjaiCodec(self.settings.seat or 0),
                         Brain("riichi", self.settings.policy, limit=self.settings.budget),
                         self.settings.budget)
        self.seat_told = False  # the start_game id that differs from our argument, said once
        self.server_error: str | None = None  # the server's last ``error`` message, if any
        self.rules = rules_for("riichi")
        self.before: Any = None  # the table event before the next (robbing an added kan)

    def take(self, line: str) -> tuple[str | None, ev.DecisionRequest | None]:
        try:
            messages = parse_line(line)
        except json.JSONDecodeError as exc:
            self.pending.rx(self.game_log, line)  # the game log keeps what could not be read
            self.error(f"not JSON ({exc.msg}): {line[:200]!r}")
            return None, None  # answered "none" by send, as no answer of ours
        due = self._take(messages, line)
        if isinstance(due, ev.DecisionRequest):
            return None, due
        return json.dumps(self._reply(due), ensure_ascii=False), None

    def reply(self, request: ev.DecisionRequest, answer: BrainAnswer, raw: str) -> str:
        return json.dumps(self._encode(request, answer), ensure_ascii=False)

    def send(self, reply: str | None) -> str:
        """Every line is answered, and every answer counted and logged: ``none`` to a line
        that is not JSON (its error counted too, by :meth:`take`), else our answer."""
        if reply is None:
            reply = json.dumps(NONE)
        self.summary.answers += 1
        if self.game_log is not None:
            self.game_log.tx(reply)
        return reply

    def _take(self, messages: list[Any], raw: str) -> Any:
        """The messages read into the table; what the last one asks (a request, an answer,
        a hello, an unreadable message's safe answer, or None)."""
        self.pending.rx(self.game_log, raw or json.dumps(messages, ensure_ascii=False))
        due: Any = None
        for message in messages:
            due = None
            if isinstance(message, dict) and message.get("type") == "error":
                self._server_error(message)
            try:
                items = self.codec.feed(message)
            except ProtocolError as exc:
                self.error(str(exc))
                due = self._unreadable(message)
                continue
            for item in items:
                if isinstance(item, ev.GameStarted):
                    self._start_game(item)
                    self.apply(item)
                elif isinstance(item, ev.DecisionRequest | Answer | Hello):
                    due = item
                else:
                    self.apply(item)
                    if isinstance(item, ev.GameEnded):
                        self._end_game()
                        self.summary.finished = True
        return due

    def apply(self, event: Any) -> None:
        if isinstance(event, ev.RoundWon) and event.winner == self.state.seat \
                and event.value == 0:
            self._note_our_value(event)
        super().apply(event)
        if not isinstance(event, ev.PlatformNotice):
            self.before = event

    def _note_our_value(self, won: ev.RoundWon) -> None:
        """mjai.app and Mortal send a win's deltas but not its value: log what our rules make
        of our own win (as replay values it from the log), marked as ours. The event stays
        as the codec read it, so that ``--reparse`` finds the log identical."""
        score, _, reason = value_own_win(self.rules, self.state, won, self.before)
        if score is None:
            text = f"our win could not be valued: {reason}"
        else:
            items = " ".join(f"{n}({v})" for n, v in score.items)
            detail = score_detail(score)
            text = (f"our win by mjbot's rules: {score.value} han"
                    f"{', ' + detail if detail else ''}, {items}; deltas {list(score.deltas)} "
                    f"(computed by mjbot, not sent by mjai; the logged deltas are mjai's)")
        if self.game_log is not None:
            self.game_log.event(ev.PlatformNotice(text))

    def _server_error(self, message: dict[str, Any]) -> None:
        """The original server says ``error`` when it rejects an answer of ours (or a join),
        then ends the game: told on the log stream, and kept for the session's last line
        (only the game log held it, and the user read no more than that the line dropped)."""
        text = message.get("message")
        self.server_error = (str(text) if text is not None else
                             json.dumps(message, ensure_ascii=False))[:300]
        self.log.error("mjai: the server reported an error", message=self.server_error)

    def _reply(self, due: Any) -> dict[str, Any]:
        if isinstance(due, Hello):
            return {"type": "join", "name": self.settings.name, "room": self.settings.room}
        if isinstance(due, Answer):
            return due.message
        if isinstance(due, dict):  # an unreadable message's safe answer
            return due
        return dict(NONE)

    def _unreadable(self, message: Any) -> dict[str, Any]:
        """Our own draw that we could not read still owes a discard: the drawn tile if it can
        be read, else the safest tile we hold."""
        if isinstance(message, dict) and message.get("type") == "tsumo" \
                and message.get("actor") == self.codec.seat and self.state.hand:
            try:
                tile = T.from_mjai(str(message.get("pai")))
            except T.TileError:
                tile = None
            legal = [ev.Discard(t) for t in dict.fromkeys(self.state.hand)]
            choice = ev.Discard(tile) if tile in self.state.hand else safest_action(self.state,
                                                                                     legal)
            return self.codec.discard(choice.tile)
        return dict(NONE)

    # ------------------------------------------------------------------ games

    def _start_game(self, started: ev.GameStarted) -> None:
        self.finish_game()
        given = self.settings.seat
        if given is not None and started.seat != given and not self.seat_told:
            # taken in silence, a stream of another seat's view (or an argument typed wrong)
            # left the user to guess why the bot played a seat it was not started as
            self.seat_told = True
            self.log.warning(f"mjai: start_game says our seat is {started.seat}, but we were "
                             f"started as seat {given}: playing seat {started.seat}, as "
                             "start_game says (mjai.app sends the two equal)")
        self.state = TableState("riichi", started.seat)
        self.summary.games += 1
        if not self.settings.write_log:
            return
        header = Header(platform="mjai", variant="riichi", seat=started.seat,
                        policy=self.brain.name, policy_config={"budget": self.settings.budget},
                        game_id=f"{self.settings.name}-seat{started.seat}")
        self.open_log(self.settings.log_dir, header)

    def _end_game(self) -> None:
        self.finish_game(tuple(self.state.scores))

    def finish_game(self, scores: tuple[int, ...] = ()) -> None:
        result = self.cut_game({"errors": self.summary.error_count},
                               cut=not self.state.game_over)
        path = self.close_log(Footer(result, scores))
        if path is not None:
            self.game_logged(path, scores)

    # ------------------------------------------------------------------ decisions

    def _encode(self, request: ev.DecisionRequest, answer: BrainAnswer) -> dict[str, Any]:
        action = answer.action
        try:
            return self.codec.answer_object(action, request)
        except ValueError as exc:
            self.error(f"cannot answer {action!r}: {exc}")
            return self._unreadable({"type": "tsumo", "actor": self.codec.seat,
                                     "pai": T.to_mjai(self.state.last_draw)}) \
                if request.kind == "turn" else dict(NONE)


def parse_line(line: str) -> list[Any]:
    """One input line: a JSON array of events (mjai.app) or a single event object."""
    value = load_json(line)
    return value if isinstance(value, list) else [value]


# ---------------------------------------------------------------------- transports


def reply_line(bot: MjaiBot, line: str) -> str:
    """One input line (an array of events, or one event) -> our answer line."""
    return f"{bot.handle(line)}\n"


async def reply_line_async(bot: MjaiBot, line: str) -> str:
    """The same, the decision awaited."""
    return f"{await bot.handle_async(line)}\n"


LINE_LIMIT = 2 ** 16  # bytes of one line kept (asyncio's default limit); no event is near it
# bytes of one stdin line kept: more than TCP's, since the stdin form logs a bad line whole (a
# 200 KB one is kept), and mjai.app's largest line (a hand's events) is a few KB
STDIN_LINE_LIMIT = 2 ** 20


async def read_line(reader: asyncio.StreamReader) -> tuple[bytes, int]:
    """The next line (the last one may lack its newline) and 0, or, for a line over
    :data:`LINE_LIMIT`, its first bytes and its length (the rest is read and dropped, so that
    the next line starts where the server's next line does). EOFError at the end."""
    try:
        return await reader.readuntil(b"\n"), 0
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise EOFError from None
        return exc.partial, 0
    except asyncio.LimitOverrunError as exc:
        kept = await reader.readexactly(min(exc.consumed, LINE_LIMIT))
        size = len(kept)
        while True:  # the rest of the line, a buffer at a time, up to its newline
            try:
                size += len(await reader.readuntil(b"\n"))
                return kept, size
            except asyncio.IncompleteReadError as end:
                return kept, size + len(end.partial)
            except asyncio.LimitOverrunError as more:
                size += len(await reader.readexactly(more.consumed))


def _text_lines(stream: Any) -> Iterator[tuple[str, int]]:
    """The input's lines, each with its length where it was cut (0 otherwise): bytes that are
    not UTF-8 as U+FFFD (under a strict locale (en_US.UTF-8) the text stream's own decoder
    raised on them and ended the bot), and a line over :data:`STDIN_LINE_LIMIT` bytes kept
    as its first bytes, the rest read and dropped (a writer that never ends its line grew the bot's
    memory until the kernel killed it, where the TCP form already cut it)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        for line in stream:
            yield line, 0
        return
    while raw := buffer.readline(STDIN_LINE_LIMIT + 1):
        cut = 0
        if len(raw) > STDIN_LINE_LIMIT and not raw.endswith(b"\n"):
            cut = len(raw)
            while (rest := buffer.readline(STDIN_LINE_LIMIT)) and not rest.endswith(b"\n"):
                cut += len(rest)
            cut += len(rest)
            raw = raw[:STDIN_LINE_LIMIT]
        yield raw.decode("utf-8", errors="replace"), cut


class RefereeGone(ConnectionError):
    """The stdin form's referee took none of an answer within the reply limit: it stopped
    reading without closing our stdout (a stalled harness, a full pipe)."""


def run_stdio(bot: MjaiBot, stdin: Any = None, stdout: Any = None,
              reply_limit: float | None = REPLY_LIMIT) -> SessionSummary:
    """mjai.app: a line of events in, one answer line out, until the input ends. An answer
    is written by a thread (adapter/stdout_thread.py) and waited for up to ``reply_limit``
    seconds: a referee that has not taken it by then (its pipe full: 64 KiB of our answers
    unread) raises :class:`RefereeGone`, where the write blocked for ever (the game log
    closed as unfinished, as at any end)."""
    stdin = stdin or sys.stdin
    out = StdoutWriter(stdout or sys.stdout)
    try:
        for line, cut in _text_lines(stdin):
            if cut:
                bot.error(f"a line of {cut} bytes, over the {STDIN_LINE_LIMIT}-byte limit: "
                          f"read as its first {STDIN_LINE_LIMIT} bytes")
            if line.strip():
                try:
                    out.write_now(reply_line(bot, line.rstrip("\n")), reply_limit)
                except TimeoutError as exc:  # an OSError (EPIPE among them) otherwise
                    raise RefereeGone("the referee went away: it stopped reading our "
                                      f"answers (stdout: {exc})") from None
    finally:
        bot.close()
    return bot.summary


async def run_tcp(host: str, port: int, bot: MjaiBot, connect_timeout: float = 10.0,
                  idle_limit: float | None = IDLE_LIMIT) -> SessionSummary:
    """The original mjai server: hello -> join, then one event per line, each answered. In a
    game, a server silent for ``idle_limit`` seconds is a lost line (``bot.line_lost`` says
    so): the client waited for it for ever. Before the game (players still joining) it may
    be silent as long as it likes."""
    reader, writer = await connect_thinking(bot, host, port, connect_timeout)

    async def read_or_drop() -> tuple[bytes, int]:
        try:
            return await read_line(reader)
        except OSError as exc:  # reset, timed out, unreachable: the line is gone
            raise dropped_line(exc) from None  # (never a TimeoutError: that is the silence's)

    watched = idle_limited(read_or_drop, idle_limit, lambda: bool(bot.summary.games),
                           "in a game")

    async def read() -> list[str]:
        try:
            line, cut = await watched()
        except SilentLine as exc:
            bot.give_up_line(exc)
            raise
        if cut:
            bot.error(f"a line of {cut} bytes, over the {LINE_LIMIT}-byte limit: read as "
                      f"its first {LINE_LIMIT} bytes")
        text = line.decode("utf-8", errors="replace").strip()
        return [text] if text else []

    async def write(text: str) -> None:
        writer.write(text.encode())
        try:
            await writer.drain()
        except OSError as exc:
            raise dropped_line(exc) from None

    try:
        return await serve_lines(bot, read, write)
    except ConnectionError:
        return bot.summary
    finally:
        writer.close()
