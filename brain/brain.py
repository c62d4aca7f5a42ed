"""The decider: legal set, time budget, validation and fallbacks around a policy.

Every platform adapter and the local table ask the brain, never a policy directly. The brain
computes the legal actions from the seat's own state and the variant's rules (intersected with
what the platform offers), gives the policy a budget taken from the platform's limit minus a
safety margin, and checks the answer. A policy that raises, answers something illegal or runs
late is replaced by its best answer so far where it published one (brain/anytime.py), else by
the fast rule-based answer, and if that fails too by the safest legal action, so a platform
never sees an illegal action or a missed deadline. :meth:`Brain.conclude` is that chain, shared
with the adapters' async path, which runs slow policies in a worker process
(adapter/thinking/thinker.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brain import anytime
from brain.actions import action_key, is_listed
from brain.clock import MONOTONIC, Clock
from brain.policies import get_policy
from brain.policies.base import Decision, Policy
from brain.rules import rules_for
from brain.state import TableState
from brain.tally import FallbackKind, FallbackTally
from protocols import events as ev

if TYPE_CHECKING:  # imported where a policy thinks on a thread (_with_deadline): a fast
    import concurrent.futures  # policy's process (a one-shot Botzone turn) never loads it

DEFAULT_MARGIN = 0.25  # seconds kept back from the platform's limit for encoding and transport


@dataclass(frozen=True)
class Answer:
    """What the brain answered and why: everything the game log's decision frame records."""

    action: Any
    legal: tuple[Any, ...]
    policy: str
    candidates: tuple[tuple[Any, float], ...] = ()
    elapsed: float = 0.0
    fallback: str = ""  # why the policy's own answer was not used ("" when it was)
    source: str = anytime.POLICY  # what answered: see brain/anytime.py
    work: int = 0  # the work the played answer reports (e.g. playouts), 0 when none
    kind: FallbackKind = FallbackKind.NONE  # ``fallback``'s kind, for what counts answers


def safest_action(state: TableState, legal: list[Any]) -> Any:
    """The last resort: pass where passing is legal, else discard the drawn tile, else the
    last plain discard in kind order, else the first legal action in canonical order."""
    for a in legal:
        if isinstance(a, ev.Pass):
            return a
    discards = [a for a in legal if isinstance(a, ev.Discard) and not a.riichi]
    for a in discards:
        if a.tile == state.last_draw:
            return a
    if discards:
        return max(discards, key=action_key)
    return min(legal, key=action_key)


def emergency_legal(state: TableState, request: ev.DecisionRequest) -> list[Any]:
    """What may be sent when the rules cannot read the table: on our turn a discard of a tile
    we hold (pass with none), otherwise pass."""
    if request.kind == "turn" and state.hand:
        return [ev.Discard(t) for t in dict.fromkeys(state.hand)]
    return [ev.Pass()]


def policy_seconds(limit: float, margin: float = DEFAULT_MARGIN) -> float:
    """Seconds a policy that thinks may use under a ``limit``: the limit less the margin,
    never below a tenth of the limit."""
    return max(limit - margin, 0.1 * max(limit, 0.0))


def tight_limit_note(limit: float, margin: float = DEFAULT_MARGIN) -> str | None:
    """Why a per-decision ``limit`` so close to the ``margin`` that a policy that thinks gets
    only the tenth of it that :func:`policy_seconds` keeps (up to ``margin / 0.9``; None
    above) is a poor one: such a policy falls back where it needs more, decision after
    decision, with nothing at the start to say why."""
    if limit - margin > 0.1 * limit:
        return None
    return (f"leaves a policy that thinks (mc) only a tenth of it, "
            f"{policy_seconds(limit, margin):.3g} s a decision, after the {margin:g} s margin "
            f"kept back for sending the answer: it falls back where it needs more; give more "
            f"than {margin / 0.9:.3g} s")


class Brain:
    """One seat's decider. ``limit``: the platform's time per decision in seconds (None: no
    limit, as at the local table); ``margin``: seconds kept back from it. With a limit, a policy
    that does not declare itself ``fast`` runs in a worker thread here and is abandoned at the
    deadline (its best so far is played where it published one); the async adapters run it in
    a worker process instead, where it can be stopped (adapter/thinking/thinker.py).
    ``clock``: what deadlines and ``elapsed`` are read on (brain/clock.py; a request's
    ``deadline`` is a time on it), and what a policy named by ``policy`` spends its budget on."""

    def __init__(self, variant: str, policy: str | Policy = "rulebased",
                 limit: float | None = None, margin: float = DEFAULT_MARGIN,
                 fallback_policy: str = "rulebased", clock: Clock = MONOTONIC) -> None:
        self.variant = variant
        self.rules = rules_for(variant)
        self.policy = get_policy(policy) if isinstance(policy, str) else policy
        if isinstance(policy, str) and hasattr(self.policy, "clock"):
            # a policy built here by name keeps time on the brain's clock: its search's
            # share of the budget and the brain's deadline are then read on one clock
            self.policy.clock = clock
        self.fallback_policy = (self.policy if getattr(self.policy, "name", "") == fallback_policy
                                else get_policy(fallback_policy))
        self.limit = limit
        self.margin = margin
        self.clock = clock
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.tally = FallbackTally()  # every answer the policy was asked for (brain/tally.py)

    @property
    def name(self) -> str:
        return getattr(self.policy, "name", type(self.policy).__name__)

    def budget(self, request: ev.DecisionRequest) -> float | None:
        """Seconds the policy may use: the platform's limit (or the request's deadline) less
        the margin, never below a tenth of the limit."""
        limits = []
        if self.limit is not None:
            limits.append(self.limit)
        if request.deadline is not None:
            limits.append(request.deadline - self.clock.now())
        if not limits:
            return None
        return policy_seconds(min(limits), self.margin)

    def legal(self, state: TableState, request: ev.DecisionRequest) -> list[Any]:
        return self.rules.legal_actions(state, request)

    def checked_legal(self, state: TableState, request: ev.DecisionRequest) \
            -> tuple[list[Any], str]:
        """The legal actions and "", or, where the rules cannot read the table (a platform
        dealt five of a tile, a hand of no possible size) or find nothing to play (no tile in
        hand on our turn), the moves that are always safe to send and why: the policy is then
        not asked (:meth:`unreadable`)."""
        try:
            legal = self.legal(state, request)
        # what a table the rules cannot read raises (HandError, StateError and TileError are
        # ValueErrors): a session must still answer. Not Exception: a bug of our own rules
        # (an AttributeError, a TypeError) must fail loudly, not hide among the fallbacks.
        except (ValueError, KeyError, IndexError) as exc:
            return emergency_legal(state, request), \
                f"the rules cannot read our table ({type(exc).__name__}: {exc})"
        if not legal:  # asked to play with no tile in hand
            return emergency_legal(state, request), \
                f"no legal action on our table for a {request.kind} request"
        return legal, ""

    def unreadable(self, state: TableState, legal: list[Any], start: float,
                   problem: str) -> Answer:
        """The answer to a request on a table the rules cannot read: the safest move."""
        answer = Answer(safest_action(state, legal), tuple(legal), self.name,
                        elapsed=self.clock.now() - start, fallback=problem,
                        source=anytime.FALLBACK_SAFEST, kind=FallbackKind.TABLE)
        self.tally.record(answer.fallback)
        return answer

    def settle(self, state: TableState, request: ev.DecisionRequest, start: float,
               legal: list[Any] | None = None) -> tuple[list[Any], Answer | None]:
        """The legal actions (``legal``, or the rules'), and the answer where the policy is
        not to be asked: a table the rules cannot read (:meth:`unreadable`) or an only legal
        action (:meth:`forced`); None where it is. Every decider starts here (:meth:`decide`,
        the thinker of the async sessions)."""
        if legal is None:
            legal, problem = self.checked_legal(state, request)
            if problem:
                return legal, self.unreadable(state, legal, start, problem)
        return legal, self.forced(legal, start) if len(legal) == 1 else None

    def decide(self, state: TableState, request: ev.DecisionRequest,
               legal: list[Any] | None = None) -> Answer:
        start = self.clock.now()
        legal, settled = self.settle(state, request, start, legal)
        if settled is not None:
            return settled
        latest = anytime.Latest()
        decision, problem, kind = self._ask(self.policy, state, request, legal,
                                            self.budget(request), latest.publish)
        return self.conclude(state, request, legal, start, decision, problem, latest.progress,
                             kind=kind)

    def forced(self, legal: list[Any], start: float) -> Answer:
        """The only legal action: the policy is not asked."""
        return Answer(legal[0], tuple(legal), self.name, elapsed=self.clock.now() - start,
                      source=anytime.FORCED)

    def conclude(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
                 start: float, decision: Decision | None, problem: str,
                 best: anytime.Progress | None = None, *,
                 kind: FallbackKind = FallbackKind.FAILED) -> Answer:
        """The answer to play: the policy's own (``problem`` empty: it was legal), else its
        best so far if that is legal, else the fallback policy's, else the safest action.
        Each is counted in :attr:`tally`. ``kind`` is the problem's (brain/tally.py). A best
        so far is the answer of a policy that ran out of time (:attr:`FallbackKind.LATE`);
        one played because the policy failed otherwise is marked a fallback
        (:data:`anytime.BEST_AFTER_FAULT`), so that a policy that raises at every decision is
        not counted as one that thinks to the deadline. A best so far that cannot be played
        makes a problem of the clock's the policy's own (:attr:`FallbackKind.ILLEGAL`)."""
        answer = self._conclude(state, request, legal, start, decision, problem, best, kind)
        self.tally.record(answer.fallback)
        return answer

    def _conclude(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
                  start: float, decision: Decision | None, problem: str,
                  best: anytime.Progress | None, kind: FallbackKind) -> Answer:
        if not problem and decision is not None:
            return Answer(decision.action, tuple(legal), self.name, decision.candidates,
                          self.clock.now() - start, "", anytime.POLICY,
                          anytime.work_of(decision))
        if kind is FallbackKind.NONE:  # a problem named with no kind: the policy's failing
            kind = FallbackKind.FAILED
        if best is not None:
            if best.action in legal:
                late = kind is FallbackKind.LATE
                return Answer(best.action, tuple(legal), self.name, best.candidates,
                              self.clock.now() - start,
                              f"{problem}; played its best so far",
                              anytime.BEST_SO_FAR if late else anytime.BEST_AFTER_FAULT,
                              best.work, kind)
            problem = f"{problem}; its best so far {best.action!r} is not legal"
            if kind.of_the_clock:
                kind = FallbackKind.ILLEGAL
        fallback = problem
        source = anytime.fallback_source(getattr(self.fallback_policy, "name", "fallback"))
        decision, problem2, _ = self._ask(self.fallback_policy, state, request, legal, None)
        if problem2 or decision is None:
            fallback = f"{problem}; fallback policy {problem2}"
            decision, source = Decision(safest_action(state, legal)), anytime.FALLBACK_SAFEST
        return Answer(decision.action, tuple(legal), self.name, decision.candidates,
                      self.clock.now() - start, fallback, source, kind=kind)

    def _ask(self, policy: Policy, state: TableState, request: ev.DecisionRequest,
             legal: list[Any], budget: float | None,
             publish: anytime.Publish | None = None) \
            -> tuple[Decision | None, str, FallbackKind]:
        """The policy's decision and "", or None and what went wrong; and the kind of what
        went wrong (:attr:`FallbackKind.NONE` when nothing did)."""
        name = getattr(policy, "name", "policy")
        try:
            if budget is not None and not getattr(policy, "fast", False):
                decision = self._with_deadline(policy, state, request, legal, budget, publish)
            else:
                decision = call_policy(policy, state, request, legal, budget, publish)
        except TimeoutError:  # concurrent.futures' is the builtin one
            return None, f"{name} missed its {budget:.3f}s budget", FallbackKind.LATE
        except Exception as exc:
            return None, f"{name} raised {type(exc).__name__}: {exc}", FallbackKind.FAILED
        problem = check(name, decision, legal)
        return decision, problem, FallbackKind.ILLEGAL if problem else FallbackKind.NONE

    def _with_deadline(self, policy: Policy, state: TableState, request: ev.DecisionRequest,
                       legal: list[Any], budget: float,
                       publish: anytime.Publish | None) -> Decision:
        if self._pool is None:
            import concurrent.futures

            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="policy")
        until = self.clock.now() + budget
        future = self._pool.submit(call_policy, policy, state, request, legal, budget, publish)
        if self.clock.wait(future, until):
            return future.result()
        # The late call cannot be stopped: it keeps the pool's one thread until it ends, and the
        # next decision waits behind it (within its own deadline). A fresh thread per late
        # decision piled threads up under a tight budget and crashed numpy's OpenBLAS.
        future.cancel()  # not started (it queued behind a late one): it never will be
        raise TimeoutError

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def call_policy(policy: Policy, state: TableState, request: ev.DecisionRequest,
                legal: list[Any], budget: float | None,
                publish: anytime.Publish | None) -> Decision:
    """``policy.decide``, handing ``publish`` to an anytime policy."""
    if publish is not None and anytime.is_anytime(policy):
        return policy.decide(state, request, legal, budget, publish=publish)
    return policy.decide(state, request, legal, budget)


def check(name: str, decision: Any, legal: list[Any]) -> str:
    """What is wrong with a policy's answer ("" when it is a legal action)."""
    if not isinstance(decision, Decision):
        return f"{name} answered {type(decision).__name__}, not a Decision"
    if not is_listed(decision.action, legal):
        return f"{name} answered an illegal action {decision.action!r}"
    return ""
