"""The overlap and edge choices brain.rules.taiwan16's docstring documents, each where
tests/test_rules_taiwan16.py has no case for it: what a concealed or added kong counts as,
全求's and 平胡's exclusions, 海底撈月 only on a self-draw, the first-turn tai beside the rest,
and a tai table unchanged by renaming the suits or reading the numbers backwards."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.rules.base import WinContext
from brain.rules.taiwan16 import best_tai
from brain.state import Meld
from tests.rules_helpers import ctx, meld

ALL_CALLED = [meld("chi", "123m", from_seat=0), meld("pon", "555p", from_seat=2),
              meld("chi", "789s", from_seat=0), meld("pon", "222s", from_seat=3),
              meld("chi", "345m", from_seat=0)]


def tai(c: WinContext) -> dict[str, int]:
    sheet = best_tai(c)
    assert sheet is not None, "not a winning hand"
    return dict(sheet.items)


@pytest.mark.parametrize(("case", "kwargs", "present", "absent"), [
    ("a concealed kong is a concealed pung",
     dict(concealed="333p555s234s678s99m", win="9m", seat=1, from_seat=2,
          melds=[meld("closed_kan", "1111m")]), ("三暗刻",), ()),
    ("an added kong is not",
     dict(concealed="333p555s234s678s99m", win="9m", seat=1, from_seat=2,
          melds=[meld("added_kan", "1111m", from_seat=3)]), (), ("三暗刻",)),
    ("a concealed kong keeps the hand concealed",
     dict(concealed="123m456m789p123s99p", win="9p", seat=1, from_seat=2,
          melds=[meld("closed_kan", "1111z")]), ("門清",), ()),
    ("全求 needs every group called: a concealed kong is not",
     dict(concealed="99p", win="9p", seat=1, from_seat=3,
          melds=[*ALL_CALLED[:4], meld("closed_kan", "7777m")]), (), ("全求",)),
    ("全求 is never a self-draw",
     dict(concealed="99p", win="9p", seat=1, melds=ALL_CALLED), ("自摸",), ("全求",)),
    ("平胡 has no honour pair",
     dict(concealed="123m456m789p123s456s11z", win="6s", seat=1, from_seat=2), (), ("平胡",)),
    ("平胡 has no closed wait",
     dict(concealed="123m456m789p123s456s99p", win="5s", seat=1, from_seat=2), (), ("平胡",)),
    ("平胡 may have called chows",
     dict(concealed="456m789p123s456s99p", win="6s", seat=1, from_seat=2,
          melds=[meld("chi", "123m", from_seat=0)]), ("平胡",), ("門清",)),
    ("海底撈月 is a self-draw only",
     dict(concealed="123m456m789p123s456s99p", win="9p", seat=1, from_seat=2, last_tile=True),
     (), ("海底撈月",)),
    ("人胡 adds to the rest",
     dict(concealed="123m123p123s456s789s99p", win="9p", seat=1, from_seat=0, first_turn=True),
     ("人胡", "門清", "三色同順"), ()),
    ("天胡 adds to the rest, but not 門清自摸",
     dict(concealed="111z123m123p123s456s99p", win="9p", seat=0, dealer=0, first_turn=True),
     ("天胡", "莊家", "門風刻", "三色同順"), ("門清自摸", "門清", "自摸")),
])
def test_documented_choice(case: str, kwargs: dict[str, Any], present: tuple[str, ...],
                           absent: tuple[str, ...]) -> None:
    got = tai(ctx(**kwargs))
    assert all(name in got for name in present), (case, got)
    assert not any(name in got for name in absent), (case, got)


# ---------------------------------------------------------------------- symmetries


def _mapped(kind: int, suits: tuple[int, ...], backwards: bool) -> int:
    if kind >= 27:
        return kind
    suit, number = divmod(kind, 9)
    return suits[suit] * 9 + (8 - number if backwards else number)


@st.composite
def winning_hands(draw: st.DrawFn) -> tuple[list[list[int]], int, set[int], int, bool, int, int]:
    """Five groups and a pair (never a fifth copy), which groups are called, which tile wins,
    self-draw or not, the seat and the dealer."""
    counts = [0] * 34
    groups: list[list[int]] = []
    while len(groups) < 5:
        if draw(st.booleans()):
            # starts 1, 4 and 7 often: 一條龍 and 三色同順 come up
            start = draw(st.integers(0, 2)) * 9 + draw(
                st.sampled_from([0, 3, 6]) | st.integers(0, 6))
            kinds = [start, start + 1, start + 2]
        else:
            kinds = [draw(st.integers(0, 33))] * 3
        if all(counts[k] + kinds.count(k) <= 4 for k in set(kinds)):
            for k in kinds:
                counts[k] += 1
            groups.append(kinds)
    pair = draw(st.sampled_from([k for k in range(34) if counts[k] <= 2]))
    called = set(draw(st.lists(st.integers(0, 4), max_size=5)))
    return (groups, pair, called, draw(st.integers(0, 16)), draw(st.booleans()),
            draw(st.integers(0, 3)), draw(st.integers(0, 3)))


def _context(hand: tuple[list[list[int]], int, set[int], int, bool, int, int],
             suits: tuple[int, ...], backwards: bool) -> WinContext:
    groups, pair, called, win_at, self_draw, seat, dealer = hand
    melds, concealed = [], []
    for i, group in enumerate(groups):
        kinds = sorted(_mapped(k, suits, backwards) for k in group)
        if i in called:
            melds.append(Meld("chi" if kinds[0] != kinds[1] else "pon", tuple(kinds), kinds[0],
                              (seat + 3) % 4))
        else:
            concealed += group
    concealed += [pair] * 2
    win = _mapped(concealed[win_at % len(concealed)], suits, backwards)  # the same tile
    return WinContext(concealed=tuple(_mapped(k, suits, backwards) for k in concealed),
                      melds=tuple(melds), win_tile=win, seat=seat,
                      from_seat=None if self_draw else (seat + 2) % 4, dealer=dealer)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.large_base_example])
@given(winning_hands())
def test_the_tai_do_not_depend_on_the_suits_names_or_the_numbers_direction(hand) -> None:
    """Renaming the suits or reading 1-9 as 9-1 changes no total: a rule that looked at one
    suit or one end only (一條龍, 三色, an edge wait, the terminals) would show here."""
    plain = best_tai(_context(hand, (0, 1, 2), False))
    assert plain is not None
    for suits in itertools.permutations(range(3)):
        for backwards in (False, True):
            other = best_tai(_context(hand, suits, backwards))
            # the total: between readings worth the same, which one is named is arbitrary
            assert other is not None and other.total == plain.total
