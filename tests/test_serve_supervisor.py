"""The supervisor's rules with runs that are scripted (the real runs, with sockets and
processes, are in test_serve_sessions.py): restart after a crash with a growing backoff, the
circuit breaker, a permanent error, the daily quota, a reload that touches only what changed,
and the timing rules themselves on a fake clock."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import time
from collections.abc import Callable
from typing import Any

from adapter.serve.config import Limits, LogUpkeep, ServeConfig, SessionSpec
from adapter.serve.policy import Backoff, CircuitBreaker, DailyQuota
from adapter.serve.runners import Outcome, PermanentError, RunContext
from adapter.serve.supervisor import Supervisor
from tests.serve_helpers import until


def spec(name: str = "s", **limits: Any) -> SessionSpec:
    return SessionSpec(name, "local", pause=limits.pop("pause", 0.0),
                       limits=Limits(**{"backoff_initial": 0.02, "backoff_max": 1.0,
                                        "breaker_failures": 50, **limits}))


class Script:
    """A runner that plays a list of steps, one per run, then waits for the stop."""

    def __init__(self, steps: list[Callable[[RunContext], Outcome]]) -> None:
        self.steps = steps
        self.starts: list[float] = []
        self.allowed: list[int | None] = []

    async def __call__(self, spec: SessionSpec, ctx: RunContext) -> Outcome:
        self.starts.append(time.monotonic())
        self.allowed.append(ctx.games_allowed)
        if len(self.starts) <= len(self.steps):
            return self.steps[len(self.starts) - 1](ctx)
        await ctx.stop.event.wait()
        return Outcome("stopped")


def crash(ctx: RunContext) -> Outcome:
    raise RuntimeError("the policy blew up")


def game(ctx: RunContext) -> Outcome:
    ctx.probe.game_finished({"scores": [1, 2, 3, 4], "seat": 0, "points": 5})
    return Outcome("completed")


ROOMY = LogUpkeep(low_disk_mb=0)  # health "ok" whatever disk the machine has free


def supervisor(runner: Any, *specs: SessionSpec) -> Supervisor:
    return Supervisor(ServeConfig("test.toml", sessions=specs, stop_deadline=2.0, logs=ROOMY),
                      runners={"local": runner}, log_dir="unused-logs")


async def test_a_session_that_raises_is_restarted_with_a_growing_backoff() -> None:
    script = Script([crash, crash, crash])
    sup = supervisor(script, spec())
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: len(script.starts) == 4 and handle.state == "running")
    assert handle.failures == 3 and handle.restarts == 3
    assert handle.last_error == "RuntimeError: the policy blew up"
    gaps = [b - a for a, b in zip(script.starts, script.starts[1:], strict=False)]
    for n, gap in enumerate(gaps):  # 0.02 * 2**n, jitter at least halves it
        assert gap >= 0.5 * 0.02 * 2 ** n, gaps
    assert sup.metrics.get("mjbot_restarts_total", session="s") == 3
    assert sup.metrics.get("mjbot_failures_total", session="s") == 3
    await sup.stop()
    assert handle.state == "stopped" and handle.task is not None and handle.task.done()


async def test_the_last_error_clears_once_the_session_plays_again() -> None:
    script = Script([crash, game])
    sup = supervisor(script, spec())
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: handle.failures == 1)
    assert handle.status()["last_error"] == "RuntimeError: the policy blew up"
    await until(lambda: handle.games_played == 1)
    status = handle.status()
    assert status["last_error"] == "" and status["failures"] == 1
    assert status["last_failure"]["error"] == "RuntimeError: the policy blew up"
    await sup.stop()


async def test_a_removed_session_leaves_no_metrics_behind() -> None:
    script = Script([crash] * 10)
    sup = supervisor(script, spec("keep"), spec("drop", breaker_failures=2,
                                                breaker_cooldown=60))
    sup.start()
    await until(lambda: sup.handles["drop"].state == "breaker open")
    assert sup.metrics.get("mjbot_breaker_open", session="drop") == 1
    await sup.reload(ServeConfig("test.toml", stop_deadline=2.0, sessions=(spec("keep"),),
                                 logs=ROOMY))
    assert sup.health()["status"] == "ok"
    assert 'session="drop"' not in sup.metrics.exposition()
    assert 'session="keep"' in sup.metrics.exposition()
    await sup.stop()


async def test_the_breaker_opens_and_rests_the_session() -> None:
    script = Script([crash] * 10)
    sup = supervisor(script, spec(breaker_failures=3, breaker_window=60,
                                  breaker_cooldown=0.4))
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: handle.state == "breaker open")
    opened = handle.breaker.opened_at
    assert opened is not None
    assert len(script.starts) == 3 and handle.breaker.trips == 1
    assert sup.health()["status"] == "degraded"
    assert sup.health()["sessions"]["s"]["breaker"]["state"] == "open"
    assert sup.metrics.get("mjbot_breaker_open", session="s") == 1
    await until(lambda: len(script.starts) == 4)  # the half-open trial, which fails
    # it rested the whole cooldown first: read on the handle's own clock (time.monotonic, as
    # the runs' starts), not by a look after a sleep that a loaded machine can make too long
    assert script.starts[3] >= opened + 0.4, (script.starts, opened)
    await until(lambda: handle.breaker.trips == 2)
    assert handle.state == "breaker open"
    await sup.stop()


async def test_a_permanent_error_is_not_retried() -> None:
    def refused(ctx: RunContext) -> Outcome:
        raise PermanentError("game type 169 is the Phoenix lobby")

    script = Script([refused])
    sup = supervisor(script, spec())
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: handle.state == "failed")
    await asyncio.sleep(0.1)
    assert len(script.starts) == 1 and "Phoenix" in handle.last_error
    await sup.stop()


async def test_the_daily_quota_holds_the_session() -> None:
    script = Script([game] * 10)
    sup = supervisor(script, spec(games_per_day=3))
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: handle.state == "quota reached")
    assert len(script.starts) == 3 and script.allowed == [3, 2, 1]
    status = handle.status()
    assert status["quota"] == {"games_per_day": 3, "today": 3, "remaining": 0}
    assert status["games"] == 3 and status["points"][-1][1] == 15
    assert status["next_run_at"] > time.time() and handle.restarts == 0
    await sup.stop()


async def test_reload_touches_only_what_changed() -> None:
    script = Script([])
    sup = supervisor(script, spec("keep"), spec("change"), spec("drop"))
    sup.start()
    await until(lambda: len(script.starts) == 3)
    keep, change, drop = (sup.handles[n] for n in ("keep", "change", "drop"))
    new = ServeConfig("test.toml", stop_deadline=2.0,
                      sessions=(spec("keep"), spec("change", pause=1.0), spec("add")))
    result = await sup.reload(new)
    assert result == {"added": ["add"], "removed": ["drop"], "changed": ["change"],
                      "retried": [], "unchanged": ["keep"]}
    await until(lambda: len(script.starts) == 5)
    assert sup.handles["keep"] is keep and keep.runs == 1 and keep.state == "running"
    assert sup.handles["change"] is not change and change.state == "stopped"
    assert drop.state == "stopped" and "drop" not in sup.handles
    assert list(sup.health()["sessions"]) == ["keep", "change", "add"]
    await sup.stop()


async def test_a_reload_retries_an_unchanged_session_that_failed_or_rests_its_breaker() -> None:
    """SIGHUP after the operator fixed what a session failed on: the session runs again now,
    not after the breaker's cooldown (here a minute) or never (a permanent error); the
    sessions that are well are left running."""
    def refused(ctx: RunContext) -> Outcome:
        raise PermanentError("the lobby refused us")

    scripts = {"resting": Script([crash, crash]), "failed": Script([refused]),
               "well": Script([])}

    async def by_name(spec: SessionSpec, ctx: RunContext) -> Outcome:
        return await scripts[spec.name](spec, ctx)

    resting, failed, well = (spec("resting", breaker_failures=2, breaker_cooldown=60),
                             spec("failed"), spec("well"))
    sup = supervisor(by_name, resting, failed, well)
    sup.start()
    await until(lambda: [h.state for h in sup.handles.values()]
                == ["breaker open", "failed", "running"])
    well_handle = sup.handles["well"]
    result = await sup.reload(ServeConfig("test.toml", stop_deadline=2.0,
                                          sessions=(resting, failed, well), logs=ROOMY))
    assert result == {"added": [], "removed": [], "changed": [],
                      "retried": ["resting", "failed"], "unchanged": ["well"]}
    await until(lambda: all(h.state == "running" for h in sup.handles.values()))
    assert sup.handles["well"] is well_handle and well_handle.runs == 1
    resting_failure, failed_failure = (sup.handles[name].last_failure
                                       for name in ("resting", "failed"))
    assert resting_failure is not None and failed_failure is not None
    assert resting_failure["error"] == "RuntimeError: the policy blew up"
    assert failed_failure["error"] == "the lobby refused us"
    assert sup.health()["status"] == "ok"
    await sup.stop()


async def test_a_session_a_reload_starts_again_keeps_its_counts() -> None:
    """A session changed by a SIGHUP (here its pause) or retried by one is a fresh handle:
    /health's games, hands, decisions, fallbacks, runs and failures began again at 0 (the
    dashboard's four Tenhou games read 0, and so did serve's closing line), while /metrics,
    which a reload leaves alone, still counted them. Both now go on from the same counts."""
    def played(ctx: RunContext) -> Outcome:
        ctx.probe.decision("rulebased", 0.001, "")
        ctx.probe.decision("rulebased", 0.001, "policy crashed")
        ctx.probe.hands(3)
        return game(ctx)

    script = Script([played, crash])
    sup = supervisor(script, spec("s", backoff_initial=0.01))
    sup.start()
    await until(lambda: len(script.starts) == 3)
    before = sup.handles["s"].status()
    counts = ("games", "hands", "decisions", "fallbacks", "runs", "restarts", "failures")
    assert [before[k] for k in counts] == [1, 3, 2, 1, 3, 1, 1]
    await sup.reload(ServeConfig("test.toml", stop_deadline=2.0, logs=ROOMY,
                                 sessions=(spec("s", pause=0.5, backoff_initial=0.01),)))
    await until(lambda: len(script.starts) == 4)
    after = sup.handles["s"].status()
    assert [after[k] for k in counts] == [1, 3, 2, 1, 4, 1, 1]
    assert after["last_fallback"] == before["last_fallback"]
    assert sup.metrics.get("mjbot_games_total", session="s", kind="local") == after["games"]
    assert sup.metrics.get("mjbot_failures_total", session="s") == after["failures"]
    await sup.stop()


async def test_a_fallback_after_a_reload_is_logged_with_the_count_since_the_last_line(
) -> None:
    """The fallback line's ``count`` is the answers replaced since the last such line. A
    session a reload started again goes on with its fallbacks (carry_counts), but its line's
    baseline began again at 0: 3 fallbacks (the first logged, the next two within the minute
    not), a reload, one more: logged as "count 4", every answer the session ever had
    replaced, where 3 were since the line. Now 3, and the first fallback after the reload
    is still logged at once."""
    from structlog.testing import capture_logs

    def three(ctx: RunContext) -> Outcome:
        for _ in range(3):
            ctx.probe.decision("rulebased", 0.001, "policy crashed")
        return game(ctx)

    script = Script([three])
    sup = supervisor(script, spec("s"))
    sup.start()
    await until(lambda: len(script.starts) == 2)
    assert sup.handles["s"].fallbacks == 3
    await sup.reload(ServeConfig("test.toml", stop_deadline=2.0, logs=ROOMY,
                                 sessions=(spec("s", pause=0.5),)))
    await until(lambda: len(script.starts) == 3)
    with capture_logs() as logs:
        sup.handles["s"].decision("rulebased", 0.001, "policy crashed")
    lines = [e for e in logs if "replaced by a fallback" in e["event"]]
    assert [(e["count"], e["total"]) for e in lines] == [(3, 4)]
    await sup.stop()


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    backoff = Backoff(1.0, 8.0, random.Random(7))
    delays = [backoff.next_delay() for _ in range(6)]
    for n, delay in enumerate(delays):
        base = min(8.0, 2.0 ** n)
        assert 0.5 * base <= delay <= min(8.0, 1.5 * base)
    assert len(set(delays)) == len(delays)  # jittered
    backoff.reset()
    assert backoff.next_delay() <= 1.5


def test_breaker_counts_failures_in_its_window_only() -> None:
    now = [0.0]
    breaker = CircuitBreaker(3, window=10.0, cooldown=30.0, clock=lambda: now[0])
    assert not breaker.failure() and not breaker.failure()
    now[0] = 11.0  # the first two fell out of the window
    assert not breaker.failure() and breaker.state == "closed"
    assert not breaker.failure() and breaker.failure()
    assert breaker.state == "open" and breaker.wait() == 30.0
    now[0] = 41.0
    assert breaker.state == "half-open" and breaker.wait() == 0
    breaker.success()
    assert breaker.state == "closed" and breaker.recent_failures() == 0


def test_quota_starts_again_each_day() -> None:
    now = [dt.datetime(2026, 5, 1, 23, 59, 30)]
    quota = DailyQuota(2, now=lambda: now[0])
    quota.add()
    quota.add()
    assert quota.remaining() == 0 and quota.seconds_to_reset() == 30.0
    now[0] = dt.datetime(2026, 5, 2, 0, 0, 1)
    assert quota.remaining() == 2
    assert DailyQuota(0).remaining() is None


async def test_the_first_status_after_midnight_shows_the_new_days_count() -> None:
    """/health's session status read the quota's count before remaining() rolled the day: the
    first status after midnight showed yesterday's games as today's beside a whole day's
    remaining (today 1, remaining 2). The day is rolled first now. The quota's own clock
    (DailyQuota's ``now``) moves past midnight; the session plays as it would."""
    now = [dt.datetime(2026, 5, 1, 23, 59, 30)]
    script = Script([game])
    sup = supervisor(script, spec(games_per_day=2))
    sup.start()  # the session's task made, not yet run: its quota on the clock above
    handle = sup.handles["s"]
    handle.quota = DailyQuota(2, now=lambda: now[0])
    await until(lambda: handle.games_played == 1 and len(script.starts) == 2)
    assert handle.status()["quota"] == {"games_per_day": 2, "today": 1, "remaining": 1}
    now[0] = dt.datetime(2026, 5, 2, 0, 0, 1)
    assert handle.status()["quota"] == {"games_per_day": 2, "today": 0, "remaining": 2}
    await sup.stop()


async def test_a_run_that_fails_while_stopping_is_counted_and_shown() -> None:
    """A worker that crashes on its way out (its last game log left without a footer) is a
    failure like any other, though nothing restarts: not a quiet "stopped"."""

    async def crashes_on_stop(spec: SessionSpec, ctx: RunContext) -> Outcome:
        await ctx.stop.event.wait()
        return Outcome("crashed", "practice worker exit status 1")

    sup = supervisor(crashes_on_stop, spec())
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: handle.state == "running")
    await sup.stop()
    assert handle.failures == 1 and handle.restarts == 0
    assert handle.status()["last_error"] == "practice worker exit status 1"
    assert sup.metrics.get("mjbot_failures_total", session="s") == 1
    assert handle.state == "stopped"


async def test_a_run_that_stops_cleanly_is_no_failure() -> None:
    script = Script([])
    sup = supervisor(script, spec())
    sup.start()
    handle = sup.handles["s"]
    await until(lambda: handle.state == "running")
    await sup.stop()
    assert handle.failures == 0 and handle.status()["last_error"] == ""


async def test_a_session_without_a_quota_says_its_days_games_are_not_counted() -> None:
    """A session with no quota never counts its log folder's games of the day (that count is
    the quota's, and reads every log's footer): its quota.today was the games played since
    its handle was made, so a reload that changed the session began it again at 0 (in the
    soak /health showed 2 where about 100 games had been played that day). It says it is not
    counted, as a disabled session's does, before a reload as after it."""
    not_counted = {"games_per_day": 0, "today": None, "remaining": None}
    script = Script([game, game])
    sup = supervisor(script, spec())
    sup.start()
    await until(lambda: sup.handles["s"].games_played == 2 and len(script.starts) == 3)
    assert sup.handles["s"].status()["quota"] == not_counted
    await sup.reload(ServeConfig("test.toml", stop_deadline=2.0, logs=ROOMY,
                                 sessions=(spec(pause=1.0),)))
    await until(lambda: len(script.starts) == 4)
    assert sup.handles["s"].status()["quota"] == not_counted
    await sup.stop()
