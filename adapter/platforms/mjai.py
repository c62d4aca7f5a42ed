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

import json
import sys
from dataclasses import dataclass
from typing import Any

import structlog

from adapter.session import (
    PendingFrames,
    SessionSummary,
    apply_and_log,
    decide_and_log,
    open_connection_retrying,
    think_and_log,
)
from adapter.thinking.inbox import Inbox
from adapter.thinking.thinker import Thinker
from brain.brain import Answer as BrainAnswer
from brain.brain import Brain, safest_action
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError
from protocols.mjai import NONE, Answer, Hello, MjaiCodec
from replay.log import Footer, GameLogWriter, Header

log = structlog.get_logger("mjbot.mjai")

DEFAULT_BUDGET = 1.5  # mjai.app allows 2 s per answer


@dataclass
class MjaiSettings:
    policy: str = "rulebased"
    budget: float = DEFAULT_BUDGET
    name: str = "mjbot"
    room: str = "default"
    log_dir: str | None = None
    write_log: bool = True


class MjaiBot:
    """``answer(messages)``: the events of one input line in, our answer object out
    (``answer_async`` awaits the decision)."""

    def __init__(self, settings: MjaiSettings | None = None) -> None:
        self.settings = settings or MjaiSettings()
        self.codec = MjaiCodec()
        self.brain = Brain("riichi", self.settings.policy, limit=self.settings.budget)
        self.thinker = Thinker(self.brain)
        self.state = TableState("riichi")
        self.game_log: GameLogWriter | None = None
        self.summary = SessionSummary()
        self.pending = PendingFrames()  # a start_game opens the log: its line goes in first

    def answer(self, messages: list[Any], raw: str = "") -> dict[str, Any]:
        due = self._take(messages, raw)
        if isinstance(due, ev.DecisionRequest):
            answer = decide_and_log(self.brain, self.state, due, self.settings.budget,
                                    self.summary, self.game_log, "mjai")
            return self._sent(self._encode(due, answer))
        return self._sent(self._reply(due))

    async def answer_async(self, messages: list[Any], raw: str = "") -> dict[str, Any]:
        due = self._take(messages, raw)
        if isinstance(due, ev.DecisionRequest):
            answer = await think_and_log(self.thinker, self.state, due, self.settings.budget,
                                         self.summary, self.game_log, "mjai")
            return self._sent(self._encode(due, answer))
        return self._sent(self._reply(due))

    def _take(self, messages: list[Any], raw: str) -> Any:
        """The messages read into the table; what the last one asks (a request, an answer,
        a hello, an unreadable message's safe answer, or None)."""
        self.pending.rx(self.game_log, raw or json.dumps(messages, ensure_ascii=False))
        due: Any = None
        for message in messages:
            due = None
            try:
                items = self.codec.feed(message)
            except ProtocolError as exc:
                self._error(str(exc))
                due = self._unreadable(message)
                continue
            for item in items:
                if isinstance(item, ev.GameStarted):
                    self._start_game(item)
                    self._apply(item)
                elif isinstance(item, ev.DecisionRequest | Answer | Hello):
                    due = item
                else:
                    self._apply(item)
                    if isinstance(item, ev.GameEnded):
                        self._end_game()
                        self.summary.finished = True
        return due

    def _sent(self, reply: dict[str, Any]) -> dict[str, Any]:
        self.summary.answers += 1
        if self.game_log is not None:
            self.game_log.tx(json.dumps(reply, ensure_ascii=False))
        return reply

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

    def _error(self, message: str) -> None:
        self.summary.errors.append(message)
        log.error("mjai: bad input", error=message)
        if self.game_log is not None:
            self.game_log.event(ev.PlatformNotice(f"error: {message}"))

    # ------------------------------------------------------------------ games

    def _start_game(self, started: ev.GameStarted) -> None:
        self._close_log()
        self.state = TableState("riichi", started.seat)
        self.summary.games += 1
        if not self.settings.write_log:
            return
        header = Header(platform="mjai", variant="riichi", seat=started.seat,
                        policy=self.brain.name, policy_config={"budget": self.settings.budget},
                        game_id=f"{self.settings.name}-seat{started.seat}")
        try:
            self.game_log = GameLogWriter.create(self.settings.log_dir, header)
        except OSError as exc:
            log.error("mjai: game log unavailable", error=str(exc))
            return
        self.pending.flush_into(self.game_log)

    def _apply(self, event: Any) -> None:
        apply_and_log(self.state, event, self.game_log, self._error)

    def _end_game(self) -> None:
        self._close_log(tuple(self.state.scores))

    def _close_log(self, scores: tuple[int, ...] = ()) -> None:
        if self.game_log is not None:
            self.game_log.close(Footer({"errors": len(self.summary.errors)}, scores))
            self.game_log = None

    # ------------------------------------------------------------------ decisions

    def _encode(self, request: ev.DecisionRequest, answer: BrainAnswer) -> dict[str, Any]:
        action = answer.action
        try:
            return self.codec.answer_object(action, request)
        except ValueError as exc:
            self._error(f"cannot answer {action!r}: {exc}")
            return self._unreadable({"type": "tsumo", "actor": self.codec.seat,
                                     "pai": T.to_mjai(self.state.last_draw)}) \
                if request.kind == "turn" else dict(NONE)

    def close(self) -> None:
        self._close_log()
        self.thinker.close()
        self.brain.close()


def parse_line(line: str) -> list[Any]:
    """One input line: a JSON array of events (mjai.app) or a single event object."""
    value = json.loads(line)
    return value if isinstance(value, list) else [value]


# ---------------------------------------------------------------------- transports


def reply_line(bot: MjaiBot, line: str) -> str:
    """One input line (an array of events, or one event) -> our answer line."""
    messages = _messages(bot, line)
    reply = bot.answer(messages, line) if messages is not None else dict(NONE)
    return json.dumps(reply, ensure_ascii=False) + "\n"


async def reply_line_async(bot: MjaiBot, line: str) -> str:
    """The same, the decision awaited."""
    messages = _messages(bot, line)
    reply = await bot.answer_async(messages, line) if messages is not None else dict(NONE)
    return json.dumps(reply, ensure_ascii=False) + "\n"


def _messages(bot: MjaiBot, line: str) -> list[Any] | None:
    try:
        return parse_line(line)
    except json.JSONDecodeError as exc:
        bot._error(f"not JSON ({exc.msg}): {line[:200]!r}")
        return None


def run_stdio(bot: MjaiBot, stdin: Any = None, stdout: Any = None) -> SessionSummary:
    """mjai.app: a line of events in, one answer line out, until the input ends."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        for line in stdin:
            if line.strip():
                stdout.write(reply_line(bot, line.rstrip("\n")))
                stdout.flush()
    finally:
        bot.close()
    return bot.summary


async def run_tcp(host: str, port: int, bot: MjaiBot, connect_timeout: float = 10.0) \
        -> SessionSummary:
    """The original mjai server: hello -> join, then one event per line, each answered."""
    reader, writer = await open_connection_retrying(host, port, connect_timeout)

    async def read() -> list[str]:
        line = await reader.readline()
        if not line:
            raise EOFError
        text = line.decode("utf-8", errors="replace").strip()
        return [text] if text else []

    bot.thinker.warm()
    try:
        async with Inbox(read) as inbox:
            while not bot.summary.finished:
                try:
                    text = await inbox.get()
                except (EOFError, ConnectionError):
                    break
                writer.write((await reply_line_async(bot, text)).encode())
                await writer.drain()
    except ConnectionError:
        pass
    finally:
        bot.close()
        writer.close()
    return bot.summary
