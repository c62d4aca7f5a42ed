"""Hand-made positions for the review and commentary tests: a seat's view built from events,
as a table would feed it."""

from __future__ import annotations

from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T

P = T.parse_mpsz


def riichi_turn(hand13: str, draw: str, dora: str = "1z", riichi_seat: int | None = None,
                riichi_tile: str = "9m", others: tuple[str, str, str] = ("2z", "3z", "4z"),
                ) -> TableState:
    """Seat 0 (dealer) holds ``hand13``; seats 1-3 draw and discard ``others`` (seat
    ``riichi_seat`` declares riichi with ``riichi_tile``); seat 0 then draws ``draw``."""
    s = TableState("riichi", 0)
    s.apply(ev.GameStarted("riichi", 0))
    s.apply(ev.RoundStarted(0, 0, scores=(25000,) * 4, dora_indicators=tuple(P(dora)),
                            hand=tuple(P(hand13))))
    for seat in (1, 2, 3):
        s.apply(ev.TileDrawn(seat, None))
        if seat == riichi_seat:
            s.apply(ev.RiichiDeclared(seat))
            s.apply(ev.TileDiscarded(seat, P(riichi_tile)[0]))
            s.apply(ev.RiichiAccepted(seat))
        else:
            s.apply(ev.TileDiscarded(seat, P(others[seat - 1])[0]))
    s.apply(ev.TileDrawn(0, P(draw)[0]))
    return s


def riichi_claim(hand13: str, tile: str, from_seat: int = 3) -> tuple[TableState,
                                                                     ev.DecisionRequest]:
    """Seat 0 holds ``hand13`` (not the dealer); seat ``from_seat`` discards ``tile``."""
    s = TableState("riichi", 0)
    s.apply(ev.GameStarted("riichi", 0))
    s.apply(ev.RoundStarted(0, from_seat, scores=(25000,) * 4,
                            dora_indicators=tuple(P("9p")), hand=tuple(P(hand13))))
    s.apply(ev.TileDrawn(from_seat, None))
    s.apply(ev.TileDiscarded(from_seat, P(tile)[0]))
    return s, ev.DecisionRequest("claim", tile=P(tile)[0], from_seat=from_seat)


def mcr_state(hand13: str, discard: str | None = None, draw: str | None = None) -> TableState:
    """MCR seat 2 with ``hand13``: seat 0 discards ``discard`` (a claim for us), or seats 0
    and 1 discard honours and we draw ``draw``."""
    s = TableState("mcr", 2)
    s.apply(ev.GameStarted("mcr", 2))
    s.apply(ev.RoundStarted(round_wind=0, dealer=0, hand=tuple(P(hand13))))
    s.apply(ev.TileDrawn(0, None))
    if discard is not None:
        s.apply(ev.TileDiscarded(0, P(discard)[0]))
        return s
    s.apply(ev.TileDiscarded(0, P("7z")[0]))
    s.apply(ev.TileDrawn(1, None))
    s.apply(ev.TileDiscarded(1, P("6z")[0]))
    assert draw is not None
    s.apply(ev.TileDrawn(2, P(draw)[0]))
    return s


def legal(state: TableState, request: ev.DecisionRequest) -> list[object]:
    return list(rules_for(state.variant).legal_actions(state, request))


def discard(state: TableState, tile: str) -> ev.Discard:
    k = T.kind(P(tile)[0])
    return next(a for a in legal(state, ev.DecisionRequest("turn"))
                if isinstance(a, ev.Discard) and not a.riichi and T.kind(a.tile) == k)
