"""The hidden truth of a decision: what the referee knows and the deciding seat does not.

For every seat (the decider's own row included): its concealed tiles, its shanten, whether its
3k+1 hand is ready and on which kinds (a kind completes the hand when the variant's rules call
the shape complete: riichi and mass with seven pairs, riichi with thirteen orphans, MCR with its
knitted shapes, Taiwan five groups and a pair), and what each win would be worth by the
variant's own scoring. Convention (README): another seat's win is valued as a win off the
deciding seat's discard (the deal-in the decider risks; no ura dora, which nobody knows yet),
the decider's own row as a self-draw; a wait that is no legal win (riichi without yaku, MCR
under 8 fan) is worth 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain.rules import rules_for
from brain.rules.base import WinContext, WinScore
from brain.shanten import regular_shanten, shanten
from brain.state import TableState
from protocols import tiles as T
from replay.dataset import schema as S
from replay.dataset.snapshot import padded

_CACHE_LIMIT = 200_000


def variant_shanten(variant: str, counts: list[int]) -> int:
    """Shanten by the forms the tables know that the variant allows (Taiwan: 5 groups and a
    pair only; the others: also seven pairs / thirteen orphans on 13-14 tiles)."""
    return regular_shanten(counts) if variant == "taiwan16" else shanten(counts)


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


class TruthOracle:
    """Computes the ``t_`` fields from the four seats' own states. Waits and scores are cached
    (a seat's hand changes once per turn, decisions come several per turn)."""

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.rules = rules_for(variant)
        self._waits: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._scores: dict[WinContext, WinScore | None] = {}

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
            if self.variant == "mcr":
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

    def win_score(self, state: TableState, kind: int, decider: int) -> WinScore | None:
        """The score of ``state``'s seat winning on ``kind``: off the decider's discard, or a
        self-draw when it is the decider. A plain tile of the kind (the red five when the plain
        copies are used up)."""
        tiles = [kind]
        if self.variant == "riichi" and kind in (4, 13, 22):
            tiles.append(T.red_of(kind))
        for tile in tiles:
            ctx = self._context(state, tile, decider)
            if ctx in self._scores:
                return self._scores[ctx]
            try:
                score = self.rules.score(ctx)
            except ValueError:  # no such physical tile left (riichi ids): try the red five
                continue
            if len(self._scores) > _CACHE_LIMIT:
                self._scores.clear()
            self._scores[ctx] = score
            return score
        return None

    def _context(self, state: TableState, tile: int, decider: int) -> WinContext:
        if state.seat != decider:
            return self.rules.context(state, tile, decider)
        state.hand.append(tile)  # a self-draw: the context reads the tile in the hand
        try:
            return self.rules.context(state, tile, None)
        finally:
            state.hand.pop()

    def row(self, views: Sequence[TableState], decider: int) -> dict[str, Any]:
        """The ``t_`` fields for a decision of ``decider``; ``views[s]`` is seat s's own state."""
        hands, shantens, tenpai, furiten, waits, values, points = [], [], [], [], [], [], []
        known = [0] * S.KINDS
        public = views[decider]
        for s, view in enumerate(views):
            counts = T.counts34(view.hand)
            for k in range(S.KINDS):
                known[k] += counts[k]
            for m in view.seats[s].melds:
                for t in m.tiles:
                    if T.kind(t) < S.KINDS:
                        known[T.kind(t)] += 1
            hands.append(padded(view.hand, S.HAND_WIDTH, "hand"))
            shantens.append(variant_shanten(self.variant, counts))
            found = self.waits(view)
            wait_row, value_row, point_row = [0] * S.KINDS, [0] * S.KINDS, [0] * S.KINDS
            blocked = False
            for k in found:
                wait_row[k] = 1
                score = self.win_score(view, k, decider)
                if score is not None:
                    value_row[k] = score.value
                    gain = score.deltas[decider]
                    point_row[k] = gain if s == decider else -gain
                if s != decider and not self.rules.can_win_on(view, k):
                    blocked = True
            tenpai.append(1 if found else 0)
            furiten.append(1 if blocked else 0)
            waits.append(wait_row)
            values.append(value_row)
            points.append(point_row)
        for seat in public.seats:
            for r in seat.river:
                if not r.claimed and T.kind(r.tile) < S.KINDS:
                    known[T.kind(r.tile)] += 1
        for t in public.dora_indicators:
            known[T.kind(t)] += 1
        return {
            "t_hand": hands, "t_shanten": shantens, "t_tenpai": tenpai, "t_furiten": furiten,
            "t_waits": waits, "t_value": values, "t_points": points,
            "t_wall": [max(0, 4 - n) for n in known],
        }
