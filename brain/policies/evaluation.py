"""Hand-shape evaluation shared by the rule-based policy: shanten per discard, the joint count
of unseen useful tiles, dead tiles and honour weights (Seofon_v2, seed 000, figs. 3-4 and table
3-1), generalised from Taiwan 16-tile to every variant.
"""

from __future__ import annotations

from dataclasses import dataclass

from brain.shanten import discard_table
from brain.state import TableState
from protocols import tiles as T


@dataclass(frozen=True, slots=True)
class DiscardInfo:
    """What discarding one kind leaves: its shanten, the unseen copies of the tiles that would
    lower it (counted jointly: the union of all waits, the fix Seofon_v2 reports), and the
    useful kinds themselves."""

    kind: int
    shanten: int
    useful: int
    useful_kinds: frozenset[int]


def analyse_discards(state: TableState, slack: int = 0, kinds: set[int] | None = None,
                     counts: list[int] | None = None) -> dict[int, DiscardInfo]:
    """Every distinct kind in hand (or in ``kinds``: the legal discards) -> its
    :class:`DiscardInfo`. Useful tiles are counted only for discards within ``slack`` of the
    best shanten (the others are never chosen on shape). ``counts``: another hand than the
    one held (the hand a call would leave)."""
    unseen = state.unseen_counts()
    out: dict[int, DiscardInfo] = {}
    regular = state.spec.regular_shapes_only  # Taiwan: no seven pairs, no thirteen orphans
    hand = state.counts() if counts is None else counts
    for k, (sh, useful) in discard_table(hand, kinds, slack, regular).items():
        if useful is not None:
            out[k] = DiscardInfo(k, sh, sum(map(unseen.__getitem__, useful)), useful)
        else:
            out[k] = _not_counted(k, sh)
    return out


# (kind, shanten) -> the DiscardInfo of a discard whose useful tiles are not counted: values
# are frozen, so every analysis can share them (most discards of a turn are of this sort).
_NOT_COUNTED: dict[tuple[int, int], DiscardInfo] = {}


def _not_counted(kind: int, shanten: int) -> DiscardInfo:
    info = _NOT_COUNTED.get((kind, shanten))
    if info is None:
        info = _NOT_COUNTED[(kind, shanten)] = DiscardInfo(kind, shanten, 0, frozenset())
    return info


def value_honours(state: TableState) -> set[int]:
    """Honour kinds worth a pung: dragons, own seat wind, and (riichi, MCR) the round wind."""
    kinds = set(T.DRAGONS) | {state.seat_wind()}
    if state.spec.value_honours:
        kinds.add(state.round_wind_kind)
    return kinds


def is_dead(state: TableState, k: int, counts: list[int], unseen: list[int]) -> bool:
    """A lone tile that can no longer join any group: no copy left to pair it, and (a number)
    no unseen or held neighbour to run with."""
    if counts[k] != 1 or unseen[k] > 0:
        return False
    if k >= 27:
        return True
    lo, hi = k - k % 9, k - k % 9 + 8
    for d in (-2, -1, 1, 2):
        n = k + d
        if lo <= n <= hi and (unseen[n] or counts[n]):
            return False
    return True


def honour_weight(state: TableState, k: int, counts: list[int], unseen: list[int]) -> float:
    """Extra eagerness to discard an honour (table 3-1, in useful-tile units): a lone honour
    with no value goes first; a valued one that can still become a pung is kept longer; one
    that can no longer form a set loses its value and goes like any other."""
    if k < 27:
        return 0.0
    if counts[k] >= 2:
        return -1.0
    can_form = unseen[k] >= 2
    if k in value_honours(state):
        return 1.0 if can_form else 3.0
    return 3.0 if can_form else 3.5


def terminal_weight(k: int, counts: list[int]) -> float:
    """Isolated terminals are easier to let go than isolated middle tiles."""
    if k >= 27 or counts[k] != 1:
        return 0.0
    r = k % 9
    if r in (0, 8):
        near = [k + 1, k + 2] if r == 0 else [k - 1, k - 2]
        return 1.0 if not any(counts[n] for n in near) else 0.0
    return 0.0
