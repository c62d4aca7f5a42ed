"""The commentary's sentences on hand-made positions: the factor and every fact it names
are checked against the shanten calculator and the rules, not against the sentence code."""

from __future__ import annotations

import pytest

from brain.policies import defence
from brain.shanten import shanten, shanten_after_discards
from protocols import events as ev
from protocols import tiles as T
from replay.review.commentary import DANGER, FAN_MINIMUM, FOLD, SHAPE, VALUE, WIN, explain
from tests.review_positions import P, discard, legal, mcr_state, riichi_claim, riichi_turn

TURN = ev.DecisionRequest("turn")


def _useful(state, tile: str) -> tuple[int, set[int]]:
    """Unseen copies of the kinds that lower the shanten after discarding ``tile``."""
    counts = state.counts()
    counts[T.kind(P(tile)[0])] -= 1
    base = shanten(counts)
    kinds = set()
    for k in range(34):
        if counts[k] < 4:
            counts[k] += 1
            if min(shanten_after_discards(counts).values()) < base:
                kinds.add(k)
            counts[k] -= 1
    return sum(state.unseen(k) for k in kinds), kinds


def test_shape_sentence_names_the_shanten_and_the_useful_tiles():
    state = riichi_turn("234m456p678s23s7p9m", "1p")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "4p"))
    counts = state.counts()
    counts[T.kind(P("4p")[0])] -= 1
    useful, kinds = _useful(state, "4p")
    assert comment.factor == SHAPE
    assert comment.facts["shanten"] == shanten(counts) == 1
    assert comment.facts["useful"] == useful
    assert f"{shanten(counts)}-shanten with {useful} useful tiles" in comment.sentence
    assert all(T.tile_name(k) in comment.sentence for k in kinds)
    # 9m keeps more: the sentence says so, with the count
    best, _ = _useful(state, "9m")
    assert best > useful and f"9m would keep {best}" in comment.sentence


def test_ready_sentence_names_the_waits_and_how_many_are_left():
    state = riichi_turn("123m456p789s2355s", "7z")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "7z"))
    assert comment.factor == SHAPE
    assert "ready on 1s 4s" in comment.sentence
    left = state.unseen(T.kind(P("1s")[0])) + state.unseen(T.kind(P("4s")[0]))
    assert f"({left} left)" in comment.sentence and left == 8


def test_raising_the_shanten_is_said():
    state = riichi_turn("123m456p789s2355s", "7z")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "1m"))
    assert comment.factor == SHAPE
    assert "raises the shanten from 0" in comment.sentence and comment.facts["shanten"] == 1


def test_fold_against_a_riichi_with_a_tile_it_discarded():
    state = riichi_turn("139m258p369s1234z", "5z", riichi_seat=1, riichi_tile="9m")
    assert T.kind(P("9m")[0]) in defence.safe_kinds(state, 1)
    comment = explain(state, TURN, legal(state, TURN), discard(state, "9m"))
    assert comment.factor == FOLD
    assert comment.facts["genbutsu"] is True and 1 in comment.facts["threats"]
    assert "seat 1's riichi" in comment.sentence and "9m" in comment.sentence


def test_danger_holds_the_shape_best_tile_back_against_a_riichi():
    # 9m and 7p both keep 1-shanten; 9m keeps more useful tiles, 7p is seat 1's own discard
    state = riichi_turn("234m456p678s23s7p9m", "1p", riichi_seat=1, riichi_tile="7p")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "7p"))
    assert comment.factor == DANGER
    assert comment.facts["best_shape"] == "9m" and comment.facts["shanten"] == 1
    assert "holds 9m back" in comment.sentence and "seat 1's riichi" in comment.sentence


def test_pushing_a_live_tile_against_a_riichi_is_said():
    state = riichi_turn("234m456p678s23s7p9m", "1p", riichi_seat=1, riichi_tile="7p")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "9m"))
    assert comment.factor == SHAPE and comment.facts["push"] is True
    assert "pushing against seat 1's riichi" in comment.sentence


def test_value_keeping_the_dora():
    # dora indicator 1z: the dora is 2z, the shape-best discard; 9p is played instead
    state = riichi_turn("123m456m789s11z59p", "2z", dora="1z")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "9p"))
    assert comment.factor == VALUE
    assert comment.facts["kept"] == "2z" and "a dora" in comment.sentence
    best, _ = _useful(state, "2z")
    played, _ = _useful(state, "9p")
    assert f"({best - played} useful tiles fewer)" in comment.sentence


def test_claim_pass_without_a_yaku_and_a_yakuhai_pon():
    # the chow of 2m lowers the shanten, but an open hand with terminals and honours has no
    # yaku; the pung of red dragons (7z) has one
    state, request = riichi_claim("13m456p789s9p1267z", "2m")
    actions = legal(state, request)
    chi = next(a for a in actions if isinstance(a, ev.Chi))
    comment = explain(state, request, actions, ev.Pass())
    before = shanten(state.counts())
    assert comment.factor == VALUE and "without a yaku" in comment.sentence
    assert comment.facts["shanten"] == before == 3 and comment.facts["best_after"] == 2
    comment = explain(state, request, actions, chi)
    assert comment.factor == SHAPE and "chows 2m: 3- to 2-shanten" in comment.sentence
    state, request = riichi_claim("13m456p789s9p1277z", "7z")
    actions = legal(state, request)
    pon = next(a for a in actions if isinstance(a, ev.Pon))
    comment = explain(state, request, actions, pon)
    assert comment.factor == VALUE and "yakuhai" in comment.sentence
    assert f"{shanten(state.counts())}- to {comment.facts['after']}-shanten" in comment.sentence
    passed = explain(state, request, actions, ev.Pass())
    assert passed.factor == SHAPE and "stays closed at 2-shanten" in passed.sentence


def test_no_calls_while_defending():
    state, request = riichi_claim("13m456p789s9p1277z", "7z")
    state.apply(ev.TileDrawn(0, P("3z")[0]))
    state.apply(ev.TileDiscarded(0, P("3z")[0]))
    state.apply(ev.TileDrawn(1, None))
    state.apply(ev.RiichiDeclared(1))
    state.apply(ev.TileDiscarded(1, P("7z")[0]))
    state.apply(ev.RiichiAccepted(1))
    request = ev.DecisionRequest("claim", tile=P("7z")[0], from_seat=1)
    actions = legal(state, request)
    assert any(isinstance(a, ev.Pon) for a in actions)
    comment = explain(state, request, actions, ev.Pass())
    assert comment.factor == FOLD and "seat 1's riichi" in comment.sentence


def test_win_sentence():
    state = riichi_turn("123m456p789s2355s", "7z")
    state2, request = riichi_claim("12355m456p789s23s", "1s")
    actions = legal(state2, request)
    assert ev.Win() in actions
    comment = explain(state2, request, actions, ev.Win())
    assert comment.factor == WIN and "seat 3's 1s" in comment.sentence
    assert explain(state, TURN, legal(state, TURN), ev.Win()).factor == WIN


@pytest.mark.parametrize("tile", ["5s", "2s"])
def test_mcr_below_eight_fan_cannot_win_on_the_tile(tile):
    state = mcr_state("123m456m789p234s5s", discard=tile)
    request = ev.DecisionRequest("claim", tile=P(tile)[0], from_seat=0)
    actions = legal(state, request)
    assert T.kind(P(tile)[0]) in state.waits()  # the shape is complete ...
    assert ev.Win() not in actions  # ... but the judge refuses the win
    comment = explain(state, request, actions, ev.Pass())
    assert comment.factor == FAN_MINIMUM
    assert comment.sentence.startswith("below 8 fan: cannot win on this tile")


def test_mcr_eight_fan_decides_a_ready_discard():
    state = mcr_state("123m456m789p234s5s", draw="7z")
    comment = explain(state, TURN, legal(state, TURN), discard(state, "7z"))
    assert comment.factor == FAN_MINIMUM and "below 8 fan" in comment.sentence
    assert comment.facts["waits"] == "2s 5s" and comment.facts["waits_8_fan"] == ""
    # the same shape in one suit plus a chow of another reaches 8 fan (pure straight)
    state = mcr_state("123m456m789m234s5s", draw="7z")
    request = ev.DecisionRequest("claim", tile=P("5s")[0], from_seat=0)
    comment = explain(state, TURN, legal(state, TURN), discard(state, "7z"))
    assert comment.factor == SHAPE and comment.facts["waits_8_fan"] == "2s 5s"
    assert "ready on 2s 5s" in comment.sentence and request.kind == "claim"


def test_mcr_self_draw_below_eight_fan():
    state = mcr_state("123m456m789p234s5s", draw="5s")
    actions = legal(state, TURN)
    assert shanten(state.counts()) == -1 and ev.Win() not in actions
    comment = explain(state, TURN, actions, discard(state, "5s"))
    assert comment.factor == FAN_MINIMUM
    assert comment.sentence.startswith("below 8 fan: cannot win on the drawn 5s")
