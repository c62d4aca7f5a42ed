"""Every legal action of one decision, ranked and valued by a policy.

``mc`` values actions in the variant's points: it simulates every candidate (no shortlist, no
fast-move switch) for a fixed number of playouts from a fixed seed, so a review gives the same
numbers on every machine. A policy without values of its own (``rulebased``, and ``nn`` when
one is registered) is asked again and again with its previous choice taken out of the legal
set, which ranks the actions by its own preferences; its loss is then measured in ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from brain.actions import canonical
from brain.policies import NN_FILE_PREFIX, get_policy
from brain.policies.mc.config import McConfig
from brain.policies.mc.policy import McPolicy
from brain.shanten import HandError
from brain.state import StateError, TableState
from protocols import events as ev
from replay.replayer import action_key

POINTS = "points"
RANK = "rank"
NEURAL = "nn"


@dataclass(frozen=True)
class Scored:
    """One legal action: ``value`` the policy's number for it (points for ``mc``; a ranking
    policy's own score where it gave one, else None), ``rank`` 1 = the policy's choice."""

    action: Any
    value: float | None
    rank: int


@dataclass(frozen=True)
class Evaluation:
    """Every distinct legal action, best first (a red five and a plain one are one action)."""

    ranked: tuple[Scored, ...]
    unit: str  # POINTS or RANK: what :meth:`loss` measures in
    forced: str = ""  # "win" / "only": the policy had nothing to weigh

    @property
    def top(self) -> Any:
        return self.ranked[0].action

    def find(self, action: Any) -> Scored | None:
        key = action_key(action)
        return next((s for s in self.ranked if action_key(s.action) == key), None)

    def loss(self, played: Any) -> float | None:
        """What playing ``played`` instead of the policy's choice cost: points below the
        best (``mc``), or the share of the other actions the policy preferred (ranks: 0 the
        choice, 1 the worst). None where the policy did not value the played action."""
        found = self.find(played)
        if found is None:
            return None
        if found.rank == 1:
            return 0.0
        if self.unit == POINTS:
            best = self.ranked[0].value
            if best is None or found.value is None:
                return None
            return max(0.0, best - found.value)
        return (found.rank - 1) / max(len(self.ranked) - 1, 1)


class PolicyFailed(RuntimeError):
    """The policy gave no answer on the decision as the table offered it (it raised, or
    answered outside the legal set): there is no ranking of its own to report, and one made
    up (the legal set's canonical order) must not pass for it."""


class Evaluator(Protocol):
    """``top``: where given, only the first ``top`` actions need be ranked (the commentary
    shows three); the others may follow unranked, in the legal set's canonical order."""

    name: str
    unit: str

    def evaluate(self, state: TableState, request: ev.DecisionRequest,
                 legal: list[Any], top: int | None = None) -> Evaluation: ...


class McEvaluator:
    """``mc`` with every candidate simulated ``playouts`` times (seeded)."""

    name = "mc"
    unit = POINTS

    def __init__(self, playouts: int = 512, seed: int = 0, models: str = "") -> None:
        self.playouts = playouts
        self.policy = McPolicy(McConfig(playouts=playouts, seed=seed, always_simulate=True,
                                        attack=0, defend=0, models=models))

    def evaluate(self, state: TableState, request: ev.DecisionRequest,
                 legal: list[Any], top: int | None = None) -> Evaluation:
        """Every action ranked whatever ``top``: one search values them all."""
        decision = self.policy.decide(state, request, legal)
        stats = self.policy.stats
        if stats.ranked:
            scored = [Scored(a, float(v), i + 1) for i, (a, v) in enumerate(stats.ranked)]
            return Evaluation(tuple(_complete(scored, legal)), POINTS)
        # a win, or one distinct action: nothing was simulated
        scored = [Scored(decision.action, None, 1)]
        return Evaluation(tuple(_complete(scored, legal)), POINTS, stats.mode or "only")


class RankingEvaluator:
    """Any policy by name, ranked by asking it again without its previous choices."""

    unit = RANK

    def __init__(self, name: str) -> None:
        self.name = name
        self.policy = get_policy(name)
        # nn scores by a softmax over the legal set it is given: asked again without its
        # choices, its probability of an action is of what is left (and 1.0 for the last)
        self.probabilities = name == NEURAL or name.startswith(NN_FILE_PREFIX)

    def evaluate(self, state: TableState, request: ev.DecisionRequest,
                 legal: list[Any], top: int | None = None) -> Evaluation:
        """Asked once for each action ranked: the first ``top`` where given (the actions
        after them, which the commentary never shows, cost an ask each: a 14-tile hand's
        discards were ranked in up to 14 asks for the three shown)."""
        remaining = canonical(legal)
        scored: list[Scored] = []
        mass = 1.0  # the probability of the actions still in the set (nn)
        while remaining and (top is None or len(scored) < top):
            try:
                decision = self.policy.decide(state, request, list(remaining))
            except (HandError, StateError):
                if not scored:  # the table itself cannot be read: the review's own case
                    raise
                break
            except (IndexError, KeyError, ValueError) as exc:
                if not scored:  # the very decision asked: the policy failed
                    raise PolicyFailed(f"{self.name} raised {type(exc).__name__}: "
                                       f"{exc}") from None
                break  # a legal set no table offers (e.g. only riichi discards left)
            key = action_key(decision.action)
            if not any(action_key(a) == key for a in remaining):
                if not scored:
                    raise PolicyFailed(f"{self.name} answered {decision.action!r}, no legal "
                                       "action")
                break  # it answered outside the set (a pass that was taken out)
            own = dict((action_key(a), v) for a, v in decision.candidates)
            value = own.get(key)
            if self.probabilities and value is not None:
                value, mass = value * mass, mass * (1.0 - value)  # of the whole legal set
            scored.append(Scored(decision.action, value, len(scored) + 1))
            remaining = [a for a in remaining if action_key(a) != key]
        return Evaluation(tuple(_complete(scored, legal)), RANK,
                          "win" if any(isinstance(a, ev.Win) for a in legal)
                          and scored and isinstance(scored[0].action, ev.Win) else "")


def _complete(scored: list[Scored], legal: list[Any]) -> list[Scored]:
    """The ranked actions, then every legal action not among them (canonical order, no
    value): a review lists them all."""
    seen = {action_key(s.action) for s in scored}
    out = list(scored)
    for a in canonical(legal):
        key = action_key(a)
        if key not in seen:
            seen.add(key)
            out.append(Scored(a, None, len(out) + 1))
    return out
