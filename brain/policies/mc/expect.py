"""Seed 003's recursive expectation over our draws, in place of random playouts.

The value of a hand is the expectation, over each kind we may draw (weighted by the copies we
have not seen), of the hand after the draw: a complete hand is worth what the rules pay for it
(cached, as in the playouts), a draw that does not lower the shanten leaves the hand as it
was, and one that does is followed by the one-player discard; after ``depth`` draws the hand
is worth P(win within the draws left | shanten) times a typical win (the solo tables). The
opponents enter only through Score(t)'s deal-in terms at the root. Nodes are shared (a hand
reached by several paths is valued once) and each node is one batched shanten call.
"""

from __future__ import annotations

import numpy as np

from brain.policies.mc.oneplayer import choose_discards
from brain.policies.mc.playout import RIICHI_STICK, Start, Table
from brain.policies.mc.root import discard_bias
from brain.policies.mc.values import OurWins
from brain.rules.variant import variant_of
from brain.shanten import shanten_batch
from brain.state import TableState


class Expectation:
    """V(hand, draws left, depth) for one start's melds and riichi state."""

    def __init__(self, table: Table, wins: OurWins, start: Start, bias: np.ndarray) -> None:
        self.t = table
        self.wins = wins
        self.start = start
        self.bias = bias
        self.regular = variant_of(table.variant).regular_shapes_only
        total = float(table.pool.sum())
        self.prob = table.pool / total if total else np.zeros(34)
        self.kinds = np.flatnonzero(table.pool > 0)
        self.memo: dict[tuple[bytes, int, int], float] = {}
        self.nodes = 0

    def leaf(self, sh: int, left: int) -> float:
        p = self.t.p_win
        return float(p[min(max(sh, 0), p.shape[0] - 1), min(max(left, 0), p.shape[1] - 1)]
                     * self.t.win_value)

    def value(self, hand: np.ndarray, sh: int, left: int, depth: int) -> float:
        if depth == 0 or left <= 0:
            return self.leaf(sh, left)
        key = (hand.tobytes(), left, depth)
        if key in self.memo:
            return self.memo[key]
        self.nodes += 1
        kinds = self.kinds[hand[self.kinds] < 4]
        hands = np.repeat(hand[None], kinds.size, axis=0)
        hands[np.arange(kinds.size), kinds] += 1
        s14 = shanten_batch(hands, self.regular).astype(int)
        total = 0.0
        stay: float | None = None
        improving = np.flatnonzero((s14 < sh) & (s14 >= 0))
        chosen: dict[int, tuple[np.ndarray, int]] = {}
        if improving.size:
            k, best = choose_discards(hands[improving], self.bias, None, self.regular)
            for j, row in enumerate(improving):
                after = hands[row].copy()
                after[k[j]] -= 1
                chosen[int(row)] = (after, int(best[j]))
        for j, kind in enumerate(kinds):
            p = self.prob[kind]
            if s14[j] == -1:
                v = self.wins.value(self.start.melds, hands[j], int(kind), None,
                                    self.start.riichi)
                if v is not None:
                    total += p * (float(v[0]) + (RIICHI_STICK if self.start.stick else 0.0))
                    continue
            if j in chosen:
                after, after_best = chosen[j]
                total += p * self.value(after, after_best, left - 1, depth - 1)
            else:
                if stay is None:
                    stay = self.value(hand, sh, left - 1, depth - 1)
                total += p * stay
        # the tiles we cannot draw (a kind held four times) keep the hand as it is
        rest = 1.0 - float(self.prob[kinds].sum())
        if rest > 0:
            total += rest * (stay if stay is not None else self.value(hand, sh, left - 1,
                                                                      depth - 1))
        self.memo[key] = total
        return total


def sim(state: TableState, table: Table, start: Start, depth: int,
        wins: OurWins | None = None) -> float:
    """Sim(t) of one candidate by expectation."""
    wins = wins or OurWins(state)
    bias = discard_bias(state)
    e = Expectation(table, wins, start, bias)
    hand = start.hand.astype(np.int8)
    left = int(table.walls[0]) // (4 if table.shared_wall else 1)
    stick = -RIICHI_STICK if start.stick else 0.0
    if start.discard_first:
        banned = np.array([start.banned], np.int16)
        k, best = choose_discards(hand[None], bias, banned, e.regular)
        hand = hand.copy()
        hand[int(k[0])] -= 1
        return stick + e.value(hand, int(best[0]), left, depth)
    sh = int(shanten_batch(hand[None], e.regular)[0])
    return stick + e.value(hand, sh, left, depth)
