"""The two baselines every stronger policy is measured against.

``tsumogiri`` discards what it draws and never calls or wins: the floor. ``greedy`` wins
whenever it may, declares riichi when it can, never calls, and otherwise discards the tile that
leaves the lowest shanten, then the most unseen useful tiles (the "greedy" player of the seed
papers). Ties go by :func:`brain.actions.action_key`, never by the order of hand or legal set.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from brain.actions import action_key
from brain.policies.base import Decision, win_if_legal
from brain.policies.evaluation import DiscardInfo, analyse_discards
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T


class TsumogiriPolicy:
    name = "tsumogiri"
    fast = True

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None) -> Decision:
        discards = [a for a in legal if isinstance(a, ev.Discard) and not a.riichi]
        if discards:
            drawn = state.last_draw
            for a in discards:
                if a.tile == drawn:
                    return Decision(a)
            # nothing drawn (a dealt 14th tile, a resumed hand): the last tile in kind order
            return Decision(max(discards, key=action_key))
        for a in legal:
            if isinstance(a, ev.Pass):
                return Decision(a)
        return Decision(min(legal, key=action_key))


class GreedyPolicy:
    name = "greedy"
    fast = True

    def decide(self, state: TableState, request: ev.DecisionRequest, legal: list[Any],
               budget: float | None = None) -> Decision:
        win = win_if_legal(legal)
        if win is not None:
            return win
        discards = [a for a in legal if isinstance(a, ev.Discard)]
        if not discards:
            passes = [a for a in legal if isinstance(a, ev.Pass)]
            return Decision(passes[0] if passes else min(legal, key=action_key))
        info = analyse_discards(state, kinds={T.kind(a.tile) for a in discards})
        # (lowest shanten, most useful tiles, riichi when legal, red fives kept (a plain copy
        # goes first)), then the canonical order
        ranked: list[tuple[tuple[int, int, int], tuple[Any, ...], Any, DiscardInfo]] = []
        for a in discards:
            d = info[T.kind(a.tile)]
            flag = int(a.riichi) * 2 - int(T.is_red(a.tile))
            ranked.append(((d.shanten, -d.useful, -flag), action_key(a), a, d))
        ranked.sort(key=_RANK_KEY)
        candidates = tuple((a, float(d.useful - 100 * d.shanten)) for _, _, a, d in ranked[:5])
        return Decision(ranked[0][2], candidates)


_RANK_KEY = itemgetter(0, 1)
