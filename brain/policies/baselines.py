"""The two baselines every stronger policy is measured against.

``tsumogiri`` discards what it draws and never calls or wins: the floor. ``greedy`` wins
whenever it may, declares riichi when it can, never calls, and otherwise discards the tile that
leaves the lowest shanten, then the most unseen useful tiles (the "greedy" player of the seed
papers). Ties go by :func:`brain.actions.action_key`, never by the order of hand or legal set.
"""

from __future__ import annotations

from typing import Any

from brain.actions import action_key
from brain.policies.base import Decision, win_if_legal
from brain.policies.evaluation import analyse_discards
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
        scored: list[tuple[tuple[int, int, int], Any]] = []
        for a in discards:
            k = T.kind(a.tile)
            # prefer riichi when it is legal, and keep red fives (a plain copy goes first)
            scored.append(((-info[k].shanten, info[k].useful,
                            int(a.riichi) * 2 - int(T.is_red(a.tile))), a))
        scored.sort(key=lambda x: ((-x[0][0], -x[0][1], -x[0][2]), action_key(x[1])))
        best = scored[0][1]
        candidates = tuple((a, float(s[1] - 100 * -s[0])) for s, a in scored[:5])
        return Decision(best, candidates)
