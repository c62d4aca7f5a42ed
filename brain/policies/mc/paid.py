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
from typing import Any, cast

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
        # the answers only ask the fan calculator about live kinds (a dead wait or draw is
        # worth nothing); what is in sight only grows within a hand, so the kept answers
        # hold while the live kinds stay among those they were asked under
        if wins.paid_live is None or (self.live & ~wins.paid_live).any():
            wins.paid.clear()
            wins.into_ready.clear()
            wins.one_step.clear()
            wins.paid_live = self.live
        self.asked: np.ndarray = wins.paid_live

    def waits(self, melds: tuple[Meld, ...], hand: np.ndarray) -> np.ndarray:
        """(34,) bool: the kinds that win ready ``hand`` + ``melds`` at the fan floor on
        another seat's discard (self-draw adds fan, so that is the bar, as rulebased's),
        among those unseen when the hand's answers were kept (weigh them by ``pool``)."""
        return cast(np.ndarray, self.waits_batch(melds, hand[None])[0])

    def waits_batch(self, melds: tuple[Meld, ...], hands: np.ndarray) -> np.ndarray:
        """(n, 34) bool: :meth:`waits` of each ready 13-tile row of ``hands``."""
        mk = melds_key(melds)
        hands = hands.astype(np.int8, copy=False)  # a hand's bytes are its counts
        out = np.zeros((hands.shape[0], 34), bool)
        found, todo = _split_cached(self.wins.paid, lambda key: (mk, key), hands)
        for i, got in enumerate(found):
            if got is not None:
                out[i] = got
        if todo:
            first = [rows[0] for rows in todo.values()]
            shapes = wait_sets(hands[first], self.regular)
            for j, (key, rows) in enumerate(todo.items()):
                got = np.zeros(34, bool)
                for w in np.flatnonzero(shapes[j] & self.asked).tolist():
                    won = bytearray(key)
                    won[w] += 1
                    got[w] = self.wins.pays(melds, mk, bytes(won), w)
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
        return self.ready_discard_batch(melds, hand[None], banned)[0]

    def ready_discard_batch(self, melds: tuple[Meld, ...], hands: np.ndarray,
                            banned: int = -1) -> list[int | None]:
        """:meth:`ready_discard` of each 14-tile row of ``hands``."""
        out: list[int | None] = []
        for ready in self.ready_discards_batch(melds, hands, banned):
            best_x, best_n = None, 0
            for x, paid in ready:
                n = int(self.pool[paid].sum())
                if n > best_n:
                    best_x, best_n = x, n
            out.append(best_x)
        return out

    def step_discard(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int,
                     picked: int) -> int | None:
        """The discard of 14-tile ``hand`` with the most unseen draws into a paid ready hand
        (:meth:`step_counts`), the lowest kind on a tie; None where ``picked`` (the shape's
        own choice) has as many, or none has any."""
        return self.step_discard_batch(melds, hand[None], banned, np.array([picked]))[0]

    def step_discard_batch(self, melds: tuple[Meld, ...], hands: np.ndarray, banned: int,
                           picked: np.ndarray) -> list[int | None]:
        """:meth:`step_discard` of each 14-tile row of ``hands`` (``picked``: one per row)."""
        out: list[int | None] = []
        for draws, pick in zip(self._step_draws_batch(melds, hands, banned), picked,
                               strict=True):
            counts = self._counts(draws)
            best = int(counts.max()) if counts.size else 0
            xs = draws[0]
            held = np.flatnonzero(xs == pick)
            if best == 0 or (held.size and counts[held[0]] >= best):
                out.append(None)
            else:
                out.append(int(xs[np.flatnonzero(counts == best)[0]]))
        return out

    def step_counts(self, melds: tuple[Meld, ...], hand: np.ndarray, banned: int = -1
                    ) -> dict[int, int]:
        """For each discard of 14-tile ``hand`` that leaves it ready or one step short: the
        unseen copies of the kinds whose draw then lets some discard go ready on a live
        paid wait (asked where no discard is ready on one now)."""
        draws = self._step_draws_batch(melds, hand[None], banned)[0]
        return {int(x): int(n) for x, n in zip(draws[0], self._counts(draws), strict=True)}

    def _counts(self, draws: StepDraws) -> np.ndarray:
        """Per discard of :meth:`_step_draws_batch`'s answer: the unseen copies of its draws
        into a ready hand on a live paid wait."""
        xs, x_of, kinds, paid = draws
        reach = (paid & self.live[None]).any(axis=1)
        counts = np.zeros(xs.size, np.int64)
        np.add.at(counts, x_of[reach], self.pool[kinds[reach]].astype(np.int64))
        return counts

    def _step_draws_batch(self, melds: tuple[Meld, ...], hands: np.ndarray, banned: int
                          ) -> list[StepDraws]:
        """What :meth:`step_counts` weighs for each 14-tile row of ``hands``, whatever is in
        sight: the discards into ready or one step short (ascending), and for each draw that
        then lets some discard go ready (by index into those discards) the kinds any such
        ready hand is paid on. Kept for the hand in ``OurWins.one_step`` (the unseen copies
        change from decision to decision; this does not). The hands not kept are asked
        together: one shanten pass for all their draws, one for all the ready hands."""
        mk = melds_key(melds)
        out, todo = _split_cached(self.wins.one_step, lambda key: (mk, key, banned), hands)
        if not todo:
            return out
        first = hands[[rows[0] for rows in todo.values()]]
        after = discard_shanten(first, np.full(len(first), banned), self.regular)
        hand_of, xs = np.nonzero(after <= 1)  # by hand, then by kind
        starts = np.searchsorted(hand_of, np.arange(len(first) + 1))
        live = np.flatnonzero(self.asked)
        pos = np.repeat(np.arange(xs.size), live.size)  # each (hand, discard), every live draw
        draws = np.tile(live, xs.size)
        trials = first[hand_of[pos]].copy()
        at = np.arange(pos.size)
        trials[at, xs[pos]] -= 1
        trials[at, draws] += 1
        ok = trials[at, draws] <= 4  # (drawing back the discard: not nearer, dropped below)
        trials, pos, draws = trials[ok], pos[ok], draws[ok]
        near = shanten_batch(trials, self.regular) <= 0 if trials.size else np.zeros(0, bool)
        trials, pos, draws = trials[near], pos[near], draws[near]
        paid = np.zeros((draws.size, 34), bool)
        ready = self.ready_discards_batch(melds, trials)
        at_trial = [i for i, discards in enumerate(ready) for _ in discards]
        if at_trial:  # each trial: the union of its ready discards' paid kinds
            np.logical_or.at(paid, at_trial, np.stack([w for d in ready for _, w in d]))
        cut = np.searchsorted(pos, starts)  # the trials of each hand: a run of pos
        for j, (key, rows) in enumerate(todo.items()):
            lo, hi = cut[j], cut[j + 1]
            got = (xs[starts[j]:starts[j + 1]], pos[lo:hi] - starts[j], draws[lo:hi],
                   paid[lo:hi])
            self.wins.one_step[(mk, key, banned)] = got
            for i in rows:
                out[i] = got
        return out


def _split_cached(cache: dict[Any, Any], key_of: Callable[[bytes], tuple[object, ...]],
                  hands: np.ndarray) -> tuple[list[Any], dict[bytes, list[int]]]:
    """Each row's answer kept in ``cache`` (None where there is none), and the rows without
    one grouped by hand (the same hand in several rows is asked once)."""
    found: list[Any] = []
    todo: dict[bytes, list[int]] = {}
    raw = np.ascontiguousarray(hands).tobytes()
    width = hands.shape[1] * hands.itemsize
    for i in range(hands.shape[0]):
        key = raw[i * width:(i + 1) * width]  # the row's bytes, as hand.tobytes() gives them
        got = cache.get(key_of(key))
        found.append(got)
        if got is None:
            todo.setdefault(key, []).append(i)
    return found, todo
