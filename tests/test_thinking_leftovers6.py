"""The thinking workers' leftovers (adapter/thinking/), each with real worker processes: a
worker stalled before it is ready, a dead worker's exit status read off the loop, the size of
a job sent to a worker, the stdin form's worker started before its first line, and the warning
a user reads where a worker starts with the secrets."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import multiprocessing
import os
import signal
import struct
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from adapter.local.game import GameConfig, play_game
from adapter.local.seat import BrainSeat
from adapter.platforms.ntpu import NtpuBot, NtpuSettings, run_stdio
from adapter.thinking import worker_process
from adapter.thinking.thinker import READY_WITHIN, STALLED_TRIES, Thinker
from adapter.thinking.worker_process import (
    JOB_BOUND,
    JOB_ROOM,
    PolicyWorker,
    WorkerDied,
    _StatusReadOnce,
    default_start_method,
    job_message,
    room_for_jobs,
)
from brain import anytime
from brain.brain import Answer, Brain
from brain.clock import ManualClock
from brain.policies import POLICIES
from brain.tally import FallbackKind
from protocols import events as ev
from tests.anytime_policies import SlowThinker, StartsWhenTold
from tests.test_brain import _turn_state
from tests.test_ntpu_client import DEALER_HAND
from tests.test_thinker import GUARD, TURN, _gone, _on_a_manual_clock, _ready_worker, _until


async def _next_worker(thinker: Thinker, before: object) -> int:
    """The process id of the worker started after ``before`` (not ready: its start is)."""
    await _until(lambda: thinker.worker is not None and thinker.worker is not before
                 and thinker.worker.process is not None)
    assert thinker.worker is not None
    return int(thinker.worker.process.pid)


async def test_a_worker_stalled_before_ready_is_replaced_and_the_fresh_one_thinks(
        tmp_path: Path) -> None:
    """A worker whose policy never finished loading was never replaced: every decision of
    the session fell back as not ready, quietly, for the whole session. One not ready within
    READY_WITHIN of its start is killed and replaced, counted and said once; the fresh one
    thinks."""
    go = tmp_path / "go"
    thinker, clock = _on_a_manual_clock(StartsWhenTold(tmp_path / "n", go))
    try:
        with capture_logs() as logs:
            thinker.warm()
            first = await _next_worker(thinker, None)
            clock.advance(READY_WITHIN - 0.001)
            await asyncio.sleep(0.05)
            assert thinker.replaced == 0, "replaced before its bound"
            clock.advance(0.001)
            await _until(lambda: thinker.replaced == 1)
            assert await _gone(first), "the stalled worker was left running"
            go.touch()  # the next worker's policy loads
            await _next_worker(thinker, None)
            deciding = asyncio.ensure_future(thinker.decide(_turn_state(), TURN))
            answer = await asyncio.wait_for(deciding, GUARD)
        assert answer.kind is FallbackKind.NONE and answer.source == anytime.POLICY, answer
        assert thinker.stalled == 1 and thinker.replaced == 1 and not thinker.given_up
        said = [e for e in logs if e["event"] == "thinker: worker process replaced"]
        assert [e["reason"] for e in said] == [f"not ready within {READY_WITHIN:g} s of its "
                                               f"start"], said
    finally:
        go.touch()
        thinker.close()


async def test_workers_that_never_get_ready_end_in_the_fallback_said_loudly_once(
        tmp_path: Path) -> None:
    """Where no worker can be made ready (every one stalls), the session stops starting
    them after STALLED_TRIES in a row: one error line, and every decision from then on is
    the fallback policy's at once (counted as failed), with no worker left running."""
    go = tmp_path / "go"
    thinker, clock = _on_a_manual_clock(StartsWhenTold(tmp_path / "n", go))
    pids: list[int] = []
    try:
        with capture_logs() as logs:
            thinker.warm()
            worker: object = None
            for tries in range(1, STALLED_TRIES + 1):
                pids.append(await _next_worker(thinker, worker))
                worker = thinker.worker
                clock.advance(READY_WITHIN)
                await _until(lambda tries=tries: thinker.stalled == tries)  # type: ignore[misc]
            answers = [await asyncio.wait_for(thinker.decide(_turn_state(), TURN), GUARD)
                       for _ in range(3)]
        assert thinker.given_up and thinker.worker is None and thinker._starting is None
        for answer in answers:
            assert answer.kind is FallbackKind.FAILED, answer
            assert answer.source == anytime.fallback_source("rulebased"), answer
            assert "no worker process was ready within" in answer.fallback
        for pid in pids:
            assert await _gone(pid), f"worker {pid} left running"
        loud = [e for e in logs if e["log_level"] == "error"]
        assert len(loud) == 1 and loud[0]["event"].startswith(
            f"thinker: no worker process was ready within {READY_WITHIN:g} s of its start, "
            f"{STALLED_TRIES} in a row; the session plays its fallback policy"), loud
        assert thinker.stalled == STALLED_TRIES == thinker.replaced
    finally:
        go.touch()
        thinker.close()


async def test_a_dead_workers_exit_status_is_waited_for_off_the_loop(tmp_path: Path) -> None:
    """The loop read a dead worker's exit status in pipe_watch.exit_code(process, 0.1): where
    it was not there yet (a spawned worker's sentinel fires a moment before it; a fork-server
    child's cannot be read while another thread reads it) the loop slept up to 0.1 s, every
    session of the process held, and then reported the death with no signal. Here another
    thread holds the status (as a worker start's poll of every child does) while the worker
    is killed: the loop goes on, and the end is reported with its signal once it can be
    read."""
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n", times=0), limit=1.0))
    try:
        await _ready_worker(thinker)
        worker = thinker.worker
        assert worker is not None and worker.process is not None
        popen = worker.process._popen
        assert isinstance(popen, _StatusReadOnce)
        popen._reading.acquire()  # another thread is reading the status
        try:
            os.kill(worker.process.pid, signal.SIGKILL)
            await asyncio.to_thread(wait, [worker.process.sentinel], GUARD)
            for _ in range(20):  # the loop sees the sentinel and looks for the status
                await asyncio.sleep(0)
            assert worker._conn is None, "the end was not seen"
            assert worker.exit_reason == "", f"reported before its status: {worker.exit_reason}"
        finally:
            popen._reading.release()
        await _until(lambda: worker.exit_reason != "")
        assert worker.exit_reason == "its worker process died (signal 9)"
    finally:
        thinker.close()


async def test_a_worker_started_with_the_secrets_says_which_in_a_users_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started while other threads ran takes the secrets with it (the environment
    cannot be changed under them). The warning spoke of start_server, a function a user never
    calls, and named no secret; it names them now, and what it means for the user. The
    secret is really in the worker's environment (/proc), as the warning says."""
    monkeypatch.setenv("MJBOT_TENHOU_ID", "ID-SECRET-VALUE")
    monkeypatch.setattr(worker_process, "_unclean_said", False)
    other = threading.Event()
    thread = threading.Thread(target=other.wait, daemon=True)
    thread.start()  # another thread runs: nothing can be withheld
    worker = PolicyWorker(SlowThinker(tmp_path / "n", times=0), start_method="spawn")
    try:
        with capture_logs() as logs:
            await asyncio.wait_for(worker.start(), GUARD)
            assert await worker.ready(None)
        said = [e for e in logs if "secrets" in e["event"]]
        assert len(said) == 1, logs
        assert said[0]["secrets"] == "MJBOT_TENHOU_ID"
        assert "start_server" not in said[0]["event"]
        assert "ID-SECRET-VALUE" not in repr(said)
        assert said[0]["event"].startswith("thinker: the policy's worker processes start "
                                           "with mjbot's secrets in their environment")
        environ = Path(f"/proc/{worker.pid}/environ")
        if environ.exists():
            assert b"MJBOT_TENHOU_ID=" in environ.read_bytes()
    finally:
        other.set()
        worker.kill()


class _Measuring(BrainSeat):
    """A rule-based seat that notes the largest job a worker would be sent for its turns."""

    largest: tuple[int, str] = (0, "")

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Answer:
        if legal is not None:
            size = len(ForkingPickler.dumps(job_message(10_000, self.state, request, legal,
                                                        1.5)))
            if size > _Measuring.largest[0]:
                _Measuring.largest = (size, f"{self.state.variant} {request.kind}, "
                                            f"{len(legal)} legal actions")
        return super().decide(request, legal)


@pytest.mark.parametrize(("variant", "games", "hands"),
                         [("mcr", 8, 1), ("taiwan16", 1, 8), ("riichi", 1, 4)])
def test_a_job_stays_far_under_what_the_pipe_takes_before_a_send_waits(
        variant: str, games: int, hands: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job goes to its worker whole from the event loop: one over what the pipe takes
    would hold the loop until the worker read it. Jobs are small (the largest of 300 MCR
    games, 4,879 bytes: a late hand's discards and melds) and the worker is waiting for
    each: bounded here, in whole games of each variant, rather than sent in pieces. This
    fails where a job grows past JOB_BOUND, or a platform's pipe takes less than JOB_ROOM
    once a worker's start asked for it (tests/test_thinking_leftovers7.py)."""
    monkeypatch.setattr(_Measuring, "largest", (0, ""))
    for game in range(games):
        seats = [_Measuring(variant, seat, "rulebased") for seat in range(4)]
        play_game(GameConfig(variant, hands=hands), seats, seed=70, game=game)
    size, where = _Measuring.largest
    assert 1000 < size < JOB_BOUND, f"a job of {size} bytes ({where})"
    parent, child = multiprocessing.get_context(default_start_method()).Pipe()
    room_for_jobs(parent, child)  # as a worker's start does (macOS gives 8 KiB)
    os.set_blocking(parent.fileno(), False)
    taken = 0
    with parent, child, contextlib.suppress(BlockingIOError):
        while taken < JOB_ROOM:
            taken += os.write(parent.fileno(), bytes(4096))
    assert JOB_ROOM >= 4 * JOB_BOUND
    assert taken >= JOB_ROOM, f"the pipe takes {taken} bytes before a write waits"


def _unread(fd: int) -> int:
    """Bytes written to the pipe ``fd`` and not read yet (POSIX: FIONREAD)."""
    import fcntl
    import termios

    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


@pytest.mark.skipif(sys.platform == "win32", reason="FIONREAD on a pipe: POSIX")
async def test_the_ntpu_stdin_form_takes_its_first_line_once_its_worker_is_ready(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`mjbot ntpu --stdio` started its worker as it began reading: the referee's /ready
    check was answered at once, the match began, and its first decisions fell back as not
    ready while the worker started. As the TCP form waits before it connects, it now waits
    (up to 10 s) before it takes its first line: /ready is answered once the policy is
    ready, and the first decision is the policy's own."""
    go = tmp_path / "go"
    policy = functools.partial(StartsWhenTold, tmp_path / "n", go)
    monkeypatch.setitem(POLICIES, StartsWhenTold.name, policy)
    read, write = os.pipe()
    stdin = os.fdopen(read, "rb", buffering=0)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", out)
    bot = NtpuBot(NtpuSettings(policy=StartsWhenTold.name, budget=2.0, write_log=False))
    try:
        with capture_logs():
            session = asyncio.ensure_future(run_stdio(bot))
            os.write(write, b"/ready\n")
            await _until(lambda: bot.thinker.worker is not None)  # started, not ready
            await _until(lambda: _unread(read) == 0)  # the stdin thread has the line
            await asyncio.sleep(0.2)  # room for an answer that does not wait for the worker
            assert out.getvalue() == "", "answered before the policy was ready"
            go.touch()
            await _until(lambda: out.getvalue() != "")
            assert out.getvalue() == "/ready\n"
            assert bot.thinker.worker is not None and bot.thinker.worker.pid is not None
            os.write(write, (f"/start MJ 1 mjbot\n/initGame east east 1 1 0\n"
                             f"/initCard {DEALER_HAND}\n/ask throw\n/close\n").encode())
            os.close(write)
            summary = await asyncio.wait_for(session, GUARD)
        assert out.getvalue().splitlines()[1].startswith("/throw ")
        assert summary.decisions == 1 and summary.fallbacks == 0, summary
    finally:
        go.touch()
        bot.thinker.close()
        stdin.close()


async def test_a_wait_for_the_worker_follows_the_one_that_replaced_a_stalled_one(
        tmp_path: Path) -> None:
    """``Thinker.ready`` (the wait before connecting, ``mjbot bench think``) waited on the
    worker it found: once that one stalled and was replaced, on a killed process, to the
    end of its timeout, the fresh worker ready meanwhile. It follows the replacement now;
    and where workers are no longer started (every one stalled) it says why at once."""
    go = tmp_path / "go"
    thinker, clock = _on_a_manual_clock(StartsWhenTold(tmp_path / "n", go))
    try:
        waiting = asyncio.ensure_future(thinker.ready(GUARD))
        await _next_worker(thinker, None)
        clock.advance(READY_WITHIN)
        await _until(lambda: thinker.replaced == 1)
        go.touch()
        await asyncio.wait_for(waiting, GUARD)  # no TimeoutError: the fresh one is ready
        assert thinker.worker is not None and thinker.worker.pid is not None
    finally:
        go.touch()
        thinker.close()
    never = tmp_path / "never"
    thinker, clock = _on_a_manual_clock(StartsWhenTold(tmp_path / "m", never))
    try:
        waiting = asyncio.ensure_future(thinker.ready(GUARD))
        worker: object = None
        for tries in range(1, STALLED_TRIES + 1):
            await _next_worker(thinker, worker)
            worker = thinker.worker
            clock.advance(READY_WITHIN)
            await _until(lambda tries=tries: thinker.stalled == tries)  # type: ignore[misc]
        with pytest.raises(WorkerDied, match="no worker process was ready within"):
            await asyncio.wait_for(waiting, GUARD)
        with pytest.raises(WorkerDied, match="no worker process was ready within"):
            await thinker.ready(GUARD)
    finally:
        never.touch()
        thinker.close()


async def test_a_thinker_given_a_longer_start_keeps_a_slow_worker_that_long(
        tmp_path: Path) -> None:
    """``mjbot bench think`` lets a worker take --ready-within (120 s) to start beside its
    busy loops, where a spawned one may take over 10 s: its thinker is given that bound, so
    such a worker is not killed at the sessions' READY_WITHIN, only past its own."""
    go = tmp_path / "go"
    clock = ManualClock()
    thinker = Thinker(Brain("riichi", StartsWhenTold(tmp_path / "n", go), limit=1.0,
                            clock=clock), ready_within=3 * READY_WITHIN)
    try:
        thinker.warm()
        await _next_worker(thinker, None)
        clock.advance(READY_WITHIN)
        await asyncio.sleep(0.05)
        assert thinker.replaced == 0, "killed at the sessions' bound"
        clock.advance(2 * READY_WITHIN)
        await _until(lambda: thinker.replaced == 1)
    finally:
        go.touch()
        thinker.close()


async def test_a_worker_whose_start_waited_past_the_bound_is_not_killed_as_it_is_forked(
        tmp_path: Path) -> None:
    """The stall bound was timed from the start asked, so a start that waited past it (for
    the fork server's first preload, or for a thread of the loop's executor, which every
    session of `mjbot serve` shares) had its worker killed the moment it was forked, before
    it could load, and counted as stalled (three such in a row: the fallback for good). It
    is timed from the process's existence now: the worker loads and is kept."""
    executor = ThreadPoolExecutor(max_workers=1)
    asyncio.get_running_loop().set_default_executor(executor)
    busy = threading.Event()
    held = asyncio.ensure_future(asyncio.to_thread(busy.wait, GUARD))  # its one thread taken
    thinker, clock = _on_a_manual_clock(SlowThinker(tmp_path / "n", times=0))
    try:
        with capture_logs() as logs:
            thinker.warm()
            await asyncio.sleep(0.1)
            assert thinker.worker is None, "started without a thread"
            clock.advance(READY_WITHIN + 1.0)  # the start waits past the bound
            busy.set()
            await held
            await _until(lambda: thinker.replaced > 0 or (
                thinker.worker is not None and thinker.worker.pid is not None))
            await asyncio.sleep(0.1)
        assert thinker.replaced == 0 and thinker.stalled == 0, logs
        assert thinker.worker is not None and thinker.worker.pid is not None
    finally:
        busy.set()
        thinker.close()
        executor.shutdown(wait=False)
