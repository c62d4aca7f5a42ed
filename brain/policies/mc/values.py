"""What the end of a simulated hand is worth to us, in the variant's own points.

Our own wins are valued by the variant's rules module (riichi points through the `mahjong`
library, MCR fan through MahjongGB with its 8-fan minimum, Taiwan tai): a hand the rules do
not accept (no yaku, under 8 fan) is no win, and the playout goes on. Those calls cost from
10 us (MCR) to 200 us (riichi), so each distinct (hand, winning tile, way of winning) is
valued once and cached. The opponents' wins are valued by the models (``value``: what we pay
on a deal-in of that kind), turned into each seat's share by the variant's payments.
Seats here are relative: 0 is us, 1..3 the next seats in turn order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.rules.mcr import MIN_FAN, discard_fan, packs_of
from brain.rules.variant import variant_of
from brain.state import Meld, TableState
from protocols import tiles as T

MCR_BASE = 8  # every seat pays the winner 8 in MCR, the discarder 8 + fan
NOTEN_POOL = 3000  # riichi: what the unready seats pay the ready ones at an exhaustive draw
UMA = (15000.0, 5000.0, -5000.0, -15000.0)  # riichi placement bonus, points per rank


class OurWins:
    """Our win's deltas (relative seats) by the rules, cached per decision context."""

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.rules = rules_for(state.variant)
        self.reds = {T.kind(t) for t in state.hand if T.is_red(t)}
        self._cache: dict[tuple[object, ...], np.ndarray | None] = {}
        self.calls = 0  # rules calls made (the rest came from the cache)
        self.tries = 0  # complete shapes offered for a value (cache hits included) ...
        self.refused = 0  # ... and those the rules refused (no yaku, under the fan floor)
        self.context = context_key(state)
        # MCR playouts (brain/policies/mc/paid.py), kept for the hand: (melds, ready 13
        # tiles) -> the kinds that win at the fan floor; (melds, 14 tiles, banned kind) -> each
        # discard into ready with those kinds, and -> each discard one step short with the
        # draws into a ready hand and the kinds it is paid on; a hand's shapes recur decision
        # after decision
        self.paid: dict[tuple[object, ...], np.ndarray] = {}
        self.into_ready: dict[tuple[object, ...], list[tuple[int, np.ndarray]]] = {}
        self.one_step: dict[tuple[object, ...],
                            tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self.paid_live: np.ndarray | None = None  # the live kinds those were asked about
        self._pays: dict[tuple[object, ...], bool] = {}  # MCR: (melds, counts, kind) -> paid
        self._packs: dict[tuple[object, ...], tuple[tuple[str, str, int], ...]] = {}
        self._winds = ((state.seat - state.dealer) % 4,
                       state.round_wind_kind - T.EAST)  # MCR's seat and prevalent winds

    def reuse(self, state: TableState) -> OurWins:
        """This cache for the next decision if nothing a value depends on changed (same hand
        of the game, dora, sticks, riichi, red fives), else a fresh one."""
        if context_key(state) != self.context:
            return OurWins(state)
        self.state = state
        self.calls = self.tries = self.refused = 0
        return self

    def value(self, melds: tuple[Meld, ...], counts: Sequence[int] | np.ndarray, win_kind: int,
              from_rel: int | None, riichi: bool) -> np.ndarray | None:
        """(4,) score changes when our ``counts`` (winning tile included) win on
        ``win_kind`` from relative seat ``from_rel`` (None: self-draw); None: no legal win.

        A win by a discard is valued once whoever discarded it (as if seat 1 had, then the
        payer's column is swapped in): only Taiwan's dealer surcharge depends on the payer."""
        out = self._lookup(melds, counts, win_kind, from_rel, riichi)
        self.tries += 1
        self.refused += out is None
        if out is None or from_rel is None or from_rel == 1:
            return out
        swapped = out.copy()
        swapped[[1, from_rel]] = swapped[[from_rel, 1]]
        return swapped

    def pays(self, melds: tuple[Meld, ...], mk: tuple[object, ...], raw: bytes,
             win_kind: int) -> bool:
        """MCR: whether concealed counts ``raw`` (one byte per kind, the winning tile
        included) beside ``melds`` (``mk``: their :func:`melds_key`) win at the fan floor on
        the next seat's plain discard of ``win_kind``: the playouts' look ahead at a ready
        hand's waits (brain/policies/mc/paid.py), asked of hundreds of thousands of hands a
        game, so the fan calculator is asked directly (:func:`brain.rules.mcr.discard_fan`,
        the rules' own score of that win); not counted in ``tries``, which are the shapes
        the playouts completed."""
        key = (mk, raw, win_kind)
        got = self._pays.get(key)
        if got is None:
            packs = self._packs.get(mk)
            if packs is None:
                packs = self._packs[mk] = packs_of(melds, self.state.seat)
            fan = discard_fan(packs, raw, win_kind, len(self.state.me.flowers),
                              self._winds[0], self._winds[1])
            got = self._pays[key] = fan is not None and fan >= MIN_FAN
        return got

    def _lookup(self, melds: tuple[Meld, ...], counts: Sequence[int] | np.ndarray,
                win_kind: int, from_rel: int | None, riichi: bool) -> np.ndarray | None:
        """The cached value with relative seat 1 paying (the payer swapped in by ``value``)."""
        payer_deals = from_rel is not None and from_rel == (self.state.dealer
                                                            - self.state.seat) % 4
        key = (melds_key(melds), bytes(counts), win_kind, from_rel is None, riichi,
               payer_deals and self.state.spec.dealer_surcharge)
        if key in self._cache:
            return self._cache[key]
        self.calls += 1
        probe = None if from_rel is None else (from_rel if payer_deals else
                                               self._other_payer())
        out = self._score(melds, counts, win_kind, probe, riichi)
        if out is not None and probe is not None and probe != 1:
            out[[1, probe]] = out[[probe, 1]]
        self._cache[key] = out
        return out

    def _other_payer(self) -> int:
        """A relative seat that is not the dealer (the canonical discarder)."""
        dealer = (self.state.dealer - self.state.seat) % 4
        return 1 if dealer != 1 else 2

    def _score(self, melds: tuple[Meld, ...], counts: Sequence[int] | np.ndarray, win_kind: int,
               from_rel: int | None, riichi: bool) -> np.ndarray | None:
        s = self.state
        tiles: list[int] = []
        for k in range(34):
            n = int(counts[k])
            if n and k in self.reds and not (k == win_kind and n == 1):
                tiles.append(T.red_of(k))
                n -= 1
            tiles.extend([k] * n)
        seat = s.seat
        ctx = WinContext(
            concealed=tuple(tiles), melds=melds, win_tile=win_kind, seat=seat,
            from_seat=None if from_rel is None else (seat + from_rel) % 4, dealer=s.dealer,
            round_wind=s.round_wind_kind, riichi=riichi or s.me.riichi,
            double_riichi=s.me.double_riichi, flowers=len(s.me.flowers),
            dora_indicators=tuple(s.dora_indicators), honba=s.honba, sticks=s.sticks)
        try:
            score = self.rules.score(ctx)
        except (ValueError, KeyError, IndexError, TypeError):
            return None
        if score is None:
            return None
        return np.array([score.deltas[(seat + i) % 4] for i in range(4)], np.float64)


def context_key(state: TableState) -> tuple[object, ...]:
    """Everything a win's value reads besides the hand, its melds and the winning tile."""
    me = state.me
    return (state.variant, state.seat, state.hand_count, state.round_wind, state.round_number,
            state.dealer, state.honba, state.sticks, tuple(state.dora_indicators), me.riichi,
            me.double_riichi, len(me.flowers),
            frozenset(T.kind(t) for t in state.hand if T.is_red(t)))


def melds_key(melds: tuple[Meld, ...]) -> tuple[object, ...]:
    return tuple((m.kind, m.tiles) for m in melds)


class Payments:
    """The opponents' wins and the exhaustive draw, as (rows, 4) relative deltas."""

    def __init__(self, variant: str, dealer_rel: int) -> None:
        self.variant = variant
        self.spec = variant_of(variant)
        self.dealer_rel = dealer_rel

    def ron(self, delta: np.ndarray, rows: np.ndarray, winner: int, payer: np.ndarray,
            v: np.ndarray) -> None:
        """Opponent ``winner`` wins ``v`` off ``payer`` (per row, relative seats)."""
        delta[rows, winner] += v
        delta[rows, payer] -= v
        if self.spec.all_pay_base:  # the two other seats pay the base each
            for s in range(4):
                others = (payer != s) & (s != winner)
                delta[rows[others], s] -= MCR_BASE
                delta[rows[others], winner] += MCR_BASE

    def tsumo(self, delta: np.ndarray, rows: np.ndarray, winner: int, v: np.ndarray) -> None:
        """Opponent ``winner`` draws its win; ``v`` is what a deal-in would have cost."""
        for s in range(4):
            if s == winner:
                continue
            if self.spec.dealer_pays_double:
                if winner == self.dealer_rel:
                    share = v / 3
                else:
                    share = v / 2 if s == self.dealer_rel else v / 4
            else:
                share = v
            delta[rows, s] -= share
            delta[rows, winner] += share

    def exhaustive(self, delta: np.ndarray, rows: np.ndarray, ready: np.ndarray) -> None:
        """Riichi noten payments among ``ready`` ((rows, 4) bool); other variants pay none."""
        if not self.spec.noten_payments or rows.size == 0:
            return
        n = ready.sum(axis=1)
        some = (n > 0) & (n < 4)
        gain = np.where(some, NOTEN_POOL / np.maximum(n, 1), 0.0)
        loss = np.where(some, NOTEN_POOL / np.maximum(4 - n, 1), 0.0)
        delta[rows] += np.where(ready, gain[:, None], -loss[:, None])


def utility(variant: str, deltas: np.ndarray, scores: Sequence[int], last_hand: bool,
            weight: float) -> np.ndarray:
    """Our outcome per row: our score change, plus in riichi's last hand the placement bonus
    the final scores give (ties to the lower relative seat, a fair stand-in for Tenhou's
    seat order)."""
    ours = deltas[:, 0].copy()
    if not variant_of(variant).ranked or not last_hand or weight == 0:
        return ours
    final = np.asarray(scores, np.float64)[None, :] + deltas
    ahead = (final[:, 1:] > final[:, :1]).sum(axis=1)
    return cast(np.ndarray, ours + weight * np.asarray(UMA)[ahead])


def is_last_hand(state: TableState) -> bool:
    """Riichi: the game's last scheduled hand or later (east-only unless told south)."""
    last_wind = 1 if state.rules.get("length") == "south" else 0
    return state.round_wind > last_wind or (
        state.round_wind == last_wind and state.round_number >= 3)
