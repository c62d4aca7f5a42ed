"""The anytime contract: a policy that searches publishes its best answer so far, so that the
brain has something better than the fallback to play when the deadline comes first.

A policy opts in with ``anytime = True``; its ``decide`` then takes a keyword ``publish`` and
calls it with a :class:`Progress` whenever its best answer changes or more work is done (it
may be called often: the caller keeps only the latest). A :class:`Progress` is a
:class:`~brain.policies.base.Decision` that also says how much work stands behind it (playouts,
nodes, whatever the policy counts), so the policy may return its last one as its answer and the
work reaches the game log. Where the policy runs (inline, in a thread, in a worker process) is
the caller's business: this module has no threads of its own and no asyncio.

Where an answer came from, as the game log's decision frame records it (``source``):
:data:`POLICY` the policy's own answer, :data:`BEST_SO_FAR` its best so far at the deadline,
:data:`FORCED` the only legal action (the policy was not asked), and ``fallback-<policy>`` /
:data:`FALLBACK_SAFEST` the fallback chain.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard

from brain.policies.base import Decision
from brain.state import TableState
from protocols import events as ev

POLICY = "policy"
BEST_SO_FAR = "best_so_far"  # the policy ran out of time: its best so far is its answer
# the policy failed (raised, died, answered what cannot be played) after it had published a legal
# best so far: that move is played, but the failure is a fallback, counted and told as one
BEST_AFTER_FAULT = "fallback-best-so-far"
FORCED = "forced"
FALLBACK_SAFEST = "fallback-safest"


def fallback_source(policy_name: str) -> str:
    """The source of an answer from the fallback policy ``policy_name``."""
    return f"fallback-{policy_name}"


@dataclass(frozen=True)
class Progress(Decision):
    """A decision with the work behind it (``work``: the policy's own unit, e.g. playouts)."""

    work: int = 0


Publish = Callable[[Progress], None]


class AnytimePolicy(Protocol):
    """A policy that publishes its best answer so far (``anytime = True``)."""

    name: str
    anytime: bool

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None, publish: Publish | None = None) -> Decision: ...


def is_anytime(policy: object) -> TypeGuard[AnytimePolicy]:
    return bool(getattr(policy, "anytime", False))


def work_of(decision: Decision | None) -> int:
    """The work a decision reports (0 for a plain Decision)."""
    return int(getattr(decision, "work", 0) or 0)


class Latest:
    """The latest progress published, safe to publish from one thread and read from another
    (the brain's thread path); ``publish`` is the callable handed to the policy."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._progress: Progress | None = None

    def publish(self, progress: Progress) -> None:
        with self._lock:
            self._progress = progress

    @property
    def progress(self) -> Progress | None:
        with self._lock:
            return self._progress
