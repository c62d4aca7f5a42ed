"""One run of a session, per kind: a local practice worker until it exits, or one platform
client's connection (NTPU, mjai) or series of games (Tenhou) until it ends.

A runner reports what happens through a :class:`Probe` (decisions, hands, finished games, the
game in play) and returns an :class:`Outcome` that tells the supervisor whether the run ended
normally, lost its server, crashed, or was stopped. Asked to stop, a runner lets the hand in
play finish where it can (the practice worker stops between hands; the Tenhou client says BYE
once its hand is over instead of readying for the next; another platform client is stopped
once its table state says no hand is in play) and gives up at the deadline: the client is
then cancelled, which closes its game log with a footer and (Tenhou) says BYE.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from adapter.local.game import placement
from adapter.own_python import own_env, own_python
from adapter.serve.config import SessionSpec
from adapter.serve.metrics import MeasuredBrain
from adapter.serve.practice import next_game_in, snapshot
from adapter.tasks import cancel_and_log
from brain.anytime import FORCED
from brain.rules.variant import variant_of

if TYPE_CHECKING:  # the clients' modules are imported when a session of theirs starts
    from adapter.session import PlatformSession

log = structlog.get_logger("mjbot.serve")

POLL = 0.5  # seconds between two looks at a platform client's counts and table
STOP_MARGIN = 1.0  # seconds of the stop deadline kept for the client's own goodbye


class PermanentError(Exception):
    """A run that cannot succeed until the config changes (Tenhou refuses the game type):
    the supervisor does not retry it."""


@dataclass
class Outcome:
    """``status``: "completed" (the games or the match ended normally), "dropped" (the server
    closed or could not be reached), "crashed" (an error or the worker died), "stopped"."""

    status: str
    detail: str = ""


class Probe(Protocol):
    def decision(self, policy: str, elapsed: float, fallback: str, kind: str = "") -> None:
        """An answer the policy was asked for: not an only legal action (brain/tally.py);
        ``kind``: its fallback's (FallbackKind's value there, "" for none)."""
    def hands(self, count: int) -> None: ...
    def illegal(self, count: int) -> None: ...
    def reconnects(self, count: int) -> None: ...
    def live(self, state: dict[str, Any] | None) -> None: ...
    def playing(self) -> None: ...
    def game_started(self, number: int) -> None: ...
    def game_finished(self, result: dict[str, Any]) -> None: ...


@dataclass
class StopRequest:
    """Set once: the run should end by ``deadline`` (monotonic seconds)."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    deadline: float = 0.0

    def request(self, deadline: float) -> None:
        self.deadline = deadline
        self.event.set()

    @property
    def requested(self) -> bool:
        return self.event.is_set()


@dataclass
class RunContext:
    probe: Probe
    stop: StopRequest
    log_dir: str
    games_allowed: int | None = None  # the day's quota left (None: no quota)
    first_game: int = 0  # practice: the number of the next game in the seed's sequence


Runner = Callable[[SessionSpec, RunContext], Awaitable[Outcome]]


# ---------------------------------------------------------------------- local practice


async def run_local(spec: SessionSpec, ctx: RunContext) -> Outcome:
    """The practice worker process, its reports fed to the probe, until it exits. Its games
    go on with the seed's sequence: after the games this process's workers began, and after
    those whose logs an earlier process left."""
    seed = spec.option("seed", 0)
    logged = await asyncio.to_thread(next_game_in, ctx.log_dir, spec.name, seed)
    settings = {"session": spec.name, "variant": spec.option("variant", "riichi"),
                "policy": spec.policy,
                "opponents": list(spec.option("opponents", ("greedy", "greedy", "greedy"))),
                "length": spec.option("length", "east"), "hands": spec.option("hands", 4),
                "seed": seed, "first_game": max(ctx.first_game, logged),
                "games": ctx.games_allowed,
                "log_dir": ctx.log_dir, "pause": spec.pause, "budget": spec.option("budget")}
    if spec.option("live_every") is not None:  # else the worker's own period
        settings["live_every"] = spec.option("live_every")
    proc = await asyncio.create_subprocess_exec(
        *own_python("-m", "adapter.serve.practice", json.dumps(settings)),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=own_env(),
        limit=2 ** 22)  # one hand's decisions come in one line
    log.info("serve: practice worker started", session=spec.name, pid=proc.pid)
    errors: list[str] = []  # what the worker said before it failed (its "error" report)
    reading = asyncio.create_task(_read_reports(proc, spec.name, ctx.probe, errors))
    stop_wait = asyncio.create_task(ctx.stop.event.wait())
    past_deadline = False
    try:
        await asyncio.wait({reading, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():  # a stop was asked for: finish the hand, close the log
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(reading),
                                       max(0.1, ctx.stop.deadline - time.monotonic()))
            except TimeoutError:
                log.warning("serve: practice worker past the stop deadline, killed",
                            session=spec.name)
                past_deadline = True
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        elif reading.exception() is not None:  # its reports cannot be read: end it
            log.error("serve: practice reports unreadable, worker killed", session=spec.name,
                      error=repr(reading.exception()))
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        code = await proc.wait()
    finally:
        stop_wait.cancel()
        if proc.returncode is None:  # cancelled: never leave the worker behind
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        reading.cancel()
        ctx.probe.live(None)
    if code == 0:
        return Outcome("stopped" if ctx.stop.requested else "completed",
                       "" if ctx.stop.requested else "the day's games are played")
    if ctx.stop.requested and (past_deadline or code == -signal.SIGTERM):
        # killed by us past the deadline (and said so), or our SIGTERM found it before it
        # installed its handler, which it does before its first game
        return Outcome("stopped")
    # a worker that fails while stopping is a crash too: its game log may lack its footer
    how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    return Outcome("crashed", f"practice worker {how}" + (f": {errors[-1]}" if errors else ""))


async def _read_reports(proc: asyncio.subprocess.Process, session: str, probe: Probe,
                        errors: list[str]) -> None:
    assert proc.stdout is not None
    while True:
        line = await proc.stdout.readline()
        if not line:
            return
        try:
            report = json.loads(line)
            if report["t"] == "error":
                errors.append(str(report["error"]))
            _apply_report(report, probe)
        except Exception as exc:  # one bad line is logged, the next ones still count
            log.error("serve: unreadable practice report", session=session, error=str(exc),
                      line=line[:200].decode("utf-8", "replace"))


def _apply_report(report: dict[str, Any], probe: Probe) -> None:
    kind = report["t"]
    if kind == "game_start":
        probe.game_started(int(report["game"]))
    elif kind == "live":
        probe.live({k: v for k, v in report.items() if k != "t"})
    elif kind == "hand":
        for _seat, policy, elapsed, fallback, kind in report["decisions"]:
            probe.decision(str(policy), float(elapsed), str(fallback), str(kind))
        probe.hands(int(report["hands"]))
        if report["illegal"]:
            probe.illegal(int(report["illegal"]))
    elif kind == "game_end":
        probe.game_finished({"scores": report["scores"], "ranks": report["ranks"],
                             "seat": report["seat"], "points": report["points"],
                             "hands": report["hands"], "log": report["log"]})
        probe.live(None)  # no game in play until the next one's first snapshot
    elif kind == "stopped":
        probe.live(None)


# ---------------------------------------------------------------------- platform clients


class _Tracker:
    """Turns a client's running totals (its SessionSummary, reset every run) into the
    probe's increments, and notices finished games."""

    def __init__(self, bot: Any, probe: Probe, completed: Callable[[Any], int],
                 variant: str) -> None:
        self.bot, self.probe, self.completed, self.variant = bot, probe, completed, variant
        self.hands = self.reconnects = self.games = 0
        self.blank = bot.state  # every client takes a new table when a game is dealt
        self.dealt = False  # until then it is connecting, joining, waiting for a table
        self.read = 0  # the client's finished_games entries consumed (see _result)

    def sync(self, final: bool = False) -> None:
        summary, state = self.bot.summary, self.bot.state
        if not self.dealt and (state is not self.blank or summary.hands):
            self.dealt = True
            self.probe.playing()
        if summary.hands > self.hands:
            self.probe.hands(summary.hands - self.hands)
            self.hands = summary.hands
        if summary.reconnects > self.reconnects:
            self.probe.reconnects(summary.reconnects - self.reconnects)
            self.reconnects = summary.reconnects
        games = summary.games if final else self.completed(self.bot)
        while self.games < games:
            self.games += 1
            self.probe.game_finished(self._result(state, self.games - 1))
        self.probe.live(None if final or not self.dealt else snapshot(state))

    def _result(self, state: Any, index: int) -> dict[str, Any]:
        """The ``index``-th game of the run as the client noted it when its log closed (its
        scores, its log for the viewer's link); else what the table says now. The entries
        read, and those before them, are taken off the client's list, which would otherwise
        hold every game of a run (a tournament's): it holds the games not yet read."""
        noted = getattr(self.bot, "finished_games", [])
        at = index - self.read  # the entries before self.read are gone
        if 0 <= at < len(noted):
            game = noted[at]
            del noted[:at + 1]
            self.read = index + 1
            scores, seat, hands, path = game["scores"], game["seat"], game["hands"], game["log"]
        else:
            scores = list(state.scores) if state.game_over else None
            seat, hands, path = state.seat, state.hand_count, None
        start = variant_of(self.variant).start_score
        points = scores[seat] - start if scores and seat is not None else None
        # a game's final scores (a cut one has none): ranks as the table's, ties to the seat
        # nearer the first dealer (seat 0 on these platforms); the dashboard's rank column
        ranks = placement(list(scores)) if scores and len(scores) == 4 else None
        return {"scores": scores, "seat": seat, "points": points, "ranks": ranks,
                "hands": hands, "log": path}


async def _run_client(spec: SessionSpec, ctx: RunContext, bot: Any, main: Awaitable[Any],
                      completed: Callable[[Any], int], variant: str) -> Outcome:
    """Play ``main`` (the client's own coroutine on ``bot``), measuring and watching it."""
    probe = ctx.probe
    def report(answer: Any) -> None:
        # an only legal action is no decision of the policy's (brain/tally.py): counted, it
        # understated the fallback share and the decision times
        if getattr(answer, "source", "") != FORCED:
            probe.decision(answer.policy, answer.elapsed, answer.fallback, answer.kind.value)

    # The async clients decide through their thinker (adapter/thinking/thinker.py), which holds the
    # brain it was made with: measure there when there is one, else at the brain.
    if getattr(bot, "thinker", None) is not None:
        bot.thinker = MeasuredBrain(bot.thinker, report)
    else:
        bot.brain = MeasuredBrain(bot.brain, report)
    tracker = _Tracker(bot, probe, completed, variant)
    task = asyncio.ensure_future(main)
    try:
        while not task.done():
            stop_wait = asyncio.ensure_future(ctx.stop.event.wait())
            await asyncio.wait({task, stop_wait}, timeout=POLL,
                               return_when=asyncio.FIRST_COMPLETED)
            stop_wait.cancel()
            tracker.sync()
            if ctx.stop.requested and not task.done():
                bot.stop_requested = True  # a game the stop cuts is logged as stopped
                await _finish_hand(bot, task, ctx.stop.deadline)
                if task.done():  # it left by itself after its hand, or failed in it
                    tracker.sync(final=True)
                    outcome = _outcome(task, bot)
                    return outcome if outcome.status == "crashed" else Outcome("stopped")
                await _cancel(task, spec.name)
                tracker.sync(final=True)
                return Outcome("stopped")
    finally:
        if not task.done():
            await _cancel(task, spec.name)
    tracker.sync(final=True)
    return _outcome(task, bot)


async def _cancel(task: asyncio.Future[Any], session: str) -> None:
    """Cancel a client's coroutine and wait for it."""
    await cancel_and_log(task, log, "serve: client failed while being stopped", session=session)


async def _finish_hand(bot: Any, task: asyncio.Future[Any], deadline: float) -> None:
    """Let the hand in play finish, up to the deadline less the client's goodbye. A client
    that can leave by itself once its hand is over (Tenhou: BYE instead of NEXTREADY, as the
    next hand is dealt milliseconds after it) is waited for; another is stopped once its table
    says no hand is in play."""
    end = deadline - STOP_MARGIN
    leave = getattr(bot, "leave_after_hand", None)
    if callable(leave):
        if leave():
            await asyncio.wait({task}, timeout=max(0.0, end - time.monotonic()))
        return
    while (getattr(bot.state, "round_active", False) and not task.done()
           and time.monotonic() < end):
        await asyncio.sleep(0.05)


def _outcome(task: asyncio.Future[Any], bot: Any) -> Outcome:
    """How a client's run ended; a line it gave up for silence says so (it read "the server
    closed the connection", which sends an operator to the wrong end)."""
    from adapter.platforms.tenhou import PermissionRefused

    exc = task.exception()
    if isinstance(exc, PermissionRefused):
        raise PermanentError(str(exc))
    if isinstance(exc, ConnectionError | OSError):
        return Outcome("dropped", str(exc) or type(exc).__name__)
    if exc is not None:
        return Outcome("crashed", f"{type(exc).__name__}: {exc}")
    summary = task.result()
    if summary.finished:
        return Outcome("completed")
    ended = getattr(bot, "how_the_line_ended", None)
    return Outcome("dropped", ended() if callable(ended) else "the server closed the connection")


def _games_in_open_log(bot: PlatformSession) -> int:
    """Games a client has started, less the one whose log is still open (not an NTPU log
    of lines refused outside any game: no game of the count)."""
    open_game = bot.game_log is not None and not getattr(bot, "unread_log", False)
    return bot.summary.games - (1 if open_game else 0)


async def run_tenhou(spec: SessionSpec, ctx: RunContext) -> Outcome:
    from adapter.platforms.tenhou import (
        ANONYMOUS,
        DEFAULT_TCP_SERVER,
        IDLE_LIMIT,
        TenhouBot,
        TenhouSettings,
        run,
    )

    games = spec.option("games", 1)
    if ctx.games_allowed is not None:
        games = min(games, ctx.games_allowed)
    settings = TenhouSettings(
        server=spec.option("server", DEFAULT_TCP_SERVER), transport=spec.option("transport", "tcp"),
        name=spec.secret or ANONYMOUS, lobby=spec.option("lobby", 0),
        game_type=spec.option("game_type", 64), games=games,
        permission_granted=spec.option("permission_granted", False), policy=spec.policy,
        budget=spec.option("budget", 2.0), reconnect_tries=spec.option("reconnect_tries", 5),
        connect_timeout=spec.option("connect_timeout", 10.0),
        idle_limit=spec.option("idle_limit", IDLE_LIMIT), log_dir=ctx.log_dir)
    bot = TenhouBot(settings)
    return await _run_client(spec, ctx, bot, run(settings, bot), lambda b: b.summary.games,
                             "riichi")


async def run_ntpu(spec: SessionSpec, ctx: RunContext) -> Outcome:
    from adapter.hostport import parse_host_port
    from adapter.platforms.ntpu import NtpuBot, NtpuSettings, run_tcp
    from protocols.tiles import NtpuTiles

    host, port = parse_host_port(spec.option("server"), "server")
    tiles = NtpuTiles(spec.option("honour_order", "ESWNCFP"), spec.option("suit_order", "mps"))
    bot = NtpuBot(NtpuSettings(policy=spec.policy, budget=spec.option("budget", 2.0),
                               tiles=tiles, log_dir=ctx.log_dir))
    main = run_tcp(host, port, bot, spec.option("connect_timeout", 10.0),
                   spec.option("idle_limit"))
    return await _run_client(spec, ctx, bot, main, _games_in_open_log, "taiwan16")


async def run_mjai(spec: SessionSpec, ctx: RunContext) -> Outcome:
    from adapter.hostport import parse_host_port
    from adapter.platforms.mjai import IDLE_LIMIT, MjaiBot, MjaiSettings, run_tcp

    host, port = parse_host_port(spec.option("server"), "server")
    bot = MjaiBot(MjaiSettings(policy=spec.policy, budget=spec.option("budget", 1.5),
                               name=spec.option("name", "mjbot"),
                               room=spec.option("room", "default"), log_dir=ctx.log_dir))
    main = run_tcp(host, port, bot, spec.option("connect_timeout", 10.0),
                   spec.option("idle_limit", IDLE_LIMIT))
    return await _run_client(spec, ctx, bot, main, _games_in_open_log, "riichi")


RUNNERS: dict[str, Runner] = {"local": run_local, "tenhou": run_tenhou, "ntpu": run_ntpu,
                              "mjai": run_mjai}
