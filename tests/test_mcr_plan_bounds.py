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
