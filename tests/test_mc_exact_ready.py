"""MCR exact ready inside the ``mc`` playouts: our playout hand waits only on what the fan
calculator pays, and goes ready by the discard whose paid waits are most alive - checked
against brute force (every discard and wait scored through ``fan_items``, no shanten table,
no cache), and by what it does to the playouts of a ready hand nothing pays for."""

from __future__ import annotations

import random

import numpy as np
import pytest

from brain.policies.mc.config import parse
from brain.policies.mc.oneplayer import wait_sets
from brain.policies.mc.paid import PaidShapes
from brain.policies.mc.playout import OUR_RON, OUR_TSUMO, Playouts
from brain.policies.mc.policy import params
from brain.policies.mc.root import build_table, candidates, discard_bias, plan_bias
from brain.policies.mc.values import OurWins
from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.rules.mcr import MIN_FAN, fan_items
from brain.shanten import shanten
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from tests.mc_helpers import FixedOpponents, turn_state

SILENT = FixedOpponents((0.0, 0.0, 0.0), {k: 0.0 for k in range(34)})


def _engine(state: TableState, exact: bool = True) -> Playouts:
    table = build_table(state, SILENT.estimate(state))
    return Playouts(table, OurWins(state), params(parse(f"exact_ready={exact}")),
                    discard_bias(state))


def _paid_by_brute_force(state: TableState, ready: list[int]) -> set[int]:
    """The kinds that complete ``ready`` (13 tiles, no melds) into a hand the fan calculator
    scores at 8 or more on the next seat's discard."""
    concealed = tuple(k for k in range(34) for _ in range(ready[k]))
    paid = set()
    for w in range(34):
        if ready[w] == 4:
            continue
        ready[w] += 1
        complete = shanten(ready) == -1
        ready[w] -= 1
        if not complete:
            continue
        items = fan_items(WinContext(concealed=(*concealed, w), melds=(), win_tile=w,
                                     seat=state.seat, from_seat=(state.seat + 1) % 4,
                                     dealer=state.dealer, round_wind=state.round_wind_kind))
        if items is not None and sum(v for _, v in items) >= MIN_FAN:
            paid.add(w)
    return paid


def _near_ready_hands(count: int, seed: int) -> list[list[int]]:
    """14-tile hands one tile off a complete one: a random complete hand (four sets and a
    pair) with one tile swapped for a random other, so some discard leaves it ready."""
    rng = random.Random(seed)
    hands: list[list[int]] = []
    while len(hands) < count:
        counts = [0] * 34
        for _ in range(4):
            if rng.random() < 0.5:
                k = rng.randrange(34)
                counts[k] += 3
            else:
                suit, low = rng.randrange(3), rng.randrange(7)
                for i in range(3):
                    counts[suit * 9 + low + i] += 1
        counts[rng.randrange(34)] += 2
        out = rng.choice([k for k in range(34) if counts[k]])
        counts[out] -= 1
        counts[rng.randrange(34)] += 1
        if max(counts) <= 4:
            hands.append(counts)
    return hands


def test_paid_waits_and_the_ready_discard_agree_with_brute_force():
    state = turn_state("123m456p789s1234z", "5z", "mcr")
    engine = _engine(state)
    pool = engine.t.pool
    checked = differs = 0
    for hand in _near_ready_hands(60, seed=11):
        options = {}
        for x in range(34):
            if not hand[x]:
                continue
            ready = list(hand)
            ready[x] -= 1
            if shanten(ready) != 0:
                continue
            paid = _paid_by_brute_force(state, ready)
            got = engine.paid.waits((), np.array(ready, np.int8))
            assert set(np.flatnonzero(got)) == paid, (hand, x)
            options[x] = int(sum(pool[w] for w in paid))
            checked += 1
        live = {x: n for x, n in options.items() if n > 0}
        want = min(live, key=lambda x: (-live[x], x)) if live else None
        assert engine.paid.ready_discard((), np.array(hand, np.int8)) == want, hand
        differs += len(set(options.values())) > 1
    assert checked >= 60 and differs >= 5  # the choice was a real one in several hands


def test_a_banned_kind_is_never_the_ready_discard():
    state = turn_state("123m456p789s1234z", "5z", "mcr")
    engine = _engine(state)
    for hand in _near_ready_hands(30, seed=12):
        x = engine.paid.ready_discard((), np.array(hand, np.int8))
        if x is not None:
            assert engine.paid.ready_discard((), np.array(hand, np.int8), banned=x) != x


@pytest.mark.parametrize("draw", ["1z", "9p"])
def test_a_ready_hand_nothing_pays_for_is_rebuilt(draw):
    """123m345p678s23m55p waits on 1m4m at under 8 fan: the greedy playout keeps that shape
    and wins only where a plan swap happens to break it; with exact ready it rebuilds."""
    state = turn_state("123m345p678s23m55p", draw, "mcr", wall=60)
    request = ev.DecisionRequest("turn")
    legal = rules_for("mcr").legal_actions(state, request)
    starts = [c.start for c in candidates(state, request, legal) if c.start is not None]
    table = build_table(state, SILENT.estimate(state))
    bias = plan_bias(state, starts, discard_bias(state))
    shape = np.array(T.counts34(T.parse_mpsz("123m345p678s23m55p")), np.int8)
    assert set(np.flatnonzero(wait_sets(shape[None])[0])) == {0, 3}  # 1m, 4m ...
    assert not _engine(state).paid.waits((), shape).any()  # ... neither worth 8 fan
    wins = {}
    for exact in (False, True):
        engine = Playouts(table, OurWins(state), params(parse(f"exact_ready={exact}")), bias)
        res = engine.run(starts, 96, np.random.default_rng(5))
        wins[exact] = np.isin(res.outcome, [OUR_TSUMO, OUR_RON]).mean()
    assert wins[True] > wins[False] + 0.08, wins


def _two_off_hands(count: int, seed: int) -> list[list[int]]:
    """14-tile hands two tiles off a complete one (a near-ready hand with one more swap),
    kept where the best discard leaves them one step short of ready."""
    rng = random.Random(seed)
    hands = []
    for hand in _near_ready_hands(count * 20, seed):
        out = rng.choice([k for k in range(34) if hand[k]])
        hand[out] -= 1
        hand[rng.randrange(34)] += 1
        if max(hand) <= 4 and shanten(hand) == 1:
            hands.append(hand)
        if len(hands) == count:
            break
    return hands


def _step_counts_by_brute_force(state: TableState, hand: list[int], pool: np.ndarray
                                ) -> dict[int, int]:
    """Per discard that leaves ``hand`` ready or one step short: the unseen copies of the kinds
    whose draw lets some discard go ready on a live wait that pays 8 fan."""
    counts = {}
    for x in range(34):
        if not hand[x]:
            continue
        left = list(hand)
        left[x] -= 1
        if shanten(left) > 1:
            continue
        counts[x] = 0
        for k in range(34):
            if k == x or pool[k] == 0 or left[k] == 4:
                continue
            left[k] += 1
            for y in range(34):
                if not left[y]:
                    continue
                left[y] -= 1
                paid = (shanten(left) == 0
                        and any(pool[w] > 0 for w in _paid_by_brute_force(state, left)))
                left[y] += 1
                if paid:
                    counts[x] += int(pool[k])
                    break
            left[k] -= 1
    return counts


def test_the_step_discard_agrees_with_brute_force():
    """exact_step: each discard into ready or one step short is worth the unseen draws after
    which some discard is ready on a paid live wait; the step discard is the best of them,
    where the shape's own pick has fewer (hands one step short, and ready shapes nothing
    pays for: these may step back). Some kinds are out of sight (all four seen): a draw of
    one never comes, and a wait on one is no wait."""
    state = turn_state("123m456p789s1234z", "5z", "mcr")
    pool = _engine(state).t.pool.copy()
    pool[[1, 4, 11, 15, 19, 24, 28]] = 0
    paid = PaidShapes(OurWins(state), pool, regular=False)
    moved = back = 0
    dead = [h for h in _near_ready_hands(80, seed=22)
            if paid.ready_discard((), np.array(h, np.int8)) is None][:4]
    assert len(dead) == 4
    for hand in _two_off_hands(6, seed=21) + dead:
        want = _step_counts_by_brute_force(state, hand, pool)
        counts = np.array(hand, np.int8)
        assert paid.step_counts((), counts) == want, hand
        best = max(want.values())
        first_best = min(x for x, n in want.items() if n == best)
        back += hand in dead and shanten([n - (k == first_best) for k, n in enumerate(hand)]) == 1
        for picked in want:
            got = paid.step_discard((), counts, -1, picked)
            if best == 0 or want[picked] == best:
                assert got is None
            else:
                assert got == min(x for x, n in want.items() if n == best)
                moved += 1
    assert moved >= 6  # the shape's pick was overruled in several hands ...
    assert back >= 1  # ... and a ready shape nothing pays for steps back to rebuild
    # the hand's cache outlives a decision; what is in sight changes, and the counts with it
    later = pool.copy()
    later[[2, 3, 5, 6, 12, 13, 21, 22]] = 0
    seen_more = PaidShapes(paid.wins, later, regular=False)
    for hand in _two_off_hands(6, seed=21)[:2] + dead[:1]:
        assert (seen_more.step_counts((), np.array(hand, np.int8))
                == _step_counts_by_brute_force(state, hand, later))
