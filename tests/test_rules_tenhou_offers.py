"""Our riichi rules against what Tenhou itself offered: in every captured Tenhou session
(tests/data/shared/tenhou/dnovikoff_protocol_captures/), each decision the server offered us
(the ``t`` flags of a draw or another seat's discard: win, riichi, nine terminals, pon, chi,
open kan) is the set our rules find legal there, and at every discard Tenhou offered nothing
our rules offer nothing either. Tenhou does not flag a closed or added kan on a draw (the
codec reads every draw as offering one), so on our turn kans are left out of the comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols.tenhou import TenhouCodec
from tests.shared_data import TENHOU_CAPTURES
from tests.test_tenhou_codec import _transcript

RIICHI = rules_for("riichi")
CAPTURES = [p for p in sorted(TENHOU_CAPTURES.glob("*.log")) if p.name != "sanma.log"]


def _ours(state: TableState, request: ev.DecisionRequest) -> set[str]:
    legal = RIICHI.legal_actions(state, ev.DecisionRequest(
        request.kind, tile=request.tile, from_seat=request.from_seat))
    return {ev.action_kind(a) for a in legal} - {"pass", "discard"}


def compared_offers(path: Path) -> list[tuple[set[str], set[str]]]:
    """(Tenhou's offer, ours) at every decision point of our seat in the capture."""
    codec = TenhouCodec()
    state: TableState | None = None
    silent: ev.DecisionRequest | None = None  # another seat's discard Tenhou asked nothing on
    out: list[tuple[set[str], set[str]]] = []
    for direction, text in _transcript(path):
        if direction == "send":
            continue
        for item in codec.feed(text):
            if isinstance(item, ev.GameStarted):
                state = TableState("riichi", item.seat)
            if state is None:
                continue
            if isinstance(item, ev.DecisionRequest):
                silent = None
                offered = set(item.offered or ()) - {"pass", "discard"}
                ours = _ours(state, item)
                if item.kind == "turn":
                    offered, ours = offered - {"kan"}, ours - {"kan"}
                out.append((offered, ours))
                continue
            if silent is not None:
                out.append((set(), _ours(state, silent)))
                silent = None
            state.apply(item)
            if isinstance(item, ev.TileDiscarded) and item.seat != state.seat:
                silent = ev.DecisionRequest("claim", tile=item.tile, from_seat=item.seat)
    return out


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_every_offer_tenhou_made_is_what_our_rules_allow(path: Path) -> None:
    for offered, ours in compared_offers(path):
        assert ours == offered


def test_the_captures_hold_every_kind_of_offer() -> None:
    """Hundreds of decisions, with each kind Tenhou flags among them (a change of the copies
    would not make the test above vacuous)."""
    pairs = [pair for path in CAPTURES for pair in compared_offers(path)]
    assert len(pairs) >= 700
    kinds = set().union(*(offered for offered, _ in pairs))
    assert kinds == {"win", "riichi", "abortive_draw", "pon", "chi", "kan"}
