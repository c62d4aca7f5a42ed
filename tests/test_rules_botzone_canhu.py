"""Our MCR rules against the Botzone judge's own verdicts: its log writes, at every draw and
every discard, ``canHu`` for each seat (the fan total where that seat could win on the tile,
-3 where it could not). Replayed from each seat's view, our legal sets offer a win exactly
where the judge says one was possible, worth the judge's fan (tests/data/botzone_judge_log.json,
a copy of ../shared/data/botzone/local_judge_log_example.json)."""

from __future__ import annotations

import json
from typing import Any

from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from replay.dataset.imports import read_game
from replay.record import seat_view
from tests.shared_data import BOTZONE_JUDGE_LOG

MCR = rules_for("mcr")
NO_WIN = -3  # the judge's canHu where a seat cannot win


def _fan_if_legal(state: TableState, request: ev.DecisionRequest, tile: int,
                  from_seat: int | None) -> int:
    if not any(isinstance(a, ev.Win) for a in MCR.legal_actions(state, request)):
        return NO_WIN
    score = MCR.win_score(state, tile, from_seat)
    assert score is not None
    return score.value


def ours() -> list[tuple[str, int, Any]]:
    """(DRAW, seat, its canHu) and (PLAY, discarder, every seat's canHu) by our rules."""
    record = read_game(BOTZONE_JUDGE_LOG)
    views = [seat_view(record, s) for s in range(4)]
    states = [TableState("mcr", s) for s in range(4)]
    out: list[tuple[str, int, Any]] = []
    for i, event in enumerate(record.events):
        for s in range(4):
            states[s].apply(views[s][i])
        if isinstance(event, ev.TileDrawn):
            state = states[event.seat]
            assert state.last_draw is not None
            out.append(("DRAW", event.seat, _fan_if_legal(
                state, ev.DecisionRequest("turn"), state.last_draw, None)))
        elif isinstance(event, ev.TileDiscarded):
            claim = ev.DecisionRequest("claim", tile=event.tile, from_seat=event.seat)
            out.append(("PLAY", event.seat, tuple(
                NO_WIN if s == event.seat else
                _fan_if_legal(states[s], claim, event.tile, event.seat) for s in range(4))))
    return out


def judge() -> list[tuple[str, int, Any]]:
    """The same, as the judge's log writes it (a call's discard is a PLAY too)."""
    out: list[tuple[str, int, Any]] = []
    for entry in json.loads(BOTZONE_JUDGE_LOG.read_text())["log"]:
        shown = entry.get("output", {}).get("display", {})
        action, seat = shown.get("action"), shown.get("player")
        if action == "DRAW":
            out.append(("DRAW", seat, shown["canHu"][seat]))
        elif action in ("PLAY", "CHI", "PENG"):
            out.append(("PLAY", seat, tuple(NO_WIN if s == seat else v
                                            for s, v in enumerate(shown["canHu"]))))
    return out


def test_every_can_win_verdict_of_the_judge_is_ours() -> None:
    expected = judge()
    assert len(expected) >= 40 and any(  # the game's win is among them, with its 13 fan
        kind == "PLAY" and 13 in values for kind, _, values in expected)
    assert ours() == expected
