"""Taiwan 16-tile tournament rules (rules/taiwan16.md): 5 groups + a pair, no flowers, no
minimum, 1000 + 500 per tai, the dealer earns one extra tai when winning or paying.

The tai table does not say which entries include which; mjbot's choices:

* 門清自摸 (3) replaces 門清 and 自摸.  平胡 needs a two-sided wait on a discard, no honours.
* 雙雙龍抱 replaces 雙龍抱.  三色同順 / 一條龍 are 4 when concealed, else 2.
* 混老頭 replaces 碰碰胡 and 混帶么; 清老頭 replaces 混老頭, 碰碰胡, 純帶么, 混帶么;
  純帶么 replaces 混帶么; 字一色 replaces 混一色, 碰碰胡, 混老頭, 混帶么.
* 清一色 replaces 混一色.  小三元 replaces its two 三元牌; 大三元 replaces 三元牌 and 小三元.
* 小四喜 and 大四喜 replace 門風刻; 大四喜 replaces 小四喜.
* 四暗刻 replaces 三暗刻; 五暗刻 replaces both.  A pung completed by a discard is not concealed;
  a concealed kong is.
* 全求 needs five called groups (no concealed kong) and a pair wait on a discard.
* 天胡 / 地胡 / 人胡 add to the rest; 天胡 and 地胡 replace 門清自摸 (and 自摸, 門清).
* 眼牌 (optional declaration rule) counts 1 when the platform says the declaration held.
* 莊家: +1 tai to every payment that the dealer receives or pays: in the win's tai when the
  dealer wins or is the discarder who pays (a 0-tai win on the dealer's discard showed value
  0 and was paid 1500), beside them only on a self-draw, where the other two pay without it.
When a hand decomposes several ways, the decomposition with the most tai counts.
"""

from __future__ import annotations

from collections import Counter

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
from brain.state import TableState
from protocols import tiles as T

BASE_POINTS = 1000
POINTS_PER_TAI = 500
GROUPS = 5


def _is_terminal_or_honour(k: int) -> bool:
    return k >= 27 or k % 9 in (0, 8)


def _group_has_terminal_or_honour(g: Group) -> bool:
    return any(_is_terminal_or_honour(k) for k in g.kinds)


def _wait_kind(groups: list[Group], index: int, win_kind: int) -> str:
    g = groups[index]
    if g.shape == "pair":
        return "single"
    if g.shape == "pung":
        return "pung"
    pos = win_kind - g.kind
    if pos == 1:
        return "closed"
    if (pos == 0 and g.kind % 9 == 6) or (pos == 2 and g.kind % 9 == 0):
        return "edge"
    return "two-sided"


def tai_sheet(ctx: WinContext, groups: list[Group], wait: str) -> ScoreSheet:
    """All tai of one decomposition (``groups`` = the 5 groups and the pair, melds included)."""
    sheet = ScoreSheet()
    pair = next(g for g in groups if g.shape == "pair")
    sets = [g for g in groups if g.shape != "pair"]
    chows = [g for g in sets if g.shape == "chow"]
    pungs = [g for g in sets if g.shape in ("pung", "kong")]
    kinds = [k for g in groups for k in g.kinds]
    suits = {k // 9 for k in kinds if k < 27}
    honours = any(k >= 27 for k in kinds)
    concealed_hand = all(g.from_meld in (None, "closed_kan") for g in sets)
    dragons = {g.kind for g in pungs if g.kind in T.DRAGONS}
    winds = {g.kind for g in pungs if g.kind in T.WINDS}
    concealed_pungs = sum(1 for g in pungs if g.concealed)
    first_turn_self = ctx.first_turn and ctx.self_draw

    if ctx.is_dealer or ctx.from_seat == ctx.dealer:  # the dealer wins, or pays it all
        sheet.add("莊家", 1)
    if concealed_hand and ctx.self_draw and not first_turn_self:
        sheet.add("門清自摸", 3)
    elif concealed_hand and not ctx.self_draw:
        sheet.add("門清", 1)
    elif ctx.self_draw and not first_turn_self:
        sheet.add("自摸", 1)
    if not honours and all(not _is_terminal_or_honour(k) for k in kinds):
        sheet.add("斷么九", 1)
    if ctx.last_tile and ctx.self_draw:
        sheet.add("海底撈月", 1)
    big_winds = len(winds) == 4
    small_winds = len(winds) == 3 and pair.kind in T.WINDS
    if ctx.seat_wind in winds and not (big_winds or small_winds):
        sheet.add("門風刻", 1)
    if len(dragons) == 3:
        sheet.add("大三元", 8)
    elif len(dragons) == 2 and pair.kind in T.DRAGONS:
        sheet.add("小三元", 4)
    else:
        for _ in dragons:
            sheet.add("三元牌", 1)
    chow_counts = Counter(g.kind for g in chows)
    twin_chows = sum(c // 2 for c in chow_counts.values())
    if concealed_hand and twin_chows >= 2:
        sheet.add("雙雙龍抱", 2)
    elif concealed_hand and twin_chows == 1:
        sheet.add("雙龍抱", 1)
    if ctx.after_kan and ctx.self_draw:
        sheet.add("槓上開花", 1)
    if ctx.declared_eye:
        sheet.add("眼牌", 1)
    if ctx.robbing_kan:
        sheet.add("搶槓", 1)
    if (all(g.from_meld in ("chi", "pon", "open_kan", "added_kan") for g in sets)
            and not ctx.self_draw and wait == "single"):
        sheet.add("全求", 2)
    if (len(chows) == GROUPS and not honours and wait == "two-sided" and not ctx.self_draw):
        sheet.add("平胡", 2)
    starts = {g.kind for g in chows}
    if any(all(s * 9 + r in starts for s in range(3)) for r in range(7)):
        sheet.add("三色同順", 4 if concealed_hand else 2)
    if any(all(s * 9 + r in starts for r in (0, 3, 6)) for s in range(3)):
        sheet.add("一條龍", 4 if concealed_hand else 2)
    if concealed_pungs >= 5:
        sheet.add("五暗刻", 8)
    elif concealed_pungs == 4:
        sheet.add("四暗刻", 6)
    elif concealed_pungs == 3:
        sheet.add("三暗刻", 2)
    pung_kinds = {g.kind for g in pungs}
    if any(all(s * 9 + r in pung_kinds for s in range(3)) for r in range(9)):
        sheet.add("三色同刻", 2)
    if sum(1 for g in sets if g.shape == "kong") == 4:
        sheet.add("四槓子", 6)
    all_pungs = not chows
    only_honours = not suits
    terminals_only = all(_is_terminal_or_honour(k) for k in kinds)
    every_group_terminal = all(_group_has_terminal_or_honour(g) for g in groups)
    if only_honours:
        sheet.add("字一色", 8)
    elif terminals_only and all_pungs and not honours:
        sheet.add("清老頭", 8)
    elif terminals_only and all_pungs:
        sheet.add("混老頭", 4)
    else:
        if all_pungs:
            sheet.add("碰碰胡", 4)
        if every_group_terminal and not honours:
            sheet.add("純帶么", 4)
        elif every_group_terminal:
            sheet.add("混帶么", 2)
    if len(suits) == 1 and not honours:
        sheet.add("清一色", 8)
    elif len(suits) == 1 and honours:
        sheet.add("混一色", 4)
    if big_winds:
        sheet.add("大四喜", 16)
    elif small_winds:
        sheet.add("小四喜", 8)
    if ctx.first_turn and ctx.self_draw and ctx.is_dealer:
        sheet.add("天胡", 16)
    elif ctx.first_turn and ctx.self_draw:
        sheet.add("地胡", 16)
    elif ctx.first_turn and not ctx.self_draw:
        sheet.add("人胡", 16)
    return sheet


def best_tai(ctx: WinContext) -> ScoreSheet | None:
    """The highest-scoring reading of a winning hand, or None if it is not 5 groups + a pair."""
    counts = T.counts34(ctx.concealed)
    melds = meld_groups(ctx.melds)
    groups_needed = GROUPS - len(melds)
    if groups_needed < 0 or sum(counts) != 3 * groups_needed + 2:
        return None
    win_kind = T.kind(ctx.win_tile)
    best: ScoreSheet | None = None
    for concealed in decompositions(counts, groups_needed):
        for i, g in enumerate(concealed):
            if win_kind not in g.kinds:
                continue
            placed = list(concealed)
            if g.shape == "pung" and not ctx.self_draw:
                placed[i] = Group("pung", g.kind, concealed=False)
            wait = _wait_kind(concealed, i, win_kind)
            sheet = tai_sheet(ctx, placed + melds, wait)
            if best is None or sheet.total > best.total:
                best = sheet
    return best


class Taiwan16Rules(Rules):
    name = "taiwan16"
    hand_size = 16
    min_value = 0

    def __init__(self, open_kan_from_previous_seat: bool = False) -> None:
        self.open_kan_from_previous_seat = open_kan_from_previous_seat

    def score(self, ctx: WinContext) -> WinScore | None:
        sheet = best_tai(ctx)
        if sheet is None:
            return None
        # a non-dealer's self-draw: the dealer pays 莊家 on top (see payments), not in the
        # value the other two pay: shown apart, where the value line left it out
        return WinScore(value=sheet.total, deltas=payments(ctx, sheet.total),
                        items=tuple(sheet.items),
                        payer_items=(("莊家", 1, "the dealer"),) if dealer_pays_more(ctx)
                        else ())

    # No open kong on the previous seat's discard (the thesis and the lab referee).
    def can_open_kan(self, state: TableState, from_seat: int) -> bool:
        return self.kan_allowed(state) and (
            self.open_kan_from_previous_seat or (from_seat + 1) % 4 != state.seat)

    def kan_allowed(self, state: TableState) -> bool:
        return state.wall_remaining > 0


def dealer_pays_more(ctx: WinContext) -> bool:
    """A non-dealer's self-draw: the dealer pays one tai (莊家) more than the other two. One
    test for :func:`payments` that charges it and the score's ``payer_items`` that show it."""
    return ctx.from_seat is None and not ctx.is_dealer


def payments(ctx: WinContext, tai: int) -> tuple[int, int, int, int]:
    """1000 + 500 per tai from the discarder, or from each other seat on a self-draw; a dealer
    who pays a self-draw pays one more tai. ``tai`` already holds 莊家 when the dealer wins
    or is the discarder."""
    deltas = [0, 0, 0, 0]
    payers = [ctx.from_seat] if ctx.from_seat is not None else [
        s for s in range(4) if s != ctx.seat]
    for s in payers:
        extra = 1 if s == ctx.dealer and dealer_pays_more(ctx) else 0
        amount = BASE_POINTS + POINTS_PER_TAI * (tai + extra)
        deltas[s] -= amount
        deltas[ctx.seat] += amount
    return four_seats(deltas)


RULES = Taiwan16Rules()
