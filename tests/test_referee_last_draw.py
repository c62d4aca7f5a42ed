"""Taiwan 16-tile at the local table ends a hand as the NYCU lab referee does: right after
the draw that leaves the 16-tile reserve (../shared/data/ntpu/lab_referee/README.md, and
MJServerLog_1795525388.sgf, whose last node is N's draw). That drawer may only win; it never
discards, so nobody can win on a discard after the last draw."""

from __future__ import annotations

import random
import sys
from typing import Any

from adapter.local.referee import HandReferee, HandSetup
from adapter.local.seat import seat_for
from adapter.local.walls import tile_set
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from tests.table_helpers import ScriptedSeat, events_of, outcome_of, play_hand, take_when_legal

NINE_S = T.parse_mpsz("9s")[0]


def _wall(dealer: str, north: str) -> tuple[int, ...]:
    """The dealer's and North's 16 tiles as given, seat 1 two of the 9s, seat 2 sixteen others;
    the live wall shuffled with the last 9s as its 56th draw: North's, the last one."""
    rest = tile_set("taiwan16")
    dealt = {seat: T.parse_mpsz(text) for seat, text in ((0, dealer), (3, north))}
    for tile in [*dealt[0], *dealt[3]]:
        rest.remove(tile)
    nines = [t for t in rest if t == NINE_S]
    plain = [t for t in rest if t != NINE_S]
    random.Random(5).shuffle(plain)
    dealt[1], plain = [*nines[:2], *plain[:14]], plain[14:]
    dealt[2], plain = plain[:16], plain[16:]
    live = [*plain[:55], *nines[2:], *plain[55:]]
    wall = tuple(t for seat in range(4) for t in dealt[seat]) + tuple(live)
    assert len(wall) == 136 and wall[64 + 55] == NINE_S
    return wall


# 111m 222m 333p 444p 555s and a 9s: ready on the 9s alone, the last copy of which is the last draw
DEALER_READY = "111m222m333p444p555s9s"


def test_nobody_wins_on_a_discard_after_the_last_draw() -> None:
    wall = _wall(DEALER_READY, "111z222z33z44z55z66z7z1p")
    _, seats = play_hand("taiwan16", wall, {0: take_when_legal(ev.Win)})
    draws = events_of(seats[0], ev.TileDrawn)
    assert len(draws) == 56 and draws[-1].seat == 3
    assert not events_of(seats[0], ev.RoundWon)
    assert events_of(seats[0], ev.RoundDrawn) == [ev.RoundDrawn("exhaustive")]
    assert not [e for e in events_of(seats[0], ev.TileDiscarded)
                if e.seat == 3 and e.tile == NINE_S]
    north_draws = [d for d in draws if d.seat == 3]
    north_turns = [r for r, _ in seats[3].requests if r.kind == "turn"]
    assert len(north_turns) == len(north_draws) - 1, "not asked to discard the last tile"


def _pass_the_last_tile(state: TableState, request: ev.DecisionRequest,
                        legal: list[Any]) -> ev.Pass | None:
    return ev.Pass() if request.kind == "turn" and state.wall_remaining == 0 else None


def test_the_last_drawer_is_asked_only_whether_it_wins() -> None:
    for take in (True, False):
        wall = _wall("111z222z33z44z55z66z7z1p", DEALER_READY)
        referee, seats = play_hand("taiwan16", wall, {3: take_when_legal(ev.Win) if take else
                                                      _pass_the_last_tile})
        request, _ = seats[3].requests[-1]
        assert request.kind == "turn" and referee.asked_legal == [ev.Win(), ev.Pass()]
        assert not outcome_of(referee).illegal
        (end,) = [e for e in seats[0].events if isinstance(e, ev.RoundWon | ev.RoundDrawn)]
        if take:
            assert isinstance(end, ev.RoundWon) and (end.winner, end.from_seat) == (3, None)
            assert "海底撈月(1)" in end.yaku
        else:
            assert end == ev.RoundDrawn("exhaustive")


# An NTPU program (stdin/stdout) that passes every offer, throws what it drew, and writes each
# /ask it gets to the file named by its argument
NTPU_PASSER = """
import sys
asks, last = open(sys.argv[1], "w"), None
for line in sys.stdin:
    parts = line.split()
    if not parts:
        continue
    if parts[0] == "/close":
        break
    if parts[0] == "/ready":
        print("/ready", flush=True)
    elif parts[0] in ("/mo", "/initCard"):
        last = parts[-1]
    elif parts[0] == "/ask":
        asks.write(line)
        asks.flush()
        print("/throw " + last if parts[1] == "throw" else "/pass", flush=True)
"""


def test_an_ntpu_program_passing_the_last_tile_is_not_asked_to_throw_it(tmp_path) -> None:
    """The lab referee (and our fake NTPU server) asks the last drawer only ``hu``: a program
    passing it was asked ``/ask throw`` too at the local table, and its discard, which the
    last draw does not allow, counted as an illegal answer."""
    bot, asks = tmp_path / "bot.py", tmp_path / "asks"
    bot.write_text(NTPU_PASSER)
    seats: list[Any] = [ScriptedSeat("taiwan16", s) for s in range(3)]
    ntpu = seat_for("taiwan16", 3, f"ntpu:{sys.executable} {bot} {asks}")
    referee = HandReferee("taiwan16", [*seats, ntpu])
    try:
        referee.emit(ev.GameStarted("taiwan16", 0))
        referee.play(HandSetup(seed=0, wall=_wall("111z222z33z44z55z66z7z1p", DEALER_READY),
                               scores=(0,) * 4))
        referee.emit(ev.GameEnded((0,) * 4))
    finally:
        ntpu.close()
    assert referee.asked_legal == [ev.Win(), ev.Pass()]
    assert asks.read_text().splitlines()[-1] == "/ask hu"
    assert not outcome_of(referee).illegal and ntpu.report.illegal == 0, ntpu.report
    (end,) = [e for e in seats[0].events if isinstance(e, ev.RoundWon | ev.RoundDrawn)]
    assert end == ev.RoundDrawn("exhaustive")
