"""Independent shanten oracles for the tests: no tables, no shared code with brain.shanten.

* :func:`exhaustive_distance` enumerates every complete target hand (small hands only).
* :func:`dp_distance` is a memoised search over kinds 0..33 that picks, kind by kind, how many
  chows start there and whether a pung or the pair sits there - an exhaustive search over all
  target hands, feasible for 16/17-tile hands.
Both return the least number of tiles to add (never a fifth copy) so that the hand contains
k groups + a pair; shanten = that - 1.
"""

from functools import cache
from itertools import combinations_with_replacement

import numpy as np

MELDS = [("pung", k) for k in range(34)] + [
    ("chow", s * 9 + r) for s in range(3) for r in range(7)
]


def _meld_tiles(meld):
    kind, k = meld
    return (k, k, k) if kind == "pung" else (k, k + 1, k + 2)


def exhaustive_distance(counts, groups):
    targets = _targets(groups)
    return int(np.maximum(targets - np.asarray(counts, np.int16), 0).sum(axis=1).min())


@cache
def _targets(groups):
    """Every complete target hand of ``groups`` melds and a pair, no kind above four: one
    row each (enumerated once per size; the distance to a hand is then one array sum)."""
    rows = []
    for pair in range(34):
        for melds in combinations_with_replacement(MELDS, groups):
            target = [0] * 34
            target[pair] += 2
            for m in melds:
                for t in _meld_tiles(m):
                    target[t] += 1
            if max(target) <= 4:
                rows.append(target)
    return np.array(rows, np.int16)


def dp_distance(counts, groups):
    counts = tuple(counts)

    @cache
    def go(i, groups_left, pair_left, c1, c2):
        if i == 34:
            return 0 if (groups_left == 0 and pair_left == 0 and c1 == 0 and c2 == 0) else 99
        rank = i % 9 if i < 27 else None
        can_start_chow = rank is not None and rank <= 6
        if rank is None and (c1 or c2):
            return 99
        if rank is not None and rank == 0 and (c1 or c2):
            return 99
        best = 99
        have = counts[i]
        # every choice is tried; a choice past four copies or the groups / pair left is not a
        # target (the loops stop there: larger s or u only need more)
        for s in range(min(4 if can_start_chow else 0, groups_left) + 1):
            for u in (0, 1):
                if s + u > groups_left:
                    break
                for q in range(pair_left + 1):
                    need = c1 + c2 + s + 3 * u + 2 * q
                    if need > 4:
                        break
                    cost = need - have if need > have else 0
                    if cost >= best:
                        continue  # the rest costs at least 0: no better
                    rest = go(i + 1, groups_left - s - u, pair_left - q, s, c1)
                    if cost + rest < best:
                        best = cost + rest
        return best

    return go(0, groups, 1, 0, 0)


def brute_regular_shanten(counts):
    n = sum(counts)
    return dp_distance(counts, n // 3) - 1
