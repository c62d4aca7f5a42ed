"""Our rules against the real recorded games: every win of every Tenhou record (mjlog and
tenhou.net/6) is replayed from the winner's own view and scored by our riichi rules, which must
give Tenhou's han, fu and payments (honba, riichi sticks, the dealer, pao included)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.state import TableState
from protocols import events as ev
from replay.dataset.imports import read_game
from replay.record import seat_view
from tests.shared_data import DATA

TENHOU = DATA / "tenhou"
RECORDS = sorted(p for p in [*TENHOU.glob("convlog_tenhou6_json/*.json"),
                             *TENHOU.glob("mjx_pairs/*"), *TENHOU.glob("dnovikoff_mjlog/*.xml")]
                 if not p.name.startswith("LICENSE"))
RIICHI = rules_for("riichi")


def recorded_wins(path: Path) -> list[tuple[ev.RoundWon, WinContext]]:
    """Each win of the record with the context our rules build from the winner's view at
    that moment (ura dora from the record; the riichi sticks and the honba go to the first
    winner of a discard only, as at Tenhou and at our referee)."""
    record = read_game(path)
    if record.variant != "riichi" or any(
            isinstance(e, ev.GameStarted) and e.rules.get("players") == 3 for e in record.events):
        return []
    out = []
    for seat in range(4):
        state = TableState("riichi", seat)
        previous: ev.RoundWon | None = None
        for e, seen in zip(record.events, seat_view(record, seat), strict=True):
            if isinstance(e, ev.RoundWon) and e.winner == seat:
                robbing = e.from_seat is not None and state.last_added_kan is not None \
                    and state.last_added_kan[0] == e.from_seat
                ctx = RIICHI.context(state, e.win_tile, e.from_seat, robbing)
                second = previous is not None and previous.from_seat is not None \
                    and previous.from_seat == e.from_seat
                ctx = dataclasses.replace(ctx, ura_dora_indicators=tuple(e.ura_dora_indicators),
                                          sticks=0 if second else ctx.sticks,
                                          honba=0 if second else ctx.honba)
                out.append((e, ctx))
            previous = e if isinstance(e, ev.RoundWon) else (
                None if isinstance(e, ev.RoundStarted) else previous)
            state.apply(seen)
    return out


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_recorded_tenhou_win_scores_as_tenhou_scored_it(path: Path) -> None:
    wins = recorded_wins(path)
    for won, ctx in wins:
        score = RIICHI.score(ctx)
        assert score is not None, (won.yaku, won.detail)
        fu = re.match(r"(\d+)符", won.detail)
        got = (score.value, score.fu if fu else None, score.deltas)
        want = (won.value, int(fu.group(1)) if fu else None, tuple(won.deltas))
        assert got == want, (won.yaku, won.detail, score.items)


def test_the_records_hold_the_wins_this_file_is_about() -> None:
    """The records do cover what the test above claims (a change to the data would not make
    it vacuous): many wins, double ron, pao on a self-draw, honba and sticks."""
    wins = [w for p in RECORDS for w, _ in recorded_wins(p)]
    assert len(wins) >= 60
    assert sum(1 for w in wins if w.pao_seat is not None) == 2
    contexts = [c for p in RECORDS for _, c in recorded_wins(p)]
    assert any(c.honba for c in contexts) and any(c.sticks for c in contexts)
    assert any(c.robbing_kan for c in contexts) and any(c.after_kan for c in contexts)


def test_pao_on_a_discard_splits_the_yakuman_and_the_liable_seat_pays_the_honba() -> None:
    """No record has a pao ron: Tenhou's rule (the liable seat and the discarder pay half each,
    the liable seat the honba too); the discarder being the liable seat is a plain ron."""
    from brain.rules.riichi import pao_seat
    from tests.rules_helpers import ctx, meld

    melds = (meld("pon", "555z", from_seat=1), meld("pon", "666z", from_seat=2),
             meld("pon", "777z", from_seat=1))
    assert pao_seat(melds) == 1
    assert pao_seat(melds[:2]) is None
    assert pao_seat((*melds[:2], meld("closed_kan", "7777z"))) is None
    win = ctx("11m222p", "2p", melds, seat=0, from_seat=3, dealer=2, honba=2, pao_seat=1)
    score = RIICHI.score(win)
    assert score is not None and score.deltas == (32600, -16600, 0, -16000)
    plain = RIICHI.score(dataclasses.replace(win, from_seat=1))
    assert plain is not None and plain.deltas == (32600, -32600, 0, 0)
    tsumo = RIICHI.score(dataclasses.replace(win, from_seat=None, sticks=1))
    assert tsumo is not None and tsumo.deltas == (33600, -32600, 0, 0)
