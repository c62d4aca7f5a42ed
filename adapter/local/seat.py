"""A brain at the local table: it builds its own state from the events it is shown."""

from __future__ import annotations

from typing import Any

from adapter.local.timing import DecisionTimes
from brain import anytime
from brain.brain import Answer, Brain
from brain.state import TableState
from brain.tally import FallbackTally
from protocols import events as ev

BUDGET_SUFFIX = "@budget="  # ``mc@budget=0.5``: this seat's own time limit per decision
MAX_BUDGET = 3600.0


class BrainSeat:
    """One seat played by a :class:`Brain`. Its state is its own, fed only by what the referee
    shows it, exactly as an adapter feeds a brain from a platform's messages. ``limit``: the
    seconds per decision a platform would give (the brain keeps its margin back from it)."""

    def __init__(self, variant: str, seat: int, policy: str, limit: float | None = None) -> None:
        self.name = policy
        self.brain = Brain(variant, policy, limit=limit)
        self.state = TableState(variant, seat)
        self.times = DecisionTimes()

    def observe(self, event: Any) -> None:
        self.state.apply(event)

    # The referee reads this seat's state as its view of the seat (``observe`` feeds it every
    # event the view would get) and hands over the legal set it computes from it, so neither
    # the state nor the legal set is built twice. Nothing but ``observe`` changes the state.
    shares_state = True
    takes_legal = True

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Answer:
        answer = self.brain.decide(self.state, request, legal)
        if answer.source != anytime.FORCED:
            self.times.record(answer.elapsed, answer.work)
        return answer

    @property
    def tally(self) -> FallbackTally:
        """How often the brain answered for the policy (see brain/tally.py)."""
        return self.brain.tally

    def close(self) -> None:
        self.brain.close()


def split_budget(name: str) -> tuple[str, float | None]:
    """``POLICY@budget=SECONDS`` as (POLICY, SECONDS); any other name as (name, None).
    A bad number is a ValueError in one line naming the seat."""
    policy, sep, text = name.rpartition(BUDGET_SUFFIX)
    if not sep:
        return name, None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not policy or not 0.0 < seconds <= MAX_BUDGET:
        raise ValueError(f"seat {name!r}: {BUDGET_SUFFIX}SECONDS needs a policy and seconds "
                         f"above 0 (at most {MAX_BUDGET:g}), not {text!r}")
    return policy, seconds


def seat_for(variant: str, seat: int, name: str, seat_limit: float | None = None,
             budget: float | None = None) -> Any:
    """The player for seat ``name``: our brain, or an outside program for a ``KIND:CMD``
    name (adapter/local/external/; ``seat_limit`` overrides its platform's answer limit).
    Our brain decides under ``budget`` seconds per decision (None: no limit), or under the
    name's own ``@budget=SECONDS``; the seat keeps ``name`` so figures stay per seat name."""
    from adapter.local.external import SeatLimits, external_seat, is_external

    if is_external(name):
        return external_seat(variant, seat, name, SeatLimits(seat_limit))
    policy, own = split_budget(name)
    player = BrainSeat(variant, seat, policy, limit=own if own is not None else budget)
    player.name = name
    return player
