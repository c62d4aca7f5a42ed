"""The thinking workers' leftovers after thinking6's review (adapter/thinking/), each with real
worker processes: a session that gave up on its workers tries a fresh one again after a
growing wait, the size of a job against what the worker's pipe takes, and a worker whose watch
could not be set up reaped off the loop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVarTuple

import pytest
from structlog.testing import capture_logs

from adapter.thinking.thinker import READY_WITHIN, RETRY_AFTER, STALLED_TRIES, Thinker
from adapter.thinking.worker_process import (
    JOB_ROOM,
    PolicyWorker,
    _StatusReadOnce,
    default_start_method,
    room_for_jobs,
)
from brain import anytime
from brain.brain import Answer, Brain
from brain.clock import ManualClock
from brain.tally import FallbackKind
from tests.anytime_policies import SlowThinker, StartsWhenTold
from tests.test_brain import _turn_state
from tests.test_thinker import (
    GUARD,
    TURN,
    _gone,
    _on_a_manual_clock,
    _ready_worker,
    _until,
)
from tests.test_thinking_leftovers6 import _next_worker


async def _decide(thinker: Thinker) -> Answer:
    return await asyncio.wait_for(thinker.decide(_turn_state(), TURN), GUARD)


def _the_fallback_at_once(answer: Answer) -> None:
    assert answer.kind is FallbackKind.FAILED, answer
    assert answer.source == anytime.fallback_source("rulebased"), answer
    assert "no worker process was ready within" in answer.fallback, answer


async def _given_up(thinker: Thinker, clock: ManualClock) -> list[int]:
    """Stall STALLED_TRIES workers in a row (their load waits for a file not made): the
    session gives up on them. Their process ids."""
    pids: list[int] = []
    thinker.warm()
    worker: object = None
    for tries in range(1, STALLED_TRIES + 1):
        pids.append(await _next_worker(thinker, worker))
        worker = thinker.worker
        clock.advance(READY_WITHIN)
        await _until(lambda tries=tries: thinker.stalled == tries)  # type: ignore[misc]
    assert thinker.given_up
    return pids


async def test_a_session_that_gave_up_on_its_workers_plays_its_policy_again(
        tmp_path: Path) -> None:
    """After STALLED_TRIES workers in a row were not ready, the session played its fallback
    for the rest of the run: a long run (a Tenhou `games` run under `mjbot serve`) whose
    starts were slow for a stretch never played its policy again. It now tries one fresh
    worker after RETRY_AFTER seconds, then twice as long after each try that is not ready
    (stalled, or dead before it was ready), every decision meanwhile the fallback's at once;
    one line per give-up, one when the policy plays again, and no more than one worker at
    a time."""
    go = tmp_path / "go"  # the workers' load stalls until the test makes it
    thinker, clock = _on_a_manual_clock(StartsWhenTold(tmp_path / "n", go))
    pids: list[int] = []

    async def a_try_after(wait: float) -> int:
        """The worker started once ``wait`` seconds have passed, and none before."""
        clock.advance(wait - 0.25)  # binary fractions: the sum is the wait exactly
        await asyncio.sleep(0.1)
        assert thinker._starting is None and thinker.worker is None, "tried too soon"
        _the_fallback_at_once(await _decide(thinker))
        clock.advance(0.25)
        pid = await _next_worker(thinker, None)
        for old in pids:
            assert await _gone(old), f"an earlier worker ({old}) left running"
        pids.append(pid)
        return pid

    try:
        with capture_logs() as logs:
            pids += await _given_up(thinker, clock)
            _the_fallback_at_once(await _decide(thinker))

            await a_try_after(RETRY_AFTER)  # stalls as the others did
            _the_fallback_at_once(await _decide(thinker))  # never a wait for it
            clock.advance(READY_WITHIN)
            await _until(lambda: thinker.stalled == STALLED_TRIES + 1)
            assert thinker.worker is None and thinker._starting is None

            dies = await a_try_after(2 * RETRY_AFTER)  # killed as it loads: no decision
            os.kill(dies, signal.SIGKILL)              # asks it, and the watch sees it
            await _until(lambda: thinker.worker is None)
            assert thinker.given_up

            go.touch()  # starts are quick again
            await a_try_after(4 * RETRY_AFTER)
            await _until(lambda: not thinker.given_up)
            answer = await _decide(thinker)
        assert answer.kind is FallbackKind.NONE and answer.source == anytime.POLICY, answer
        loud = [e for e in logs if e["log_level"] == "error"]
        assert [e["event"].rsplit(", ", 1)[1] for e in loud] == [
            f"the next tried in {RETRY_AFTER * 2 ** n:g} s" for n in range(3)], loud
        assert loud[1]["reason"] == f"not ready within {READY_WITHIN:g} s of its start"
        assert loud[2]["reason"] == "its worker process died (signal 9)", loud
        again = [e for e in logs if "plays its policy again" in e["event"]]
        assert len(again) == 1, again
        replaced = [e for e in logs if e["event"] == "thinker: worker process replaced"]
        assert len(replaced) == STALLED_TRIES, replaced  # the tries say their give-up only
        assert thinker.stalled == STALLED_TRIES + 1
    finally:
        go.touch()
        thinker.close()


async def test_a_try_whose_start_fails_is_a_give_up_and_the_next_try_plays(
        tmp_path: Path) -> None:
    """A try after a give-up whose start fails (here the policy cannot be pickled; the fork
    server gone would be another) is one more give-up, the next try twice as late: the
    policy plays again once a start works."""
    go, refuse = tmp_path / "go", tmp_path / "refuse"
    thinker, clock = _on_a_manual_clock(StartsWhenTold(tmp_path / "n", go, refuse=refuse))
    try:
        with capture_logs() as logs:
            await _given_up(thinker, clock)
            refuse.touch()
            clock.advance(RETRY_AFTER)
            await _until(lambda: sum(e["log_level"] == "error" for e in logs) == 2)
            assert thinker.worker is None and thinker._starting is None and thinker.given_up
            _the_fallback_at_once(await _decide(thinker))
            refuse.unlink()
            go.touch()
            clock.advance(2 * RETRY_AFTER - 0.25)
            await asyncio.sleep(0.1)
            assert thinker._starting is None, "tried too soon"
            clock.advance(0.25)
            await _until(lambda: not thinker.given_up)
            answer = await _decide(thinker)
        assert answer.kind is FallbackKind.NONE and answer.source == anytime.POLICY, answer
        loud = [e for e in logs if e["log_level"] == "error"]
        assert loud[1]["reason"] == ("cannot start a worker process (PicklingError: refused "
                                     "while refuse exists)"), loud
        assert loud[1]["event"].endswith(f"the next tried in {2 * RETRY_AFTER:g} s"), loud
    finally:
        go.touch()
        thinker.close()


def _buffer(conn: Connection, option: int) -> int:
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        return int(sock.getsockopt(socket.SOL_SOCKET, option))


def _set_buffer(conn: Connection, option: int, size: int) -> None:
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        sock.setsockopt(socket.SOL_SOCKET, option, size)


@pytest.mark.skipif(sys.platform == "win32", reason="a Unix socket pair: POSIX")
def test_a_job_socket_given_macos_8_kib_takes_four_of_the_largest_jobs() -> None:
    """The job-size test took 4 x 16 KiB before a write waits from the pipe as the platform
    made it: macOS gives a Unix socket pair 8 KiB, under two of the largest jobs (4,879
    bytes), and a send that waits holds the event loop. A worker's start asks for JOB_ROOM
    where it has less: here a pair cut to macOS's 8 KiB first takes JOB_ROOM, as granted."""
    parent, child = multiprocessing.get_context(default_start_method()).Pipe()
    with parent, child:
        _set_buffer(parent, socket.SO_SNDBUF, 8192)
        _set_buffer(child, socket.SO_RCVBUF, 8192)
        granted = room_for_jobs(parent, child)
        assert granted == min(_buffer(parent, socket.SO_SNDBUF),
                              _buffer(child, socket.SO_RCVBUF)) >= JOB_ROOM, granted
        os.set_blocking(parent.fileno(), False)
        taken = 0
        with contextlib.suppress(BlockingIOError):
            while taken < JOB_ROOM:
                taken += os.write(parent.fileno(), bytes(4096))
    assert taken >= JOB_ROOM, f"the job socket takes {taken} bytes before a write waits"


@pytest.mark.skipif(sys.platform == "win32", reason="a Unix socket pair: POSIX")
async def test_a_real_workers_job_socket_has_the_room(tmp_path: Path) -> None:
    """What a worker's start leaves: its job socket takes JOB_ROOM, both ends, and the
    worker thinks (the room asked never lowers what the platform gave: Linux's 208 KiB)."""
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n", times=0), limit=1.0))
    try:
        await _ready_worker(thinker)
        worker = thinker.worker
        assert worker is not None and worker._conn is not None
        assert _buffer(worker._conn, socket.SO_SNDBUF) >= JOB_ROOM
        answer = await asyncio.wait_for(thinker.decide(_turn_state(), TURN), GUARD)
        assert answer.kind is FallbackKind.NONE and answer.source == anytime.POLICY, answer
    finally:
        thinker.close()


Ts = TypeVarTuple("Ts")


class _RefusesTheWorkersEnd(asyncio.SelectorEventLoop):
    """A real selector loop that refuses to watch a worker process's end (as a loop may
    refuse a descriptor: PolicyWorker._discard's path) and, as it refuses, holds the
    worker's exit status as another thread reading it would (_StatusReadOnce): the status
    is not there until the test lets go."""

    held: threading.Lock | None = None

    def add_reader(self, fd: Any, callback: Callable[[*Ts], Any], *args: *Ts) -> None:
        worker = getattr(callback, "__self__", None)
        if isinstance(worker, PolicyWorker) and callback.__name__ == "_ended":
            popen = worker.process._popen
            assert isinstance(popen, _StatusReadOnce)
            popen._reading.acquire()
            self.held = popen._reading
            raise OSError("this loop refuses it")
        super().add_reader(fd, callback, *args)


@pytest.mark.skipif(sys.platform == "win32", reason="the fork server's children")
def test_a_worker_whose_watch_failed_is_reaped_off_the_loop(tmp_path: Path) -> None:
    """A worker whose watch could not be set up was killed and its exit status waited for
    on the loop, up to 5 s (REAP_WITHIN), every session of the process held; where the
    status was not there by then it was never read (a zombie until the next start). The
    loop now looks for it every 10 ms: the start fails at once with its error, and the
    worker is reaped once its status can be read."""
    loop = _RefusesTheWorkersEnd()

    async def body() -> None:
        worker = PolicyWorker(SlowThinker(tmp_path / "n", times=0), start_method="forkserver")
        with pytest.raises(OSError, match="this loop refuses it"):
            await asyncio.wait_for(worker.start(), GUARD)
        held, popen = loop.held, worker.process._popen
        assert held is not None and popen.returncode is None, popen.returncode
        held.release()  # the status can be read now: the loop's next look reaps it
        await _until(lambda: popen.returncode is not None)
        assert popen.returncode == -signal.SIGKILL

    try:
        loop.run_until_complete(body())
    finally:
        if loop.held is not None and loop.held.locked():
            loop.held.release()
        loop.close()


def _open_descriptors() -> int:
    return len(os.listdir("/dev/fd"))


@pytest.mark.skipif(sys.platform == "win32", reason="descriptors listed in /dev/fd")
@pytest.mark.parametrize("method", ["forkserver", "spawn"])
async def test_a_start_that_fails_leaves_no_end_of_its_pipe_open(
        tmp_path: Path, method: str) -> None:
    """A worker's start that failed (its policy could not be pickled; the fork server gone
    would be another) closed the worker's end of the socket pair but left the session's
    end open, held by the start's error and its traceback until the cycle collector came
    by: after a give-up a session whose tries kept failing held one more socket a try, and
    more while the collector was off (mjbot serve pauses it while a log is read). With the
    collector off here, no try leaves a descriptor behind."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} here")
    refuse = tmp_path / "refuse"
    refuse.touch()
    policy = StartsWhenTold(tmp_path / "n", tmp_path / "go", refuse=refuse)

    async def a_failed_start() -> None:
        with pytest.raises(Exception, match="refused while refuse exists"):
            await asyncio.wait_for(PolicyWorker(policy, start_method=method).start(), GUARD)

    await a_failed_start()  # a fork server started for it keeps descriptors of its own
    collecting = gc.isenabled()
    gc.disable()
    try:
        before = _open_descriptors()
        for _ in range(3):
            await a_failed_start()
        left = _open_descriptors() - before
    finally:
        if collecting:
            gc.enable()
    assert left == 0, f"{left} descriptors left open by 3 failed starts"
