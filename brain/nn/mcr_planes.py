"""MCR's plan planes (encoding 2): what the rule-based planner knows about 8 fan, for the network.

A hand below 8 fan cannot be declared, so in MCR shape alone is the wrong target, and a small
network does not cheaply learn the fan table from the tiles. These planes hand it the planner's
view (brain/policies/mcr_plan.py): every plan family's distance, the nearest plan after each
discard, the fan each wait would score and, for a claim, the nearest plan after each call.

Distances are shown as ``(min(d, CAP) + 1) / (CAP + 1)``: a ready plan 1/7, far or impossible
plans 1; zero means "not measured here" (a kind that is not held, a call the hand cannot make).
For a hand that must discard, the per-family planes hold the distance after discarding each
held kind; for a hand that waits (a claim), one value over all 34 kinds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from brain.policies.mcr_plan import (
    FAMILIES,
    best_distances_after_discards,
    family_distances,
    wait_fans,
)
from brain.rules.mcr import MIN_FAN
from brain.shanten import shanten, useful_tiles
from brain.state import Meld, TableState
from protocols import tiles as T

CAP = 6  # distances of 6 or more look alike: such a plan is not what the hand plays for
FAN_SCALE = 16.0  # fan shown as min(fan, 16) / 16: 8 fan (the floor) is 0.5
CALLS = ("pon", "chi_low", "chi_mid", "chi_high", "kan")
FAMILY_PLANES = ("pure_straight", "mixed_straight", "mixed_triple_chow", "mixed_shifted_chows",
                 "all_pungs", "seven_pairs", "all_types", "half_flush", "full_flush",
                 "concealed", "honors_knitted", "knitted_straight")
assert len(FAMILY_PLANES) == len(FAMILIES)

PLANES: tuple[str, ...] = (
    *[f"plan_{f}" for f in FAMILY_PLANES],
    "plan_best",  # the planner's distance (after each discard, or now), waits under 8 fan: +1
    "plan_best_discard",  # the discards that keep the nearest plan nearest
    "wait_fan",  # per wait kind: the fan its win would score (best over the discards)
    "wait_win",  # per wait kind: that win reaches 8 fan (it can be declared)
    "discard_win8",  # per discard: unseen copies of the waits worth 8 fan it leaves / 8
    *[f"call_{c}" for c in CALLS],  # the planner's distance after that call (and a discard)
)


def _scaled(d: int) -> float:
    return (min(d, CAP) + 1) / (CAP + 1)


def fill(x: np.ndarray, base: int, state: TableState, request: Any,
         table: dict[int, tuple[int, frozenset[int] | None]] | None) -> None:
    """Write :data:`PLANES` into ``x[base:base + len(PLANES)]`` for ``state``'s seat.
    ``table``: the encoder's :func:`brain.shanten.discard_table` of a hand that must discard
    (None for a waiting hand): its ready discards give the waits whose fan is counted."""
    counts = state.counts()
    tiles = sum(counts)
    melds = state.melds
    P = {name: base + i for i, name in enumerate(PLANES)}
    fam0 = P[PLANES[0]]
    if tiles % 3 == 2:
        _discard_planes(x, P, fam0, state, counts, melds, table or {})
    elif tiles % 3 == 1:
        distances = family_distances(counts, melds)
        for f, d in enumerate(distances):
            x[fam0 + f] = _scaled(d)
        fans = _ready_fans(state, counts)
        best = min(distances)
        if fans is not None:
            best = 0 if any(v >= MIN_FAN for v in fans.values()) else max(1, best)
            _fan_marks(x, P, fans)
        x[P["plan_best"]] = _scaled(best)
        if getattr(request, "kind", "") == "claim" and request.tile is not None:
            _call_planes(x, P, state, request, counts, melds)


def _discard_planes(x: np.ndarray, P: dict[str, int], fam0: int, state: TableState,
                    counts: list[int], melds: list[Meld],
                    table: dict[int, tuple[int, frozenset[int] | None]]) -> None:
    unseen = state.unseen_counts()
    bests: dict[int, int] = {}
    for k in range(34):
        if not counts[k]:
            continue
        counts[k] -= 1
        distances = family_distances(counts, melds)
        for f, d in enumerate(distances):
            x[fam0 + f, k] = _scaled(d)
        best = min(distances)
        entry = table.get(k)
        if entry is not None and entry[0] == 0 and entry[1]:
            fans = wait_fans(state, counts, entry[1])
            good = [w for w, v in fans.items() if v >= MIN_FAN]
            best = 0 if good else max(1, best)
            x[P["discard_win8"], k] = min(1.0, sum(unseen[w] for w in good) / 8.0)
            for w, v in fans.items():
                x[P["wait_fan"], w] = max(x[P["wait_fan"], w], min(v, FAN_SCALE) / FAN_SCALE)
                if v >= MIN_FAN:
                    x[P["wait_win"], w] = 1.0
        counts[k] += 1
        bests[k] = best
        x[P["plan_best"], k] = _scaled(best)
    if bests:
        low = min(bests.values())
        for k, d in bests.items():
            if d == low:
                x[P["plan_best_discard"], k] = 1.0


def _ready_fans(state: TableState, counts: list[int]) -> dict[int, int] | None:
    """Wait -> fan of a ready waiting hand; None when the hand is not ready."""
    if shanten(counts) != 0:
        return None
    return wait_fans(state, counts, useful_tiles(counts, 0))


def _fan_marks(x: np.ndarray, P: dict[str, int], fans: dict[int, int]) -> None:
    for w, v in fans.items():
        x[P["wait_fan"], w] = min(v, FAN_SCALE) / FAN_SCALE
        if v >= MIN_FAN:
            x[P["wait_win"], w] = 1.0


def _call_planes(x: np.ndarray, P: dict[str, int], state: TableState, request: Any,
                 counts: list[int], melds: list[Meld]) -> None:
    """For each call the hand could make on the offered tile, the planner's distance after it
    (a pon or chi then discards its best tile; a kong draws a replacement)."""
    k = T.kind(request.tile)
    if k >= 34:
        return
    options: list[tuple[str, tuple[int, ...]]] = []
    if counts[k] >= 2:
        options.append(("pon", (k, k)))
    if counts[k] >= 3:
        options.append(("kan", (k, k, k)))
    source = getattr(request, "from_seat", None)
    if k < 27 and source is not None and (source - state.seat) % 4 == 3:
        pos = k % 9
        for name, others in (("chi_low", (1, 2)), ("chi_mid", (-1, 1)), ("chi_high", (-2, -1))):
            if all(0 <= pos + d < 9 and counts[k + d] for d in others):
                options.append((name, tuple(k + d for d in others)))
    for name, used in options:
        rest = list(counts)
        for u in used:
            rest[u] -= 1
        kind = "open_kan" if name == "kan" else ("pon" if name == "pon" else "chi")
        meld = Meld(kind, (*used, k), k)  # plain tiles are their kinds
        after = [*melds, meld]
        if name == "kan":
            d = min(family_distances(rest, after))
        else:
            d = min(best_distances_after_discards(rest, after).values(), default=99)
        x[P[f"call_{name}"]] = _scaled(d)
