"""The brain's deadline thread: a late policy call is abandoned, and the next decision runs on
the same thread once it ends (within its own deadline), so a run of late decisions never starts
a thread per decision (with numpy's OpenBLAS, threads started at that rate crashed an arena
under a tight --budget: "BLAS : Bad memory unallocation", then SIGSEGV)."""

import concurrent.futures
import subprocess
import sys
import threading

from brain.brain import Brain
from brain.clock import ManualClock
from brain.policies.base import Decision
from protocols import events as ev
from tests.test_brain import _turn_state


class AlwaysLate:
    """Moves the clock past the brain's deadline, then answers when released."""

    name = "late"

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.threads: list[threading.Thread] = []
        self.held, self.done = threading.Event(), threading.Event()

    def decide(self, state, request, legal, budget=None):
        self.threads.append(threading.current_thread())  # kept: ids of ended threads recur
        self.clock.until_waiting()
        self.clock.advance(1.0)
        assert self.held.wait(30), "never released"
        self.done.set()
        return Decision(legal[0])


def test_late_decisions_reuse_the_ended_thread():
    clock = ManualClock()
    policy = AlwaysLate(clock)
    brain = Brain("riichi", policy, limit=0.5, margin=0.0, clock=clock)
    state = _turn_state()
    try:
        for _ in range(6):
            policy.held.clear()
            policy.done.clear()
            answer = brain.decide(state, ev.DecisionRequest("turn"))
            assert "late missed its 0.500s budget" in answer.fallback
            policy.held.set()
            assert policy.done.wait(30)
        assert len({id(t) for t in policy.threads}) == 1, policy.threads
    finally:
        policy.held.set()
        brain.close()


def test_a_decision_behind_a_running_late_call_is_cut_at_its_own_deadline():
    clock = ManualClock()
    policy = AlwaysLate(clock)
    brain = Brain("riichi", policy, limit=0.5, margin=0.0, clock=clock)
    state = _turn_state()
    try:
        brain.decide(state, ev.DecisionRequest("turn"))  # its call is still held
        waiting = concurrent.futures.ThreadPoolExecutor(1)
        second = waiting.submit(brain.decide, state, ev.DecisionRequest("turn"))
        clock.until_waiting()
        clock.advance(0.5)  # the second decision's deadline, its call still queued
        answer = second.result(30)
        waiting.shutdown()
        assert answer.fallback == "late missed its 0.500s budget"
        assert answer.elapsed == 0.5
        policy.held.set()
        assert policy.done.wait(30)
        assert len(policy.threads) == 1  # the queued call was cancelled, never run
    finally:
        policy.held.set()
        brain.close()


CHURN = """
import numpy as np
from brain.brain import Brain
from brain.policies.base import Decision
from tests.test_brain_threads import _turn_state
from protocols import events as ev

a = np.random.default_rng(0).random((200, 200))

class Blas:
    name = "blas"
    def decide(self, state, request, legal, budget=None):
        for _ in range(20):
            a @ a
        return Decision(legal[0])

brain = Brain("riichi", Blas(), limit=0.001, margin=0.0)
state = _turn_state()
late = sum(bool(brain.decide(state, ev.DecisionRequest("turn")).fallback) for _ in range(400))
brain.close()
print("late", late)
"""


def test_hundreds_of_late_numpy_calls_do_not_crash_the_process():
    r = subprocess.run([sys.executable, "-c", CHURN], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-1500:]
    assert r.stdout.startswith("late ")
