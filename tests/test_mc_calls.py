"""The ``mc`` call gate: on a claim, an answer other than the anchor (the fast move's own
answer by default, or the pass) is played only when the playouts show it beats the anchor by
more than their own noise plus a margin (arena: without the gate mc opened 52% of its hands on
noise-sized differences and lost points with them; with the pass as the anchor it called in 6%
and won too rarely)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from brain.policies.mc.config import McConfig, parse
from brain.policies.mc.policy import McPolicy, PairedDifference, call_is_clear
from brain.policies.mc.root import candidates
from brain.policies.rulebased import RuleBasedPolicy
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from tests.mc_helpers import FixedOpponents, claim_offer


def test_the_paired_difference_bound_is_the_mean_less_z_standard_errors():
    paired = PairedDifference(3)
    # candidate 0 is the pass (differences 0); candidate 2 gains 1 then 3
    paired.add([0, 2], np.array([[0.0], [1.0]]))
    paired.add([0, 2], np.array([[0.0], [3.0]]))
    bounds = paired.lower_bounds(2.0)
    # mean 2, sample standard deviation sqrt(2), standard error sqrt(2)/sqrt(2) = 1
    assert bounds[2] == pytest.approx(2.0 - 2.0 * 1.0)
    assert bounds[0] == 0.0 and bounds[1] == 0.0
    assert paired.lower_bounds(0.0)[2] == pytest.approx(2.0)


def test_a_call_must_clear_the_margin_strictly():
    assert call_is_clear(120.0, 100.0)
    assert not call_is_clear(100.0, 100.0)
    assert not call_is_clear(-5.0, 0.0)


def _dragon_pung_offer() -> tuple[TableState, ev.DecisionRequest, list[Any]]:
    """Late in the hand (16 tiles left) we hold 11123m4569p78s66z; seat 3 discards the green
    dragon: the pung (then 9p out) is ready on 69s with a yaku, passing leaves us one from
    ready with four draws to go."""
    return claim_offer("11123m4569p78s66z", "6z", wall=16)


def test_a_clear_gain_is_called_and_a_margin_beyond_it_passes():
    state, request, legal = _dragon_pung_offer()
    assert {type(a) for a in legal} == {ev.Pass, ev.Pon}
    quiet = FixedOpponents((0.0, 0.0, 0.0))
    policy = McPolicy(McConfig(playouts=256, seed=3, call_anchor="pass"), quiet)
    assert isinstance(policy.decide(state, request, legal).action, ev.Pon)
    gain = dict(policy.stats.ranked)
    # the same playouts with a margin no call can clear: the pass is played, the pung is
    # still ranked (below it)
    strict = McPolicy(McConfig(playouts=256, seed=3, call_margin=100.0, call_anchor="pass"),
                      quiet)
    decision = strict.decide(state, request, legal)
    assert isinstance(decision.action, ev.Pass)
    ranked = [type(a) for a, _ in strict.stats.ranked]
    assert ranked == [ev.Pass, ev.Pon]
    assert strict.stats.sims == policy.stats.sims  # the gate changes the choice, not the search
    assert max(gain.values()) > 0


def test_the_gate_options_are_checked():
    with pytest.raises(ValueError, match="call_z"):
        McConfig(call_z=-1.0)


def test_each_variant_has_its_gate_and_an_option_overrides_it():
    base = McConfig()
    assert base.call_gate("riichi") == (2.0, 0.05)
    assert base.call_gate("taiwan16") == (0.0, 0.0)  # calls are the game there
    assert McConfig(call_z=1.0).call_gate("taiwan16") == (1.0, 0.0)
    assert McConfig(call_margin=0.0).call_gate("riichi") == (2.0, 0.0)
    assert parse("call_z=1.5,call_margin=0").call_gate("riichi") == (1.5, 0.0)
    with pytest.raises(ValueError, match="call_z needs a float"):
        parse("call_z=high")


def test_with_the_fast_anchor_the_fast_moves_answer_stands_unless_beaten_clearly():
    """``call_anchor=fast`` (the default): rulebased pungs the dragon, so under a margin no
    answer can clear it is the pass that must beat the pung, and the pung stands; with the
    pass as the anchor the same margin keeps the pass."""
    state, request, legal = _dragon_pung_offer()
    quiet = FixedOpponents((0.0, 0.0, 0.0))
    assert isinstance(RuleBasedPolicy().decide(state, request, legal).action, ev.Pon)
    assert McConfig().call_anchor == "fast"
    for anchor, expected in (("fast", ev.Pon), ("pass", ev.Pass)):
        strict = McPolicy(McConfig(playouts=64, seed=3, call_margin=100.0,
                                   call_anchor=anchor), quiet)
        assert isinstance(strict.decide(state, request, legal).action, expected), anchor
    with pytest.raises(ValueError, match="call_anchor"):
        McConfig(call_anchor="always")



def test_the_network_can_be_the_fast_move_and_so_the_claims_anchor():
    """``fast=nn`` (expert iteration: the search starts from the network's answer): under a
    margin nothing clears, mc's answer to a claim is the network's own, call or pass."""
    from brain.policies.nn import NnPolicy

    state, request, legal = _dragon_pung_offer()
    quiet = FixedOpponents((0.0, 0.0, 0.0))
    network_answer = NnPolicy().decide(state, request, legal).action
    mc = McPolicy(McConfig(playouts=16, seed=3, call_margin=100.0, fast="nn"), quiet)
    assert mc.decide(state, request, legal).action == network_answer
    assert parse("fast=nn").fast == "nn"


def test_the_playouts_ban_swap_calling_only_where_the_rules_do():
    # 3m called with 12m, another 3m held: Tenhou bans discarding 3m (or 4m) next; MCR and
    # Taiwan allow it, so their playouts must not be kept from it
    for variant, banned in (("riichi", "3m"), ("mcr", None), ("taiwan16", None)):
        hand = "1233m456p789s1122z" if variant != "taiwan16" else "1233m456p789s112233z"
        state, request, legal = claim_offer(hand, "3m", wall=60, variant=variant)
        chows = [c for c in candidates(state, request, legal) if isinstance(c.action, ev.Chi)]
        assert chows, variant
        expected = -1 if banned is None else T.kind(T.parse_mpsz(banned)[0])
        assert {c.start.banned for c in chows if c.start is not None} == {expected}, variant
