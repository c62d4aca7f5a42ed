"""MCR (Chinese Official) exactly as the Botzone judge plays it.

Fans come from `MahjongGB.MahjongFanCalculator` with the flags computed as the judge computes
them (protocols/botzone.md): 4th tile = exactly three copies already public, not counting the
winning tile, a discard public only while unclaimed, never when robbing a kong; last tile = the
wall of the seat after the player whose turn it is is empty; kong = self-draw right after one's
own kong, or robbing a kong. A win below 8 fan (flowers excluded) is no win: the judge would
charge a false win (-30).

The judge bundles a 2018 copy of the fan library; PyMahjongGB 1.4 differs from it in one way
that changes totals: with a knitted straight (组合龙) whose nine tiles include the winning tile,
1.4 adds one wait fan (独听・边张 / 独听・嵌张 / 独听・单钓) that the judge does not count (119 of
3,000 judged hands). :func:`fan_items` drops it, so the bot, its plans and the local table all
expect what Botzone pays, and names the wait fans as the judge does (边张 / 嵌张 / 单钓将);
:func:`pymahjonggb_items` keeps the library's own answer. (The correction never moves a total
across 8: 组合龙 alone is 12.)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import replace

from brain.rules.base import Rules, WinContext, WinScore, four_seats
from brain.shanten import regular_shanten, shanten
from brain.state import Meld, TableState
from protocols import tiles as T

MIN_FAN = 8


def _pack(meld: Meld, seat: int) -> tuple[str, str, int] | None:
    """A meld in MahjongGB's pack form; offer = 1..3 relative giver (1 = previous seat) for
    PENG/GANG, 0 for a concealed kong, 1..3 = which tile of the chow was called for CHI."""
    k = meld.kind_of_tiles
    if k is None:
        return None
    tile = T.to_botzone(k)
    if meld.kind == "chi":
        called = T.kind(meld.called) if meld.called is not None else k
        return ("CHI", T.to_botzone(k + 1), called - k + 1)
    offer = (seat - meld.from_seat) % 4 if meld.from_seat is not None else 0
    if meld.kind == "pon":
        return ("PENG", tile, offer or 1)
    if meld.kind == "closed_kan":
        return ("GANG", tile, 0)
    return ("GANG", tile, offer or 1)


# PyMahjongGB 1.4's names for the wait fans -> the Botzone judge's (its 2018 fan library's
# fan_name table, ../shared/protocols/botzone.md); every other name is the same in both. The one
# place fans are renamed: the items of :func:`fan_items` (what the arena's logs, commentary and
# review show) use the judge's names, so that our logs and a Botzone judge log agree.
JUDGE_FAN_NAMES = {"独听・边张": "边张", "独听・嵌张": "嵌张", "独听・单钓": "单钓将"}
# Wait fans under either name (logs written before the renaming say PyMahjongGB's).
WAIT_FANS = frozenset({*JUDGE_FAN_NAMES, *JUDGE_FAN_NAMES.values()})
KNITTED_STRAIGHT = "组合龙"


# win context -> the judge's fan items: the fan calculator is pure, and a ready seat asks for
# the same waits of the same hand turn after turn (its planner weighs them on every draw)
_FANS: dict[WinContext, tuple[tuple[str, int], ...] | None] = {}
_FANS_MAX = 50_000


def fan_items(ctx: WinContext) -> tuple[tuple[str, int], ...] | None:
    """The (name, fan) items the Botzone judge counts for this win, named as the judge names
    them, or None if it is no winning hand at all: PyMahjongGB's, less a wait fan on a
    knitted-straight tile."""
    try:
        return _FANS[ctx]
    except KeyError:
        pass
    items = _judge_items(ctx)
    if len(_FANS) >= _FANS_MAX:
        _FANS.clear()
    _FANS[ctx] = items
    return items


def _judge_items(ctx: WinContext) -> tuple[tuple[str, int], ...] | None:
    items = pymahjonggb_items(ctx)
    if items is None:
        return None
    return tuple((JUDGE_FAN_NAMES.get(name, name), fan) for name, fan in
                 _as_judged(items, T.counts34(ctx.concealed), T.kind(ctx.win_tile)))


def _as_judged(items: tuple[tuple[str, int], ...], counts: list[int] | tuple[int, ...],
               win_kind: int) -> tuple[tuple[str, int], ...]:
    """MahjongGB's items as the judge counts them: no wait fan on a knitted-straight tile."""
    if all(name != KNITTED_STRAIGHT for name, _ in items):
        return items
    knitted = next((p for p in KNITTED_PATTERNS if all(counts[k] for k in p)), ())
    if win_kind not in knitted:
        return items  # the winning tile completes the pair or the fourth set: both count it
    return tuple((name, fan) for name, fan in items if name not in WAIT_FANS)


# tile -> its Botzone name: the fan calculator and the knitted shanten are asked for every wait
# and every hand near ready
botzone_name = functools.cache(T.to_botzone)
KIND_NAMES = tuple(T.to_botzone(k) for k in range(34))


def pymahjonggb_items(ctx: WinContext) -> tuple[tuple[str, int], ...] | None:
    """MahjongGB's own (name, fan) items for this win, or None if it is no winning hand."""
    hand = list(ctx.concealed)
    hand.remove(ctx.win_tile)
    return _calculator_items(
        packs_of(ctx.melds, ctx.seat), tuple(map(botzone_name, hand)),
        botzone_name(ctx.win_tile), ctx.flowers,
        self_drawn=ctx.self_draw, fourth=ctx.fourth_tile and not ctx.robbing_kan,
        about_kong=(ctx.after_kan and ctx.self_draw) or ctx.robbing_kan,
        wall_last=ctx.last_tile, seat_wind=ctx.seat_wind - T.EAST,
        prevalent_wind=ctx.round_wind - T.EAST)


def _calculator_items(packs: tuple[tuple[str, str, int], ...], hand: tuple[str, ...],
                      win: str, flowers: int, *, self_drawn: bool, fourth: bool,
                      about_kong: bool, wall_last: bool, seat_wind: int, prevalent_wind: int
                      ) -> tuple[tuple[str, int], ...] | None:
    """MahjongFanCalculator's (name, fan) items, or None where the tiles are no winning hand."""
    import MahjongGB  # here, not at the top: the riichi bot (mjai.app) runs without it

    try:
        result = MahjongGB.MahjongFanCalculator(
            pack=packs, hand=hand, winTile=win, flowerCount=flowers, isSelfDrawn=self_drawn,
            is4thTile=fourth, isAboutKong=about_kong, isWallLast=wall_last,
            seatWind=seat_wind, prevalentWind=prevalent_wind)
    except TypeError:
        return None
    return tuple((name, points) for points, name in result)


def packs_of(melds: Iterable[Meld], seat: int) -> tuple[tuple[str, str, int], ...]:
    """``seat``'s melds in MahjongGB's pack form."""
    return tuple(p for p in (_pack(m, seat) for m in melds) if p is not None)


def discard_fan(packs: tuple[tuple[str, str, int], ...], counts: bytes | list[int],
                win_kind: int, flowers: int, seat_wind: int, prevalent_wind: int) -> int | None:
    """The fan the judge counts (flowers excluded) when concealed ``counts`` (per kind, the
    winning tile included) beside ``packs`` win on another seat's plain discard of
    ``win_kind`` (not a 4th tile, not the last, no kong), None where they are no winning
    hand; winds 0..3 from East. :meth:`McrRules.score` on the same win, without building
    its context: the playouts ask it of every paid wait of every hand near ready."""
    hand: list[str] = []
    for k in range(34):
        n = counts[k] - (k == win_kind)
        if n:
            hand.extend((KIND_NAMES[k],) * n)
    items = _calculator_items(packs, tuple(hand), KIND_NAMES[win_kind], flowers,
                              self_drawn=False, fourth=False, about_kong=False,
                              wall_last=False, seat_wind=seat_wind,
                              prevalent_wind=prevalent_wind)
    if items is None:
        return None
    return sum(v for _, v in _as_judged(items, list(counts), win_kind)) - flowers


class McrRules(Rules):
    name = "mcr"
    hand_size = 13
    min_value = MIN_FAN
    allows_seven_pairs = True
    flowers = 8
    waits_cover_wins = False  # knitted shapes: ask the fan calculator

    def is_complete(self, counts: list[int]) -> bool:
        if regular_shanten(counts) == -1 or (sum(counts) == 14 and shanten(counts) == -1):
            return True
        return _knitted_complete(counts)

    def score(self, ctx: WinContext) -> WinScore | None:
        items = fan_items(ctx)
        if items is None:
            return None
        fan = sum(v for _, v in items)
        if fan - ctx.flowers < MIN_FAN:
            return None
        return WinScore(value=fan, deltas=payments(ctx, fan), items=items)

    def unpaid_items(self, ctx: WinContext) -> tuple[tuple[str, int], ...] | None:
        items = fan_items(ctx)
        if items is None or sum(v for _, v in items) - ctx.flowers >= MIN_FAN:
            return None
        return items

    def win_score(self, state: TableState, win_tile: int, from_seat: int | None,
                  robbing_kan: bool = False) -> WinScore | None:
        # The fan calculator knows every MCR shape (knitted ones included); a cheap shape test
        # first spares it the hands that cannot be complete in any of them.
        counts = state.counts()
        regular: bool | None = None
        if from_seat is not None:
            counts[T.kind(win_tile)] += 1
            # the seat's cached waits say whether the tile completes a regular, seven-pairs
            # or orphans hand (asked on every discard: spare a shanten per seat and discard)
            regular = T.kind(win_tile) in state.waits()
        if sum(counts) % 3 != 2 or not _may_be_complete(counts, regular):
            return None
        return self.score(self.context(state, win_tile, from_seat, robbing_kan))

    def context(self, state: TableState, win_tile: int, from_seat: int | None,
                robbing_kan: bool = False) -> WinContext:
        ctx = super().context(state, win_tile, from_seat, robbing_kan)
        last = state.next_seat_wall()
        if last is None:
            return ctx
        return replace(ctx, last_tile=last == 0)

    def _fourth_tile(self, state: TableState, win_tile: int, from_seat: int | None,
                     robbing_kan: bool) -> bool:
        if robbing_kan:
            return False
        k = T.kind(win_tile)
        public = sum(1 for s in state.seats for r in s.river
                     if T.kind(r.tile) == k and not r.claimed)
        public += sum(1 for s in state.seats for m in s.melds if m.kind != "closed_kan"
                      for t in m.tiles if T.kind(t) == k)
        if from_seat is not None:
            public -= 1  # the winning discard itself is not counted
        return public == 3

    # Botzone: any CHI/PENG/GANG is WA when the wall of the seat after the discarder is empty,
    # and only then: the judge does not look at the claimer's own wall (a GANG with it empty is
    # legal, and its replacement draw ends the hand as a draw).
    def claims_allowed(self, state: TableState) -> bool:
        nxt = state.next_seat_wall()
        return (nxt if nxt is not None else state.wall_remaining) > 0

    def can_open_kan(self, state: TableState, from_seat: int) -> bool:
        return True

    # GANG / BUGANG need my wall and the next seat's wall non-empty (I draw again afterwards).
    def kan_allowed(self, state: TableState) -> bool:
        if state.seat_walls is None:
            return state.wall_remaining > 0
        return state.seat_walls[state.seat] > 0 and state.seat_walls[(state.seat + 1) % 4] > 0


def payments(ctx: WinContext, fan: int) -> tuple[int, int, int, int]:
    """Botzone: self-draw +3(8+F) / -(8+F) each; discard (or robbed kong) +(24+F), payer
    -(8+F), the other two -8."""
    deltas = [0, 0, 0, 0]
    if ctx.from_seat is None:
        for s in range(4):
            deltas[s] = 3 * (8 + fan) if s == ctx.seat else -(8 + fan)
    else:
        for s in range(4):
            if s == ctx.seat:
                deltas[s] = 24 + fan
            elif s == ctx.from_seat:
                deltas[s] = -(8 + fan)
            else:
                deltas[s] = -8
    return four_seats(deltas)


KNITTED_PATTERNS = [tuple(s * 9 + r for s, start in zip(order, (0, 1, 2), strict=True)
                          for r in range(start, 9, 3))
                    for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1),
                                  (2, 1, 0))]

# Kinds held as one bit per kind at bit 8 * kind (a byte each, from C-level bytes work): a
# pattern is held in full when its mask survives the and.
HELD_BYTE = bytes([0, 1, 1, 1, 1]) + bytes(251)


def held_mask(counts: list[int]) -> int:
    """The kinds ``counts`` holds, as bits 8 * kind (compare with :func:`kind_mask`)."""
    return int.from_bytes(bytes(counts).translate(HELD_BYTE), "little")


def kind_mask(kinds: Iterable[int]) -> int:
    return sum(1 << (8 * k) for k in kinds)


KNITTED_MASKS = [kind_mask(pattern) for pattern in KNITTED_PATTERNS]


def _may_be_complete(counts: list[int], regular: bool | None = None) -> bool:
    """False only for hands complete in no MCR shape: not a regular / seven-pairs / orphans
    hand (``regular``: whether it is one, where the caller knows), not all singles (全不靠),
    and holding no full knitted straight (组合龙)."""
    if regular if regular is not None else shanten(counts) == -1:
        return True
    if sum(counts) == 14 and max(counts) == 1:
        return True
    present = held_mask(counts)
    return any(present & mask == mask for mask in KNITTED_MASKS)


def _knitted_complete(counts: list[int]) -> bool:
    """Knitted shapes (全不靠, 七星不靠, 组合龙): complete if removing some tile leaves a ready
    hand that waits on it, by MahjongGB's dedicated shanten functions."""
    import MahjongGB  # here, not at the top: the riichi bot (mjai.app) runs without it

    for k in range(34):
        if not counts[k]:
            continue
        rest = list(counts)
        rest[k] -= 1
        hand = tuple(botzone_name(i) for i in range(34) for _ in range(rest[i]))
        for fn in (MahjongGB.HonorsAndKnittedTilesShanten, MahjongGB.KnittedStraightShanten):
            try:
                value, useful = fn(hand)
            except TypeError:
                continue
            if value == 0 and botzone_name(k) in useful:
                return True
    return False


RULES = McrRules()
