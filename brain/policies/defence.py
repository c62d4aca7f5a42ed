"""How dangerous a discard is, and when to stop attacking.

riichi: against a declared riichi, genbutsu (its own river, or passed since the declaration) is
safe; suji of safe tiles, honours with few copies left and terminals are less dangerous than
middle tiles. Other variants have no declaration: a seat with three or more calls, or the last
stretch of the wall, is treated as a threat, and the Seofon_v2 follow-discard rule (跟打, seed
000 section 3.4) applies: a tile identical to one of the last three discards, most recent first.
"""

from __future__ import annotations

from brain.state import TableState
from protocols import tiles as T

SAFE = 0.0


def threats(state: TableState, calls: int = 3, riichi_calls: int | None = None) -> list[int]:
    """Opponent seats that are likely ready: a riichi, or ``calls`` or more open calls (in
    riichi only with ``riichi_calls`` set, and that many)."""
    out = []
    for s, view in enumerate(state.seats):
        if s == state.seat:
            continue
        open_calls = sum(1 for m in view.melds if m.is_open)
        if state.spec.has_riichi:
            many_calls = riichi_calls is not None and open_calls >= riichi_calls
        else:
            many_calls = open_calls >= calls
        if view.riichi or view.riichi_pending or many_calls:
            out.append(s)
    return out


def safe_kinds(state: TableState, seat: int) -> set[int]:
    """Kinds that cannot deal into ``seat`` (riichi furiten logic: its own discards, and what
    passed since its riichi)."""
    view = state.seats[seat]
    kinds = {T.kind(r.tile) for r in view.river}
    return kinds | view.passed_since_riichi


def danger(state: TableState, k: int, seat: int, safe: set[int] | None = None) -> float:
    """A rough deal-in weight of kind ``k`` against ``seat`` (0 = safe, ~10 = a live middle
    tile)."""
    safe = safe_kinds(state, seat) if safe is None else safe
    if k in safe:
        return SAFE
    unseen = state.unseen(k)
    if k >= 27:
        # only a pair/single wait can use it: nearly safe once at most one copy is out there
        return 1.0 if unseen <= 1 else 3.0 + unseen
    r = k % 9
    sides = []
    if r >= 3:
        sides.append(k - 3 in safe)
    if r <= 5:
        sides.append(k + 3 in safe)
    suji = all(sides)
    base = {0: 5.0, 8: 5.0, 1: 7.0, 7: 7.0}.get(r, 10.0)
    if suji:
        base *= 0.35
    if unseen == 0:
        base *= 0.5  # no copy left for a shanpon / tanki
    return base


def total_danger(state: TableState, k: int, against: list[int]) -> float:
    return sum(danger(state, k, s) for s in against)


def follow_discard(state: TableState, hand_kinds: set[int]) -> int | None:
    """Seofon_v2's 跟打: a kind we hold that equals one of the last three discards at the table
    (most recent first). Only a turn-order guess: the last discards are those of the three seats
    before us, in reverse."""
    recent = []
    for back in (1, 2, 3):
        seat = (state.seat - back) % 4
        river = state.seats[seat].river
        if river:
            recent.append(T.kind(river[-1].tile))
    for k in recent:
        if k in hand_kinds:
            return k
    return None
