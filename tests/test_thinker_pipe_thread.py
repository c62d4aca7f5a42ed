"""The thinker on an event loop that cannot watch a pipe, as Windows' Proactor loop (no
``add_reader``): every decision fell back as "cannot start a worker process
(NotImplementedError: )" and each one started a fresh interpreter. A thread now reads each
worker's pipe (adapter/thinking/pipe_watch.py), so the policy answers, one that overruns plays
its best so far at the deadline and its process is killed and replaced, one that dies is seen
at once, and no process or thread is left at the end.

The loop is a real selector loop whose public ``add_reader`` / ``remove_reader`` raise, as the
Proactor loop's do (tests/windows_loop.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from structlog.testing import capture_logs

from adapter.thinking.pipe_watch import why_not_on_the_loop
from adapter.thinking.thinker import Thinker
from brain import anytime
from brain.brain import Brain
from brain.clock import ManualClock
from brain.tally import FallbackKind
from protocols import events as ev
from tests.anytime_policies import DiesMidThought, NeverReturns, SlowThinker
from tests.test_brain import _turn_state
from tests.windows_loop import ProactorLikeLoop

TURN = ev.DecisionRequest("turn")
GUARD = 30.0  # real seconds a test waits for a worker before it fails (never a bound it tests)
T = TypeVar("T")


def _run(main: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=ProactorLikeLoop) as runner:
        return runner.run(main)


async def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + GUARD
    while not check():
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(0.01)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _pipe_threads(pids: set[int]) -> list[str]:
    names = {f"mjbot-worker-pipe-{pid}" for pid in pids}
    return [t.name for t in threading.enumerate() if t.name in names]


async def _ready_pid(thinker: Thinker) -> int:
    thinker.warm()
    await thinker.ready(GUARD)
    assert thinker.worker is not None and thinker.worker.pid is not None
    return thinker.worker.pid


def test_only_a_loop_that_cannot_watch_a_pipe_is_passed_over() -> None:
    async def main() -> str:
        return why_not_on_the_loop(asyncio.get_running_loop())

    assert asyncio.run(main()) == ""
    assert _run(main()) == "ProactorLikeLoop.add_reader: NotImplementedError"


@contextlib.contextmanager
def _no_descriptor_left() -> Iterator[None]:
    """Every file descriptor this process may open is open (a soft RLIMIT_NOFILE of 256,
    filled with /dev/null), as a long session that leaked them meets it; undone after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held: list[int] = []
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))
    try:
        with contextlib.suppress(OSError):
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_decision_with_no_descriptor_left_falls_back_and_the_next_is_asked(
        tmp_path: Path) -> None:
    """The pipe that asks the loop whether it can watch one could not be made: the decision
    raised OSError out of ``decide`` (a session's start, out of ``warm``), where it fell back
    as "cannot start a worker process" before; the loop is asked again at the next start."""
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n", think=0.1), limit=3.0))

    async def main() -> tuple[Any, Any]:
        with _no_descriptor_left():
            failed = await thinker.decide(_turn_state(), TURN)
        assert thinker.pipe_thread is None
        pid = await _ready_pid(thinker)
        answer = await thinker.decide(_turn_state(), TURN)
        thinker.close()
        await _until(lambda: _gone(pid))
        return failed, answer

    failed, answer = asyncio.run(main())
    assert failed.kind is FallbackKind.FAILED and failed.action in failed.legal
    assert "cannot start a worker process (OSError: [Errno 24]" in failed.fallback
    assert thinker.pipe_thread is False  # this loop watches the pipe itself
    assert answer.source == anytime.POLICY and answer.fallback == ""


def _forkserver_children() -> set[int]:
    """The processes the fork server has started and that are still there (zombies too)."""
    from multiprocessing import forkserver

    server = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # the parent's pid is the second field after the name, which may hold spaces
            if int(stat.read_text().rpartition(")")[2].split()[1]) == server:
                found.add(int(stat.parent.name))
    return found


@contextlib.contextmanager
def _no_thread_can_start() -> Iterator[None]:
    """Every thread started meanwhile asks for a stack larger than any address space, so
    starting one fails as where threads have run out (RuntimeError: can't start new
    thread); undone after."""
    threading.stack_size(2**50)
    try:
        yield
    finally:
        threading.stack_size(0)


def test_a_pipe_thread_that_cannot_start_leaves_no_worker_behind(tmp_path: Path) -> None:
    """The worker's process had started when its pipe's thread failed to: the decision fell
    back as "cannot start a worker process", as it still does, and the process was left
    waiting for jobs for ever, one more at each decision. It is killed and reaped now; the
    next decision starts a worker and is answered by the policy."""
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n", think=0.1), limit=3.0))

    async def main() -> tuple[Any, set[int], Any]:
        # the fork server up, and the loop's thread that starts workers there and idle
        first = Thinker(Brain("riichi", SlowThinker(tmp_path / "n"), limit=3.0))
        pid = await _ready_pid(first)
        first.close()
        await _until(lambda: _gone(pid))
        before = _forkserver_children()  # another test's, where one is still there
        with _no_thread_can_start():
            failed = await thinker.decide(_turn_state(), TURN)
        with contextlib.suppress(AssertionError):  # killed, its status read off the loop
            await _until(lambda: not _forkserver_children() - before)
        left = _forkserver_children() - before
        answer = await thinker.decide(_turn_state(), TURN)
        thinker.close()
        return failed, left, answer

    failed, left, answer = _run(main())
    assert failed.kind is FallbackKind.FAILED and failed.action in failed.legal
    assert "cannot start a worker process (RuntimeError: can't start new thread)" \
        in failed.fallback, failed.fallback
    assert left == set(), "the worker whose pipe thread could not start is still there"
    assert answer.source == anytime.POLICY and answer.fallback == ""


@pytest.mark.parametrize("method", [None, "spawn"])
def test_an_overrunning_policy_is_answered_by_its_deadline_and_replaced(
        tmp_path: Path, method: str | None) -> None:
    clock = ManualClock()
    thinker = Thinker(Brain("riichi", NeverReturns(tmp_path / "n"), limit=1.0, clock=clock),
                      method)
    pids: set[int] = set()

    async def main() -> list[Any]:
        stuck = await _ready_pid(thinker)
        pids.add(stuck)
        worker = thinker.worker
        assert worker is not None
        deciding = asyncio.ensure_future(thinker.decide(_turn_state(), TURN))
        await _until(lambda: worker.best is not None)  # its best so far came through the thread
        clock.advance(0.75)
        late = await asyncio.wait_for(deciding, GUARD)
        await _until(lambda: _gone(stuck))  # killed and reaped (by the thread)
        answers = [late] + [await thinker.decide(_turn_state(), TURN) for _ in range(3)]
        assert thinker.worker is not None and thinker.worker.pid is not None
        pids.add(thinker.worker.pid)
        thinker.close()
        await _until(lambda: all(_gone(pid) for pid in pids) and not _pipe_threads(pids))
        return answers

    with capture_logs() as logs:
        late, *after = _run(main())
    assert thinker.pipe_thread is True
    assert late.source == anytime.BEST_SO_FAR and late.work == 1
    assert late.kind is FallbackKind.LATE and late.elapsed == 0.75  # at its deadline
    assert late.fallback == "test-never missed its 0.750s budget; played its best so far"
    assert thinker.replaced == 1 and len(pids) == 2
    for answer in after:  # the replacement's own answers, none a fallback
        assert answer.source == anytime.POLICY and answer.fallback == "", answer.fallback
        assert answer.action in answer.legal
    chosen = [e for e in logs if e["event"].startswith("thinker: a thread reads")]
    assert len(chosen) == 1, logs  # once per thinker, not per worker or decision
    assert chosen[0]["reason"] == "ProactorLikeLoop.add_reader: NotImplementedError"
    assert chosen[0]["log_level"] == "warning"


def test_a_slow_policy_answers_itself_with_its_work(tmp_path: Path) -> None:
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n", think=0.4, chunk=0.1),
                            limit=3.0))

    async def main() -> tuple[Any, int]:
        pid = await _ready_pid(thinker)
        answer = await thinker.decide(_turn_state(), TURN)
        thinker.close()
        await _until(lambda: _gone(pid) and not _pipe_threads({pid}))
        return answer, pid

    answer, pid = _run(main())
    assert pid != os.getpid()
    assert answer.source == anytime.POLICY and answer.fallback == ""
    assert answer.work >= 1 and answer.action in answer.legal


def test_a_worker_that_dies_is_seen_at_once(tmp_path: Path) -> None:
    clock = ManualClock()
    thinker = Thinker(Brain("riichi", DiesMidThought(tmp_path / "n"), limit=2.0, clock=clock))

    async def main() -> tuple[Any, Any, set[int]]:
        dead = await _ready_pid(thinker)
        answer = await asyncio.wait_for(thinker.decide(_turn_state(), TURN), GUARD)
        after = await thinker.decide(_turn_state(), TURN)
        assert thinker.worker is not None and thinker.worker.pid not in (None, dead)
        pids = {dead, thinker.worker.pid}
        thinker.close()
        await _until(lambda: all(_gone(pid) for pid in pids) and not _pipe_threads(pids))
        return answer, after, pids

    answer, after, _pids = _run(main())
    assert answer.elapsed == 0.0 and clock.now() == 0.0  # not at the deadline
    assert "worker process died (signal 9)" in answer.fallback
    assert answer.kind is FallbackKind.FAILED and answer.action in answer.legal
    assert after.source == anytime.POLICY and after.fallback == ""


async def test_mjai_with_mc_on_such_a_loop_plays_mcs_own_answers(tmp_path: Path) -> None:
    """The command as a user runs it (``mjbot mjai --server``, mc) on the loop: before, each
    of mc's decisions fell back ("mc: cannot start a worker process (NotImplementedError: )",
    10 of the 28 decisions of these 60 events, the 18 others forced)."""
    import sys
    from collections import Counter

    from replay.log import read_log
    from tests.serve_helpers import PYTHON_ENV, ROOT
    from tests.test_mjai import _scripted_server, _seen_by

    server, port = await _scripted_server(_seen_by(0)[:60])
    async with server:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.windows_loop", "mjai", "--server", f"127.0.0.1:{port}",
            "--policy", "mc", "--log-dir", str(tmp_path), cwd=ROOT, env=PYTHON_ENV,
            stderr=asyncio.subprocess.PIPE)
        try:
            _out, err = await asyncio.wait_for(proc.communicate(), 300)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    said = err.decode()
    assert "cannot start a worker process" not in said and "Traceback" not in said, said[-2000:]
    assert said.count("thinker: a thread reads each worker process's pipe") == 1, said[-2000:]
    (path,) = list(tmp_path.rglob("*.mjlog.msgpack"))
    sources = Counter(getattr(frame, "source", None) for frame in read_log(path).frames)
    assert sources[anytime.POLICY] >= 1, sources
    # a decision that met a busy machine may come late or before the worker is ready; none
    # may fail (all did)
    assert '"kind": "failed"' not in said, said[-2000:]
