"""Thinking without blocking, over real loopback sockets: while a policy thinks 2 s in its
worker process, the Tenhou client answers the fake server's ``<Z/>`` probes (and WebSocket
pings), the NTPU client its ``/ready`` probes, and the mjai client's event loop keeps running:
the client's game log has those answers between the request and the decision, where a loop
blocked by the thinking writes them all after it (an order, which load does not change; their
delays, which it does, are a benchmark's); the decision lands inside the budget. A policy
that never returns has its best so far played on time and the game goes on normally; a policy
whose process dies gets the fallback, and the log still holds every frame.

The fake servers run on an event loop of their own (tests/loop_thread.py), so that their probes
go out on time whatever the client does to its loop. Each test policy misbehaves on its first
decision only (tests/anytime_policies.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from adapter.fakes.ntpu_server import run_match
from adapter.fakes.tenhou_server import FakeTenhouServer
from adapter.platforms.mjai import MjaiBot, MjaiSettings
from adapter.platforms.mjai import run_tcp as run_mjai
from adapter.platforms.ntpu import NtpuBot, NtpuSettings
from adapter.platforms.ntpu import run_tcp as run_ntpu
from adapter.platforms.tenhou import TenhouBot, TenhouSettings
from adapter.platforms.tenhou import run as run_tenhou
from adapter.session import SessionSummary, record_answer
from adapter.thinking.thinker import Thinker
from brain import anytime
from brain.brain import Answer, policy_seconds
from brain.policies import POLICIES
from brain.tally import FallbackKind
from protocols import events as ev
from replay import replayer
from replay.log import DecisionFrame, GameLog, RxFrame, TxFrame, read_log
from tests.anytime_policies import DiesMidThought, NeverReturns, SlowThinker, StartsWhenTold
from tests.loop_thread import LoopThread
from tests.ntpu_helpers import BotClient
from tests.test_mjai import _check_answers, _seen_by
from tests.test_thinker import GUARD, _until

THINK = 2.0
BUDGET = 3.5  # the platform's time per decision in these tests: room for 2 s of thinking
CUT_LATE = 1.0  # seconds past its deadline a cut thinking may come: only a missed cut is later


def _register(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
              policy: type[SlowThinker | NeverReturns | DiesMidThought | StartsWhenTold],
              **options: Any) -> str:
    """Make the fixture policy known by its name, for this test only."""
    factory = functools.partial(policy, tmp_path / f"{policy.name}.count", **options)
    monkeypatch.setitem(POLICIES, policy.name, factory)
    return policy.name


def _log(root: Path) -> GameLog:
    (path,) = list(root.rglob("*.mjlog.msgpack"))
    log = read_log(path)
    assert log.complete and log.truncated is None
    assert replayer.reparse(replayer.load(str(path)))["identical"]
    return log


def _asked(log: GameLog) -> list[DecisionFrame]:
    """The decisions the policy was asked for (an only legal action is not asked)."""
    return [d for d in log.decisions() if d.source != anytime.FORCED]


def _thought_in_time(log: GameLog) -> None:
    """The first decision was the policy's own after ~2 s of work, inside the budget."""
    first, *rest = _asked(log)
    assert first.source == anytime.POLICY and first.fallback == "", first
    assert first.work >= 1 and THINK - 0.5 <= first.elapsed <= BUDGET, first
    assert rest and all(d.source == anytime.POLICY for d in rest)


def _answers_while_thinking(log: GameLog, answer: str) -> int:
    """The ``answer`` lines (a keep-alive's) the client sent while its first asked decision
    was being thought: from the request, ``elapsed`` before the decision frame, to that frame.
    A loop blocked by the thinking writes them all after it: an order, not a delay that a
    loaded machine could stretch (the fake servers' delays were seen at 0.18 s under load)."""
    first = _asked(log)[0]
    frames = log.frames[:log.frames.index(first)]
    return sum(isinstance(f, TxFrame) and f.raw == answer and f.t >= first.t - first.elapsed
               for f in frames)


# ---------------------------------------------------------------------- Tenhou


async def _tenhou_game(tmp_path: Path, policy: str, budget: float, transport: str = "tcp",
                       keepalive_every: float | None = None, transcript: bool = False) \
        -> tuple[SessionSummary, FakeTenhouServer]:
    server = FakeTenhouServer(seed=1, time_limit=budget + 2, absent=10,
                              keepalive_every=keepalive_every, transcript=transcript)
    async with LoopThread() as other:
        port = await other.run(server.start_tcp() if transport == "tcp" else server.start_ws())
        settings = TenhouSettings(server=f"127.0.0.1:{port}", transport=transport,
                                  policy=policy, budget=budget, keepalive=60.0,
                                  log_dir=str(tmp_path / "client"))
        try:
            summary = await asyncio.wait_for(run_tenhou(settings), 120)
            await other.run(asyncio.wait_for(server.finished.wait(), 10))
        finally:
            await other.run(server.close())
    stats = server.stats
    assert summary.finished and stats.games == 1 and not summary.errors
    assert (stats.illegal, stats.timeouts) == (0, 0), stats.problems
    return summary, server


@pytest.mark.parametrize("transport", ["tcp", "ws"])
async def test_tenhou_keepalives_are_answered_while_the_policy_thinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str) -> None:
    policy = _register(monkeypatch, tmp_path, SlowThinker, think=THINK)
    _summary, server = await _tenhou_game(tmp_path, policy, BUDGET, transport,
                                          keepalive_every=0.3)
    stats = server.stats
    assert len(stats.keepalive_delays) >= 4, stats  # ~6 were sent while it thought
    assert stats.probes_unanswered <= 1  # one may go out as the client says BYE
    if transport == "ws":
        assert len(stats.ws_ping_delays) >= 4
    log = _log(tmp_path / "client")
    _thought_in_time(log)
    assert _answers_while_thinking(log, "<Z/>") >= 3, stats.keepalive_delays


async def test_tenhou_a_policy_that_never_returns_plays_its_best_so_far_on_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = _register(monkeypatch, tmp_path, NeverReturns)
    summary, _server = await _tenhou_game(tmp_path, policy, budget=1.0)
    first, *rest = _asked(_log(tmp_path / "client"))
    assert first.source == anytime.BEST_SO_FAR and first.work == 1, first
    # cut at the deadline the thinker kept: the platform's 1 s less the brain's margin (load
    # makes it shorter, never longer), once it had passed. How soon after is the event loop's
    # latency on this machine, no property of ours (exactly at it on a manual clock:
    # test_thinker).
    allowed = re.search(r"missed its ([0-9.]+)s budget", first.fallback)
    assert allowed is not None, first
    assert 0 < float(allowed[1]) <= policy_seconds(1.0), first
    assert first.elapsed >= float(allowed[1]), first
    # and cut then, not when the worker chose: the fake server allows budget + 2 s, so its
    # no-timeout check let a thinker that waited 1.5 s past its deadline through (2.25 s on
    # this 1 s budget). A lateness of CUT_LATE is a wait that ignored the deadline, not a
    # loaded event loop (seen 0.25 s late)
    assert first.elapsed < policy_seconds(1.0) + CUT_LATE, first
    # a fresh worker answers the rest of the game
    assert len(rest) > 5 and all(d.source == anytime.POLICY for d in rest)
    assert (summary.best_so_far, summary.fallbacks) == (1, 0)
    assert summary.kinds == {"late": 1}  # the clock's, counted by its kind


async def test_tenhou_a_policy_whose_process_dies_gets_the_fallback_and_nothing_is_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = _register(monkeypatch, tmp_path, DiesMidThought)
    summary, server = await _tenhou_game(tmp_path, policy, budget=1.0, transcript=True)
    log = _log(tmp_path / "client")
    first, *rest = _asked(log)
    assert first.source == anytime.fallback_source("rulebased"), first
    assert "worker process died (signal 9)" in first.fallback
    assert len(rest) > 5 and all(d.source == anytime.POLICY for d in rest)
    assert (summary.best_so_far, summary.fallbacks) == (0, 1)
    assert summary.kinds == {"failed": 1}
    # every tag both ways is in the log, in order (the client's last BYE comes after it)
    (wire,) = server.transcripts
    assert [f.raw for f in log.frames if isinstance(f, RxFrame)] == \
        [t for d, t in wire if d == "tx"]
    assert [f.raw for f in log.frames if isinstance(f, TxFrame)] == \
        [t for d, t in wire if d == "rx"][:-1]


async def _start_when_told(thinker: Thinker, connected: asyncio.Event, go: Path,
                           summary: SessionSummary) -> None:
    """Let the session's first worker (a StartsWhenTold policy's) get ready: at once where it
    has started before the session connected; else only once a decision fell back (the
    first one asked: an only legal action is not), as a start slower than that decision's
    budget would (a cold fork server's took 0.8-2+ s, the first decision came 30 ms after
    the login)."""
    await _until(lambda: thinker._starting is not None and thinker._starting.done())
    if connected.is_set():
        await _until(lambda: summary.fallbacks >= 1)
    go.touch()


async def test_tenhou_the_first_decision_finds_the_worker_started_before_connecting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker was started in the session's play loop after connecting, right before the
    HELO, and the fake server's INIT came moments after the login: with `--policy mc` the
    first decisions fell back as "mc's worker process was not started in time" (11 in one
    game on a busy machine). The session now starts its worker and waits for it before it
    connects. The worker here is ready only when the test says: at once if it started before
    the client reached the server (through a door that notes the connection), else after the
    first decision, which then fell back (not-ready)."""
    go = tmp_path / "go"
    policy = _register(monkeypatch, tmp_path, StartsWhenTold, go=go)
    server = FakeTenhouServer(seed=1, time_limit=3.0, absent=10)
    connected = asyncio.Event()

    async with LoopThread() as other:
        port = await other.run(server.start_tcp())

        async def door(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connected.set()
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)

            async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
                try:
                    while data := await src.read(65536):
                        dst.write(data)
                        await dst.drain()
                finally:
                    dst.close()

            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer),
                                 return_exceptions=True)

        entrance = await asyncio.start_server(door, "127.0.0.1", 0)
        settings = TenhouSettings(server=f"127.0.0.1:{entrance.sockets[0].getsockname()[1]}",
                                  policy=policy, budget=1.0, keepalive=60.0,
                                  log_dir=str(tmp_path / "client"))
        bot = TenhouBot(settings)
        try:
            playing = asyncio.create_task(run_tenhou(settings, bot))
            await asyncio.wait_for(_start_when_told(bot.thinker, connected, go, bot.summary),
                                   GUARD)
            summary = await asyncio.wait_for(playing, 120)
            await other.run(asyncio.wait_for(server.finished.wait(), 10))
        finally:
            entrance.close()
            await other.run(server.close())
    assert summary.finished and not summary.errors
    assert summary.kinds == {}, summary.kinds  # no "not-ready" among the first decisions
    first, *rest = _asked(_log(tmp_path / "client"))
    assert first.source == anytime.POLICY and rest, first


# ---------------------------------------------------------------------- NTPU


async def test_ntpu_readiness_checks_are_answered_while_the_policy_thinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = _register(monkeypatch, tmp_path, SlowThinker, think=THINK)
    others = [BotClient() for _ in range(3)]
    bot = NtpuBot(NtpuSettings(policy=policy, budget=BUDGET, log_dir=str(tmp_path / "client")))
    loop = asyncio.get_running_loop()
    ours: list[Any] = []

    def listening(port: int) -> None:  # in the server's thread: the others first, then ours
        for client in others:
            client.port = port
            client.start()
            assert client.connected.wait(10)
        ours.append(asyncio.run_coroutine_threadsafe(run_ntpu("127.0.0.1", port, bot), loop))

    result = await asyncio.to_thread(
        run_match, 1, [], seed=7, transport="external", time_limit=BUDGET + 2,
        log_dir=str(tmp_path / "server"), on_listening=listening, ready_every=0.3)
    summary = await asyncio.wait_for(asyncio.wrap_future(ours[0]), 30)
    for client in others:
        await asyncio.to_thread(client.join, 10)
    stats = result.stats[3]  # ours connected fourth
    assert (stats.illegal, stats.timeouts, stats.late, stats.unasked) == (0, 0, 0, 0), stats
    assert not summary.errors
    assert len(stats.ready_delays) >= 4 and stats.probes == len(stats.ready_delays), stats
    log = _log(tmp_path / "client")
    _thought_in_time(log)
    assert _answers_while_thinking(log, "/ready") >= 3, stats.ready_delays


# ---------------------------------------------------------------------- mjai


async def test_mjai_the_event_loop_stays_free_while_the_policy_thinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mjai has no keep-alive: the probe is a tick on the client's own loop every 10 ms,
    which goes on while the policy thinks (a loop blocked by the thinking runs none then)."""
    policy = _register(monkeypatch, tmp_path, SlowThinker, think=THINK)
    seat = 2
    events = _seen_by(seat)[:120]  # the first hand or so: the slow decision and some more
    answers: list[dict[str, Any]] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        answers.append(json.loads(await reader.readline()))
        for m in events:
            writer.write((json.dumps(m) + "\n").encode())
            await writer.drain()
            answers.append(json.loads(await asyncio.wait_for(reader.readline(), BUDGET + 2)))
        writer.close()

    ticks: list[float] = []

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.01)
            ticks.append(time.monotonic())  # the game log's clock

    async with LoopThread() as other:
        server = await other.run(asyncio.start_server(serve, "127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        bot = MjaiBot(MjaiSettings(policy=policy, budget=BUDGET, name="mjbot-test",
                                   log_dir=str(tmp_path / "client")))
        ticker = asyncio.create_task(tick())
        try:
            summary = await asyncio.wait_for(run_mjai("127.0.0.1", port, bot), 60)
        finally:
            ticker.cancel()
            other.loop.call_soon_threadsafe(server.close)
    assert not summary.errors and len(answers) == len(events) + 1
    _check_answers(seat, [[m] for m in events], answers[1:])
    (path,) = list((tmp_path / "client").rglob("*.mjlog.msgpack"))
    log = read_log(path)
    _thought_in_time(log)
    # ticks while it thought (from the request to the decision frame): an order on one clock,
    # not their lateness, which a loaded machine stretches (seen at 0.18 s)
    first = _asked(log)[0]
    assert sum(first.t - first.elapsed <= t <= first.t for t in ticks) >= 3, ticks


def test_a_session_counts_and_logs_each_answer_by_its_kind() -> None:
    """What counts answers reads the kind each carries, not its reason's text (kept for
    people as it was): the summary's counts by kind, the log stream's events."""
    from structlog.testing import capture_logs

    pass_ = ev.Pass()
    illegal = ev.Discard(999)
    answers = [
        Answer(pass_, (pass_,), "mc"),
        Answer(pass_, (pass_,), "mc", fallback="mc missed its 0.250s budget; played its best "
               "so far", source=anytime.BEST_SO_FAR, kind=FallbackKind.LATE),
        Answer(pass_, (pass_,), "mc", fallback=f"mc missed its 0.250s budget; its best so far "
               f"{illegal!r} is not legal", source=anytime.fallback_source("rulebased"),
               kind=FallbackKind.ILLEGAL),
        Answer(pass_, (pass_,), "mc", fallback="mc's worker process was not ready in time",
               source=anytime.fallback_source("rulebased"), kind=FallbackKind.NOT_READY),
    ]
    summary = SessionSummary()
    with capture_logs() as logs:
        for answer in answers:
            record_answer(answer, ev.DecisionRequest("claim"), summary, None, "tenhou")
    assert (summary.decisions, summary.best_so_far, summary.fallbacks) == (4, 1, 2)
    assert summary.kinds == {"late": 1, "illegal": 1, "not-ready": 1}
    assert [(e["event"], e["kind"], e["reason"]) for e in logs] == [
        (f"tenhou: {what}", a.kind.value, a.fallback)
        for what, a in zip(("best so far played", "fallback", "fallback"), answers[1:],
                           strict=True)]


async def test_mjai_the_first_decision_finds_the_worker_started_before_connecting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the Tenhou test above, for the clients that connect through
    adapter.session.connect_thinking (mjai over TCP, and NTPU): the worker is started and
    waited for before the connection, so the first decision is the policy's own."""
    go = tmp_path / "go"
    policy = _register(monkeypatch, tmp_path, StartsWhenTold, go=go)
    seat = 2
    events = _seen_by(seat)[:60]
    answers: list[dict[str, Any]] = []
    connected = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        writer.write(b'{"type":"hello","protocol":"mjsonp","protocol_version":3}\n')
        await writer.drain()
        answers.append(json.loads(await reader.readline()))
        for m in events:
            writer.write((json.dumps(m) + "\n").encode())
            await writer.drain()
            answers.append(json.loads(await asyncio.wait_for(reader.readline(), 5)))
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    bot = MjaiBot(MjaiSettings(policy=policy, budget=1.0, name="mjbot-test",
                               log_dir=str(tmp_path / "client")))
    try:
        playing = asyncio.create_task(run_mjai("127.0.0.1", port, bot))
        await asyncio.wait_for(_start_when_told(bot.thinker, connected, go, bot.summary), GUARD)
        summary = await asyncio.wait_for(playing, 60)
    finally:
        server.close()
    assert not summary.errors and len(answers) == len(events) + 1
    _check_answers(seat, [[m] for m in events], answers[1:])
    assert summary.kinds == {}, summary.kinds  # no "not-ready" among the first decisions
    (path,) = list((tmp_path / "client").rglob("*.mjlog.msgpack"))
    first, *rest = _asked(read_log(path))
    assert first.source == anytime.POLICY and rest, first
