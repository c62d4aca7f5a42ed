"""The NYCU lab referee's asks against our Taiwan rules' legal sets: every ``/ask`` line in its
per-seat command log (seat 1, the SGF's East) is the offer our rules make to that seat at that
moment of the same game, and our rules offer nothing the referee did not ask. The referee
writes no tai, so its wins are checked as wins (tests/test_nycu_lab_referee.py), not values.

The copies in tests/data/shared/ntpu/lab_referee/ always run; ../shared/data/ntpu/lab_referee/
too where it is present."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from replay.formats import nycu_sgf
from replay.record import seat_view
from tests.shared_data import LAB_REFEREE, SHARED_LAB_REFEREE

TAIWAN = rules_for("taiwan16")
LOGS = sorted(LAB_REFEREE.glob("*_Player1.log")) + (
    sorted(SHARED_LAB_REFEREE.glob("*_Player1.log")) if SHARED_LAB_REFEREE.is_dir() else [])
# the one ask a decision point gets, by the highest action our legal set holds there
_ASK = (("win", "/ask hu"), ("kan", "/ask gong"), ("pon", "/ask pong"), ("chi", "/ask eat"))


def _ask(legal: list[ev.Action], turn: bool) -> str | None:
    kinds = {ev.action_kind(a) for a in legal}
    asked = next((ask for kind, ask in _ASK if kind in kinds), None)
    return asked or ("/ask throw" if turn else None)


def our_asks(sgf: Path) -> list[str]:
    """The asks seat 1 gets in the SGF's game if the referee offers what our rules do."""
    state = TableState("taiwan16", 0)
    out: list[str] = []
    for e in seat_view(nycu_sgf.loads(sgf.read_text()), 0):
        state.apply(e)
        request: ev.DecisionRequest | None = None
        if (isinstance(e, ev.TileDrawn) and e.seat == 0) or (
                isinstance(e, ev.MeldCalled) and e.seat == 0 and e.kind in ("chi", "pon")):
            request = ev.DecisionRequest("turn")
        elif isinstance(e, ev.TileDiscarded) and e.seat != 0:
            request = ev.DecisionRequest("claim", tile=e.tile, from_seat=e.seat)
        elif isinstance(e, ev.MeldCalled) and e.seat != 0 and e.kind == "added_kan":
            request = ev.DecisionRequest("rob_kan", tile=e.called, from_seat=e.seat)
        if request is not None:
            ask = _ask(TAIWAN.legal_actions(state, request), request.kind == "turn")
            if ask is not None:
                out.append(ask)
    return out


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_ask_of_the_lab_referee_is_the_offer_of_our_rules(log: Path) -> None:
    asks = [line.strip() for line in log.read_text().splitlines() if line.startswith("/ask")]
    sgf = log.with_name(log.name.replace("_Player1.log", ".sgf"))
    assert our_asks(sgf) == asks


def test_the_records_ask_every_kind() -> None:
    """The logs do hold each kind of ask (a change of the copies would not make it vacuous)."""
    asks = {line.strip() for log in LOGS for line in log.read_text().splitlines()
            if line.startswith("/ask")}
    assert asks == {"/ask throw", "/ask pong", "/ask eat", "/ask gong", "/ask hu"}
