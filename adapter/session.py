"""What the NTPU, Tenhou and mjai clients share: the session's counts (for the exit status and
the last log line), connecting to a server that may not be up yet, and asking the brain (on
the event loop through adapter/thinking/thinker.py; synchronously on the stdin forms)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from brain import anytime
from brain.brain import Answer, Brain
from brain.state import StateError, TableState
from protocols import events as ev
from replay.log import GameLogWriter

if TYPE_CHECKING:
    from adapter.thinking.thinker import Thinker


@dataclass
class SessionSummary:
    games: int = 0
    hands: int = 0
    answers: int = 0
    decisions: int = 0
    fallbacks: int = 0
    best_so_far: int = 0  # decisions answered by the policy's best so far at the deadline
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)
    finished: bool = False  # the platform ended the session (/close, the last game's BYE)


def parse_server(text: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--server needs host:port, got {text!r}")
    return host, int(port)


class PendingFrames:
    """Raw frames that come while no game log is open (a login, the line that starts a game):
    kept, and written first into the next game's log, so that a log re-parses from its start."""

    def __init__(self) -> None:
        self._frames: list[tuple[str, str]] = []

    def rx(self, log: GameLogWriter | None, text: str) -> None:
        if log is not None:
            log.rx(text)
        else:
            self._frames.append(("rx", text))

    def tx(self, log: GameLogWriter | None, text: str) -> None:
        if log is not None:
            log.tx(text)
        else:
            self._frames.append(("tx", text))

    def flush_into(self, log: GameLogWriter) -> None:
        for direction, text in self._frames:
            (log.rx if direction == "rx" else log.tx)(text)
        self._frames.clear()


def apply_and_log(state: TableState, event: object, game_log: GameLogWriter | None,
                  on_error: Callable[[str], None]) -> None:
    """A platform's event onto our table and into the game log; a table we can no longer
    follow is reported through ``on_error``, never raised (the session goes on)."""
    try:
        state.apply(event)
    except (StateError, ValueError) as exc:
        on_error(f"table state: {exc}")
    if game_log is not None:
        game_log.event(event)


async def open_connection_retrying(host: str, port: int, timeout: float) \
        -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TCP connection, retried while the server is not up yet, for ``timeout`` seconds;
    ConnectionError naming the address after that."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await asyncio.open_connection(host, port)
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise ConnectionError(f"cannot connect to {host}:{port}: {exc}") from None
            await asyncio.sleep(0.2)


def decide_and_log(brain: Brain, state: TableState, request: ev.DecisionRequest,
                   budget: float, summary: SessionSummary, game_log: GameLogWriter | None,
                   platform: str) -> Answer:
    """The brain's answer to a platform's request within ``budget`` seconds, decided here and
    now (the synchronous stdin forms), counted and logged as :func:`record_answer` says."""
    request = dataclasses.replace(request, deadline=brain.clock.now() + budget)
    return record_answer(brain.decide(state, request), request, summary, game_log, platform)


async def think_and_log(thinker: Thinker, state: TableState, request: ev.DecisionRequest,
                        budget: float, summary: SessionSummary, game_log: GameLogWriter | None,
                        platform: str) -> Answer:
    """The same, awaited: the event loop goes on while the policy thinks."""
    request = dataclasses.replace(request, deadline=thinker.brain.clock.now() + budget)
    answer = await thinker.decide(state, request)
    return record_answer(answer, request, summary, game_log, platform)


def record_answer(answer: Answer, request: ev.DecisionRequest, summary: SessionSummary,
                  game_log: GameLogWriter | None, platform: str) -> Answer:
    """Count the answer in the summary and write its decision frame (what answered, and the
    work behind it); a fallback or a best so far is also told to the log stream."""
    summary.decisions += 1
    logger = structlog.get_logger(f"mjbot.{platform}")
    if answer.source == anytime.BEST_SO_FAR:
        summary.best_so_far += 1
        logger.info(f"{platform}: best so far played", reason=answer.fallback, work=answer.work)
    elif answer.fallback:
        summary.fallbacks += 1
        logger.warning(f"{platform}: fallback", reason=answer.fallback, source=answer.source)
    if game_log is not None:
        game_log.decision(request, answer.legal, answer.action, answer.policy,
                          answer.candidates, answer.elapsed, answer.fallback,
                          source=answer.source, work=answer.work)
    return answer
