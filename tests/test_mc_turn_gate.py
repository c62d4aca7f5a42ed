"""``mc``'s turn gate (``turn_z``, ``turn_margin``): on our turn a discard other than the fast
move's is played only when its Score beats the fast move's clearly on the same playouts, so
the search keeps the fast move against noise and still overrules it where the gain is real."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from brain.policies.mc.config import McConfig, parse
from brain.policies.mc.policy import McPolicy, TurnGate
from brain.policies.mc.root import Candidate, candidates
from brain.rules import rules_for
from protocols import events as ev
from protocols import tiles as T
from tests.mc_helpers import FixedOpponents, turn_state

FLAT = {k: 0.04 for k in range(34)}


def _search(state, models, **options):
    request = ev.DecisionRequest("turn")
    legal = rules_for(state.variant).legal_actions(state, request)
    policy = McPolicy(McConfig(always_simulate=True, **options), models)
    fast = policy._fast.decide(state, request, legal).action
    return fast, policy.decide(state, request, legal).action, policy.stats


def test_the_gate_keeps_the_fast_move_where_the_search_gains_only_noise():
    state = turn_state("1358m2469p13s126z", "7m", rivers={1: "9m", 2: "1p"})
    models = FixedOpponents((0.2, 0.1, 0.3), FLAT, 6000.0)
    fast, free, stats = _search(state, models, playouts=64, seed=4, fast="rulebased")
    assert free != fast and not stats.held  # without the gate the best Score overrules it
    fast, gated, stats = _search(state, models, playouts=64, seed=4, fast="rulebased",
                                 turn_z=2.0)
    assert gated == fast and stats.held
    assert stats.ranked[0][0] == fast


def test_the_gate_lets_a_clear_gain_through_and_a_strict_gate_holds_even_that():
    # seat 1 is in riichi, waiting on 6z; greedy's move throws 6z: the deal-in's expected loss
    # is no noise, so a gate of two standard errors still turns it down
    state = turn_state("123m456p789s11z67z", "2s", rivers={1: "9m"}, riichi=(1,))
    wait = np.zeros((3, 34))
    six = T.kind(T.parse_mpsz("6z")[0])
    wait[0, six] = 0.9
    models = FixedOpponents((0.95, 0.0, 0.0), wait, 12000.0)
    fast, gated, stats = _search(state, models, playouts=16, fast="greedy", turn_z=2.0)
    assert T.kind(fast.tile) == six
    assert T.kind(gated.tile) != six and not stats.held
    fast, held, stats = _search(state, models, playouts=16, fast="greedy", turn_z=50.0)
    assert held == fast and stats.held
    # a margin of a typical win's share works the same way
    fast, held, stats = _search(state, models, playouts=16, fast="greedy", turn_margin=5.0)
    assert held == fast and stats.held


def test_the_gate_measures_score_differences_on_the_same_playouts():
    # three discards: the anchor (row 1) and two others, with survival and expected loss set
    # by hand through the table; the lower bounds must be those of Score's paired difference
    tenpai = np.array([0.5, 0.0, 0.0])
    wait = np.zeros((3, 34))
    wait[0, 0], wait[0, 2] = 0.2, 0.0  # kind 0 risks a deal-in, kinds 1 and 2 do not
    value = np.full((3, 34), 1000.0)
    table = SimpleNamespace(tenpai=tenpai, wait=wait, value=value)
    cands = [Candidate(ev.Discard(4 * k), None, k) for k in range(3)]  # the gate reads no start
    gate = TurnGate(cands, [0, 1, 2], 1, table)
    rng = np.random.default_rng(0)
    u = rng.normal(100.0, 50.0, (3, 400))
    u[2] += 30.0
    gate.add(u[:, :200])
    gate.add(u[:, 200:])
    survive = np.array([0.9, 1.0, 1.0])
    loss = np.array([100.0, 0.0, 0.0])
    for z in (0.0, 1.5):
        d = u * survive[:, None] - u[1]
        expected = d.mean(axis=1) - z * d.std(axis=1) / np.sqrt(399) - loss
        lower = gate.paired.lower_bounds(z) - loss
        assert lower == pytest.approx(expected)
        margin = 10.0
        assert gate.clear(z, margin) == [bool(expected[0] > margin), True,
                                         bool(expected[2] > margin)]
    assert gate.clear(0.0, 0.0)[2] and not gate.clear(0.0, 1e6)[2]


def test_the_gate_finds_the_fast_move_by_its_kind_not_by_the_copy_it_names():
    # the hand holds a plain and a red 5m; the candidates keep the plain one, and a fast move
    # that throws the red five is still that candidate (else no gate, and no anchor)
    state = turn_state("1234m05m6p789s122z", "3z")
    request = ev.DecisionRequest("turn")
    legal = rules_for("riichi").legal_actions(state, request)
    cands = candidates(state, request, legal)
    red = next(a for a in legal if isinstance(a, ev.Discard) and T.is_red(a.tile))
    table = SimpleNamespace(tenpai=np.zeros(3), wait=np.zeros((3, 34)),
                            value=np.zeros((3, 34)))
    gate = TurnGate.build(cands, list(range(len(cands))), red, table)
    assert gate is not None and gate.anchor != red
    assert T.kind(gate.anchor.tile) == T.kind(red.tile) and not T.is_red(gate.anchor.tile)
    assert TurnGate.build(cands, list(range(len(cands))), ev.Discard(red.tile, riichi=True),
                          table) is None  # no riichi on offer: not simulated


def test_the_gate_options_parse_and_refuse_negatives():
    assert not McConfig().turn_gate
    assert parse("turn_z=2").turn_gate and parse("turn_margin=0.1").turn_gate
    with pytest.raises(ValueError, match="turn_z"):
        McConfig(turn_z=-1.0)
    with pytest.raises(ValueError, match="turn_z needs a float"):
        parse("turn_z=high")
