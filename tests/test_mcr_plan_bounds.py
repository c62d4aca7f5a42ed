"""The MCR planner asks MahjongGB's knitted shanten only where a table lower bound says the
answer could matter: the bounds must never exceed the real shanten, and the pruned nearest-plan
distance must equal the minimum over every plan."""

from __future__ import annotations

import random

import MahjongGB
import pytest

from brain.policies.mcr_plan import best_distance, knitted_bounds, plans
from brain.rules.mcr import KNITTED_PATTERNS
from brain.shanten import (
    regular_and_seven_pairs_shanten,
    regular_shanten,
    seven_pairs_shanten,
    shape_distance,
)
from brain.state import Meld
from protocols import tiles as T

WALL = [k for k in range(34) for _ in range(4)]


def _hands(n: int, size: int, seed: int) -> list[list[int]]:
    """Count vectors of random hands; every other one drawn mostly from one knitted pattern
    and the honours, so that near-knitted hands (where the bounds are tight) are common."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 2:
            pool = [k for k in (*rng.choice(KNITTED_PATTERNS), *range(27, 34)) for _ in range(4)]
            tiles = rng.sample(pool, rng.randint(6, size))
            rest = list(WALL)
            for k in tiles:
                rest.remove(k)
            tiles += rng.sample(rest, size - len(tiles))
        else:
            tiles = rng.sample(WALL, size)
        out.append(T.counts34(tiles))
    return out


def _botzone(counts: list[int]) -> tuple[str, ...]:
    return tuple(T.to_botzone(k) for k in range(34) for _ in range(counts[k]))


def test_knitted_bounds_never_exceed_mahjonggb():
    tight = 0
    for counts in _hands(3000, 13, seed=3):
        scattered, straight = knitted_bounds(counts)
        hand = _botzone(counts)
        real_scattered = MahjongGB.HonorsAndKnittedTilesShanten(hand)[0]
        real_straight = MahjongGB.KnittedStraightShanten(hand)[0]
        assert scattered <= real_scattered and straight <= real_straight, T.to_mpsz(
            [k for k in range(34) for _ in range(counts[k])])
        tight += straight == real_straight
    assert tight > 0  # the bound is not a trivial one


@pytest.mark.parametrize("size", [13, 14])
def test_pruned_best_distance_is_the_minimum_over_all_plans(size):
    for counts in _hands(1500, size, seed=size):
        assert best_distance(counts, []) == min(p.distance for p in plans(counts, []))
    chi = Meld("chi", (0, 1, 2), 0, 3)
    for counts in _hands(300, size - 3, seed=size + 1):
        assert best_distance(counts, [chi]) == min(p.distance for p in plans(counts, [chi]))


def test_table_distances_agree_with_the_plain_functions():
    for counts in [*_hands(2000, 13, seed=5), *_hands(500, 14, seed=6), *_hands(300, 8, seed=7)]:
        groups = sum(counts) // 3
        assert shape_distance(counts, groups) - 1 == regular_shanten(counts)
        assert regular_and_seven_pairs_shanten(counts) == (regular_shanten(counts),
                                                           seven_pairs_shanten(counts))
    assert shape_distance([0] * 34, 1) == 5  # a set and a pair from nothing
    assert shape_distance([0] * 34, 0, pair=False) == 0
    with pytest.raises(ValueError):
        shape_distance([0] * 34, 6)


def _numpy_chow_plan(counts, melds, shape):
    """The nearest chow plan as the planner first computed it (numpy over all 34 counts), with
    one set beside the plan's three chows free to be a called chow of its own."""
    import numpy as np

    from brain.policies.mcr_plan import CHOW_PLANS, SHORT_OF_EIGHT
    from brain.rules.mcr import MIN_FAN

    kinds = np.array([[low + i for low in lows for i in range(3)] for _, _, lows in CHOW_PLANS])
    short = np.array([SHORT_OF_EIGHT if fan < MIN_FAN else 0 for _, fan, _ in CHOW_PLANS])
    chow_lows = [min(T.kind(t) for t in m.tiles) for m in melds if m.kind == "chi"]
    others = len(melds) - len(chow_lows)
    if others > 1:
        return None
    distances = np.full(len(CHOW_PLANS), 99)
    for i, (_, _, lows) in enumerate(CHOW_PLANS):
        inside = [low for low in chow_lows if low in lows]
        if others + len(chow_lows) - len(inside) > 1:
            continue  # the plan's chows and one more set: no room for the called sets
        held = np.asarray(counts).copy()
        for low in inside:
            held[[low, low + 1, low + 2]] += 1
        distances[i] = max(shape, int((held[kinds[i]] == 0).sum()) - 1) + short[i]
    if distances.min() == 99:
        return None
    best = int(np.argmin(distances))
    return CHOW_PLANS[best][0], CHOW_PLANS[best][1], int(distances[best])


# 三色三步高 with r = 5 runs its third chow from the 8 of bamboos into East: these hands hold
# East, and the plan is the nearest only while East counts (as it always has).
EAST_AFTER_BAMBOO_HANDS = ["467788m99p8s1114z", "668m3578p99s1111z", "6788m599p44999s1z",
                           "66777m99p999s126z"]


def test_chow_plans_equal_the_first_numpy_version():
    from brain.policies.mcr_plan import _chow_distance, _chow_plans

    chi = Meld("chi", (18, 19, 20), 18, 3)
    pon = Meld("pon", (27, 27, 27), 27, 1)
    east = [T.counts34(T.parse_mpsz(h)) for h in EAST_AFTER_BAMBOO_HANDS]
    for size, melds in ((13, []), (14, []), (10, [chi]), (11, [pon]), (8, [chi, pon])):
        for counts in _hands(800, size, seed=size + 40) + (east if size == 13 else []):
            shape = regular_shanten(counts)
            expected = _numpy_chow_plan(counts, melds, shape)
            found = _chow_plans(counts, melds, shape)
            assert (found[0] if found else None) == expected
            assert _chow_distance(counts, melds, shape) == (expected and expected[2])


def test_a_called_chow_may_be_the_set_beside_a_chow_plan():
    # 清龙 held whole, 234s called: ready on the 5s (and on 1z after throwing the 5s)
    chi = Meld("chi", (19, 20, 21), 21, 3)
    ready = T.counts34(T.parse_mpsz("123456789m5s"))
    assert best_distance(ready, [chi]) == 0
    assert min(p.distance for p in plans(ready, [chi]) if p.name == "清龙") == 0
    # two called chows outside the plan leave it no room
    other = Meld("chi", (9, 10, 11), 11, 3)
    assert all(p.name != "清龙" for p in plans(T.counts34(T.parse_mpsz("1234567m")),
                                                [chi, other]))


def test_distances_after_discards_equal_one_best_distance_per_discard():
    from brain.policies.mcr_plan import best_distances_after_discards

    chi = Meld("chi", (18, 19, 20), 18, 3)
    pon = Meld("pon", (27, 27, 27), 27, 1)
    kan = Meld("closed_kan", (9, 9, 9, 9))
    east = [T.counts34(T.parse_mpsz(h + "5z")) for h in EAST_AFTER_BAMBOO_HANDS]
    for size, melds in ((14, []), (11, [chi]), (11, [pon]), (11, [kan]), (8, [chi, pon])):
        for counts in _hands(600, size, seed=size + 60) + (east if size == 14 else []):
            expected = {}
            for k in range(34):
                if counts[k]:
                    rest = list(counts)
                    rest[k] -= 1
                    expected[k] = best_distance(rest, melds)
            assert best_distances_after_discards(counts, melds) == expected


def test_knitted_masks_find_the_patterns_held_in_full():
    from brain.rules.mcr import KNITTED_MASKS, held_mask

    full = []
    for i, pattern in enumerate(KNITTED_PATTERNS):
        counts = [0] * 34
        for k in pattern:
            counts[k] = 1
        for k in (27 + i, 3 * i, 30):
            counts[k] += 1
        full.append(counts)
    for counts in _hands(2000, 14, seed=90) + full:
        present = held_mask(counts)
        for pattern, mask in zip(KNITTED_PATTERNS, KNITTED_MASKS, strict=True):
            assert (present & mask == mask) == all(counts[k] for k in pattern)


def test_every_ready_chow_plan_hand_is_at_distance_zero_whatever_sets_are_called():
    """A hand holding a whole 8-fan chow plan (清龙, 花龙, 三色三同顺) beside one more set and
    a pair-wait is ready on an 8-fan wait, so the planner must put it at distance 0 wherever
    its sets sit: concealed, called plan chows, or the fourth set called (a chow or a pung)."""
    from brain.policies.mcr_plan import CHOW_PLANS

    rng = random.Random(7)
    full = [lows for _, fan, lows in CHOW_PLANS if fan >= 8]
    checked = 0
    for _ in range(600):
        lows = rng.choice(full)
        if rng.random() < 0.5:
            s, r = rng.randrange(3), rng.randrange(7)
            fourth = ("chi", (s * 9 + r, s * 9 + r + 1, s * 9 + r + 2))
        else:
            k = rng.randrange(34)
            fourth = ("pon", (k, k, k))
        sets = [("chi", (low, low + 1, low + 2)) for low in lows] + [fourth]
        wait = rng.randrange(34)
        counts = [0] * 34
        for _, kinds in sets:
            for k in kinds:
                counts[k] += 1
        counts[wait] += 1  # the single tile waiting for its pair
        if max(counts) > 4 or counts[wait] == 4:
            continue
        called = rng.sample(sets, rng.randint(0, 3))
        melds = []
        for kind, kinds in called:
            melds.append(Meld(kind, kinds, kinds[0], 3))
            for k in kinds:
                counts[k] -= 1
        checked += 1
        assert best_distance(counts, melds) == 0, (T.to_mpsz(
            [k for k in range(34) for _ in range(counts[k])]), called)
    assert checked > 300
