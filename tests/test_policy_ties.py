"""Policies break ties by tile kind, never by the order in which the hand or the legal actions
arrived (issue 14, item 7: a resumed Tenhou game, its hand received in another order, played
differently from the uninterrupted one in 1 of 40 games).

States come from real hands at the local table (four rule-based seats, seeded walls): at every
decision with a choice, the seat's state is kept. Each is then asked again with the hand's tiles
shuffled and the legal set rebuilt from that hand and shuffled: the legal set and the chosen
action must not change.
"""

from __future__ import annotations

import copy
import functools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from adapter.local.referee import HandReferee, HandSetup
from brain.brain import Brain
from brain.policies import get_policy
from brain.rules import rules_for
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T

VARIANTS = ("riichi", "mcr", "taiwan16", "mass")
POLICIES = ("tsumogiri", "greedy", "rulebased")
Decision = tuple[TableState, ev.DecisionRequest, list[Any]]


class _Recorder:
    """A rule-based seat that keeps a copy of its state at every decision with a choice."""

    def __init__(self, variant: str, seat: int) -> None:
        self.name = "rulebased"
        self.brain = Brain(variant, "rulebased")
        self.state = TableState(variant, seat)
        self.decisions: list[Decision] = []

    def observe(self, event: Any) -> None:
        self.state.apply(event)

    def decide(self, request: ev.DecisionRequest) -> Any:
        legal = self.brain.legal(self.state, request)
        if len(legal) > 1:
            self.decisions.append((copy.deepcopy(self.state), request, list(legal)))
        return self.brain.decide(self.state, request, legal)


@functools.lru_cache(maxsize=32)
def _decisions(variant: str, seed: int) -> tuple[Decision, ...]:
    seats = [_Recorder(variant, s) for s in range(4)]
    referee = HandReferee(variant, seats)
    referee.emit(ev.GameStarted(variant, 0))
    referee.play(HandSetup(seed=seed, scores=(25000,) * 4 if variant == "riichi" else (0,) * 4))
    return tuple(d for s in seats for d in s.decisions)


def _kind_level(action: Any) -> tuple[Any, ...]:
    """The action as a platform would send it: type, kong kind, riichi flag, tiles as a
    multiset (a red five still differs from a plain one)."""
    tiles = (action.tile,) if isinstance(action, ev.Discard) else getattr(action, "tiles", ())
    return (type(action).__name__, getattr(action, "kind", None),
            getattr(action, "riichi", False), tuple(sorted(tiles, key=T.sort_key)))


def _same_choice(policy_name: str, decision: Decision, order: random.Random) -> None:
    state, request, legal = decision
    rules = rules_for(state.variant)
    policy = get_policy(policy_name)
    chosen = policy.decide(state, request, list(legal)).action
    resumed = copy.deepcopy(state)
    order.shuffle(resumed.hand)
    rebuilt = rules.legal_actions(resumed, request)
    assert rebuilt == legal, f"legal set depends on hand order: {T.to_mpsz(state.hand)}"
    order.shuffle(rebuilt)
    again = policy.decide(resumed, request, rebuilt).action
    assert _kind_level(again) == _kind_level(chosen), (
        f"{policy_name} {state.variant}: {chosen} vs {again} for {T.to_mpsz(state.hand)} "
        f"({request.kind})")


@pytest.mark.parametrize("policy_name", POLICIES)
@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 40), order=st.randoms(use_true_random=False))
@example(seed=0, order=random.Random(0))  # failed for every variant and policy before the fix
def test_choice_does_not_depend_on_hand_or_legal_order(variant: str, policy_name: str,
                                                       seed: int, order: random.Random) -> None:
    decisions = _decisions(variant, seed)
    assert decisions
    for decision in decisions:
        _same_choice(policy_name, decision, order)


def _turn_state(variant: str, hand: list[int], drawn: int | None) -> TableState:
    state = TableState(variant, 0)
    state.apply(ev.GameStarted(variant, 0))
    state.apply(ev.RoundStarted(round_wind=0, dealer=0, scores=(25000,) * 4,
                                dora_indicators=(T.EAST,), hand=tuple(hand)))
    if drawn is not None:
        state.apply(ev.TileDrawn(0, drawn))
    return state


# Found by the test above and by a search over random deals: tiles that tie on every score
# (shape, useful tiles, weights) were chosen by their place in the hand, so the same deal
# received sorted (as on a reconnect) played another tile than the one built draw by draw.
RESUMED = [
    ("riichi", "greedy", "7m5p9s2z1m3p5s8m4z4p3s6s5z", "2s"),
    ("riichi", "rulebased", "1s06p674s2m5z8s3m91s9p", "5p"),
    ("mcr", "rulebased", "1s56p674s2m5z8s3m91s9p", "5p"),
    ("taiwan16", "rulebased", "4z86s17m5z9p15s7z4p2z1m2s67p", "6s"),
    ("mass", "rulebased", "7m7p1m4p6m6s6p57s1m9p82s", "4m"),
    ("mass", "tsumogiri", "7m7p1m4p6m6s6p57s1m9p82s4m", None),  # a dealt 14th: nothing drawn
]


@pytest.mark.parametrize(("variant", "policy_name", "dealt", "drawn"), RESUMED)
def test_a_resumed_hand_plays_as_the_uninterrupted_one(variant: str, policy_name: str,
                                                       dealt: str, drawn: str | None) -> None:
    tiles = T.parse_mpsz(dealt)
    tile = T.parse_mpsz(drawn)[0] if drawn else None
    uninterrupted = _turn_state(variant, tiles, tile)
    resumed = _turn_state(variant, sorted(tiles, key=T.sort_key), tile)
    request = ev.DecisionRequest("turn")
    rules = rules_for(variant)
    policy = get_policy(policy_name)
    first = policy.decide(uninterrupted, request, rules.legal_actions(uninterrupted, request))
    second = policy.decide(resumed, request, rules.legal_actions(resumed, request))
    assert first.action == second.action
