"""A brain at the local table: it builds its own state from the events it is shown."""

from __future__ import annotations

from typing import Any

from brain.brain import Answer, Brain
from brain.state import TableState
from brain.tally import FallbackTally
from protocols import events as ev


class BrainSeat:
    """One seat played by a :class:`Brain`. Its state is its own, fed only by what the referee
    shows it, exactly as an adapter feeds a brain from a platform's messages."""

    def __init__(self, variant: str, seat: int, policy: str, limit: float | None = None) -> None:
        self.name = policy
        self.brain = Brain(variant, policy, limit=limit)
        self.state = TableState(variant, seat)

    def observe(self, event: Any) -> None:
        self.state.apply(event)

    # The referee reads this seat's state as its view of the seat (``observe`` feeds it every
    # event the view would get) and hands over the legal set it computes from it, so neither
    # the state nor the legal set is built twice. Nothing but ``observe`` changes the state.
    shares_state = True
    takes_legal = True

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Answer:
        return self.brain.decide(self.state, request, legal)

    @property
    def tally(self) -> FallbackTally:
        """How often the brain answered for the policy (see brain/tally.py)."""
        return self.brain.tally

    def close(self) -> None:
        self.brain.close()


def seat_for(variant: str, seat: int, name: str, seat_limit: float | None = None) -> Any:
    """The player for policy ``name``: our brain, or an outside program for a ``KIND:CMD``
    name (adapter/local/external/; ``seat_limit`` overrides its platform's answer limit)."""
    from adapter.local.external import SeatLimits, external_seat, is_external

    if is_external(name):
        return external_seat(variant, seat, name, SeatLimits(seat_limit))
    return BrainSeat(variant, seat, name)
