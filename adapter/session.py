"""The session loop the line-based platforms share (:class:`CodecSession`:
read -> ``codec.feed`` -> events into the table and the game log -> brain -> ``codec.encode``
-> write), the transport loop around it (:func:`serve_lines`), and what the NTPU, Tenhou and
mjai clients share: the session's counts (for the exit status and the last log line),
connecting to a server that may not be up yet, and asking the brain (on the event loop
through adapter/thinking/thinker.py; synchronously on the stdin forms)."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter.logging_setup import get_logger
from adapter.loop_signals import on_signal
from adapter.thinking.inbox import Inbox
from adapter.thinking.thinker import Thinker
from brain import anytime
from brain.brain import Answer, Brain
from brain.state import StateError, TableState
from brain.tally import FallbackKind
from protocols import events as ev
from protocols.codec import Codec
from replay.log import Footer, GameLogWriter, Header


@dataclass
class SessionSummary:
    games: int = 0
    hands: int = 0
    answers: int = 0
    decisions: int = 0
    fallbacks: int = 0
    best_so_far: int = 0  # decisions answered by the policy's best so far at the deadline
    # the fallbacks and best-so-far answers by kind (FallbackKind's value): the clock's
    # (not-ready, late) apart from the policy's failing (failed, illegal) and the table's
    kinds: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0
    # the first KEPT_ERRORS errors; ``errors_more`` counts the rest (a server that sends
    # nothing but junk would grow the list for as long as the line stays up)
    errors: list[str] = field(default_factory=list)
    errors_more: int = 0
    finished: bool = False  # the platform ended the session (/close, the last game's BYE)

    @property
    def error_count(self) -> int:
        return len(self.errors) + self.errors_more


KEPT_ERRORS = 100  # error messages a session keeps (SessionSummary.errors)
LOGGED_ERRORS = 20  # errors a session logs one line each; past them, one line ERROR_LINE_EVERY
ERROR_LINE_EVERY = 60.0  # seconds, with the count since the last line


class Stopped(BaseException):
    """The session was stopped by a signal (SIGINT, SIGTERM); ``signum`` is its number. A
    BaseException, as KeyboardInterrupt is: raised by a signal handler in the middle of a
    decision, it must not be taken for a policy's failure by the ``except Exception`` that
    turns those into fallbacks (the stdin form then played on)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.note = ""  # what the session did on the way out, for the closing line

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__("SIGTERM")
        return type(self), (self.signum,), self.__dict__


async def until_signalled(session: PlatformSession,
                          main: Coroutine[Any, Any, SessionSummary]) -> SessionSummary:
    """``main`` (the session's transport loop), stopped by SIGINT or SIGTERM: the session is
    told (the game it is in is logged as stopped) and ``main`` cancelled, so that its game log
    is closed with its footer; :class:`Stopped` is raised then. Without this SIGTERM ended the
    process where it stood (a log without its footer)."""
    task = asyncio.ensure_future(main)
    caught: list[int] = []

    def stop(signum: int) -> None:
        caught.append(signum)
        session.stop_requested = True
        task.cancel()

    # on_signal: Windows' loop has no add_signal_handler, and with none Ctrl-C cancelled the
    # session without telling it (its game log did not say it was stopped)
    undo = [on_signal(sig, stop, sig) for sig in (signal.SIGINT, signal.SIGTERM)]
    try:
        return await task
    except asyncio.CancelledError:
        if caught:
            raise Stopped(caught[0]) from None
        raise
    finally:
        for each in undo:
            each()


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
    ConnectionError naming the address after that. Each attempt is bounded by what is left:
    a server that drops our SYNs (a black-holed address, a firewall, a full accept queue)
    held one attempt for the kernel's two minutes, far past ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        limit = max(0.1, deadline - time.monotonic())
        try:
            async with asyncio.timeout(limit):
                return await asyncio.open_connection(host, port)
        except OSError as exc:  # TimeoutError too
            if time.monotonic() >= deadline:
                why = exc if str(exc) else f"no answer in {timeout:g} s"
                raise ConnectionError(f"cannot connect to {host}:{port}: {why}") from None
            await asyncio.sleep(0.2)


async def connect_thinking(session: PlatformSession, host: str, port: int, timeout: float) \
        -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The session's worker process started and waited for (Thinker.ready_before_connecting:
    the first decision may come moments after the connection), then the connection
    (:func:`open_connection_retrying`). A session that never connects has its worker killed:
    a line-based session closes itself only once it serves lines."""
    try:
        await session.thinker.ready_before_connecting()
        return await open_connection_retrying(host, port, timeout)
    except BaseException:
        session.thinker.close()
        raise


class SilentLine(ConnectionError):
    """The server sent nothing for the idle limit while it owed us lines (in a game)."""


def idle_limited(read: Callable[[], Awaitable[Any]], limit: float | None,
                 armed: Callable[[], bool], what: str) -> Callable[[], Awaitable[Any]]:
    """``read`` that raises :class:`SilentLine` ("the server sent nothing for LIMIT s WHAT")
    once the server has been silent for ``limit`` seconds while ``armed()`` (a game or a
    hand is on). The lines are read ahead of the session's taking them (serve_lines'
    inbox), so ``armed`` is asked again at every limit's end while a read waits, not once
    at its start: a read begun just before the deal was processed waited for ever."""
    if limit is None:
        return read
    heard = [time.monotonic()]  # when the server last sent something

    async def limited() -> Any:
        reading = asyncio.ensure_future(read())
        try:
            while not (await asyncio.wait({reading}, timeout=limit))[0]:
                if armed() and time.monotonic() - heard[0] >= limit:
                    raise SilentLine(f"the server sent nothing for {limit:g} s {what}")
        finally:
            reading.cancel()
        heard[0] = time.monotonic()
        return reading.result()

    return limited


def dropped_line(exc: OSError) -> ConnectionError:
    """A socket error on an open line (a reset, a timeout, an unreachable host: OSErrors
    that are not all ConnectionErrors) as the dropped line it is, so that a client ends or
    reconnects as it does when the peer closes; a ConnectionError is itself already."""
    return exc if isinstance(exc, ConnectionError) else ConnectionError(
        f"the connection failed: {exc}")


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
    logger = get_logger(f"mjbot.{platform}")
    kind = answer.kind.value
    if answer.kind is not FallbackKind.NONE:
        summary.kinds[kind] = summary.kinds.get(kind, 0) + 1
    if answer.source == anytime.BEST_SO_FAR:
        summary.best_so_far += 1
        logger.info(f"{platform}: best so far played", reason=answer.fallback, kind=kind,
                    work=answer.work)
    elif answer.kind is not FallbackKind.NONE:
        summary.fallbacks += 1
        logger.warning(f"{platform}: fallback", reason=answer.fallback, kind=kind,
                       source=answer.source)
    if game_log is not None:
        game_log.decision(request, answer.legal, answer.action, answer.policy,
                          answer.candidates, answer.elapsed, answer.fallback,
                          source=answer.source, work=answer.work, fallback_kind=kind)
    return answer


class PlatformSession:
    """What every platform session keeps for one connection and one bot identity: the
    codec, our table, the brain (and the thinker that awaits it), the game log with the
    frames pending until it opens, and the counts; and the steps every session takes: an
    error reported, an event applied, a game log opened, the session closed.

    :class:`CodecSession` adds the loop of the line-based platforms; Tenhou (a login, tags
    several to a reply, keep-alive ticks and reconnects) drives these steps from its own."""

    error_event = "bad server input"  # how the log stream names unreadable input

    def __init__(self, codec: Codec, brain: Brain, budget: float) -> None:
        self.codec = codec
        self.platform = codec.platform
        self.brain = brain
        self.budget = budget
        self.thinker = Thinker(brain)
        self.state = TableState(codec.variant)
        self.game_log: GameLogWriter | None = None
        self.summary = SessionSummary()
        self.pending = PendingFrames()  # frames before a game log opens go in first
        self.log = get_logger(f"mjbot.{self.platform}")
        self.stop_requested = False  # a stop (a signal, serve's) came: a game it cuts says so
        self.finished_games: list[dict[str, Any]] = []  # see game_logged
        self.line_lost: str | None = None  # why we gave the line up (SilentLine), if we did
        self._unlogged_errors = 0  # errors past LOGGED_ERRORS since the last line said them
        self._next_error_line = 0.0  # time.monotonic() of the next such line

    def give_up_line(self, silence: SilentLine) -> None:
        """The server fell silent past the idle limit: the line is given up, and said so."""
        self.line_lost = str(silence)
        self.log.warning(f"{self.platform}: line given up", reason=self.line_lost)

    def how_the_line_ended(self) -> str:
        """For a session's last line: the silence we gave up on, or the server's close."""
        return (f"{self.line_lost}; the line was given up" if self.line_lost
                else "the server closed the connection")

    def game_logged(self, path: Path | None, scores: Any = None) -> None:
        """A game whose log was closed at ``path``, as it was then: what the serve process
        lists among its results (the table it reads may be the next game's by the time it
        looks, and it knows no log path otherwise)."""
        self.finished_games.append({"log": str(path) if path is not None else None,
                                    "scores": list(scores) if scores else None,
                                    "seat": self.state.seat, "hands": self.state.hand_count})

    def cut_game(self, result: dict[str, Any], cut: bool) -> dict[str, Any]:
        """A game log's footer ``result`` for a game that may not have reached its end: one
        that did not (``cut``: the session ended inside it, on a stop or a lost line) says so,
        as ``mjbot replay`` reads it (``unfinished``, and ``stopped`` on a signal)."""
        if cut:
            result["unfinished"] = True
            if self.stop_requested:
                result["stopped"] = True
        return result

    # ------------------------------------------------------------------ shared steps

    def error(self, message: str, **context: Any) -> None:
        """Input we could not read (or a table we cannot follow): counted, logged with the
        reason, and noted in the game log; the session goes on. The first LOGGED_ERRORS are
        a line each; past them, one line a minute says the last with the count since (a
        server sending 100,000 bad tags in 6 s was 100,000 lines, and as many messages
        kept)."""
        summary = self.summary
        if len(summary.errors) < KEPT_ERRORS:
            summary.errors.append(message)
        else:
            summary.errors_more += 1
        event = f"{self.platform}: {self.error_event}"
        if summary.error_count <= LOGGED_ERRORS:
            self.log.error(event, error=message, **context)
        else:
            self._unlogged_errors += 1
            now = time.monotonic()
            if now >= self._next_error_line:
                self.log.error(f"{event} (past {LOGGED_ERRORS}, one line a minute: the last, "
                               "and how many since the last line)", error=message,
                               count=self._unlogged_errors, total=summary.error_count,
                               **context)
                self._unlogged_errors = 0
                self._next_error_line = now + ERROR_LINE_EVERY
        if self.game_log is not None:
            self.game_log.event(ev.PlatformNotice(f"error: {message}"))

    def apply(self, event: Any) -> None:
        apply_and_log(self.state, event, self.game_log, self.error)

    def open_log(self, log_dir: str | None, header: Header, **options: Any) -> bool:
        """A new game log (``options`` as GameLogWriter.create takes them), the pending frames
        written first; False (logged) if it cannot be created: the game goes on without."""
        try:
            self.game_log = GameLogWriter.create(log_dir, header, on_failure=self._log_failed,
                                                 **options)
        except OSError as exc:
            self.log.error(f"{self.platform}: game log unavailable", error=str(exc))
            return False
        self.pending.flush_into(self.game_log)
        return True

    def _log_failed(self, exc: OSError) -> None:
        """A game log write failed (a full disk): said once; the game goes on without it."""
        self.log.error(f"{self.platform}: game log write failed; the game goes on without it",
                       error=str(exc))

    def finish_game(self) -> None:
        """The game (or the session) ends: each platform closes its log with its own footer
        through :meth:`close_log`."""

    def close_log(self, footer: Footer) -> Path | None:
        """Close the open game log with ``footer``; its path, or None when none was open."""
        if self.game_log is None:
            return None
        path = self.game_log.path
        self.game_log.close(footer)
        self.game_log = None
        return path

    def close(self) -> None:
        self.finish_game()
        self.thinker.close()
        self.brain.close()
        if self._unlogged_errors:  # the errors since the last of error()'s minute lines
            self.log.error(f"{self.platform}: {self.error_event} (past {LOGGED_ERRORS}: how "
                           "many since the last line, as the session ends)",
                           count=self._unlogged_errors, total=self.summary.error_count)
            self._unlogged_errors = 0


class CodecSession(PlatformSession):
    """The session loop of the line-based platforms: :meth:`handle` (or, the decision
    awaited, :meth:`handle_async`) takes one framed message and returns the reply line owed
    to it, or None: read -> ``codec.feed`` -> events into the table and the game log ->
    brain -> ``codec.encode`` -> write.

    A platform's session says only what differs: :meth:`take` (the message read into the
    table: a reply owed without a decision, or the request to decide), :meth:`reply` (the
    decision as a reply line, with its fallback), and what it does on its own (keep-alives,
    game boundaries, the log header)."""

    # ------------------------------------------------------------------ the loop

    def handle(self, raw: str) -> str | None:
        reply, request = self.take(raw)
        if request is not None:
            reply = self.reply(request, decide_and_log(
                self.brain, self.state, request, self.budget, self.summary, self.game_log,
                self.platform), raw)
        return self.send(reply)

    async def handle_async(self, raw: str) -> str | None:
        reply, request = self.take(raw)
        if request is not None:
            reply = self.reply(request, await think_and_log(
                self.thinker, self.state, request, self.budget, self.summary, self.game_log,
                self.platform), raw)
        return self.send(reply)

    def take(self, raw: str) -> tuple[str | None, ev.DecisionRequest | None]:
        """``raw`` read into the table: the reply owed that needs no decision, or the
        request to decide (never both)."""
        raise NotImplementedError

    def reply(self, request: ev.DecisionRequest, answer: Answer, raw: str) -> str:
        """The brain's answer to ``request`` (asked by ``raw``) as the reply line."""
        raise NotImplementedError

    def send(self, reply: str | None) -> str | None:
        """A reply on its way out: into the game log (or pending until one opens)."""
        if reply is not None:
            self.pending.tx(self.game_log, reply)
        return reply


async def serve_lines(session: CodecSession, read: Callable[[], Awaitable[list[str]]],
                      write: Callable[[str], Awaitable[None]],
                      urgent: Callable[[str], Awaitable[bool]] | None = None) -> SessionSummary:
    """The transport loop: lines from ``read`` (reading all the time, ``urgent`` answering a
    keep-alive at once) through the session, each reply written with its newline, until
    the platform ends the session or the stream ends; the session is closed after."""
    session.thinker.warm()
    try:
        async with Inbox(read, urgent) as inbox:
            while not session.summary.finished:
                try:
                    line = await inbox.get()
                except (EOFError, ConnectionError):
                    break
                if not line.strip():
                    continue
                reply = await session.handle_async(line)
                if reply is not None:
                    await write(reply + "\n")
    finally:
        session.close()
    return session.summary
