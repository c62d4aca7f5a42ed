"""Sessions kept running: each configured session is a :class:`SessionHandle` whose task runs
the session again and again, and the :class:`Supervisor` starts, stops and reloads them.

A run that ends normally (its games played, the match closed by the server) is followed by the
next after the session's ``pause``. A run that fails (lost or unreachable server, a crash, a
worker that died) is followed by the next after an exponential backoff with jitter; enough
failures within the breaker's window open the circuit breaker, and the session rests for the
cooldown before one trial run. A daily game quota holds a session until midnight. A run that
cannot succeed until the config changes (Tenhou refuses the game type) leaves the session
``failed``. Everything a person needs to see is in :meth:`SessionHandle.status`; what a
machine counts goes to :class:`~adapter.serve.metrics.Metrics`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import structlog

from adapter.serve.config import ServeConfig, SessionSpec
from adapter.serve.logkeep import LogKeeper
from adapter.serve.metrics import Metrics
from adapter.serve.policy import Backoff, CircuitBreaker, DailyQuota
from adapter.serve.runners import (
    RUNNERS,
    Outcome,
    PermanentError,
    RunContext,
    Runner,
    StopRequest,
)
from adapter.tasks import cancel_and_log
from brain.tally import FallbackKind
from replay.log import Scrubber, is_log_name, plain_name
from replay.logzip import compressed_name

log = structlog.get_logger("mjbot.serve")

RECENT_RESULTS = 50
POINTS_KEPT = 1000
FALLBACK_LOG_EVERY = 60.0  # seconds between two log lines about a session's fallbacks


class SessionHandle:
    """One session: its supervision task, its counts, and the :class:`Probe` its runs report
    to."""

    def __init__(self, spec: SessionSpec, metrics: Metrics, log_root: str, runner: Runner,
                 clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None) -> None:
        self.spec = spec
        self.metrics = metrics
        self.log_dir = str(Path(log_root) / spec.name)
        self.runner = runner
        self.clock = clock
        limits = spec.limits
        self.backoff = Backoff(limits.backoff_initial, limits.backoff_max, rng)
        self.breaker = CircuitBreaker(limits.breaker_failures, limits.breaker_window,
                                      limits.breaker_cooldown, clock)
        # a process started again goes on with the day's count: count_today(), in a thread
        # (a reload's, before the session starts; else its task's, before its first run)
        self.quota = DailyQuota(limits.games_per_day)
        self.counted = False
        self.scrub = Scrubber([spec.secret] if spec.secret else [])
        self.state = "disabled" if not spec.enabled else "idle"
        self.state_since = time.time()
        self.runs = self.restarts = self.failures = 0
        self.games_played = self.hands_played = self.decisions_made = 0
        # answers a fallback gave instead of the policy, and illegal ones (as the metrics
        # count them): a policy that fails at every decision still plays, so the session
        # looked healthy everywhere but /metrics
        self.fallbacks = self.illegal_answers = 0
        self.last_fallback: dict[str, Any] | None = None  # its reason, policy and time
        self._fallback_log: tuple[float, int] | None = None  # (when, count) of the last line
        self.last_error = ""  # what is wrong now: cleared once the session plays again
        self.last_failure: dict[str, Any] | None = None  # the last error and when, kept
        self.last_outcome = ""
        self.results: deque[dict[str, Any]] = deque(maxlen=RECENT_RESULTS)
        self.points: deque[tuple[float, float]] = deque(maxlen=POINTS_KEPT)
        self.total_points = 0.0
        self.current: dict[str, Any] | None = None
        self.next_game = 0  # practice: the next game's number in the seed's sequence
        self.resume_at: float | None = None  # wall-clock time of the next run, while waiting
        self.stop_request = StopRequest()
        self.task: asyncio.Task[None] | None = None
        metrics.add_session(spec.name, spec.kind)

    # ------------------------------------------------------------------ the probe

    def decision(self, policy: str, elapsed: float, fallback: str, kind: str = "") -> None:
        self.decisions_made += 1
        self.metrics.decision(self.spec.name, policy, elapsed, fallback, kind)
        if fallback:
            self._fallback(policy, fallback, kind)

    def _fallback(self, policy: str, reason: str, kind: str) -> None:
        """Counted and shown; logged at the first and then at most once a FALLBACK_LOG_EVERY
        with the count since the last line (a line per answer would flood the log). An
        illegal answer is told by its ``kind`` (Metrics.decision), not by the reason's text."""
        self.fallbacks += 1
        if kind == FallbackKind.ILLEGAL.value:
            self.illegal_answers += 1
        reason = self.scrub(reason)
        self.last_fallback = {"reason": reason, "policy": policy, "at": time.time()}
        now = self.clock()
        if self._fallback_log is None or now - self._fallback_log[0] >= FALLBACK_LOG_EVERY:
            since = self.fallbacks - (self._fallback_log[1] if self._fallback_log else 0)
            self._fallback_log = (now, self.fallbacks)
            log.warning("serve: the policy's answers were replaced by a fallback",
                        session=self.spec.name, policy=policy, reason=reason, count=since,
                        total=self.fallbacks, decisions=self.decisions_made)

    def hands(self, count: int) -> None:
        self.hands_played += count
        self._recovered()
        self.metrics.inc("mjbot_hands_total", count, session=self.spec.name,
                         kind=self.spec.kind)

    def illegal(self, count: int) -> None:
        self.illegal_answers += count
        self.metrics.inc("mjbot_illegal_actions_total", count, session=self.spec.name)

    def reconnects(self, count: int) -> None:
        self.metrics.inc("mjbot_reconnects_total", count, session=self.spec.name)

    def live(self, state: dict[str, Any] | None) -> None:
        self.current = state

    def playing(self) -> None:
        """A platform client has been dealt its first game of the run: it was connecting
        (shown as running, a session that could not reach its server looked as if it
        played)."""
        if self.state == "connecting":
            self._set_state("running")

    def game_started(self, number: int) -> None:
        self.next_game = max(self.next_game, number + 1)

    def game_finished(self, result: dict[str, Any]) -> None:
        self.games_played += 1
        self._recovered()
        self.quota.add()
        self.metrics.inc("mjbot_games_total", session=self.spec.name, kind=self.spec.kind)
        entry = {"session": self.spec.name, "ended": time.time(), **result}
        if entry.get("log"):
            entry["log"] = _relative(entry["log"], self.log_dir, self.spec.name)
        self.results.append(entry)
        if result.get("points") is not None:
            self.total_points += float(result["points"])
            self.points.append((entry["ended"], self.total_points))

    def carry_counts(self, previous: SessionHandle) -> None:
        """Go on from the counts of the handle this one replaces (a session a reload changed
        or retried), as /metrics does: they began again at 0, so /health, the dashboard and
        serve's closing line said a session that had played games had played none; and
        what the dashboard shows of its history (results, points, the last failure)."""
        self.results, self.points = previous.results, previous.points
        self.total_points = previous.total_points
        self.last_failure = previous.last_failure
        self.runs, self.restarts = previous.runs, previous.restarts
        self.failures = previous.failures
        self.games_played, self.hands_played = previous.games_played, previous.hands_played
        self.decisions_made, self.fallbacks = previous.decisions_made, previous.fallbacks
        self.illegal_answers, self.last_fallback = previous.illegal_answers, previous.last_fallback
        # the fallback line's count is since the last line: from the carried total, not 0
        # (the first after a reload said every fallback the session ever had); still logged
        # at once, as a session's first is
        if previous._fallback_log is not None:
            self._fallback_log = (float("-inf"), previous._fallback_log[1])

    def _recovered(self) -> None:
        """The session plays again (a hand or a game finished, a run completed): the last
        error is no longer what is wrong; ``last_failure`` keeps it."""
        self.last_error = ""

    def _failed(self, error: str) -> None:
        self.last_error = error
        self.last_failure = {"error": error, "at": time.time()}

    # ------------------------------------------------------------------ running

    def count_today(self) -> None:
        """The day's games the session's log folder holds, which its quota goes on from (a
        restart of the process, a session changed by a reload); none without a quota. Reads
        a footer a log (a compressed one inflated whole): never on the event loop, but in a
        thread, the reload's (Supervisor.reload) or the session task's, before its first
        run (_supervise)."""
        if self.quota.limit > 0:
            self.quota.count = games_finished_on(self.log_dir, self.quota.day)
        self.counted = True

    def start(self) -> None:
        if self.spec.enabled and self.task is None:
            self.task = asyncio.create_task(self._supervise(), name=f"session {self.spec.name}")

    async def stop(self, timeout: float) -> None:
        """Ask the run to end (its hand finished where it can) and wait up to ``timeout``;
        then cancel it."""
        self.stop_request.request(self.clock() + timeout)
        if self.task is None:
            return
        if self.state in ("running", "connecting"):
            self._set_state("stopping")
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout + 0.5)
        except TimeoutError:
            log.warning("serve: session past its stop deadline, cancelled",
                        session=self.spec.name)
            await cancel_and_log(self.task, log, "serve: session failed while being cancelled",
                                 session=self.spec.name)
        self._set_state("stopped")

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state, self.state_since = state, time.time()
        self.metrics.set("mjbot_breaker_open", float(self.breaker.state == "open"),
                         session=self.spec.name)

    async def _rest(self, seconds: float, state: str) -> None:
        """Wait ``seconds`` (or until a stop is asked for)."""
        self._set_state(state)
        self.resume_at = time.time() + seconds
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_request.event.wait(), seconds)
        self.resume_at = None

    async def _supervise(self) -> None:
        name = self.spec.name
        # every line logged in this task and those it starts (the platform client's own:
        # 'tenhou: connection lost, reconnecting', its logins, its games) names the session;
        # with two sessions of one platform they could not be told apart. The task runs in
        # a copy of the context, so the binding is this session's alone
        structlog.contextvars.bind_contextvars(session=name)
        failed_last = False
        try:
            if not self.counted:  # at start: 100,000 logs held the whole process 20 s
                await asyncio.to_thread(self.count_today)
            while not self.stop_request.requested:
                if self.breaker.wait() > 0:
                    await self._rest(self.breaker.wait(), "breaker open")
                    continue
                remaining = self.quota.remaining()
                if remaining == 0:
                    await self._rest(self.quota.seconds_to_reset(), "quota reached")
                    continue
                if failed_last:
                    self.restarts += 1
                    self.metrics.inc("mjbot_restarts_total", session=name)
                outcome = await self._run_once(remaining)
                if outcome is None:  # a permanent error: wait for a reload
                    return
                if outcome.status == "stopped" or self.stop_request.requested:
                    if outcome.status != "stopped":  # it failed on its way out: say so
                        self._stopped_badly(outcome)
                    break
                failed_last = outcome.status != "completed"
                delay = self._after(outcome)
                if delay is not None:
                    await self._rest(delay, "pause" if not failed_last else "backoff")
        finally:
            self.metrics.set("mjbot_session_running", 0, session=name)
            if self.state not in ("failed",):
                self._set_state("stopped")

    async def _run_once(self, remaining: int | None) -> Outcome | None:
        name = self.spec.name
        self.runs += 1
        # a platform client connects, joins and waits to be dealt first (the probe's playing)
        self._set_state("running" if self.spec.kind == "local" else "connecting")
        self.metrics.set("mjbot_session_running", 1, session=name)
        context = RunContext(self, self.stop_request, self.log_dir, remaining, self.next_game)
        started = self.clock()
        try:
            outcome = await self.runner(self.spec, context)
        except PermanentError as exc:
            self._failed(self.scrub(str(exc)))
            self._set_state("failed")
            log.error("serve: session cannot run until a reload (SIGHUP)", session=name,
                      error=self.last_error)
            return None
        except Exception as exc:  # a crash of the run: the supervisor restarts it
            outcome = Outcome("crashed", f"{type(exc).__name__}: {exc}")
        finally:
            self.metrics.set("mjbot_session_running", 0, session=name)
            self.current = None
        outcome.detail = self.scrub(outcome.detail)
        self.last_outcome = outcome.status
        if self.clock() - started >= self.spec.limits.healthy_after:
            self.backoff.reset()
        return outcome

    def _stopped_badly(self, outcome: Outcome) -> None:
        """A run asked to stop that ended some other way (a worker that crashed while
        finishing its hand): counted and shown like any failure, though nothing restarts."""
        if outcome.status != "crashed":
            log.info("serve: run ended on its own as it was stopped", session=self.spec.name,
                     outcome=outcome.status, detail=outcome.detail)
            return
        self.failures += 1
        self._failed(outcome.detail)
        self.metrics.inc("mjbot_failures_total", session=self.spec.name)
        log.error("serve: run failed while stopping", session=self.spec.name,
                  outcome=outcome.status, error=outcome.detail)

    def _after(self, outcome: Outcome) -> float | None:
        """Bookkeeping after a run; the delay before the next one (None: the breaker says)."""
        name = self.spec.name
        if outcome.status == "completed":
            self.backoff.reset()
            self.breaker.success()
            self._recovered()
            log.info("serve: run ended normally", session=name, detail=outcome.detail)
            return self.spec.pause
        self.failures += 1
        self._failed(outcome.detail)
        self.metrics.inc("mjbot_failures_total", session=name)
        if self.breaker.failure():
            log.error("serve: circuit breaker open", session=name, error=outcome.detail,
                      cooldown=self.breaker.cooldown)
            self._set_state("breaker open")
            return None
        delay = self.backoff.next_delay()
        log.warning("serve: run failed, restarting", session=name, outcome=outcome.status,
                    error=outcome.detail, retry_in=round(delay, 2))
        return delay

    # ------------------------------------------------------------------ reporting

    def status(self, detail: bool = True) -> dict[str, Any]:
        counted = self.counted and self.quota.limit > 0
        out: dict[str, Any] = {
            "name": self.spec.name, "kind": self.spec.kind, "enabled": self.spec.enabled,
            "policy": self.spec.policy, "state": self.state, "since": self.state_since,
            "runs": self.runs, "restarts": self.restarts, "failures": self.failures,
            "last_error": self.last_error, "last_failure": self.last_failure,
            "last_outcome": self.last_outcome,
            "games": self.games_played, "hands": self.hands_played,
            "decisions": self.decisions_made, "fallbacks": self.fallbacks,
            "illegal": self.illegal_answers, "last_fallback": self.last_fallback,
            "last_game": self.results[-1] if self.results else None,
            "breaker": {"state": self.breaker.state,
                        "recent_failures": self.breaker.recent_failures(),
                        "threshold": self.breaker.threshold, "trips": self.breaker.trips,
                        "retry_in": round(self.breaker.wait(), 1)},
            # today's games: None until the log folder's are counted (count_today, at the
            # session's start; a disabled session's never are), where 0 read as none played;
            # and None without a quota, whose count never reads the folder (it limits nothing,
            # and 10,000 logs of the day take seconds): its live count began again at each
            # reload that changed the session (2 shown after 100 games that day)
            "quota": {"games_per_day": self.spec.limits.games_per_day,
                      "today": self.quota.today() if counted else None,
                      "remaining": self.quota.remaining() if counted else None},
            "next_run_at": self.resume_at,
        }
        if detail:
            out["config"] = self.spec.public()
            out["current"] = self.current
            out["results"] = list(self.results)[-10:]
            out["points"] = [[round(t, 1), p] for t, p in self.points]
        return out


def games_finished_on(log_dir: str, day: dt.date) -> int:
    """The games a session's folder holds logs of that finished on ``day``: those an earlier
    serve process played that day, which its quota counts. Without them a restart (a
    deploy, a crash, a changed session on SIGHUP) began the day's quota again.

    The rule is the live quota's, which counts a game when it finishes (game_finished ->
    DailyQuota.add) on the local calendar day it finished: a log counts when its footer
    reads as a finished game (replay's footer_unfinished: not stopped, abandoned or ended
    early, never-dealt games included; a log with no footer, cut by a crash, is none) and
    the footer's ``ended`` time (local, written as the log closed) falls on ``day``. The
    folders are named after the day a game started (replay.log.log_path, local time), so
    a game that began before midnight and finished after it is read from the day before's.

    Only each log's footer frame is read, from its last bytes (the viewer's read_footer):
    parsing every log whole took a few milliseconds each, on the event loop, so that a
    SIGHUP that changed a practice session with a quota froze the process (its status
    page, every platform session's line) for 14 s once it had logged 1000 games that day.
    """
    from adapter.serve.games import read_footer
    from replay.replayer import footer_unfinished

    count = 0
    for started in (day - dt.timedelta(days=1), day):
        # a game once, by its plain name, whichever form the listing held: the upkeep's pass
        # may compress a log (X.gz written, then X removed) between the listing and the read
        # (at start-up the two run side by side), and X read once removed missed the game,
        # X and X.gz both listed counted it twice
        games: dict[Path, bool] = {}  # plain path: whether the listing held only X.gz
        for path in Path(log_dir).glob(f"*/{started:%Y-%m-%d}/*"):
            if is_log_name(path.name):  # compressed (.gz) or not: both are counted
                plain = path.with_name(plain_name(path.name))
                games[plain] = games.get(plain, True) and path != plain
        for plain, packed in games.items():
            footer = None if packed else read_footer(plain)
            if packed or (footer is None and not os.path.exists(plain)):  # compressed since
                footer = read_footer(compressed_name(plain))
            footer = footer or {}
            result = footer.get("result")
            if not isinstance(result, dict) or footer_unfinished(result) is not None:
                continue  # no footer (cut by a crash), or a game that did not finish
            try:
                ended = dt.datetime.fromisoformat(str(footer.get("ended", ""))).date()
            except ValueError:  # no end time: the day the game started
                ended = started
            count += ended == day
    return count


def _relative(path: str, log_dir: str, session: str) -> str:
    """A game log's path as the viewer names it under the log root (session/...)."""
    try:
        return str(Path(session) / Path(path).resolve().relative_to(Path(log_dir).resolve()))
    except ValueError:
        return path


class Supervisor:
    """The configured sessions: started together, reloaded by difference, stopped together."""

    def __init__(self, config: ServeConfig, metrics: Metrics | None = None,
                 runners: Mapping[str, Runner] = RUNNERS, log_dir: str | None = None) -> None:
        self.config = config
        self.metrics = metrics or Metrics()
        self.runners = runners
        self.log_dir = log_dir or config.log_dir
        self.started = time.time()
        self.handles: dict[str, SessionHandle] = {}
        self.reloads = 0
        # the last reload refused (its error, when), until a reload succeeds: the file on disk
        # is not what runs, and a restart of the process would fail on it
        self.reload_error: dict[str, Any] | None = None
        self.keeper = LogKeeper(self.log_dir, config.logs, self.metrics)

    def _handle(self, spec: SessionSpec) -> SessionHandle:
        return SessionHandle(spec, self.metrics, self.log_dir, self.runners[spec.kind])

    def start(self) -> None:
        for spec in self.config.sessions:
            handle = self.handles[spec.name] = self._handle(spec)
            handle.start()  # its task counts the day's games first, in a thread
        self.keeper.start()
        log.info("serve: sessions started", enabled=[s.name for s in self.config.sessions
                                                     if s.enabled],
                 disabled=[s.name for s in self.config.sessions if not s.enabled])

    async def reload(self, config: ServeConfig) -> dict[str, list[str]]:
        """Apply a new config: only sessions that were added, removed or changed are stopped
        or started; the others keep running untouched. An unchanged session that is failed
        or resting with its breaker open is started afresh: a reload is how an operator who
        fixed what it failed on (a server back, an account cleared) says "try now", rather
        than waiting out a 15-minute cooldown or restarting every other session with it."""
        new = {s.name: s for s in config.sessions}
        old = {name: h.spec for name, h in self.handles.items()}
        removed = [n for n in old if n not in new]
        changed = [n for n in old if n in new and new[n] != old[n]]
        retried = [n for n in old if n in new and n not in changed
                   and self.handles[n].state in ("failed", "breaker open")]
        added = [n for n in new if n not in old]
        deadline = config.stop_deadline
        await asyncio.gather(*(self.handles[n].stop(deadline)
                               for n in removed + changed + retried))
        for name in removed:
            del self.handles[name]
            self.metrics.remove_session(name)
        fresh = {name: self._handle(new[name]) for name in changed + retried + added}
        # the day's games counted off the event loop: the sessions left running, the status
        # page and the platforms' lines are served meanwhile
        await asyncio.gather(*(asyncio.to_thread(h.count_today) for h in fresh.values()))
        for name, handle in fresh.items():
            previous = self.handles.get(name)
            if previous is not None:  # keep what the dashboard shows of its history
                handle.carry_counts(previous)
                if previous.spec.option("seed", 0) == handle.spec.option("seed", 0):
                    handle.next_game = previous.next_game  # the same sequence goes on
            self.handles[name] = handle
            handle.start()
        self.handles = {s.name: self.handles[s.name] for s in config.sessions}
        self.config = config
        self.keeper.configure(config.logs)
        self.reloads += 1
        self.reload_error = None
        result = {"added": added, "removed": removed, "changed": changed, "retried": retried,
                  "unchanged": [n for n in old if n in new and n not in changed + retried]}
        log.info("serve: config reloaded", **result)
        return result

    def reload_refused(self, error: str) -> None:
        """A reload whose file did not load: the sessions run on; /health says so."""
        scrub = Scrubber([s.secret for s in self.config.sessions if s.secret])
        self.reload_error = {"error": scrub(error), "at": time.time()}

    async def stop(self, deadline: float | None = None) -> None:
        timeout = self.config.stop_deadline if deadline is None else deadline
        await asyncio.gather(self.keeper.stop(), *(h.stop(timeout) for h in self.handles.values()))

    def health(self) -> dict[str, Any]:
        sessions = {n: h.status(detail=False) for n, h in self.handles.items()}
        bad = [n for n, s in sessions.items() if s["state"] in ("failed", "breaker open")]
        logs = self.keeper.status()
        degraded = bad or self.reload_error is not None or logs["low_disk"] is not None
        return {"status": "degraded" if degraded else "ok", "uptime": round(time.time()
                                                                            - self.started, 1),
                "reloads": self.reloads, "reload_error": self.reload_error,
                "sessions": sessions, "logs": logs}

    def status(self) -> dict[str, Any]:
        sessions = {n: h.status() for n, h in self.handles.items()}
        results = sorted((r for h in self.handles.values() for r in h.results),
                         key=lambda r: r["ended"], reverse=True)[:20]
        return {**self.health(), "sessions": sessions, "results": results,
                "config": self.config.path}
