"""The recording of self-play datasets made cheaper (issue 26) writes the very same rows: the
bytes of a few fixed-seed units are pinned (their digests taken before the caches came), and
each cache is shown at work (fewer scorings) without ever answering for a situation it was not
built for."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest

from adapter.commands import four_policies
from adapter.local.arena import ArenaConfig
from adapter.local.selfplay import SelfPlayConfig, play_selfplay_unit
from brain.rules.base import WinContext, WinScore
from brain.rules.taiwan16 import Taiwan16Rules
from replay.dataset import records

# sha256 of every array of the unit's blocks, taken at 3c1f64a (before the caches); taiwan16's
# taken again when a win on the dealer's discard counted the dealer's tai (莊家) in its value
# (c834f25d... before: the same games, the values of those wins one higher)
PINNED = {
    ("riichi", 0): "c3c32e6944e65efb77dbe6bbd95692ff547a506313b12b63af6ce674b3339b4d",
    ("mcr", 0): "bc51ebc9602ef4097b25143340810ac873b29ae908c5ed7ff6bd1631c43074fa",
    ("taiwan16", 0): "14086639927376736f04f377fe5ea381a675ffa6391dc3d43c2b7fff1d9881c3",
}


def _unit(variant: str, unit: int) -> tuple[str, int]:
    arena = ArenaConfig(variant, four_policies("rulebased,greedy,rulebased,greedy"), 8, 0, 1,
                        None, "east")
    data = play_selfplay_unit(SelfPlayConfig(arena, "-"), unit)
    assert not data.errors
    digest = hashlib.sha256()
    for block in data.games:
        for name in sorted(block.arrays):
            a = block.arrays[name]
            digest.update(f"{name}:{a.dtype}:{a.shape}".encode())
            digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest(), sum(b.decisions for b in data.games)


@pytest.mark.parametrize(("variant", "unit"), sorted(PINNED))
def test_recorded_rows_are_byte_for_byte_those_of_before(variant, unit):
    digest, decisions = _unit(variant, unit)
    assert decisions > 100
    assert digest == PINNED[variant, unit]


class CountingTaiwan(Taiwan16Rules):
    """Taiwan's rules, remembering every context they were asked to score."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[WinContext] = []

    def score(self, ctx: WinContext) -> WinScore | None:
        self.asked.append(ctx)
        return super().score(ctx)


def test_a_taiwan_win_is_scored_once_for_every_non_dealer_discarder(monkeypatch):
    """Only whether the discarder is the dealer changes a Taiwan win's value (the dealer pays a
    tai more): the deal-in of each non-dealer decider is one scoring, not one each."""
    made: list[CountingTaiwan] = []  # one per game: each game has an oracle of its own
    original = records.BlockBuilder.__init__

    def builder(self, variant, policies):
        original(self, variant, policies)
        self.oracle.rules = CountingTaiwan()
        made.append(self.oracle.rules)

    monkeypatch.setattr(records.BlockBuilder, "__init__", builder)
    _, decisions = _unit("taiwan16", 0)
    assert made and decisions > 100
    scored = 0
    for rules in made:
        seen: dict[tuple[WinContext, str], WinContext] = {}
        for ctx in rules.asked:
            if ctx.from_seat is None:
                continue
            payer = "dealer" if ctx.from_seat == ctx.dealer else "other"
            key = dataclasses.replace(ctx, from_seat=None), payer
            assert key not in seen, f"scored twice: {ctx} and {seen[key]}"
            seen[key] = ctx
        scored += len(seen)
    assert scored
