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


class Policy(Protocol):
    name: str

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None) -> Decision: ...
