"""Seed 004's player's-view prediction: the hand filter and the call rules of the thesis
(3.2.1, 3.2.4) on hand-made hands."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from protocols import events as ev
from protocols import tiles as T
from replay.review.seed004 import Seed004Evaluator, leftover_kinds
from tests.review_positions import P, legal, riichi_claim, riichi_turn

TURN = ev.DecisionRequest("turn")


def _counts(text: str) -> list[int]:
    return T.counts34(P(text))


def test_sets_pairs_and_partial_chows_are_kept():
    # 123m set, 55p pair, 78s partial chow: the lone 9m, 2p and the honours are left
    assert [T.tile_name(k) for k in leftover_kinds(_counts("1239m255p78s15z"))] == [
        "9m", "2p", "1z", "5z"]
    assert leftover_kinds(_counts("123456789m11p")) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 33), min_size=1, max_size=14).filter(
    lambda ks: all(ks.count(k) <= 4 for k in ks)))
def test_leftovers_are_single_tiles_of_the_hand(kinds):
    counts = [kinds.count(k) for k in range(34)]
    left = leftover_kinds(counts)
    assert len(set(left)) == len(left)  # every pair or more went into a set or the pair
    assert all(counts[k] >= 1 for k in left)
    suited = sorted(k for k in left if k < 27)
    for a, b in pairwise(suited):  # no partial chow is left together
        assert a // 9 != b // 9 or b - a > 2


def test_predicted_discards_come_from_the_leftovers_honours_first():
    state = riichi_turn("123m55p789s139m15z", "6z")
    ranked = Seed004Evaluator().evaluate(state, TURN, legal(state, TURN)).ranked
    first = [T.tile_name(s.action.tile) for s in ranked[:3]]
    assert set(first) <= {"1z", "5z", "6z"}  # honours not all the hand: they go first


def test_calls_follow_the_thesis_rules():
    # a pair of 5p not in a chow: the pung is predicted
    state, request = riichi_claim("123m55p789s1234z1s", "5p")
    top = Seed004Evaluator().evaluate(state, request, legal(state, request)).top
    assert isinstance(top, ev.Pon)
    # 4p 5p 5p 6p: the pair sits in a chow: no pung, and holding 5p: no chow either
    state, request = riichi_claim("123m4556p789s123z", "5p")
    top = Seed004Evaluator().evaluate(state, request, legal(state, request)).top
    assert top == ev.Pass()
    # 3m 4m, no 5m held, from the seat before: the chow is predicted
    state, request = riichi_claim("34m456p789s11234z", "5m", from_seat=3)
    actions = legal(state, request)
    assert any(isinstance(a, ev.Chi) for a in actions)
    assert isinstance(Seed004Evaluator().evaluate(state, request, actions).top, ev.Chi)
