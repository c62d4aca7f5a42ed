"""The playouts' fast fan question (``discard_fan``) against the rules' own score of the win.

MCR's playouts ask the fan calculator about every paid wait of every hand near ready, so
they ask it directly instead of building a win context; it must say what
``McrRules.score`` says of a plain win on another seat's discard, knitted straights (whose
wait fan the judge does not count), melds, winds and flowers included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.rules.mcr import KNITTED_PATTERNS, MIN_FAN, discard_fan, packs_of, pymahjonggb_items
from brain.state import Meld
from protocols import tiles as T
from protocols.tiles import parse_mpsz
from tests.rules_helpers import ctx
from tests.test_rules_riichi_mcr_mass import KNITTED_WAITS

SUITED = [k for k in range(27) if k % 9 <= 6]  # the lowest kind of a chow


@st.composite
def wins(draw: st.DrawFn) -> tuple[list[int], tuple[Meld, ...], int, int, int, int, int]:
    """A complete hand: concealed counts (winning tile included), melds, the winning kind,
    the seat, the dealer, the round wind kind and the flowers."""
    counts = [0] * 34
    seat = draw(st.integers(0, 3))
    melds: list[Meld] = []
    knitted = draw(st.booleans())
    groups = 1 if knitted else 4
    if knitted:
        for k in draw(st.sampled_from(KNITTED_PATTERNS)):
            counts[k] += 1
    for _ in range(groups):
        chow = draw(st.booleans())
        base = draw(st.sampled_from(SUITED)) if chow else draw(st.integers(0, 33))
        tiles = [base, base + 1, base + 2] if chow else [base] * 3
        if any(counts[k] + tiles.count(k) > 4 for k in tiles):
            continue
        if not knitted and draw(st.integers(0, 3)) == 0:  # called
            giver = (seat + draw(st.integers(1, 3))) % 4
            kind = "chi" if chow else "pon"
            melds.append(Meld(kind, tuple(tiles), called=tiles[0], from_seat=giver))
            continue
        for k in tiles:
            counts[k] += 1
    pair = draw(st.integers(0, 33).filter(lambda k: counts[k] <= 2))
    counts[pair] += 2
    win = draw(st.sampled_from([k for k in range(34) if counts[k]]))
    return (counts, tuple(melds), win, seat, draw(st.integers(0, 3)),
            draw(st.integers(T.EAST, T.EAST + 3)), draw(st.integers(0, 3)))


@settings(max_examples=300, deadline=None)
@given(wins())
def test_discard_fan_is_the_rules_score_of_that_win(win: tuple[Any, ...]) -> None:
    counts, melds, kind, seat, dealer, round_wind, flowers = win
    concealed = tuple(k for k in range(34) for _ in range(counts[k]))
    ctx = WinContext(concealed=concealed, melds=melds, win_tile=kind, seat=seat,
                     from_seat=(seat + 1) % 4, dealer=dealer, round_wind=round_wind,
                     flowers=flowers)
    score = rules_for("mcr").score(ctx)
    fan = discard_fan(packs_of(melds, seat), bytes(counts), kind, flowers,
                      (seat - dealer) % 4, round_wind - T.EAST)
    if score is None:
        assert fan is None or fan < MIN_FAN
    else:
        assert fan == score.value - flowers


@pytest.mark.parametrize(("concealed", "win"), [(c, w) for c, w, _ in KNITTED_WAITS])
def test_a_knitted_straight_won_on_its_own_tile_has_no_wait_fan(concealed: str, win: str
                                                                ) -> None:
    """The judge's correction is applied: with the winning tile among the knitted nine,
    PyMahjongGB counts a wait fan the judge does not, and so neither does discard_fan."""
    counts = T.counts34(parse_mpsz(concealed))[:34]  # the winning tile included
    kind = T.kind(parse_mpsz(win)[0])
    c = ctx(concealed, win, from_seat=2, seat=1)
    judged = rules_for("mcr").score(c)
    assert judged is not None
    raw = sum(v for _, v in pymahjonggb_items(c) or ())
    fan = discard_fan((), bytes(counts), kind, 0, (1 - c.dealer) % 4, c.round_wind - T.EAST)
    assert fan == judged.value == raw - 1
