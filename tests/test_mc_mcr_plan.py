"""MCR playouts steer by the nearest 8-fan plan of each candidate's hand: a greedy playout
that only lowers shanten reaches hands under 8 fan, which the rules refuse (86% of its
complete shapes, `mjbot bench mc --variant mcr`)."""

from __future__ import annotations

import numpy as np

from brain.policies.mc.config import McConfig, parse
from brain.policies.mc.oneplayer import choose_discards
from brain.policies.mc.playout import PLAN_KEEP, Playouts
from brain.policies.mc.policy import params
from brain.policies.mc.root import (
    build_table,
    candidates,
    discard_bias,
    plan_bias,
    plan_call_masks,
)
from brain.policies.mc.values import OurWins
from brain.policies.mcr_plan import plan_calls, plan_kinds
from brain.rules import rules_for
from protocols import events as ev
from protocols import tiles as T
from tests.mc_helpers import FixedOpponents, turn_state


def _kinds(mpsz: str) -> set[int]:
    return {T.kind(t) for t in T.parse_mpsz(mpsz)}


def test_the_nearest_plan_names_what_to_keep_and_what_to_throw():
    straight = T.counts34(T.parse_mpsz("123m456m78m1p3p5s77z"))  # 清龙 two tiles away
    keep, throw = plan_kinds(straight, [])
    assert keep == _kinds("123456789m") and throw == frozenset()
    flush = T.counts34(T.parse_mpsz("11123345566m5p9s"))  # 清一色 (24 fan) two away
    keep, throw = plan_kinds(flush, [])
    assert keep == frozenset() and _kinds("5p9s1z7z") <= throw
    assert not throw & _kinds("123456789m")


def test_plan_bias_is_per_candidate_in_mcr_only():
    state = turn_state("123m456m78m1p3p5s77z", "2z", "mcr")
    request = ev.DecisionRequest("turn")
    legal = rules_for("mcr").legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    base = discard_bias(state)
    bias = plan_bias(state, starts, base)
    assert bias.shape == (len(starts), 34)
    nine_m = T.kind(T.parse_mpsz("9m")[0])
    assert (bias[:, nine_m] == base[nine_m] - PLAN_KEEP).all()  # every candidate wants 9m
    assert McConfig().plan and not parse("plan=no").plan  # MJBOT_MC="plan=false" turns it off
    riichi = turn_state("123m456m78m1p3p5s77z", "2z")
    assert plan_bias(riichi, starts, discard_bias(riichi)).shape == (34,)


def test_steered_playouts_reach_more_hands_the_rules_pay():
    state = turn_state("123m456m78m1p3p5s77z", "2z", "mcr", wall=60)
    request = ev.DecisionRequest("turn")
    legal = rules_for("mcr").legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    models = FixedOpponents((0.0, 0.0, 0.0), {k: 0.0 for k in range(34)})
    table = build_table(state, models.estimate(state))
    shares = {}
    for steered in (False, True):
        wins = OurWins(state)
        base = discard_bias(state)
        engine = Playouts(table, wins, params(McConfig()),
                          plan_bias(state, starts, base) if steered else base)
        engine.run(starts, 256, np.random.default_rng(11))
        shares[steered] = (wins.tries - wins.refused) / max(wins.tries, 1)
    assert shares[True] > shares[False] + 0.03, shares  # 34.6% against 29.1%


def test_a_call_that_keeps_only_the_called_kind_discards_it():
    # MCR lets a player chow 4s with 23s from 2344s beside three chows, keeping 44s: the
    # playout's swap-calling ban (the called kind, Tenhou's rule) left it nothing to discard,
    # it took a tile it did not hold and the decision failed (1 in 147,854 on seed 67)
    hands = np.zeros((2, 34), np.int8)
    four_s, five_m = T.kind(T.parse_mpsz("4s")[0]), T.kind(T.parse_mpsz("5m")[0])
    hands[0, four_s] = 2
    hands[1, four_s] = 1
    hands[1, five_m] = 1
    kinds, _ = choose_discards(hands, discard_bias(turn_state("123m456m78m1p3p5s77z", "2z",
                                                             "mcr")),
                               np.array([four_s, four_s], np.int16))
    assert kinds.tolist() == [four_s, five_m]  # the ban lifted only where nothing else is held



def _playout_hands(hand: str, drawn: str, strict: bool, n: int = 64
                   ) -> dict[int, np.ndarray]:
    """Discard kind -> (n, 34): where each playout of that discard of an MCR turn left our
    hand (opponents never win: a row ends at our win or the wall's end)."""
    state = turn_state(hand, drawn, "mcr", wall=60)
    request = ev.DecisionRequest("turn")
    legal = rules_for("mcr").legal_actions(state, request)
    cands = [c for c in candidates(state, request, legal) if c.start is not None]
    starts = [c.start for c in cands if c.start is not None]  # all of them
    models = FixedOpponents((0.0, 0.0, 0.0), {k: 0.0 for k in range(34)})
    table = build_table(state, models.estimate(state))
    # the plan alone: exact ready waits (test_mc_exact_ready.py) steer toward 8 fan as well
    cfg = parse(f"plan_strict={str(strict).lower()},exact_ready=false")
    engine = Playouts(table, OurWins(state), params(cfg),
                      plan_bias(state, starts, discard_bias(state)))
    ends = engine.run(starts, n, np.random.default_rng(5), check=True).trace["hand"]
    return {c.discard_kind: ends.reshape(len(cands), n, 34)[i] for i, c in enumerate(cands)}


def test_a_strict_flush_plan_throws_its_other_suits_at_the_cost_of_shanten():
    # after 4p, 5p or 9s goes, the nearest plan is 清一色 in characters; 5p (with 4p) and 9s
    # are what a greedy playout keeps for its shape
    hand, drawn = "11123345566m5p9s", "4p"
    off = sorted(set(range(34)) - _kinds("123456789m"))
    assert params(parse("plan_strict=true")).plan_strict
    assert not params(parse("plan_strict=true,plan=false")).plan_strict  # no plan, no rule
    loose = _playout_hands(hand, drawn, strict=False)
    strict = _playout_hands(hand, drawn, strict=True)
    for kind in sorted(_kinds("4p5p9s")):
        with_off = {name: (ends[kind][:, off].sum(axis=1) > 0).mean()
                    for name, ends in (("loose", loose), ("strict", strict))}
        assert with_off["strict"] < 0.1 < 0.4 < with_off["loose"], with_off  # 2% against 48-66%


def test_a_strict_chow_plan_never_lets_go_of_the_last_tile_of_its_kinds():
    hand, drawn = "123m456m78m1p3p5s77z", "2z"  # 清龙 in characters, 9m missing
    plan = sorted(_kinds("12345678m"))
    kept = {}
    for strict in (False, True):
        ends = np.concatenate(list(_playout_hands(hand, drawn, strict).values()))
        kept[strict] = (ends[:, plan] > 0).all(axis=1).mean()
    assert kept[True] > kept[False] + 0.2, kept  # 63% against 26%


def test_playout_calls_keep_to_the_plan():
    straight = T.counts34(T.parse_mpsz("123m456m78m1p3p5s77z"))  # 清龙
    pung, chow = plan_calls(straight, [])
    assert chow == _kinds("123456789m") and not pung & _kinds("123456789m")
    flush = T.counts34(T.parse_mpsz("11123345566m5p9s"))  # 清一色
    pung, chow = plan_calls(flush, [])
    assert pung == chow == _kinds("123456789m")
    pairs = T.counts34(T.parse_mpsz("1133557799m1p1s1z"))  # 七对: any call ends it
    assert plan_calls(pairs, []) == (frozenset(), frozenset())
    state = turn_state("123m456m78m1p3p5s77z", "2z", "mcr")
    request = ev.DecisionRequest("turn")
    legal = rules_for("mcr").legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    masks = plan_call_masks(state, starts)
    assert masks is not None and masks.shape == (len(starts), 2, 34)
    assert plan_call_masks(turn_state("123m456m78m1p3p5s77z", "2z"), starts) is None  # riichi
