"""MCR's fan floor inside the playouts: what the fan calculator pays, asked ahead of time.

A ready MCR hand wins only on the waits that reach 8 fan, so the playouts ask, for our hand:
- which waits of a ready hand are paid (:meth:`PaidShapes.waits`);
- which discard goes ready on the most unseen paid waits (:meth:`PaidShapes.ready_discard`);
- with ``exact_step``, which discard keeps the most unseen draws after which some discard is
  ready on a live paid wait (:meth:`PaidShapes.step_discard`): the fan floor one step further
  out, as ``rulebased`` asks it at the table, for a hand one step short and for a ready hand
  nothing pays for (which may stay ready or step back to rebuild).

Every answer is kept for the hand in :class:`OurWins` (``paid``, ``into_ready``,
``one_step``): the playouts of a decision, and the decisions of a hand, meet the same shapes
again and again. The questions are asked in batches (one shanten pass over all the hands a
question raises), since a step question raises hundreds of hands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from brain.policies.mc.oneplayer import discard_shanten, wait_sets
from brain.policies.mc.values import OurWins, melds_key
from brain.shanten import shanten_batch
from brain.state import Meld

ReadyDiscards = list[tuple[int, np.ndarray]]  # (discard, the kinds paid after it)
# (discards (m,), per draw: its discard's index (n,), the drawn kind (n,), paid kinds (n, 34))
StepDraws = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class PaidShapes:
    """The fan floor's answers for our hand beside fixed ``melds`` per call; ``pool``: the
    unseen copies of each kind (the weights of waits and draws), ``regular``: the variant
    accepts only regular shapes."""

    def __init__(self, wins: OurWins, pool: np.ndarray, regular: bool) -> None:
        self.wins = wins
        self.pool = pool
        self.live = pool > 0
        self.regular = regular

    def waits(self, melds: tuple[Meld, ...], hand: np.ndarray) -> np.ndarray:
        """(34,) bool: the kinds that win ready ``hand`` + ``melds`` at the fan floor on
        another seat's discard (self-draw adds fan, so that is the bar, as rulebased's)."""
        return self.waits_batch(melds, hand[None])[0]

    def waits_batch(self, melds: tuple[Meld, ...], hands: np.ndarray) -> np.ndarray:
        """(n, 34) bool: :meth:`waits` of each ready 13-tile row of ``hands``."""
        mk = melds_key(melds)
        out = np.zeros((hands.shape[0], 34), bool)
        found, todo = _split_cached(self.wins.paid, lambda key: (mk, key), hands)
        for i, got in enumerate(found):
            if got is not None:
                out[i] = got
        if todo:
            first = [rows[0] for rows in todo.values()]
            shapes = wait_sets(hands[first], self.regular)
            for j, (key, rows) in enumerate(todo.items()):
                hand = hands[rows[0]]
                got = np.zeros(34, bool)
                for w in np.flatnonzero(shapes[j]):
                    won = hand.copy()
                    won[w] += 1
                    got[w] = self.wins.pays(melds, won, int(w))
                self.wins.paid[(mk, key)] = got
                out[rows] = got
        return out

    def ready_discards(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int = -1
                       ) -> ReadyDiscards:
        """Each discard of 14-tile ``hand`` that leaves it ready, with its paid waits."""
        return self.ready_discards_batch(melds, hand[None], banned)[0]

    def ready_discards_batch(self, melds: tuple[Meld, ...], hands: np.ndarray,
                             banned: int = -1) -> list[ReadyDiscards]:
        """:meth:`ready_discards` of each 14-tile row of ``hands``."""
        mk = melds_key(melds)
        out, todo = _split_cached(self.wins.into_ready, lambda key: (mk, key, banned), hands)
        if todo:
            first = np.array([rows[0] for rows in todo.values()])
            after = discard_shanten(hands[first], np.full(first.size, banned), self.regular)
            j, x = np.nonzero(after == 0)
            lefts = hands[first[j]].copy()
            lefts[np.arange(j.size), x] -= 1
            paid = self.waits_batch(melds, lefts)
            lists: list[ReadyDiscards] = [[] for _ in first]
            for i in range(j.size):
                lists[j[i]].append((int(x[i]), paid[i]))
            for (key, rows), got in zip(todo.items(), lists, strict=True):
                self.wins.into_ready[(mk, key, banned)] = got
                for i in rows:
                    out[i] = got
        return [got if got is not None else [] for got in out]

    def ready_discard(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int = -1
                      ) -> int | None:
        """The discard of 14-tile ``hand`` into a ready hand whose paid waits have the most
        unseen copies, the lowest kind on a tie; None where no ready discard is paid."""
        best_x, best_n = None, 0
        for x, paid in self.ready_discards(melds, hand, banned):
            n = int(self.pool[paid].sum())
            if n > best_n:
                best_x, best_n = x, n
        return best_x

    def step_discard(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int,
                     picked: int) -> int | None:
        """The discard of 14-tile ``hand`` with the most unseen draws into a paid ready hand
        (:meth:`step_counts`), the lowest kind on a tie; None where ``picked`` (the shape's
        own choice) has as many, or none has any."""
        counts = self.step_counts(melds, hand, banned)
        if not counts:
            return None
        best = max(counts.values())
        if best == 0 or counts.get(picked, -1) >= best:
            return None
        return min(x for x, n in counts.items() if n == best)

    def step_counts(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int = -1
                    ) -> dict[int, int]:
        """For each discard of 14-tile ``hand`` that leaves it ready or one step short: the
        unseen copies of the kinds whose draw then lets some discard go ready on a live
        paid wait (asked where no discard is ready on one now)."""
        xs, x_of, draws, paid = self._step_draws(melds, hand, banned)
        reach = (paid & self.live[None]).any(axis=1)
        counts = np.zeros(xs.size, np.int64)
        np.add.at(counts, x_of[reach], self.pool[draws[reach]].astype(np.int64))
        return {int(x): int(n) for x, n in zip(xs, counts, strict=True)}

    def _step_draws(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int
                    ) -> StepDraws:
        """What :meth:`step_counts` weighs, whatever is in sight: the discards into ready or
        one step short, and for each draw that then lets some discard go ready (by index
        into those discards) the kinds any such ready hand is paid on. Kept for the hand in
        ``OurWins.one_step`` (the unseen copies change from decision to decision; this does
        not)."""
        key = (melds_key(melds), hand.tobytes(), banned)
        got = self.wins.one_step.get(key)
        if got is not None:
            return got
        after = discard_shanten(hand[None], np.array([banned]), self.regular)[0]
        xs = np.flatnonzero(after <= 1)
        x_of = np.repeat(np.arange(xs.size), 34)
        draws = np.tile(np.arange(34), xs.size)
        trials = np.repeat(hand[None], x_of.size, axis=0)
        at = np.arange(x_of.size)
        trials[at, xs[x_of]] -= 1
        trials[at, draws] += 1
        ok = trials[at, draws] <= 4  # (drawing back the discard: not nearer, dropped below)
        trials, x_of, draws = trials[ok], x_of[ok], draws[ok]
        near = shanten_batch(trials, self.regular) <= 0 if trials.size else np.zeros(0, bool)
        trials, x_of, draws = trials[near], x_of[near], draws[near]
        paid = np.zeros((draws.size, 34), bool)
        for i, ready in enumerate(self.ready_discards_batch(melds, trials)):
            for _, waits in ready:
                paid[i] |= waits
        got = (xs, x_of, draws, paid)
        self.wins.one_step[key] = got
        return got


def _split_cached(cache: dict[Any, Any], key_of: Callable[[bytes], tuple[object, ...]],
                  hands: np.ndarray) -> tuple[list[Any], dict[bytes, list[int]]]:
    """Each row's answer kept in ``cache`` (None where there is none), and the rows without
    one grouped by hand (the same hand in several rows is asked once)."""
    found: list[Any] = []
    todo: dict[bytes, list[int]] = {}
    for i, hand in enumerate(hands):
        key = hand.tobytes()
        got = cache.get(key_of(key))
        found.append(got)
        if got is None:
            todo.setdefault(key, []).append(i)
    return found, todo
