"""The brain's async decide path, for the sessions that run on an event loop (Tenhou, NTPU and
mjai over TCP): a decision is awaited, so the loop keeps reading, answering keep-alives and
logging while a policy thinks.

A ``fast`` policy (tsumogiri, greedy, rule-based) answers inline, on the loop, exactly as
:meth:`Brain.decide` does: a process hop would only slow it down. Any other policy runs in a worker
process (adapter/thinking/worker_process.py), started when the session starts (:meth:`warm`) or at
the first decision: its CPU work never holds the loop's GIL. At the deadline the policy's answer is
played if it came; else its best so far (brain/anytime.py), else the fallback chain
(:meth:`Brain.conclude`). A worker that overran is still thinking, and one that died is gone: either
way it is killed and a fresh one started at once, so the next decision finds a process that is free.
Where the event loop cannot watch the worker's pipe (Windows), a thread reads it instead
(adapter/thinking/pipe_watch.py), chosen once per thinker at its first start.

The one-shot Botzone path and the stdin forms stay synchronous and never import this module.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from adapter.logging_setup import get_logger
from adapter.thinking.deadline import within
from adapter.thinking.pipe_watch import why_not_on_the_loop
from adapter.thinking.worker_process import PolicyWorker, Thought, WorkerDied
from brain.brain import Answer, Brain, check
from brain.clock import MONOTONIC
from brain.state import TableState
from brain.tally import FallbackKind
from protocols import events as ev

log = get_logger("mjbot.thinker")

# seconds a session waits, before it connects, for its first worker process to be ready: a
# platform sends the first decision moments after the login (the fake Tenhou server 30 ms
# after it), while a session's first worker, its fork server started cold, took 0.8 s on an
# idle machine and over 2 s on a busy one, so the first decisions fell back as not ready
READY_BEFORE_CONNECT = 10.0
# seconds from a worker process's start (once forked or spawned) to its "ready" after which it
# is taken for stalled, killed and replaced: the wait before connecting, the start budget a
# session gives its worker (a start took 0.05 s idle and up to 2.3 s beside twelve busy loops;
# NTPU allows 30 s for the first /ready); shorter, a slow but healthy start on a busy machine
# would be killed for a fresh one no faster. A worker stalled before it is ready (a policy
# whose load hangs) otherwise never was replaced, and every decision of the session fell back
# as not ready
READY_WITHIN = READY_BEFORE_CONNECT
# workers in a row not ready in READY_WITHIN before the session gives up on them and plays its
# fallback policy (each try costs READY_WITHIN seconds of not-ready decisions)
STALLED_TRIES = 3
# seconds after a give-up before one fresh worker is tried again (its decisions meanwhile the
# fallback's at once), doubled after each try that is not ready either, up to RETRY_MAX: starts
# slow for a stretch (spawn on a loaded Windows machine, a slow disk, an antivirus scan) left a
# long run (a Tenhou `games` run under `mjbot serve`, a tournament day) on the fallback to its
# end, where the policy could play again minutes later
RETRY_AFTER = 30.0
RETRY_MAX = 480.0


class Thinker:
    """Awaitable decisions for one seat's :class:`Brain`; :meth:`close` when the session
    ends (it kills the worker). Deadlines are kept on the brain's clock. ``start_method``:
    how worker processes start (adapter/thinking/worker_process.py; None: the platform's
    best, the fork server where there is one); ``ready_within``: seconds from a worker's
    start to its ready before it is taken for stalled and replaced (:data:`READY_WITHIN`;
    ``mjbot bench think`` gives its own, longer, under its busy loops)."""

    def __init__(self, brain: Brain, start_method: str | None = None,
                 ready_within: float = READY_WITHIN) -> None:
        self.brain = brain
        self.start_method = start_method
        self.ready_within = ready_within  # seconds to ready before a worker is replaced
        self.inline = bool(getattr(brain.policy, "fast", False))
        self.worker: PolicyWorker | None = None
        self.replaced = 0  # workers killed and replaced (overran, died, or stalled)
        # seconds from start to ready of each worker after the first (a replacement, or a
        # start tried again): what a decision after a late one waits for
        self.later_ready: list[float] = []
        self._launched = 0
        self._starting: asyncio.Future[PolicyWorker] | None = None
        self._closed = False
        self._said_first = False  # a decision before the first worker was ready: said once
        self.stalled = 0  # workers replaced because they were not ready within READY_WITHIN
        self._stalled_in_a_row = 0
        # why the session plays its fallback (several workers in a row stalled): "" while it
        # plays its policy; a fresh worker is tried after _retry_after seconds (_try_again)
        self.given_up = ""
        self._retry_after = RETRY_AFTER
        self._retrying: asyncio.Task[None] | None = None  # the wait before the next try
        self._watching: asyncio.Task[None] | None = None  # the current worker's ready watch
        self._replaced = asyncio.Event()  # set (and made anew) at each replacement
        # whether a thread reads the workers' pipes (None: not asked yet; asked once)
        self.pipe_thread: bool | None = None

    def warm(self) -> None:
        """Start the worker process now, in the background, so that the first decision does
        not wait for it (nothing for a fast policy). Needs a running event loop."""
        if not self.inline and not self._closed and self._starting is None \
                and not self.given_up:
            self._watch_how()
            self._starting = asyncio.ensure_future(self._start())

    def _watch_how(self) -> None:
        """Ask the running loop, once, whether it can watch a worker's pipe; say so where
        it cannot (every worker's pipe is then read by a thread)."""
        if self.pipe_thread is not None:
            return
        try:
            why = why_not_on_the_loop(asyncio.get_running_loop())
        except OSError:  # no descriptor left for the probe's pipe: asked again at the next
            return  # start, which fails as it did (a fallback, not an exception)
        self.pipe_thread = bool(why)
        if why:
            log.warning("thinker: a thread reads each worker process's pipe (the event "
                        "loop cannot watch one)", policy=self.brain.name, reason=why)

    async def ready_before_connecting(self, before: str = "connecting") -> None:
        """Start the worker and wait for it, up to :data:`READY_BEFORE_CONNECT` seconds,
        before the session connects (a login and a lobby wait no longer count on it: the
        first decision finds it ready), or, for a stdin form, before it reads its first line
        (``before`` says which in the log). Never raises but for a cancel: a start slower
        than that, or one that failed, is said once and the session goes on; its first
        decisions then wait for the worker as before (or try to start one again)."""
        if self.inline:
            return
        try:
            await self.ready(READY_BEFORE_CONNECT)
        except TimeoutError:
            log.warning(f"thinker: worker process not ready before {before}; its first "
                        f"decisions may fall back (not-ready)", policy=self.brain.name,
                        waited_s=READY_BEFORE_CONNECT)
        except Exception as exc:
            log.warning(f"thinker: worker process could not start before {before}",
                        policy=self.brain.name, reason=f"{type(exc).__name__}: {exc}")

    async def ready(self, timeout: float) -> None:
        """Start the worker (if not started) and wait until it can think: the builtin
        TimeoutError after ``timeout`` seconds, or at once why it could not start
        (WorkerDied, the start's own error), for a caller that must not go on without it
        (``mjbot bench think``)."""
        self.warm()
        if self._starting is None:  # a fast policy, or closed: no worker to wait for
            if self.given_up:
                raise WorkerDied(self.given_up)
            return

        async def started() -> None:
            # the worker in hand, or the one that replaced it (it stalled: _watch_ready),
            # where the wait stayed on the killed one until the timeout
            while True:
                starting = self._starting
                if starting is None:  # it stalled, and no worker is started any more
                    raise WorkerDied(self.given_up or "no worker process")
                worker = await asyncio.shield(starting)
                ready = asyncio.ensure_future(worker.ready(None))
                replaced = asyncio.ensure_future(self._replaced.wait())
                try:
                    await asyncio.wait({ready, replaced}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    replaced.cancel()
                    if not ready.done():
                        ready.cancel()
                if ready.done() and not ready.cancelled():
                    ready.result()  # WorkerDied where it died first
                    return

        # within (asyncio.wait), not asyncio.timeout: the mjai bundle ships this module to
        # Python 3.10, which has none; nor wait_for, which on 3.11 swallows a cancel that
        # lands as the wait ends (a session stopped as its worker got ready went on to
        # connect and play) and on 3.10 raises asyncio.TimeoutError, not the builtin class
        try:
            await within(MONOTONIC, started(), MONOTONIC.now() + timeout)
        except TimeoutError:
            raise TimeoutError(f"no worker process ready within {timeout:g} s") from None

    async def _start(self) -> PolicyWorker:
        later = self._launched > 0
        self._launched += 1
        worker = PolicyWorker(self.brain.policy, self.brain.clock,
                              self.later_ready.append if later else None, self.start_method,
                              pipe_thread=bool(self.pipe_thread))
        await worker.start()
        if self._closed:  # the session ended while the process was starting
            worker.kill()
        else:
            self.worker = worker
            # timed from the process's existence, not from the start asked: a start that
            # waited (for the fork server's first preload, for a free thread of the loop's
            # executor, which every session of `mjbot serve` shares) past the bound had its
            # worker killed the moment it was forked, before it could load, as "stalled"
            self._watching = asyncio.ensure_future(
                self._watch_ready(worker, self.brain.clock.now() + self.ready_within))
        return worker

    async def _watch_ready(self, worker: PolicyWorker, until: float) -> None:
        """Replace ``worker`` if it is not ready by ``until`` (a time on the brain's clock):
        counted and said once; after :data:`STALLED_TRIES` in a row, give up (:meth:`_give_up`).
        A worker tried after a give-up that is ready puts the policy back; one that is not
        (or dies first: no decision asks it) is a give-up again."""
        died = ""
        try:
            if await worker.ready(until):
                self._stalled_in_a_row = 0
                if self.given_up and self.worker is worker and not self._closed:
                    self._plays_again()
                return
        except WorkerDied as exc:  # a decision finds it died, and replaces it; no decision
            if not self.given_up:  # asks a worker tried after a give-up
                return
            died = str(exc)
        if self.worker is not worker or self._closed:  # replaced or closed meanwhile
            return
        self._watching = None  # this task: the replacement starts a watch of its own
        self.stalled += not died
        self._stalled_in_a_row += 1
        why = died or f"not ready within {self.ready_within:g} s of its start"
        if self._stalled_in_a_row < STALLED_TRIES:
            self._replace(why)
            return
        self._give_up(why)

    def _give_up(self, why: str) -> None:
        """Kill the worker in hand (not ready: ``why``) and play the fallback at once for
        every decision until a fresh one, started after a wait that doubles at each give-up
        (:data:`RETRY_AFTER`, up to :data:`RETRY_MAX`), is ready: one line says so."""
        first = not self.given_up
        self.given_up = (f"no worker process was ready within {self.ready_within:g} s of "
                         f"its start, {self._stalled_in_a_row} in a row")
        if self.worker is not None:  # none where a try's start failed
            self._replace(why, said=first)  # starts none: given up (one line for a try)
        wait, self._retry_after = self._retry_after, min(2 * self._retry_after, RETRY_MAX)
        self._retrying = asyncio.ensure_future(self._try_again(wait))
        log.error(f"thinker: {self.given_up}; the session plays its fallback policy until a "
                  f"fresh worker is ready, the next tried in {wait:g} s",
                  policy=self.brain.name, reason=why,
                  fallback=getattr(self.brain.fallback_policy, "name", "fallback"))

    async def _try_again(self, after: float) -> None:
        """Start one fresh worker ``after`` seconds (on the brain's clock) from now; its
        watch (:meth:`_watch_ready`) says whether the policy plays again. A start that
        fails is a give-up too."""
        clock = self.brain.clock
        with contextlib.suppress(TimeoutError):  # a wait that is never a wait on the loop
            await within(clock, asyncio.get_running_loop().create_future(), clock.now() + after)
        if self._closed or self._starting is not None:
            return
        starting = self._starting = asyncio.ensure_future(self._start())
        try:
            await asyncio.shield(starting)
        except Exception as exc:  # could not start one (the start's own error)
            if self._starting is starting and not self._closed:
                self._starting = None
                self._stalled_in_a_row += 1
                self._give_up(f"cannot start a worker process ({type(exc).__name__}: {exc})")

    def _plays_again(self) -> None:
        """A worker tried after a give-up is ready: the policy plays again (said once)."""
        log.warning("thinker: a fresh worker process is ready; the session plays its policy "
                    "again", policy=self.brain.name, fallback_for=self.given_up)
        self.given_up = ""
        self._retry_after = RETRY_AFTER

    async def decide(self, state: TableState, request: ev.DecisionRequest) -> Answer:
        brain = self.brain
        if self.inline:
            return brain.decide(state, request)
        start = brain.clock.now()
        legal, settled = brain.settle(state, request, start)
        if settled is not None:
            return settled
        if self.given_up:  # no worker to ask: the fallback at once, never a wait
            return brain.conclude(state, request, legal, start, None,
                                  f"{brain.name}: {self.given_up}", kind=FallbackKind.FAILED)
        budget = brain.budget(request)
        deadline = None if budget is None else brain.clock.now() + budget
        thought = await self._think(state, request, legal, deadline)
        if thought.kind is FallbackKind.NOT_READY and not self._said_first and not self.replaced:
            self._said_first = True  # its first worker: the platform gave it too little time
            log.warning("thinker: a decision came before the session's first worker process "
                        "was ready; decisions fall back (not-ready) until it is",
                        policy=brain.name)
        if thought.stuck or thought.died:
            self._replace(thought.problem)
        kind, problem = thought.kind, thought.problem
        if not problem:
            problem = check(brain.name, thought.decision, legal)
            kind = FallbackKind.ILLEGAL if problem else FallbackKind.NONE
        return brain.conclude(state, request, legal, start, thought.decision, problem,
                              thought.best, kind=kind)

    async def _think(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
                     deadline: float | None) -> Thought:
        self.warm()
        assert self._starting is not None
        waited = not self._starting.done()  # the worker is starting: this decision waits
        try:
            worker = await within(self.brain.clock, asyncio.shield(self._starting), deadline)
        except TimeoutError:
            return Thought(None, f"{self.brain.name}'s worker process was not started in time",
                           kind=FallbackKind.NOT_READY)
        except Exception as exc:  # could not start one: try again at the next decision
            self._starting = None
            return Thought(None, f"{self.brain.name}: cannot start a worker process "
                                 f"({type(exc).__name__}: {exc})", kind=FallbackKind.FAILED)
        return await worker.think(state, request, legal, deadline, waited)

    def _replace(self, why: str, said: bool = True) -> None:
        """Kill the worker (still thinking, or gone) and start a fresh one at once (none
        where the session has given up); ``said``: a warning line says so."""
        worker, self.worker, self._starting = self.worker, None, None
        watching, self._watching = self._watching, None
        if watching is not None:
            watching.cancel()
        if worker is not None:
            worker.kill()
        self._replaced.set()
        self._replaced = asyncio.Event()
        self.replaced += 1
        if said:
            log.warning("thinker: worker process replaced", reason=why,
                        pid=getattr(worker, "pid", None))
        self.warm()

    def close(self) -> None:
        """Kill the worker; one still starting is killed as soon as it has started."""
        self._closed = True
        retrying, self._retrying = self._retrying, None
        if retrying is not None:
            retrying.cancel()
        worker, self.worker = self.worker, None
        watching, self._watching = self._watching, None
        if watching is not None:
            watching.cancel()
        if worker is not None:
            worker.kill()
