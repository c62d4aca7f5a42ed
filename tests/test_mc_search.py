"""The pieces of the ``mc`` search: seed 002's Score(t) and switch computed by hand, the
playout engine's invariants, the values of our wins by each variant's rules."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from brain.policies.mc import expect, score
from brain.policies.mc.config import McConfig
from brain.policies.mc.oneplayer import choose_discards, connectivity, wait_sets
from brain.policies.mc.playout import (
    DEAL_IN,
    DRAW,
    OPP_RON,
    OPP_TSUMO,
    OUR_RON,
    OUR_TSUMO,
    Playouts,
    Start,
)
from brain.policies.mc.policy import params
from brain.policies.mc.root import build_table, candidates, discard_bias
from brain.policies.mc.values import OurWins, utility
from brain.rules import rules_for
from brain.shanten import shanten, shanten_batch
from protocols import events as ev
from protocols import tiles as T
from tests.mc_helpers import FixedOpponents, turn_state


def test_score_formula_on_a_case_computed_by_hand():
    tenpai = np.array([0.5, 0.2, 0.0])
    wait = np.zeros((3, 34))
    wait[:, 4] = [0.1, 0.3, 0.5]
    value = np.full((3, 34), 0.0)
    value[:, 4] = [8000.0, 2000.0, 12000.0]
    # LP = 0.05, 0.06, 0; EL = 400, 120, 0
    # Score = 1000 * 0.95 * 0.94 * 1 - 520 = 893 - 520 = 373
    assert score.score(1000.0, 4, tenpai, wait, value) == pytest.approx(373.0)
    assert score.expected_loss(4, tenpai, wait, value) == pytest.approx(520.0)
    # a kind nobody waits on keeps Sim whole; no root discard (a call, a pass): Score = Sim
    assert score.score(1000.0, 5, tenpai, wait, value) == pytest.approx(1000.0)
    assert score.score(-250.0, -1, tenpai, wait, value) == pytest.approx(-250.0)


def test_fold_value_and_the_switch_by_hand():
    tenpai = np.array([1.0, 0.0, 0.0])
    wait = np.zeros((3, 34))
    wait[0, 7] = 1.0
    value = np.full((3, 34), 8000.0)
    pool = np.zeros(34)
    pool[7] = 2
    pool[20] = 98
    # one draw hits a wait with 2/100; five draws: 1 - 0.98**5; a riichi self-draw costs
    # a third of the deal-in value
    expected = (1 - 0.98 ** 5) * 8000 / 3
    fold = score.fold_value("riichi", tenpai, wait, value, pool, 5)
    assert fold == pytest.approx(expected)
    assert math.isclose(expected, 256.2112, rel_tol=1e-4)
    # the fast move into the wait is far over alpha; a safe one is under it
    assert not score.use_fast_move(score.expected_loss(7, tenpai, wait, value), fold, 0.2)
    assert score.use_fast_move(score.expected_loss(20, tenpai, wait, value), fold, 0.2)
    # nobody near ready: the floor keeps the ratio finite
    assert score.fold_value("riichi", np.zeros(3), wait, value, pool, 5) == 100.0


def test_one_player_move_keeps_the_lowest_shanten_and_drops_lone_tiles():
    hand = np.array([T.counts34(T.parse_mpsz("123m456p789s11z57z4s"))], np.int8)
    kinds, best = choose_discards(hand, discard_bias(turn_state("123m456p789s11z5z", "7z")))
    assert int(best[0]) == 1
    counts = list(hand[0])
    counts[int(kinds[0])] -= 1
    assert shanten(counts) == 1
    # three lone tiles: the honours go before the middle 4s
    assert int(kinds[0]) in (T.kind(T.parse_mpsz("5z")[0]), T.kind(T.parse_mpsz("7z")[0]))
    near = connectivity(hand)[0]
    assert near[T.kind(T.parse_mpsz("7z")[0])] == 0
    ready = np.array([T.counts34(T.parse_mpsz("123m456p789s11z55z"))], np.int8)
    assert set(np.flatnonzero(wait_sets(ready)[0])) == {T.kind(T.parse_mpsz("1z")[0]),
                                                         T.kind(T.parse_mpsz("5z")[0])}


def _engine(state, models, **cfg):
    legal = rules_for(state.variant).legal_actions(state, ev.DecisionRequest("turn"))
    cands = candidates(state, ev.DecisionRequest("turn"), legal)
    table = build_table(state, models.estimate(state))
    engine = Playouts(table, OurWins(state), params(McConfig(**cfg)), discard_bias(state))
    return engine, [c.start for c in cands if c.start is not None], table


@pytest.mark.parametrize("calls", [False, True])
@pytest.mark.parametrize("variant,hand,draw,step", [
    ("riichi", "1358m2469p13s126z", "7m", False),
    ("mcr", "1358m2469p13s126z", "7m", False),
    ("mcr", "1358m2469p13s126z", "7m", True),
    ("taiwan16", "1358m2469p13s1236z46p", "7m", False),
])
def test_playouts_conserve_tiles_and_draw_only_unseen_ones(variant, hand, draw, step, calls):
    state = turn_state(hand, draw, variant, rivers={1: "9m", 2: "9p", 3: "9s"})
    models = FixedOpponents((0.3, 0.3, 0.3), {k: 0.05 for k in range(34)}, 20.0)
    engine, starts, table = _engine(state, models, playout_calls=calls, exact_step=step)
    # a chow of 2m with 1m3m too: 11 tiles in hand, a discard first, 2m banned
    called = np.array(T.counts34(state.hand), np.int8)
    called[T.kind(T.parse_mpsz(draw)[0])] -= 1
    called[[0, 2]] -= 1
    chow = Start(called, (), False, False, 0, discard_first=True, banned=1)
    starts = [*starts, chow]
    res = engine.run(starts, 40, np.random.default_rng(5), check=True)
    tr = res.trace
    pool = table.pool.astype(int)
    # each playout's wall is a shuffle of exactly the tiles we cannot see
    for row in tr["order"]:
        assert np.array_equal(np.bincount(row, minlength=34), pool)
    # no seat ever draws a copy that is not there, in any row
    assert (tr["all_drawn"] <= pool[None]).all()
    # our hand is the start plus what we drew less what we discarded and gave to the melds
    # we called in play (none in riichi, whose open hands need a yaku), always 0..4 a kind
    assert np.array_equal(tr["hand"], tr["start"] + tr["drawn"] - tr["dropped"] - tr["melded"])
    called = tr["melded"].sum(axis=1) > 0
    assert called.any() == (calls and variant != "riichi")
    for row in np.flatnonzero(called)[:50]:  # each call took two tiles, and added a meld
        assert tr["melded"][row].sum() == 2 * len(engine.called[row])
    assert tr["hand"].min() >= 0 and tr["hand"].max() <= 4
    assert (tr["start"] + tr["all_drawn"] <= 4).all()
    # draws never exceed the wall
    draws = tr["all_drawn"].sum(axis=1)
    limit = table.walls[0] if table.shared_wall else table.walls.sum()
    assert draws.max() <= limit
    assert set(np.unique(res.outcome)) <= {DRAW, OUR_TSUMO, OUR_RON, DEAL_IN, OPP_TSUMO,
                                           OPP_RON}
    # the shanten the playouts carry is the end hand's own, where the hand ended on 13 tiles
    ended = ~np.isin(res.outcome.ravel(), [OUR_TSUMO, OUR_RON])
    short = tr["hand"].sum(axis=1) % 3 == 1
    regular = variant == "taiwan16"
    assert np.array_equal(engine.sh[ended & short],
                          shanten_batch(tr["hand"][ended & short], regular))


def test_without_ready_opponents_nobody_else_wins_and_we_never_deal_in():
    state = turn_state("1358m2469p13s126z", "7m", rivers={1: "9m", 2: "9p", 3: "9s"})
    models = FixedOpponents((0.0, 0.0, 0.0), {k: 0.2 for k in range(34)})
    engine, starts, _ = _engine(state, models, wpet_scale=0.0)
    res = engine.run(starts, 64, np.random.default_rng(1))
    assert not np.isin(res.outcome, [DEAL_IN, OPP_TSUMO, OPP_RON]).any()
    assert (res.outcome == OUR_TSUMO).any() or (res.outcome == OUR_RON).any()
    # a drawn hand: only the noten payments move (riichi: 3000 split among the unready)
    drawn = res.deltas[res.outcome == DRAW][:, 0]
    assert set(np.round(drawn)) <= {-1000.0, 3000.0, 0.0, -4000.0, 2000.0}


def test_a_ready_opponent_on_every_kind_wins_every_hand_we_do_not_win_first():
    state = turn_state("1358m2469p13s126z", "7m", rivers={1: "9m", 2: "9p", 3: "9s"})
    models = FixedOpponents((1.0, 0.0, 0.0), {k: 1.0 for k in range(34)}, 8000.0)
    engine, starts, _ = _engine(state, models, kappa=1e9, wait_scale=1.0, wpet_scale=0.0)
    res = engine.run(starts, 32, np.random.default_rng(2))
    # seat 1 draws first and wins on its draw (it waits on everything)
    assert (res.outcome == OPP_TSUMO).all()
    assert np.allclose(res.deltas[..., 1], 8000.0)
    assert np.allclose(res.deltas[..., 0], -8000.0 / 2)  # we are the dealer: half


def test_mcr_wins_need_eight_fan_and_taiwan_wins_count_tai():
    mcr = turn_state("123m456p789s1155z", "9p", "mcr")
    wins = OurWins(mcr)
    low = np.array(T.counts34(T.parse_mpsz("123m234p567s55m789p")), np.int8)  # 门清 + 平和
    assert wins.value((), low, T.kind(T.parse_mpsz("9p")[0]), 1, False) is None
    high = np.array(T.counts34(T.parse_mpsz("123456789m11122z")), np.int8)  # 清龙 16
    got = wins.value((), high, T.kind(T.parse_mpsz("2z")[0]), 1, False)
    assert got is not None and got[0] >= 24 + 8 and got[1] <= -(8 + 8) and got[2] == -8
    assert wins.calls == 2
    fan = int(got[0]) - 24
    # the same hand off seat 2's discard: seat 2 pays 8 + fan, the others 8; no new call
    other = wins.value((), high, T.kind(T.parse_mpsz("2z")[0]), 2, False)
    assert other is not None and list(other) == [24 + fan, -8, -(8 + fan), -8]
    assert wins.calls == 2  # cached
    # every shape offered is counted, cache hits included; only the 8-fan-short one refused
    assert (wins.tries, wins.refused) == (3, 1)
    wins.value((), low, T.kind(T.parse_mpsz("9p")[0]), 1, False)
    assert (wins.calls, wins.tries, wins.refused) == (2, 4, 2)
    tw = turn_state("123456789m123p11z4p", "5p", "taiwan16")
    full = np.array(T.counts34(T.parse_mpsz("123456789m123456p11z")), np.int8)
    got = OurWins(tw).value((), full, T.kind(T.parse_mpsz("6p")[0]), None, False)
    assert got is not None and got[0] > 0 and got[0] % 500 == 0


def test_placement_bonus_only_in_riichi_last_hand():
    deltas = np.array([[8000.0, -8000.0, 0.0, 0.0], [-8000.0, 8000.0, 0.0, 0.0]])
    scores = [25000, 30000, 20000, 25000]
    plain = utility("riichi", deltas, scores, False, 1.0)
    assert list(plain) == [8000.0, -8000.0]
    last = utility("riichi", deltas, scores, True, 1.0)
    assert list(last) == [8000.0 + 15000.0, -8000.0 - 15000.0]  # first place; last place
    assert list(utility("mcr", deltas, scores, True, 1.0)) == [8000.0, -8000.0]


def test_expectation_prefers_the_discard_that_keeps_the_hand_ready():
    state = turn_state("123m456p789s11z45s", "7z")  # ready on 36s; 7z is the lone tile
    legal = rules_for("riichi").legal_actions(state, ev.DecisionRequest("turn"))
    cands = candidates(state, ev.DecisionRequest("turn"), legal)
    table = build_table(state, FixedOpponents().estimate(state))
    sims: dict[str, float] = {}
    for c in cands:
        if not c.action.riichi:
            assert c.start is not None, c  # a discard never ends the hand at once
            sims[T.to_mpsz([c.action.tile])] = expect.sim(state, table, c.start, 2)
    assert max(sims, key=sims.__getitem__) == "7z"
    assert sims["7z"] > sims["1z"] > 0


@pytest.mark.parametrize("variant,ron", [("riichi", False), ("mcr", True), ("taiwan16", True)])
def test_our_river_bars_a_win_on_a_discard_only_where_the_rules_have_furiten(variant, ron):
    """Furiten is riichi's alone: in MCR and Taiwan a wait we threw earlier still wins on
    another seat's discard, so the playouts must let it (they once barred it everywhere)."""
    hand = "123456789m111z2z" if variant != "taiwan16" else "123456789m111z789p1s"
    wait = "2z" if variant != "taiwan16" else "1s"
    state = turn_state(hand, "9s", variant, rivers={1: "9m", 2: "9p", 3: "9s"})
    models = FixedOpponents((0.0, 0.0, 0.0), {k: 0.0 for k in range(34)})
    legal = rules_for(variant).legal_actions(state, ev.DecisionRequest("turn"))
    cands = candidates(state, ev.DecisionRequest("turn"), legal)
    table = build_table(state, models.estimate(state))
    river = np.zeros(34, bool)
    river[T.kind(T.parse_mpsz(wait)[0])] = True  # we threw one earlier
    table = dataclasses.replace(table, our_river=river)
    engine = Playouts(table, OurWins(state), params(McConfig(wpet_scale=0.0)),
                      discard_bias(state))
    throw_draw = next(c.start for c in cands if c.discard_kind == T.kind(
        T.parse_mpsz("9s")[0]) and c.start is not None)
    res = engine.run([throw_draw], 200, np.random.default_rng(3))
    assert (res.outcome == OUR_TSUMO).any()
    assert (res.outcome == OUR_RON).any() == ron
