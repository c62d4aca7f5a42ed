"""Seeded walls: the same seed gives the same tiles in the same order, on every machine.

Tile sets per variant: riichi 136 with one red five per suit (Tenhou's usual lobby); MCR and
Taiwan 136 without red fives; mass 108 number tiles. ``random.Random`` with an integer seed is
specified to be reproducible across platforms and Python versions, which is what a duplicate
match and a bug report need.
"""

from __future__ import annotations

import random

from brain.rules.variant import variant_of
from protocols import tiles as T


def tile_set(variant: str) -> list[int]:
    """Every physical tile of the variant, in a fixed order."""
    spec = variant_of(variant)  # a clear ValueError for an unknown name
    tiles = [k for k in range(spec.tile_kinds) for _ in range(4)]
    if spec.red_fives:
        for red in (T.RED_5M, T.RED_5P, T.RED_5S):
            tiles[tiles.index(T.kind(red))] = red
    return tiles


def hand_seed(seed: int, game: int, hand: int) -> int:
    """One integer per (match seed, game, hand): the duplicate key of a wall."""
    return (seed * 1_000_003 + game) * 1_009 + hand


def shuffled_wall(variant: str, seed: int) -> list[int]:
    tiles = tile_set(variant)
    random.Random(seed).shuffle(tiles)
    return tiles
