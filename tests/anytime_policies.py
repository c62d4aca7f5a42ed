"""TEST FIXTURES, not policies to play with: policies that think slowly, never return, or kill
their own process, for the tests of thinking without blocking (adapter/thinking/thinker.py).

They live in an importable module because a worker process unpickles them. A test registers
one for the session under test with ``monkeypatch.setitem(POLICIES, name, factory)``; nothing
registers them otherwise. Each misbehaves only on the first ``times`` decisions of a session,
counted in a file (a replaced worker process starts with a fresh copy of the policy), and
otherwise answers as the rule-based policy does, so a game goes on normally afterwards.

The slow thinking holds the GIL in chunks (one long C call, as a search in a C extension
would): in a worker process that costs the session nothing; in a thread of the session's own
process it stalls the event loop for a chunk at a time.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import time
from pathlib import Path
from typing import Any

from brain import shanten
from brain.anytime import Progress, Publish
from brain.nn import network
from brain.policies.base import Decision
from brain.policies.mc import models
from brain.policies.nn import NnPolicy
from brain.policies.rulebased import RuleBasedPolicy
from brain.state import TableState
from protocols import events as ev


class SessionCount:
    """How many decisions the session asked so far, kept in a file across worker processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def take(self) -> int:
        """The number of this decision (0 for the first)."""
        try:
            n = int(self.path.read_text())
        except (OSError, ValueError):
            n = 0
        self.path.write_text(str(n + 1))
        return n

    def read(self) -> int:
        try:
            return int(self.path.read_text())
        except (OSError, ValueError):
            return 0


def _in_a_worker_process() -> bool:
    return multiprocessing.parent_process() is not None


_LOOPS_PER_SECOND: float | None = None


def _hold_gil(seconds: float) -> None:
    """Spend about ``seconds`` in one C call that never lets the GIL go."""
    global _LOOPS_PER_SECOND
    if _LOOPS_PER_SECOND is None:
        start = time.perf_counter()
        sum(range(200_000))
        _LOOPS_PER_SECOND = 200_000 / max(time.perf_counter() - start, 1e-6)
    sum(range(max(1, int(_LOOPS_PER_SECOND * seconds))))


class _Fixture:
    fast = False
    anytime = True

    def __init__(self, count_file: str | Path, times: int = 1) -> None:
        self.count = SessionCount(count_file)
        self.times = times
        self.base = RuleBasedPolicy()

    def _answer(self, state: TableState, request: ev.DecisionRequest,
                legal: list[Any]) -> Decision:
        return self.base.decide(state, request, legal)

    def misbehaves(self) -> bool:
        return self.count.take() < self.times


class SlowThinker(_Fixture):
    """Thinks ``think`` seconds (never past its budget), publishing its best so far after every
    chunk of GIL-holding work, and returns it with the work done (one unit per chunk)."""

    name = "test-slow"

    def __init__(self, count_file: str | Path, times: int = 1, think: float = 3.0,
                 chunk: float = 0.25) -> None:
        super().__init__(count_file, times)
        self.think, self.chunk = think, chunk

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        think = self.think if budget is None else min(self.think, budget - 0.05)
        stop = time.monotonic() + think
        work = 0
        while time.monotonic() + 0.01 < stop:
            _hold_gil(min(self.chunk, stop - time.monotonic()))
            work += 1
            if publish is not None:
                publish(Progress(best.action, best.candidates, work))
        return Progress(best.action, best.candidates, work)


class PublishesThenRaises(_Fixture):
    """Publishes its rule-based answer and then raises, as mc does when its models cannot be
    read (it publishes its fast move before it loads them)."""

    name = "test-raises"

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        if publish is not None:
            publish(Progress(best.action, best.candidates, 1))
        raise ValueError("its models cannot be read")


class NeverReturns(_Fixture):
    """Publishes a best so far (its rule-based answer, or ``publish_action``; nothing if
    ``publish_first`` is False) and then loops forever, in GIL-holding chunks of ``chunk``
    seconds. In the session's own process (a thread, where nothing can stop it) it gives up
    after ``thread_limit`` seconds so that a test run cannot hang on it."""

    name = "test-never"

    def __init__(self, count_file: str | Path, times: int = 1, publish_first: bool = True,
                 thread_limit: float = 5.0, publish_action: Any = None,
                 chunk: float = 0.05) -> None:
        super().__init__(count_file, times)
        self.publish_first, self.thread_limit = publish_first, thread_limit
        self.publish_action, self.chunk = publish_action, chunk

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        if self.publish_first and publish is not None:
            action = best.action if self.publish_action is None else self.publish_action
            publish(Progress(action, (), 1))
        give_up = None if _in_a_worker_process() else time.monotonic() + self.thread_limit
        while give_up is None or time.monotonic() < give_up:
            _hold_gil(self.chunk)
        raise RuntimeError("test-never gave up (it ran in the session's own process)")


class DiesMidThought(_Fixture):
    """Kills its own process (SIGKILL, or ``os._exit`` with ``how="exit"``) mid-decision. In
    the session's own process it raises instead: a fixture must never kill the test run."""

    name = "test-dies"

    def __init__(self, count_file: str | Path, times: int = 1, how: str = "kill") -> None:
        super().__init__(count_file, times)
        self.how = how

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        if not _in_a_worker_process():
            raise RuntimeError("test-dies would kill the session's own process")
        if self.how == "exit":
            os._exit(3)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


class ColdProbe(_Fixture):
    """Answers as the rule-based policy, its candidates naming what a first ``mc`` search in
    this process would still have to build (none where the process was forked warm)."""

    name = "test-cold-probe"

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        cold = [] if shanten._batch_tables.cache_info().currsize else ["shanten batch tables"]
        if "numpy.random" not in sys.modules:
            cold.append("numpy.random")
        cold += [f"opponent models {v}" for v in ("riichi", "mcr", "taiwan16")
                 if (v, "") not in models._LOADED]
        return Decision(self._answer(state, request, legal).action,
                        tuple((what, 0.0) for what in cold))


class NetworkProbe(_Fixture):
    """Holds an ``nn`` policy, as ``mc`` with ``fast=nn`` does (so a worker unpickles the
    network's module), and answers its first legal action, its candidates naming each variant
    whose shipped network this process would still have to read (none where it was forked
    warm). It reads no table: a job may hand it none."""

    name = "test-network-probe"

    def __init__(self, count_file: str | Path, times: int = 1) -> None:
        super().__init__(count_file, times)
        self.network = NnPolicy()

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        cold = [f"network {v}" for v in ("riichi", "mcr", "taiwan16")
                if (v, "") not in network._LOADED]
        return Decision(legal[0], tuple((what, 0.0) for what in cold))


def _refuse_to_load() -> None:
    raise ValueError("this object cannot be read in the session")


class _ReadNowhere:
    """Pickled in the worker as any object is; unpickling it (in the session) raises."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_refuse_to_load, ())


class AnswersUnreadably(_Fixture):
    """Publishes a best so far the session cannot read (its job fails there and then), goes
    on until the file ``go`` exists (a test makes it once the next job is out), then answers
    with a decision the session cannot read either: a message of an ended job that comes
    while the next one is thought."""

    name = "test-unreadable"

    def __init__(self, count_file: str | Path, go: str | Path, times: int = 1) -> None:
        super().__init__(count_file, times)
        self.go = Path(go)

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        if not _in_a_worker_process():
            raise RuntimeError("test-unreadable answers only in a worker process")
        if publish is not None:
            publish(Progress(best.action, ((_ReadNowhere(), 0.0),), 1))
        give_up = time.monotonic() + 30.0  # a test that never makes the file cannot hang
        while not self.go.exists() and time.monotonic() < give_up:
            time.sleep(0.01)
        return Decision(best.action, ((_ReadNowhere(), 0.0),))


class SendsGarbage(_Fixture):
    """Writes bytes that are no message at all on its worker's pipe (found among the
    process's objects: the policy is never handed it), then answers as the rule-based
    policy: a message the session can tie to no job, followed by the job's own answer."""

    name = "test-garbage"

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        if not _in_a_worker_process():
            raise RuntimeError("test-garbage writes only on a worker process's pipe")
        import gc
        from multiprocessing.connection import Connection

        (pipe,) = [o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed]
        pipe.send_bytes(b"no pickle at all")
        return best


class StartsWhenTold(_Fixture):
    """Answers as the rule-based policy, but a worker process that unpickles it is not ready
    until the file ``go`` exists (a test makes it when it chooses; given up after a minute): a
    session's first worker whose start takes as long as the test likes, as a cold fork
    server's took 0.8 s idle and over 2 s on a busy machine. While the file ``refuse`` exists
    it cannot be pickled: a worker's start fails (as where the fork server is gone)."""

    name = "test-starts-when-told"

    def __init__(self, count_file: str | Path, go: str | Path, times: int = 1,
                 refuse: str | Path | None = None) -> None:
        super().__init__(count_file, times)
        self.go = Path(go)
        self.refuse = None if refuse is None else Path(refuse)
        self.owner = os.getpid()  # parent_process() is not set yet while a worker unpickles

    def __getstate__(self) -> dict[str, Any]:
        if self.refuse is not None and self.refuse.exists():
            raise pickle.PicklingError(f"refused while {self.refuse.name} exists")
        return self.__dict__

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        give_up = time.monotonic() + 60.0
        while os.getpid() != self.owner and not self.go.exists() \
                and time.monotonic() < give_up:
            time.sleep(0.01)

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        return self._answer(state, request, legal)


class StallsMidMessage(_Fixture):
    """Writes part of a message on its worker's pipe and stalls until the file ``go`` exists
    (a test makes it once its event loop has run on meanwhile; after 30 s it gives up and
    says so in ``go``'s sibling ``gave-up``, so a test whose loop was held fails rather than
    hangs): ``cut``, the first half of a best so far of job 1 (7 units of work), its rest
    written after the stall, then the rule-based answer; ``huge``, a length of 2**31 - 1
    bytes and a few, which no rest ever follows (on giving up the process ends, which is what
    let a loop held in the read go). ``stalled``, beside ``go``, says the bytes are out."""

    name = "test-stalls"

    def __init__(self, count_file: str | Path, go: str | Path, how: str = "cut",
                 times: int = 1) -> None:
        super().__init__(count_file, times)
        self.go, self.how = Path(go), how

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision:
        best = self._answer(state, request, legal)
        if not self.misbehaves():
            return best
        if not _in_a_worker_process():
            raise RuntimeError("test-stalls writes only on a worker process's pipe")
        import gc
        import pickle
        import struct
        from multiprocessing.connection import Connection

        (pipe,) = [o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed]
        if self.how == "cut":
            carried = pickle.dumps(Progress(best.action, best.candidates, 7))
            body = pickle.dumps(("progress", 1, carried))
            message = struct.pack("!i", len(body)) + body
            first, rest = message[:len(message) // 2], message[len(message) // 2:]
        else:
            first, rest = struct.pack("!i", 2**31 - 1) + b"never whole", b""
        os.write(pipe.fileno(), first)
        (self.go.parent / "stalled").touch()
        give_up = time.monotonic() + 30.0
        while not self.go.exists():
            if time.monotonic() > give_up:
                (self.go.parent / "gave-up").touch()
                if not rest:
                    os._exit(0)
                break
            time.sleep(0.01)
        os.write(pipe.fileno(), rest)
        return best
