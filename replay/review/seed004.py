"""Seed 004's player's-view prediction (brain/ALGORITHMS.md section 6; the thesis, 3.2.1 and
3.2.4), as a ranking the commentary and the measure can use beside our policies'.

Discards: the concealed hand, sorted, loses its complete sets and pairs (a chow first where the
tile starts one, else every copy of a kind held two or more times), then its partial chows
(two tiles of a suit one or two apart); the tiles left are the predicted discards, the ones
already discarded at the table, of the suit the hand holds least of (缺一门) and honours (when
the hand is not all honours) first. Ties and every other discard follow ``rulebased``'s own
ranking. Calls: a win when legal; a pung (kong) when the pair (triple) is not part of a chow
in hand; a chow when the hand holds no copy of the discarded tile; else a pass.
"""

from __future__ import annotations

from typing import Any

from brain.actions import canonical
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from replay.replayer import action_key
from replay.review.evaluators import RANK, Evaluation, RankingEvaluator, Scored

NAME = "seed004"


def leftover_kinds(counts: list[int]) -> list[int]:
    """The kinds that are in no set, pair or partial chow of the hand (one entry per tile)."""
    c = list(counts)
    for k in range(34):
        while c[k]:
            if k < 27 and k % 9 <= 6 and c[k + 1] and c[k + 2]:
                for j in (k, k + 1, k + 2):
                    c[j] -= 1
            elif c[k] >= 2:
                c[k] = 0
            else:
                break
    rest = [k for k in range(34) for _ in range(c[k])]
    out: list[int] = []
    i = 0
    while i < len(rest):
        k = rest[i]
        if i + 1 < len(rest):
            n = rest[i + 1]
            if k < 27 and n < 27 and k // 9 == n // 9 and 1 <= n - k <= 2:
                i += 2
                continue
        out.append(k)
        i += 1
    return out


def discard_preference(state: TableState, k: int, counts: list[int]) -> int:
    """How many of the thesis' three reasons speak for discarding kind ``k``."""
    seen = any(T.kind(r.tile) == k for s in state.seats for r in s.river)
    per_suit = [sum(counts[9 * s:9 * s + 9]) for s in range(3)]
    held = [s for s in range(3) if per_suit[s]]
    weakest = k < 27 and len(held) == 3 and per_suit[k // 9] == min(per_suit)
    all_honours = sum(counts[27:]) == sum(counts)
    return int(seen) + int(weakest) + int(k >= 27 and not all_honours)


def _in_chow(counts: list[int], k: int) -> bool:
    """Is kind ``k`` part of a chow with two other kinds held?"""
    if k >= 27:
        return False
    r = k % 9
    return any(lo >= 0 and lo + 2 <= 8 and all(counts[k - r + j] for j in (lo, lo + 1, lo + 2)
                                                if k - r + j != k)
               for lo in (r - 2, r - 1, r))


class Seed004Evaluator:
    """The player's-view prediction as a ranking (losses in ranks, like ``rulebased``)."""

    name = NAME
    unit = RANK

    def __init__(self) -> None:
        self.rulebased = RankingEvaluator("rulebased")

    def evaluate(self, state: TableState, request: ev.DecisionRequest,
                 legal: list[Any], top: int | None = None) -> Evaluation:
        """Every action ranked whatever ``top``: the order is rulebased's whole one, moved."""
        base = [s.action for s in self.rulebased.evaluate(state, request, legal).ranked]
        order = {action_key(a): i for i, a in enumerate(base)}
        if request.kind == "turn":
            ranked = self._turn(state, legal, order)
        else:
            ranked = self._claim(state, request, legal, order)
        return Evaluation(tuple(Scored(a, None, i + 1) for i, a in enumerate(ranked)), RANK)

    def _turn(self, state: TableState, legal: list[Any], order: dict[Any, int]) -> list[Any]:
        counts = state.counts()
        left = set(leftover_kinds(counts))

        def key(a: Any) -> tuple[int, int, int]:
            if isinstance(a, ev.Win):
                return (0, 0, 0)
            if isinstance(a, ev.Discard):
                k = T.kind(a.tile)
                if k in left:
                    return (1, -discard_preference(state, k, counts), order[action_key(a)])
                return (2, 0, order[action_key(a)])
            return (3, 0, order[action_key(a)])

        return _distinct(sorted(legal, key=key))

    def _claim(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               order: dict[Any, int]) -> list[Any]:
        counts = state.counts()
        k = T.kind(request.tile) if request.tile is not None else -1
        first: Any = None
        for a in canonical(legal):
            if isinstance(a, ev.Win):
                first = a
                break
        if first is None and k >= 0 and not _in_chow(counts, k):
            first = next((a for a in canonical(legal) if isinstance(a, ev.Kan)), None) \
                or next((a for a in canonical(legal) if isinstance(a, ev.Pon)), None)
        if first is None and k >= 0 and counts[k] == 0:
            first = next((a for a in sorted(legal, key=lambda a: order[action_key(a)])
                          if isinstance(a, ev.Chi)), None)
        if first is None:
            first = next((a for a in legal if isinstance(a, ev.Pass)), None)
        rest = sorted(legal, key=lambda a: order[action_key(a)])
        return _distinct(([first] if first is not None else []) + rest)


def _distinct(actions: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for a in actions:
        key = action_key(a)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out
