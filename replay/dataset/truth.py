"""The hidden truth of a decision: what the referee knows and the deciding seat does not.

For every seat (the decider's own row included): its concealed tiles, its shanten, whether its
3k+1 hand is ready and on which kinds (a kind completes the hand when the variant's rules call
the shape complete: riichi and mass with seven pairs, riichi with thirteen orphans, MCR with its
knitted shapes, Taiwan five groups and a pair), and what each win would be worth by the
variant's own scoring. Convention (README): another seat's win is valued as a win off the
deciding seat's discard (the deal-in the decider risks; no ura dora, which nobody knows yet),
or as no win where no discard follows (Taiwan's last draw: the hand ends after the drawer's
win or pass), the decider's own row as a self-draw; a wait that is no legal win (riichi without
yaku, MCR under 8 fan) has the value -1 (a Taiwan win of 0 tai is a win: value 0, points 1000
or more).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from brain.rules import rules_for, variant_of
from brain.rules.base import WinContext, WinScore
from brain.shanten import regular_shanten, shanten
from brain.state import TableState
from protocols import tiles as T
from replay.dataset import schema as S
from replay.dataset.snapshot import check_width

_CACHE_LIMIT = 200_000
_UNSCORED = WinScore(value=-2, deltas=(0, 0, 0, 0))  # not in the cache (None: no win)
NO_WIN = -1  # t_value of a wait that is no legal win (riichi without yaku, MCR under 8 fan)


def variant_shanten(variant: str, counts: list[int]) -> int:
    """Shanten by the forms the tables know that the variant allows (Taiwan: 5 groups and a
    pair only; the others: also seven pairs / thirteen orphans on 13-14 tiles)."""
    return regular_shanten(counts) if variant_of(variant).regular_shapes_only else shanten(counts)


def knitted_candidates(counts: list[int]) -> set[int]:
    """MCR: kinds a knitted shape (全不靠, 七星不靠, 组合龙) is waiting on, by MahjongGB's own
    shanten functions (the tables know no knitted shapes)."""
    import MahjongGB

    hand = tuple(T.to_botzone(k) for k in range(34) for _ in range(counts[k]))
    out: set[int] = set()
    for fn in (MahjongGB.HonorsAndKnittedTilesShanten, MahjongGB.KnittedStraightShanten):
        try:
            value, useful = fn(hand)
        except (TypeError, ValueError):
            continue
        if value == 0:
            out.update(T.kind(T.from_botzone(t)) for t in useful)
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class _HandFacts:
    """One concealed hand's counts (the kinds held, as (kind, copies)), shanten and waits."""

    held: tuple[tuple[int, int], ...]
    shanten: int
    waits: tuple[int, ...]


class TruthOracle:
    """Computes the ``t_`` fields from the four seats' own states. Waits and scores are cached
    (a seat's hand changes once per turn, decisions come several per turn)."""

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.spec = variant_of(variant)
        self.rules = rules_for(variant)
        # copies of each kind in the variant's tiles (mass mahjong has no honours)
        self._copies = [4] * self.spec.tile_kinds + [0] * (34 - self.spec.tile_kinds)
        self._waits: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._scores: dict[WinContext, WinScore | None] = {}
        self._hands: dict[tuple[int, ...], _HandFacts] = {}

    def _facts(self, state: TableState) -> _HandFacts:
        """What :meth:`write` needs of a seat's concealed tiles, once per distinct hand: every
        decision rewrites all four seats, while a hand changes about once a turn."""
        key = tuple(state.hand)
        facts = self._hands.get(key)
        if facts is None:
            counts = T.counts34(state.hand)
            facts = _HandFacts(tuple((k, c) for k, c in enumerate(counts) if c),
                               variant_shanten(self.variant, counts), self.waits(state))
            if len(self._hands) > _CACHE_LIMIT:
                self._hands.clear()
            self._hands[key] = facts
        return facts

    def waits(self, state: TableState) -> tuple[int, ...]:
        """Kinds that complete ``state``'s own 3k+1 hand by the variant's rules (a kind all four
        of whose copies the seat holds cannot be drawn and is left out)."""
        counts = T.counts34(state.hand)
        key = tuple(counts)
        cached = self._waits.get(key)
        if cached is not None:
            return cached
        if sum(counts) % 3 != 1:
            found: tuple[int, ...] = ()
        else:
            candidates = set(state.waits())
            if not self.rules.waits_cover_wins:  # MCR's knitted shapes
                candidates |= knitted_candidates(counts)
            found = tuple(sorted(k for k in candidates if counts[k] < 4
                                 and self._completes(counts, k)))
        if len(self._waits) > _CACHE_LIMIT:
            self._waits.clear()
        self._waits[key] = found
        return found

    def _completes(self, counts: list[int], k: int) -> bool:
        counts[k] += 1
        try:
            return self.rules.is_complete(counts)
        finally:
            counts[k] -= 1

    def win_score(self, state: TableState, kind: int, decider: int) -> tuple[int, int] | None:
        """(value, points) of ``state``'s seat winning on ``kind``: off the decider's discard
        (points: what the decider pays), or a self-draw when it is the decider (points: what
        it gains); None when that is no legal win. A plain tile of the kind (the red five when
        the plain copies are used up)."""
        mine = state.seat == decider
        # What a discarder pays does not depend on who it is, except in Taiwan, where only
        # whether it is the dealer counts (a dealer pays one tai more): one score then serves
        # every decider (in Taiwan, the dealer and every other seat).
        if mine:
            payer = None
        elif self.spec.dealer_surcharge and decider == state.dealer:
            payer = decider
        else:
            payer = next(s for s in ((state.seat + k) % 4 for k in (1, 2, 3))
                         if s != state.dealer or not self.spec.dealer_surcharge)
        tiles = [kind]
        if self.spec.red_fives and kind in (4, 13, 22):
            tiles.append(T.red_of(kind))
        for tile in tiles:
            ctx = self._context(state, tile, payer)
            score = self._scores.get(ctx, _UNSCORED)
            if score is _UNSCORED:
                try:
                    score = self.rules.score(ctx)
                except ValueError:  # no such physical tile left (riichi ids): try the red five
                    continue
                if len(self._scores) > _CACHE_LIMIT:
                    self._scores.clear()
                self._scores[ctx] = score
            if score is None:
                return None
            return score.value, (score.deltas[decider] if payer is None else -score.deltas[payer])
        return None

    def _context(self, state: TableState, tile: int, payer: int | None) -> WinContext:
        """The win as the rules value it, with ``tile`` not yet public: the seat's own
        self-draw context (the tile read in its hand), turned into a win off ``payer``'s
        discard where one is given (MCR's fourth-tile flag then counts the copies public
        before that discard, as the judge does when the discard comes)."""
        state.hand.append(tile)
        try:
            ctx = self.rules.context(state, tile, None)
        finally:
            state.hand.pop()
        if payer is None:
            return ctx
        return dataclasses.replace(ctx, from_seat=payer, after_kan=False)

    def write(self, views: Sequence[TableState], decider: int, a: dict[str, np.ndarray],
              i: int, discard_follows: bool = True) -> None:
        """Write the ``t_`` fields of a decision of ``decider`` into row ``i`` of ``a``;
        ``views[s]`` is seat s's own state. ``discard_follows`` False: the decider may not
        discard (Taiwan's last draw, which ends the hand), so no other seat can win on its
        discard: their waits are no legal win (:data:`NO_WIN`, 0 points)."""
        public = views[decider]
        known = list(public.visible)  # the decider's hand and everything public
        shantens, tenpai, furiten = [0] * 4, [0] * 4, [0] * 4
        for s, view in enumerate(views):
            hand = view.hand
            check_width(len(hand), S.HAND_WIDTH, "hand")
            a["t_hand"][i, s, :len(hand)] = hand
            facts = self._facts(view)
            if s != decider:
                for k, c in facts.held:
                    known[k] += c
                # closed kans the decider was not shown (MCR, Taiwan)
                for own, shown in zip(view.seats[s].melds, public.seats[s].melds, strict=False):
                    if own.kind == "closed_kan" and own.tiles and not shown.tiles:
                        known[T.kind(own.tiles[0])] += 4
            shantens[s] = facts.shanten
            found = facts.waits
            if not found:
                continue
            tenpai[s] = 1
            for k in found:
                a["t_waits"][i, s, k] = 1
                won = (self.win_score(view, k, decider) if s == decider or discard_follows
                       else None)
                a["t_value"][i, s, k], a["t_points"][i, s, k] = won or (NO_WIN, 0)
            if s != decider and not self.rules.can_win_on(view, found[0]):
                furiten[s] = 1
        a["t_shanten"][i] = shantens
        a["t_tenpai"][i] = tenpai
        a["t_furiten"][i] = furiten
        a["t_wall"][i] = [c - n if n < c else 0 for c, n in zip(self._copies, known,
                                                                 strict=True)]
