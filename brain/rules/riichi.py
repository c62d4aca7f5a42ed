"""Riichi with Tenhou's rules: red fives, open tanyao, one yaku, furiten, riichi, kuikae ban.

Scoring goes through the `mahjong` library's HandCalculator with Tenhou's options (aka dora, open
tanyao, kazoe yakuman, no kiriage, no renhou, no double yakuman for a single yaku). It costs tens
of microseconds per call: use it on finished or candidate hands, never in search loops.
"""

from __future__ import annotations

from dataclasses import replace

from mahjong.hand_calculating.hand import HandCalculator
from mahjong.hand_calculating.hand_config import HandConfig, HandConstants, OptionalRules
from mahjong.hand_calculating.scores import ScoresResult
from mahjong.meld import Meld as LibMeld

from brain.rules.base import Rules, WinContext, WinScore, four_seats
from brain.shanten import HandError, shanten, waits
from brain.state import Meld, TableState
from protocols import events as ev
from protocols import tiles as T

TENHOU_OPTIONS = OptionalRules(
    has_open_tanyao=True,
    has_aka_dora=True,
    has_double_yakuman=False,
    kazoe_limit=HandConstants.KAZOE_LIMITED,
    kiriage=False,
    fu_for_open_pinfu=True,
    fu_for_pinfu_tsumo=False,
    renhou_as_yakuman=False,
)


_PLAIN_FIVES = frozenset(T.kind(red) for red in (T.RED_5M, T.RED_5P, T.RED_5S))


class _IdAllocator:
    """Hands the calculator distinct physical 136-ids: red fives get 16/52/88, plain fives the
    other three copies, other kinds their four copies in order. A fourth plain five can only be
    the red copy (policies ask what a win on a *kind* is worth), so it gets the red id."""

    def __init__(self) -> None:
        self.used: set[int] = set()

    def take(self, tile: int) -> int:
        ids = T.tenhou_ids(tile, red_fives=True)
        if tile in _PLAIN_FIVES:
            ids = (*ids, *T.tenhou_ids(T.red_of(tile), red_fives=True))
        for tile_id in ids:
            if tile_id not in self.used:
                self.used.add(tile_id)
                return tile_id
        raise ValueError(f"more than the available copies of {T.tile_name(tile)}")


def _lib_meld(meld: Meld, ids: _IdAllocator) -> LibMeld:
    tiles = [ids.take(t) for t in meld.tiles]
    if meld.kind == "chi":
        return LibMeld(LibMeld.CHI, tiles=tiles)
    if meld.kind == "pon":
        return LibMeld(LibMeld.PON, tiles=tiles)
    if meld.kind == "added_kan":
        return LibMeld(LibMeld.SHOUMINKAN, tiles=tiles)
    return LibMeld(LibMeld.KAN, tiles=tiles, opened=meld.kind == "open_kan")


class RiichiRules(Rules):
    name = "riichi"
    hand_size = 13
    min_value = 1
    allows_riichi = True
    allows_seven_pairs = True
    red_fives = True
    bans_swap_calling = True

    def __init__(self, options: OptionalRules = TENHOU_OPTIONS) -> None:
        self.options = options

    def is_complete(self, counts: list[int]) -> bool:
        return shanten(counts) == -1

    def score(self, ctx: WinContext) -> WinScore | None:
        ids = _IdAllocator()
        lib_melds = [_lib_meld(m, ids) for m in ctx.melds if m.tiles and m.kind != "nuki"]
        meld_tiles = [tid for m in lib_melds for tid in m.tiles]
        concealed = list(ctx.concealed)
        concealed.remove(ctx.win_tile)
        hand_ids = [ids.take(t) for t in concealed]
        win_id = ids.take(ctx.win_tile)
        config = HandConfig(
            is_tsumo=ctx.self_draw,
            is_riichi=ctx.riichi or ctx.double_riichi,
            is_ippatsu=ctx.ippatsu and (ctx.riichi or ctx.double_riichi),
            is_rinshan=ctx.after_kan and ctx.self_draw,
            is_chankan=ctx.robbing_kan,
            is_haitei=ctx.last_tile and ctx.self_draw and not ctx.after_kan,
            is_houtei=ctx.last_tile and not ctx.self_draw and not ctx.robbing_kan,
            is_daburu_riichi=ctx.double_riichi,
            is_tenhou=ctx.first_turn and ctx.self_draw and ctx.is_dealer,
            is_chiihou=ctx.first_turn and ctx.self_draw and not ctx.is_dealer,
            player_wind=ctx.seat_wind,
            round_wind=ctx.round_wind,
            tsumi_number=ctx.honba,
            kyoutaku_number=ctx.sticks,
            options=self.options,
        )
        # an indicator is read by its kind: a red five shown as indicator makes the sixes dora
        dora = [T.tenhou_ids(T.kind(t), red_fives=False)[0] for t in ctx.dora_indicators]
        ura = [T.tenhou_ids(T.kind(t), red_fives=False)[0] for t in ctx.ura_dora_indicators]
        result = HandCalculator.estimate_hand_value(
            hand_ids + meld_tiles + [win_id], win_id, melds=lib_melds or None,
            dora_indicators=dora or None, ura_dora_indicators=ura or None, config=config,
        )
        if result.error or not result.han or result.cost is None:
            return None
        return WinScore(
            value=result.han,
            deltas=self._deltas(ctx, result.cost),
            items=tuple((y.name, y.han_closed if not result.is_open_hand else y.han_open or 0)
                        for y in (result.yaku or [])),
            fu=result.fu,
            limit=result.cost.get("yaku_level") or None,
        )

    def context(self, state: TableState, win_tile: int, from_seat: int | None,
                robbing_kan: bool = False) -> WinContext:
        ctx = super().context(state, win_tile, from_seat, robbing_kan)
        pao = pao_seat(ctx.melds)
        return ctx if pao is None or pao == ctx.seat else replace(ctx, pao_seat=pao)

    @staticmethod
    def _deltas(ctx: WinContext, cost: ScoresResult) -> tuple[int, int, int, int]:
        deltas = [0, 0, 0, 0]
        deltas[ctx.seat] = cost["total"]
        if ctx.pao_seat is not None and cost.get("yaku_level", "").endswith("yakuman") \
                and ctx.pao_seat != ctx.from_seat:
            # Tenhou's 責任払い: on a self-draw the liable seat pays the whole hand as if it
            # had dealt in (honba included); on a discard it pays half and the honba, the
            # discarder the other half
            hand = cost["total"] - cost["kyoutaku_bonus"]
            if ctx.from_seat is None:
                deltas[ctx.pao_seat] = -hand
            else:
                deltas[ctx.from_seat] = -(cost["main"] // 2)
                deltas[ctx.pao_seat] = -(hand - cost["main"] // 2)
            return four_seats(deltas)
        if ctx.from_seat is not None:
            deltas[ctx.from_seat] = -(cost["main"] + cost["main_bonus"])
            return four_seats(deltas)
        for s in range(4):
            if s == ctx.seat:
                continue
            if s == ctx.dealer or ctx.is_dealer:
                deltas[s] = -(cost["main"] + cost["main_bonus"])
            else:
                deltas[s] = -(cost["additional"] + cost["additional_bonus"])
        return four_seats(deltas)

    # -------------------------------------------------------------- legal-action hooks

    def win_score(self, state: TableState, win_tile: int, from_seat: int | None,
                  robbing_kan: bool = False) -> WinScore | None:
        if from_seat is None:  # the hand as it stands is the one to complete: its shanten
            try:               # is cached for the riichi check of the same turn
                if state.hand_shanten() != -1:
                    return None
            except HandError:
                pass  # not 3k+1 / 3k+2 tiles: the plain path answers as it always did
        return super().win_score(state, win_tile, from_seat, robbing_kan)

    def claims_allowed(self, state: TableState) -> bool:
        return state.wall_remaining > 0 and not state.me.riichi

    def can_win_on(self, state: TableState, tile: int) -> bool:
        return not is_furiten(state)

    def _swap_banned_kinds(self, kind: str, called: int,
                           tiles: tuple[int, ...]) -> set[int]:
        """Tenhou forbids discarding, right after a chi/pon, the called kind or the kind at the
        other end of the called sequence (swap-calling)."""
        called_kind = T.kind(called)
        banned = {called_kind}
        if kind == "chi":
            kinds = sorted(T.kind(t) for t in tiles)
            if called_kind == kinds[0] and kinds[2] + 1 <= called_kind - called_kind % 9 + 8:
                banned.add(kinds[2] + 1)
            elif called_kind == kinds[2] and kinds[0] - 1 >= called_kind - called_kind % 9:
                banned.add(kinds[0] - 1)
        return banned

    def _turn_actions(self, state: TableState) -> list[ev.Action]:
        actions = super()._turn_actions(state)
        me = state.me
        drawn = state.last_draw
        if me.riichi and drawn is not None:
            # In riichi: win, discard the drawn tile, or a closed kan that keeps the waits.
            keep: list[ev.Action] = [a for a in actions if isinstance(a, ev.Win)]
            keep.append(ev.Discard(drawn))
            keep.extend(a for a in actions if isinstance(a, ev.Kan)
                        and a.kind == "closed_kan" and self._riichi_kan_ok(state, a))
            return keep
        counts = state.counts()
        # a discard can leave the hand ready only if the 14 tiles are within one of complete
        if drawn is not None and state.hand_shanten() <= 0 and self._can_declare_riichi(state):
            ready_after: dict[int, bool] = {}
            for t in sorted(set(state.hand)):
                k = T.kind(t)
                if k not in ready_after:
                    counts[k] -= 1
                    ready_after[k] = shanten(counts) == 0
                    counts[k] += 1
                if ready_after[k]:
                    actions.append(ev.Discard(t, riichi=True))
        if drawn is not None and self._nine_terminals(state):
            actions.append(ev.AbortiveDraw())
        return actions

    def _can_declare_riichi(self, state: TableState) -> bool:
        return (state.is_concealed() and not state.me.riichi and not state.me.riichi_pending
                and state.scores[state.seat] >= 1000 and state.wall_remaining >= 4)

    @staticmethod
    def _nine_terminals(state: TableState) -> bool:
        if state.calls_made or state.me.river or state.me.draws > 1:
            return False
        counts = state.counts()
        return sum(1 for k in T.TERMINALS_AND_HONOURS if counts[k]) >= 9

    @staticmethod
    def _riichi_kan_ok(state: TableState, kan: ev.Kan) -> bool:
        """A closed kan in riichi must use the drawn tile and leave the waits unchanged."""
        drawn = state.last_draw
        if drawn is None or T.kind(kan.tiles[0]) != T.kind(drawn):
            return False
        before = state.counts()
        before[T.kind(drawn)] -= 1
        after = list(before)
        after[T.kind(drawn)] -= 3
        return bool(waits(before)) and waits(before) == waits(after)


def pao_seat(melds: tuple[Meld, ...]) -> int | None:
    """The seat liable (責任払い, Tenhou: 大三元 and 大四喜) for a hand whose melds hold all
    three dragon sets or all four wind sets: the seat that fed the last of them by a pon or an
    open kan (an added kan keeps its pon's giver); None when there is none."""
    for group in (T.DRAGONS, T.WINDS):
        sets = [m for m in melds if m.kind in ("pon", "open_kan", "added_kan", "closed_kan")
                and m.tiles and T.kind(m.tiles[0]) in group]
        if len(sets) == len(group):
            return sets[-1].from_seat if sets[-1].kind != "closed_kan" else None
    return None


def is_furiten(state: TableState) -> bool:
    """Own discards contain a wait, or a win was passed (temporarily / since riichi)."""
    if state.temporary_furiten or state.riichi_furiten:
        return True
    current = state.waits()
    return any(T.kind(r.tile) in current for r in state.me.river)


RULES = RiichiRules()
