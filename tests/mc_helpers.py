"""Hand-made tables for the ``mc`` tests: opponent estimates chosen by the test (the search is
tested apart from the learned weights) and states built event by event."""

from __future__ import annotations

from typing import Any

import numpy as np

from brain.opponents.models import OpponentEstimate
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T


class FixedOpponents:
    """``estimate`` answers the same numbers for every table: ``tenpai`` (3,) for the next
    three seats, ``wait`` a kind -> P(wins | ready) map for all three (or a (3, 34) array),
    ``value`` what we pay on a deal-in."""

    def __init__(self, tenpai: tuple[float, float, float] = (0.0, 0.0, 0.0),
                 wait: dict[int, float] | np.ndarray | None = None,
                 value: float = 8000.0) -> None:
        self.tenpai = np.asarray(tenpai, np.float64)
        if isinstance(wait, np.ndarray):
            self.wait = wait.astype(np.float64)
        else:
            self.wait = np.zeros((3, 34))
            for k, p in (wait or {}).items():
                self.wait[:, k] = p
        self.value = np.full((3, 34), value)
        self.calls = 0

    def estimate(self, state: TableState) -> OpponentEstimate:
        self.calls += 1
        seats = np.array([(state.seat + i) % 4 for i in (1, 2, 3)])
        return OpponentEstimate(seats, self.tenpai.copy(), self.wait.copy(), self.value.copy())


def turn_state(hand: str, draw: str, variant: str = "riichi", seat: int = 0,
               rivers: dict[int, str] | None = None, riichi: tuple[int, ...] = (),
               wall: int | None = None) -> TableState:
    """Our turn with ``hand`` (13 tiles, mpsz) plus ``draw``; the other seats have discarded
    ``rivers`` (seat -> mpsz) in turn before us, and ``riichi`` seats have declared."""
    state = TableState(variant, seat)
    state.apply(ev.GameStarted(variant, seat))
    scores = (25000,) * 4 if variant == "riichi" else (0,) * 4
    state.apply(ev.RoundStarted(round_wind=0, dealer=seat, scores=scores,
                                dora_indicators=tuple(T.parse_mpsz("9s"))
                                if variant == "riichi" else (),
                                hand=tuple(T.parse_mpsz(hand)), wall_remaining=wall))
    for s, text in (rivers or {}).items():
        for t in T.parse_mpsz(text):
            state.apply(ev.TileDrawn(s, None))
            if s in riichi and not state.seats[s].riichi:
                state.apply(ev.RiichiDeclared(s))
                state.apply(ev.TileDiscarded(s, t))
                state.apply(ev.RiichiAccepted(s))
            else:
                state.apply(ev.TileDiscarded(s, t))
    state.apply(ev.TileDrawn(seat, T.parse_mpsz(draw)[0]))
    return state


def claim_offer(hand: str, offered: str, wall: int | None = None, variant: str = "riichi"
                ) -> tuple[TableState, ev.DecisionRequest, list[Any]]:
    """Seat 0 (seat 1 deals) holds ``hand``; seats 1 and 2 discard 9m, then seat 3 (on our
    left) discards ``offered``: the claim request and its legal actions."""
    from brain.rules import rules_for

    state = TableState(variant, 0)
    state.apply(ev.GameStarted(variant, 0))
    riichi = variant == "riichi"
    state.apply(ev.RoundStarted(round_wind=0, dealer=1,
                                scores=(25000,) * 4 if riichi else (0,) * 4,
                                dora_indicators=tuple(T.parse_mpsz("1z")) if riichi else (),
                                hand=tuple(T.parse_mpsz(hand)), wall_remaining=wall))
    for s in (1, 2, 3):
        state.apply(ev.TileDrawn(s, None))
        state.apply(ev.TileDiscarded(s, T.parse_mpsz("9m" if s < 3 else offered)[0]))
    request = ev.DecisionRequest("claim", tile=T.parse_mpsz(offered)[0], from_seat=3)
    return state, request, rules_for(variant).legal_actions(state, request)
