"""What every policy answers: an action, and the candidates it weighed (for the game log)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from brain.state import TableState
from protocols import events as ev


@dataclass(frozen=True)
class Decision:
    """``candidates``: the best few actions with the policy's own scores, best first (empty
    for policies that do not score)."""

    action: Any
    candidates: tuple[tuple[Any, float], ...] = ()


def win_if_legal(legal: list[Any]) -> Decision | None:
    """Every policy here wins whenever it may (the legal set already holds each variant's
    minimum value, MCR's 8 fan included)."""
    for a in legal:
        if isinstance(a, ev.Win):
            return Decision(a, ((a, 1.0),))
    return None


class Policy(Protocol):
    name: str

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None) -> Decision: ...
