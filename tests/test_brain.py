"""The decider: a policy that raises, answers illegally or runs late is replaced, and the
answer is always legal."""

import time

from brain.brain import Brain, safest_action
from brain.policies.base import Decision
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T


def _turn_state():
    state = TableState("riichi", 0)
    state.apply(ev.GameStarted("riichi", 0))
    hand = tuple(T.parse_mpsz("123m456p789s1122z5m"))
    state.apply(ev.RoundStarted(0, 0, scores=(25000,) * 4, hand=hand[:13],
                                dora_indicators=(T.parse_mpsz("1z")[0],)))
    state.apply(ev.TileDrawn(0, hand[13]))
    return state


class Raising:
    name = "raising"

    def decide(self, state, request, legal, budget=None):
        raise RuntimeError("boom")


class Illegal:
    name = "illegal"
    fast = True

    def decide(self, state, request, legal, budget=None):
        return Decision(ev.Discard(T.parse_mpsz("9p")[0]))


class Slow:
    name = "slow"

    def decide(self, state, request, legal, budget=None):
        time.sleep(2.0)
        return Decision(legal[0])


def test_policy_answer_used_when_legal():
    answer = Brain("riichi", "greedy").decide(_turn_state(), ev.DecisionRequest("turn"))
    assert answer.fallback == "" and answer.action in answer.legal and answer.policy == "greedy"
    assert answer.candidates


def test_raising_policy_falls_back():
    answer = Brain("riichi", Raising()).decide(_turn_state(), ev.DecisionRequest("turn"))
    assert "raised RuntimeError: boom" in answer.fallback
    assert answer.action in answer.legal


def test_illegal_answer_falls_back():
    answer = Brain("riichi", Illegal()).decide(_turn_state(), ev.DecisionRequest("turn"))
    assert "illegal action" in answer.fallback and answer.action in answer.legal


def test_late_policy_is_abandoned_at_the_deadline():
    brain = Brain("riichi", Slow(), limit=0.3, margin=0.1)
    answer = brain.decide(_turn_state(), ev.DecisionRequest("turn"))
    brain.close()
    assert "missed its" in answer.fallback and answer.action in answer.legal


def test_fallback_of_the_fallback_is_the_safest_action():
    brain = Brain("riichi", Raising(), fallback_policy="tsumogiri")
    brain.fallback_policy = Raising()
    state = _turn_state()
    answer = brain.decide(state, ev.DecisionRequest("turn"))
    assert "fallback policy" in answer.fallback
    assert answer.action == ev.Discard(state.last_draw)


def test_safest_action_prefers_pass():
    state = _turn_state()
    legal = [ev.Pon((1, 1)), ev.Pass()]
    assert safest_action(state, legal) == ev.Pass()


def test_budget_from_limit_and_deadline():
    brain = Brain("riichi", "greedy", limit=4.0, margin=0.5)
    assert brain.budget(ev.DecisionRequest("turn")) == 3.5
    soon = ev.DecisionRequest("turn", deadline=time.monotonic() + 1.0)
    assert 0.1 <= brain.budget(soon) <= 0.5
    assert Brain("riichi", "greedy").budget(ev.DecisionRequest("turn")) is None


def test_tally_counts_each_fallback_and_keeps_the_first_reason():
    brain = Brain("riichi", Raising())
    for _ in range(3):
        brain.decide(_turn_state(), ev.DecisionRequest("turn"))
    assert (brain.tally.decisions, brain.tally.fallbacks) == (3, 3)
    assert brain.tally.first == "raising raised RuntimeError: boom"
    assert brain.tally.share == 1.0
    ok = Brain("riichi", "greedy")
    ok.decide(_turn_state(), ev.DecisionRequest("turn"))
    assert (ok.tally.decisions, ok.tally.fallbacks, ok.tally.first) == (1, 0, "")


def test_tally_leaves_out_forced_answers():
    brain = Brain("riichi", Raising())
    brain.decide(_turn_state(), ev.DecisionRequest("turn"), legal=[ev.Pass()])
    assert brain.tally.decisions == 0 and brain.tally.fallbacks == 0
