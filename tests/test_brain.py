"""The decider: a policy that raises, answers illegally or runs late is replaced, and the
answer is always legal."""

import threading

from brain import anytime
from brain.brain import Brain, safest_action
from brain.clock import ManualClock
from brain.policies.base import Decision
from brain.state import TableState
from brain.tally import FallbackKind
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


class Takes:
    """Spends ``takes`` seconds of ``clock`` on a decision: publishes ``best`` first where
    given, moves the clock on, notes whether the brain still waits, then answers ``legal[0]``;
    with ``hold`` it keeps its thread until :meth:`release` (a policy still thinking when the
    clock passed its deadline)."""

    name = "takes"
    anytime = True

    def __init__(self, clock: ManualClock, takes: float, hold: bool = False,
                 best: int | None = None) -> None:
        self.clock, self.takes, self.best = clock, takes, best
        self.held, self.done = threading.Event(), threading.Event()
        if not hold:
            self.held.set()
        self.budgets: list[float | None] = []
        self.waiting: list[int] = []  # blocking waits on the clock once it had moved on

    def decide(self, state, request, legal, budget=None, publish=None):
        self.budgets.append(budget)
        if publish is not None and self.best is not None:
            publish(anytime.Progress(legal[self.best], (), 7))
        self.clock.until_waiting()  # the brain waits for this thread's answer
        self.clock.advance(self.takes)
        self.waiting.append(self.clock.waiting)
        assert self.held.wait(30), "never released"
        self.done.set()
        return Decision(legal[0])

    def release(self) -> None:
        """Let a held thread answer, and wait until it has."""
        self.held.set()
        assert self.done.wait(30), "the policy's thread never ended"


def _timed_brain(policy_for, limit: float = 1.0, margin: float = 0.25):
    """A brain on a manual clock (budget: limit less margin) and its policy."""
    clock = ManualClock()
    policy = policy_for(clock)
    return Brain("riichi", policy, limit=limit, margin=margin, clock=clock), policy, clock


def test_policy_answer_used_when_legal():
    answer = Brain("riichi", "greedy").decide(_turn_state(), ev.DecisionRequest("turn"))
    assert answer.fallback == "" and answer.action in answer.legal and answer.policy == "greedy"
    assert answer.candidates


def test_raising_policy_falls_back():
    answer = Brain("riichi", Raising()).decide(_turn_state(), ev.DecisionRequest("turn"))
    assert "raised RuntimeError: boom" in answer.fallback and answer.kind is FallbackKind.FAILED
    assert answer.action in answer.legal


def test_illegal_answer_falls_back():
    answer = Brain("riichi", Illegal()).decide(_turn_state(), ev.DecisionRequest("turn"))
    assert "illegal action" in answer.fallback and answer.action in answer.legal
    assert answer.kind is FallbackKind.ILLEGAL


def test_late_policy_is_abandoned_at_the_deadline():
    """Still thinking when the clock reaches the budget: the fallback answers at once."""
    brain, slow, clock = _timed_brain(lambda c: Takes(c, 0.75, hold=True))
    answer = brain.decide(_turn_state(), ev.DecisionRequest("turn"))
    slow.release()
    brain.close()
    assert slow.budgets == [0.75] and slow.waiting == [0]  # the brain gave up at 0.75
    assert answer.fallback == "takes missed its 0.750s budget"
    assert answer.kind is FallbackKind.LATE
    assert answer.source == anytime.fallback_source("rulebased")
    assert answer.action in answer.legal
    assert answer.elapsed == 0.75 == clock.now()  # answered at the deadline, not after it


def test_an_answer_inside_the_budget_is_the_policys_own():
    brain, policy, _clock = _timed_brain(lambda c: Takes(c, 0.7, best=1))
    state = _turn_state()
    answer = brain.decide(state, ev.DecisionRequest("turn"))
    brain.close()
    assert policy.budgets == [0.75] and policy.waiting == [1]  # still waiting at 0.7
    assert (answer.source, answer.fallback, answer.elapsed) == (anytime.POLICY, "", 0.7)
    assert answer.kind is FallbackKind.NONE
    assert answer.action == brain.legal(state, ev.DecisionRequest("turn"))[0]


def test_a_late_threads_best_so_far_is_played_at_the_deadline():
    """The thread path (the local table, the stdin forms) keeps the anytime contract."""
    brain, late, clock = _timed_brain(lambda c: Takes(c, 0.75, hold=True, best=2))
    state = _turn_state()
    answer = brain.decide(state, ev.DecisionRequest("turn"))
    late.release()
    brain.close()
    assert answer.source == anytime.BEST_SO_FAR and answer.work == 7
    assert answer.action == brain.legal(state, ev.DecisionRequest("turn"))[2]
    assert answer.fallback == "takes missed its 0.750s budget; played its best so far"
    assert answer.kind is FallbackKind.LATE
    assert answer.elapsed == 0.75 == clock.now()  # answered at the deadline


class TakesAfterAnIllegalBest(Takes):
    """:class:`Takes`, its best so far published first an action no table allows."""

    def decide(self, state, request, legal, budget=None, publish=None):
        if publish is not None:
            publish(anytime.Progress(ev.Discard(999), (), 7))
        return super().decide(state, request, legal, budget, publish)


def test_a_late_policy_whose_best_so_far_cannot_be_played_failed_not_the_clock():
    """Late, but what it published cannot be played: counted by the text, it read as the
    clock's ('missed its budget'), and `mjbot bench think` passed a policy that never
    published anything playable. Its kind is the policy's failing."""
    brain, late, _clock = _timed_brain(lambda c: TakesAfterAnIllegalBest(c, 0.75, hold=True))
    answer = brain.decide(_turn_state(), ev.DecisionRequest("turn"))
    late.release()
    brain.close()
    assert answer.fallback == ("takes missed its 0.750s budget; its best so far "
                               "Discard(tile=999, riichi=False) is not legal")
    assert answer.source == anytime.fallback_source("rulebased")
    assert answer.kind is FallbackKind.ILLEGAL and not answer.kind.of_the_clock


class PublishesThenRaises:
    """An anytime policy that publishes ``legal[2]`` and then fails, as mc does when its models
    cannot be read (its fast move is published before it loads them)."""

    name = "flaky"
    anytime = True

    def decide(self, state, request, legal, budget=None, publish=None):
        assert publish is not None
        publish(anytime.Progress(legal[2], (), 3))
        raise ValueError("its models cannot be read")


def test_a_best_so_far_played_after_the_policy_raised_is_counted_as_a_fallback():
    """The published move is still played, but as a fallback: a policy that raised at every
    decision was counted as one that thinks to its deadline (best so far), in the sessions'
    summaries and in `mjbot bench think`, and its failure logged at info only."""
    brain = Brain("riichi", PublishesThenRaises())
    state = _turn_state()
    answer = brain.decide(state, ev.DecisionRequest("turn"))
    assert answer.action == brain.legal(state, ev.DecisionRequest("turn"))[2]
    assert answer.source == anytime.BEST_AFTER_FAULT != anytime.BEST_SO_FAR
    assert answer.fallback == ("flaky raised ValueError: its models cannot be read; "
                               "played its best so far")
    assert brain.tally.fallbacks == 1


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
    clock = ManualClock(100.0)
    brain = Brain("riichi", "greedy", limit=4.0, margin=0.5, clock=clock)
    assert brain.budget(ev.DecisionRequest("turn")) == 3.5
    soon = ev.DecisionRequest("turn", deadline=101.0)  # a time on the brain's clock
    assert brain.budget(soon) == 0.5  # the nearer deadline, less the margin
    clock.advance(0.75)
    assert brain.budget(soon) == 0.1 * 0.25  # never below a tenth of what is left
    clock.advance(0.5)
    assert brain.budget(soon) == 0.0  # past the deadline
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


def _five_of_a_kind_state():
    """What a buggy platform can deal: thirteen 4m, then a fourteenth drawn."""
    state = TableState("mcr", 0)
    state.apply(ev.GameStarted("mcr", 0))
    four_m = T.parse_mpsz("4m")[0]
    state.apply(ev.RoundStarted(0, 0, scores=(0,) * 4, hand=(four_m,) * 13))
    state.apply(ev.TileDrawn(0, four_m))
    return state


def test_a_table_the_rules_cannot_read_is_answered_safely_not_raised():
    state = _five_of_a_kind_state()
    brain = Brain("mcr", "rulebased")
    answer = brain.decide(state, ev.DecisionRequest("turn"))
    assert answer.action == ev.Discard(state.last_draw)
    assert answer.source == anytime.FALLBACK_SAFEST and "cannot read our table" in answer.fallback
    assert brain.tally.fallbacks == 1
    claim = brain.decide(state, ev.DecisionRequest("claim", tile=state.hand[0], from_seat=3))
    assert claim.action == ev.Pass()


def test_a_turn_with_no_tile_in_hand_is_answered_not_raised():
    state = TableState("taiwan16", 0)
    state.apply(ev.GameStarted("taiwan16", 0))
    answer = Brain("taiwan16", "rulebased").decide(state, ev.DecisionRequest("turn"))
    assert answer.action == ev.Pass() and "no legal action" in answer.fallback
