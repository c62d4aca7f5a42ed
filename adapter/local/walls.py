"""Seeded walls: the same seed gives the same tiles in the same order, on every machine.

Tile sets per variant: riichi 136 with one red five per suit (Tenhou's usual lobby); MCR and
Taiwan 136 without red fives; mass 108 number tiles. ``random.Random`` with an integer seed is
specified to be reproducible across platforms and Python versions, which is what a duplicate
match and a bug report need.
"""

from __future__ import annotations

import random

from protocols import tiles as T

WALL_SIZE = {"riichi": 136, "mcr": 136, "taiwan16": 136, "mass": 108}


def tile_set(variant: str) -> list[int]:
    """Every physical tile of the variant, in a fixed order."""
    if variant not in WALL_SIZE:
        raise ValueError(f"unknown variant {variant!r}: riichi, mcr, taiwan16 or mass")
    kinds = range(27) if variant == "mass" else range(34)
    tiles = [k for k in kinds for _ in range(4)]
    if variant == "riichi":
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
