"""Taiwan 16-tile wins are five groups and a pair only: after one call the 14 concealed tiles
must not be read as seven pairs (or thirteen orphans), by the rule-based evaluation, the table
state or the ``mc`` playouts. Before this was so, 16% of the rule-based player's one-call turns
steered toward seven pairs, a hand the rules never pay, and 11% of the complete shapes ``mc``'s
playouts reached were refused."""

from __future__ import annotations

import numpy as np

from brain.policies.evaluation import analyse_discards
from brain.policies.mc.config import McConfig
from brain.policies.mc.playout import Playouts
from brain.policies.mc.policy import params
from brain.policies.mc.root import build_table, candidates, discard_bias
from brain.policies.mc.values import OurWins
from brain.rules import rules_for
from brain.shanten import regular_shanten, shanten
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from tests.mc_helpers import FixedOpponents

PAIRS_HAND = "1122m3355p6688s55z1z9m"  # 16 tiles: six pairs, a pair of 5z, two singles


def _after_pung(variant: str = "taiwan16") -> TableState:
    """Seat 0 has punged seat 3's 5z: 14 concealed tiles, six pairs, 1z and 9m; to discard."""
    state = TableState(variant, 0)
    state.apply(ev.GameStarted(variant, 0))
    state.apply(ev.RoundStarted(round_wind=0, dealer=1, scores=(0,) * 4,
                                hand=tuple(T.parse_mpsz(PAIRS_HAND)), wall_remaining=60))
    for seat in (1, 2):
        state.apply(ev.TileDrawn(seat, None))
        state.apply(ev.TileDiscarded(seat, T.parse_mpsz("9p")[0]))
    state.apply(ev.TileDrawn(3, None))
    five = T.parse_mpsz("5z")[0]
    state.apply(ev.TileDiscarded(3, five))
    state.apply(ev.MeldCalled(0, "pon", (five,) * 3, five, 3))
    return state


def test_the_rule_based_evaluation_counts_only_regular_shapes():
    state = _after_pung()
    counts = state.counts()
    assert sum(counts) == 14
    nine_m = T.kind(T.parse_mpsz("9m")[0])
    rest = list(counts)
    rest[nine_m] -= 1
    assert shanten(rest) == 0  # seven pairs would call this hand ready
    for kind, info in analyse_discards(state).items():
        after = list(counts)
        after[kind] -= 1
        assert info.shanten == regular_shanten(after), kind
    assert analyse_discards(state)[nine_m].shanten == regular_shanten(rest) > 0


def test_the_table_state_sees_no_seven_pairs_wait():
    state = _after_pung()
    state.apply(ev.TileDiscarded(0, T.parse_mpsz("9m")[0]))
    assert state.waits() == frozenset()
    assert state.hand_shanten() == regular_shanten(state.counts()) > 0


def test_mc_playouts_reach_only_shapes_the_rules_pay():
    state = _after_pung()
    request = ev.DecisionRequest("turn")
    legal = rules_for("taiwan16").legal_actions(state, request)
    models = FixedOpponents((0.0, 0.0, 0.0), {k: 0.0 for k in range(34)})
    table = build_table(state, models.estimate(state))
    wins = OurWins(state)
    engine = Playouts(table, wins, params(McConfig()), discard_bias(state))
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    engine.run(starts, 64, np.random.default_rng(3))
    assert wins.tries > 0 and wins.refused == 0


def test_the_review_commentary_describes_the_regular_shape():
    from replay.review.commentary import explain

    state = _after_pung()
    request = ev.DecisionRequest("turn")
    legal = rules_for("taiwan16").legal_actions(state, request)
    nine_m = next(a for a in legal if isinstance(a, ev.Discard)
                  and T.to_mpsz([a.tile]) == "9m")
    comment = explain(state, request, legal, nine_m)
    rest = state.counts()
    rest[T.kind(nine_m.tile)] -= 1
    assert comment.facts["shanten"] == regular_shanten(rest) == 3  # not "ready" (seven pairs)
