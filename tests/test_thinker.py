"""The brain's async decide path (adapter/thinking/thinker.py) with real worker processes: a fast
policy stays inline, a slow one thinks in another process and reports its work, one that overruns
plays its best so far on time and its process is killed and replaced, one whose process dies
falls back; and the synchronous brain keeps the same anytime contract in its thread."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapter.thinking.thinker import Thinker
from brain import anytime
from brain.brain import Brain
from protocols import events as ev
from protocols import tiles as T
from replay.log import GameLogWriter, Header, read_log
from tests.anytime_policies import DiesMidThought, NeverReturns, SlowThinker
from tests.test_brain import _turn_state

TURN = ev.DecisionRequest("turn")
SLACK = 0.3  # seconds past a deadline that a loaded machine may add before an answer is in


async def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` has ended (and been reaped) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.02)
    return False


async def _ready_worker(thinker: Thinker) -> int:
    thinker.warm()
    for _ in range(1500):
        if thinker.worker is not None and thinker.worker.pid is not None:
            return thinker.worker.pid
        await asyncio.sleep(0.02)
    raise AssertionError("no worker process started")


async def test_a_fast_policy_answers_inline_and_starts_no_process() -> None:
    thinker = Thinker(Brain("riichi", "greedy", limit=1.0))
    thinker.warm()
    answer = await thinker.decide(_turn_state(), TURN)
    assert answer.source == anytime.POLICY and answer.fallback == ""
    assert thinker.inline and thinker.worker is None and thinker._starting is None
    thinker.close()


async def test_the_only_legal_action_is_played_without_asking(tmp_path: Path) -> None:
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n"), limit=1.0))
    state = _turn_state()
    answer = await thinker.decide(state, ev.DecisionRequest("claim", tile=T.parse_mpsz("7z")[0],
                                                            from_seat=2))
    assert answer.source == anytime.FORCED and answer.action == ev.Pass()
    assert thinker.worker is None  # nothing asked, nothing started
    thinker.close()


async def test_a_slow_policy_thinks_in_a_worker_process_and_reports_its_work(
        tmp_path: Path) -> None:
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n", think=0.6, chunk=0.1),
                            limit=3.0))
    pid = await _ready_worker(thinker)
    assert pid != os.getpid()
    answer = await thinker.decide(_turn_state(), TURN)
    assert answer.source == anytime.POLICY and answer.fallback == ""
    assert answer.work >= 1 and answer.action in answer.legal  # chunks of work (load-bound)
    assert answer.elapsed >= 0.5
    thinker.close()
    assert await _gone(pid)


async def test_an_overrunning_policy_plays_its_best_so_far_and_is_replaced(
        tmp_path: Path) -> None:
    thinker = Thinker(Brain("riichi", NeverReturns(tmp_path / "n"), limit=1.0))
    stuck = await _ready_worker(thinker)
    answer = await thinker.decide(_turn_state(), TURN)
    assert answer.source == anytime.BEST_SO_FAR and answer.work == 1
    assert "missed its" in answer.fallback and answer.action in answer.legal
    assert answer.elapsed <= 1.0 + SLACK
    assert await _gone(stuck), "the stuck worker process is still there"
    assert thinker.replaced == 1
    after = await thinker.decide(_turn_state(), TURN)  # the next decision is normal
    assert after.source == anytime.POLICY and after.fallback == ""
    assert thinker.worker is not None and thinker.worker.pid not in (None, stuck)
    thinker.close()


async def test_an_overrunning_policy_with_nothing_published_falls_back(tmp_path: Path) -> None:
    thinker = Thinker(Brain("riichi", NeverReturns(tmp_path / "n", publish_first=False),
                            limit=1.0))
    await _ready_worker(thinker)
    answer = await thinker.decide(_turn_state(), TURN)
    assert answer.source == anytime.fallback_source("rulebased")
    assert "missed its" in answer.fallback and answer.elapsed <= 1.0 + SLACK
    thinker.close()


async def test_a_best_so_far_that_is_not_legal_is_not_played(tmp_path: Path) -> None:
    illegal = ev.Discard(T.parse_mpsz("9p")[0])  # not in the hand
    thinker = Thinker(Brain("riichi", NeverReturns(tmp_path / "n", publish_action=illegal),
                            limit=1.0))
    await _ready_worker(thinker)
    answer = await thinker.decide(_turn_state(), TURN)
    assert answer.source == anytime.fallback_source("rulebased")
    assert "is not legal" in answer.fallback and answer.action != illegal
    thinker.close()


@pytest.mark.parametrize("how, why", [("kill", "signal 9"), ("exit", "exit code 3")])
async def test_a_worker_that_dies_means_a_fallback_and_a_fresh_worker(
        tmp_path: Path, how: str, why: str) -> None:
    thinker = Thinker(Brain("riichi", DiesMidThought(tmp_path / "n", how=how), limit=2.0))
    dead = await _ready_worker(thinker)
    started = time.monotonic()
    answer = await thinker.decide(_turn_state(), TURN)
    assert time.monotonic() - started < 1.5  # the death is seen at once, not at the deadline
    assert answer.source == anytime.fallback_source("rulebased")
    assert "worker process died" in answer.fallback and why in answer.fallback
    assert answer.action in answer.legal
    after = await thinker.decide(_turn_state(), TURN)
    assert after.source == anytime.POLICY
    assert thinker.worker is not None and thinker.worker.pid != dead
    thinker.close()


async def test_closing_kills_the_worker(tmp_path: Path) -> None:
    thinker = Thinker(Brain("riichi", SlowThinker(tmp_path / "n"), limit=1.0))
    pid = await _ready_worker(thinker)
    thinker.close()
    assert await _gone(pid)


def test_the_synchronous_brain_plays_a_late_threads_best_so_far(tmp_path: Path) -> None:
    """The thread path (the local table, the stdin forms) keeps the anytime contract too."""
    # short GIL-holding chunks: in a thread, each one holds back the brain's own deadline
    brain = Brain("riichi", NeverReturns(tmp_path / "n", thread_limit=1.0, chunk=0.002),
                  limit=0.6, margin=0.1)
    answer = brain.decide(_turn_state(), TURN)
    brain.close()
    assert answer.source == anytime.BEST_SO_FAR and answer.work == 1
    assert answer.elapsed <= 0.5 + SLACK


def test_the_decision_frame_records_source_and_work(tmp_path: Path) -> None:
    path = tmp_path / "g.mjlog.msgpack"
    state = _turn_state()
    legal = [ev.Discard(t) for t in dict.fromkeys(state.hand)]
    with GameLogWriter(path, Header("tenhou", "riichi", 0)) as log:
        log.decision(TURN, legal, legal[0], "test-slow", (), 1.9, "late; played its best so far",
                     source=anytime.BEST_SO_FAR, work=1234)
        log.decision(TURN, legal, legal[1], "test-slow", (), 0.1)
    first, second = read_log(path).decisions()
    assert (first.source, first.work) == ("best_so_far", 1234)
    assert (second.source, second.work) == ("", 0)  # as in logs from before


def test_the_one_shot_botzone_path_imports_no_process_machinery() -> None:
    code = ("import sys, adapter.platforms.botzone\n"
            "print(sorted(m for m in ('multiprocessing', 'asyncio', 'adapter.thinking.thinker',"
            " 'adapter.thinking.worker_process') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"
