"""Mass Mahjong (大众麻将, seed 003; rules/variants.md): 108 tiles (no honours), dealer 14,
chow / pung / kong, win on a discard, self-draw or robbing a kong, no minimum.

The seed names four winning hands but gives no point values; mjbot's table (fan, additive):
基本胡 basic 1 (only when nothing else applies), 碰碰胡 all pungs 2, 七对 seven pairs 2,
清一色 one suit 4. Payment: the discarder pays the fan total; on a self-draw each other seat
pays it.
"""

from __future__ import annotations

from brain.rules.base import (
    Group,
    Rules,
    ScoreSheet,
    WinContext,
    WinScore,
    decompositions,
    four_seats,
    meld_groups,
)
from brain.shanten import regular_shanten, seven_pairs_shanten
from protocols import tiles as T

HAND_VALUES = {"基本胡": 1, "碰碰胡": 2, "七对": 2, "清一色": 4}


class MassRules(Rules):
    name = "mass"
    hand_size = 13
    min_value = 0
    allows_seven_pairs = True

    def is_complete(self, counts: list[int]) -> bool:
        if any(counts[27:]):
            return False
        if regular_shanten(counts) == -1:
            return True
        return sum(counts) == 14 and seven_pairs_shanten(counts) == -1

    def score(self, ctx: WinContext) -> WinScore | None:
        sheet = hand_sheet(ctx)
        if sheet is None:
            return None
        fan = sheet.total
        deltas = [0, 0, 0, 0]
        payers = [ctx.from_seat] if ctx.from_seat is not None else [
            s for s in range(4) if s != ctx.seat]
        for s in payers:
            deltas[s] -= fan
            deltas[ctx.seat] += fan
        return WinScore(value=fan, deltas=four_seats(deltas), items=tuple(sheet.items))


def hand_sheet(ctx: WinContext) -> ScoreSheet | None:
    """The winning hands present, or None for no win."""
    counts = T.counts34(ctx.concealed)
    melds = meld_groups(ctx.melds)
    if any(counts[27:]) or any(g.kind >= 27 for g in melds):
        return None
    all_kinds = [k for k in range(27) if counts[k]] + [g.kind for g in melds]
    one_suit = len({k // 9 for k in all_kinds}) == 1
    sheet = ScoreSheet()
    groups_needed = 4 - len(melds)
    readings = list(decompositions(counts, groups_needed)) if groups_needed >= 0 else []
    seven_pairs = not melds and sum(counts) == 14 and seven_pairs_shanten(counts) == -1
    if not readings and not seven_pairs:
        return None
    if readings and not melds_have_chow(melds) and any(
            all(g.shape != "chow" for g in r) for r in readings):
        sheet.add("碰碰胡", HAND_VALUES["碰碰胡"])
    elif seven_pairs:
        sheet.add("七对", HAND_VALUES["七对"])
    if one_suit:
        sheet.add("清一色", HAND_VALUES["清一色"])
    if not sheet.items:
        sheet.add("基本胡", HAND_VALUES["基本胡"])
    return sheet


def melds_have_chow(melds: list[Group]) -> bool:
    return any(g.shape == "chow" for g in melds)


RULES = MassRules()
