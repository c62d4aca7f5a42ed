"""One seat's view as a row of fixed-shape arrays, and back.

A decision's ``v_`` fields hold everything a :class:`~brain.state.TableState` holds for the
round in progress, so :func:`restore` rebuilds the state the policy saw (a test checks that the
rules give the same legal actions on it, and that encoding the restored state gives the same
row). Feature encodings (Suphx/Mortal-style planes, seed 002's opponent features) are then a
function of the row alone, with no event replay.

Rows are written straight into preallocated arrays (:class:`Columns`): a decision costs a few
slice assignments rather than nested Python lists converted later.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from brain.state import Meld, RiverTile, SeatView, TableState
from replay.dataset import schema as S


class Columns:
    """Growable arrays of some schema fields; unset entries hold each field's fill value."""

    def __init__(self, fields: Iterable[S.Field], capacity: int = 256) -> None:
        self.fields = list(fields)
        self.rows = 0
        self.arrays = {f.name: f.empty(capacity) for f in self.fields}

    def add_row(self) -> int:
        """A fresh row's index (grows the arrays when full)."""
        capacity = next(iter(self.arrays.values())).shape[0]
        if self.rows == capacity:
            for f in self.fields:
                grown = f.empty(2 * capacity)
                grown[:capacity] = self.arrays[f.name]
                self.arrays[f.name] = grown
        self.rows += 1
        return self.rows - 1

    def finished(self) -> dict[str, np.ndarray]:
        return {name: array[:self.rows].copy() for name, array in self.arrays.items()}


def check_width(n: int, width: int, what: str) -> None:
    if n > width:
        raise S.DatasetError(f"{what}: {n} entries, the schema holds {width}")


def _meld_row(m: Meld) -> list[int]:
    check_width(len(m.tiles), 4, "meld tiles")
    tiles = list(m.tiles) + [S.PAD] * (4 - len(m.tiles))
    return [S.MELD_KINDS.index(m.kind), *tiles,
            S.PAD if m.called is None else m.called,
            S.PAD if m.from_seat is None else m.from_seat]


def _river_flags(r: RiverTile) -> int:
    flags = 0
    if r.tsumogiri is None:
        flags |= S.RIVER_TSUMOGIRI_UNKNOWN
    elif r.tsumogiri:
        flags |= S.RIVER_TSUMOGIRI
    if r.riichi:
        flags |= S.RIVER_RIICHI
    if r.claimed:
        flags |= S.RIVER_CLAIMED
    return flags


def _seat_flags(s: SeatView) -> int:
    return ((S.SEAT_RIICHI if s.riichi else 0) | (S.SEAT_RIICHI_PENDING if s.riichi_pending else 0)
            | (S.SEAT_DOUBLE_RIICHI if s.double_riichi else 0)
            | (S.SEAT_IPPATSU if s.ippatsu else 0))


def kinds_mask(kinds: Iterable[int]) -> int:
    mask = 0
    for k in kinds:
        mask |= 1 << k
    return mask


def _or_pad(value: int | None) -> int:
    return S.PAD if value is None else value


def write_view(state: TableState, a: dict[str, np.ndarray], i: int) -> None:
    """Write the ``v_`` fields of ``state`` into row ``i`` of the arrays ``a``."""
    hand = state.hand
    check_width(len(hand), S.HAND_WIDTH, "hand")
    a["v_hand"][i, :len(hand)] = hand
    a["v_last_draw"][i] = _or_pad(state.last_draw)
    melds, rivers, flags, turns = a["v_melds"], a["v_river"], a["v_river_flags"], a["v_river_turn"]
    for s, seat in enumerate(state.seats):
        check_width(len(seat.melds), S.MAX_MELDS, "melds")
        for j, m in enumerate(seat.melds):
            melds[i, s, j] = _meld_row(m)
        river = seat.river
        n = len(river)
        if n:
            check_width(n, S.MAX_RIVER, "river")
            rivers[i, s, :n] = [r.tile for r in river]
            flags[i, s, :n] = [_river_flags(r) for r in river]
            turns[i, s, :n] = [r.turn if 0 <= r.turn < 255 else 255 for r in river]
        if seat.flowers:
            check_width(len(seat.flowers), S.MAX_FLOWERS, "flowers")
            a["v_flowers"][i, s, :len(seat.flowers)] = seat.flowers
    a["v_river_len"][i] = [len(s.river) for s in state.seats]
    a["v_seat_flags"][i] = [_seat_flags(s) for s in state.seats]
    a["v_seat_draws"][i] = [min(s.draws, 255) for s in state.seats]
    a["v_passed"][i] = [kinds_mask(s.passed_since_riichi) for s in state.seats]
    a["v_scores"][i] = state.scores[:4]
    dora = state.dora_indicators
    check_width(len(dora), S.MAX_DORA, "dora indicators")
    if dora:
        a["v_dora"][i, :len(dora)] = dora
    a["v_visible"][i] = state.visible
    last_discard = state.last_discard or (None, None)
    last_kan = state.last_added_kan or (None, None)
    a["v_table"][i] = [state.round_wind, state.round_number, state.dealer, state.honba,
                       state.sticks, state.wall_remaining, state.turn, state.kans,
                       _or_pad(state.current), _or_pad(last_discard[0]),
                       _or_pad(last_discard[1]), _or_pad(last_kan[0]), _or_pad(last_kan[1])]
    a["v_flags"][i] = ((S.FLAG_CALLS_MADE if state.calls_made else 0)
                       | (S.FLAG_TEMPORARY_FURITEN if state.temporary_furiten else 0)
                       | (S.FLAG_RIICHI_FURITEN if state.riichi_furiten else 0)
                       | (S.FLAG_MISSED_WIN if state._missed_win else 0)
                       | (S.FLAG_LAST_DRAW_REPLACEMENT if state.last_draw_replacement else 0)
                       | (S.FLAG_CALLED_THIS_TURN if state.called_this_turn is not None else 0)
                       | (S.FLAG_ROUND_ACTIVE if state.round_active else 0))
    if state.seat_walls is not None:
        a["v_seat_walls"][i] = state.seat_walls


VIEW_FIELDS: tuple[S.Field, ...] = tuple(f for f in S.DECISION_FIELDS if f.name.startswith("v_"))


def encode_view(state: TableState) -> dict[str, np.ndarray]:
    """The ``v_`` fields of one state, as arrays without the row axis."""
    cols = Columns(VIEW_FIELDS, capacity=1)
    write_view(state, cols.arrays, cols.add_row())
    return {name: array[0] for name, array in cols.finished().items()}


def _tiles(row: Sequence[int] | np.ndarray) -> list[int]:
    return [int(t) for t in row if t != S.PAD]


def _none(value: Any) -> int | None:
    value = int(value)
    return None if value == S.PAD else value


def restore(variant: str, seat: int, row: dict[str, np.ndarray]) -> TableState:
    """The TableState a decision's ``v_`` fields describe (one row: arrays without the
    leading batch axis)."""
    state = TableState(variant, seat)
    table = dict(zip(S.TABLE_COLUMNS, (int(x) for x in row["v_table"]), strict=True))
    state.round_wind, state.round_number = table["round_wind"], table["round_number"]
    state.dealer, state.honba, state.sticks = table["dealer"], table["honba"], table["sticks"]
    state.wall_remaining, state.turn, state.kans = (table["wall_remaining"], table["turn"],
                                                    table["kans"])
    state.current = _none(table["current"])
    if table["last_discard_seat"] != S.PAD:
        state.last_discard = (table["last_discard_seat"], table["last_discard_tile"])
    if table["last_added_kan_seat"] != S.PAD:
        state.last_added_kan = (table["last_added_kan_seat"], table["last_added_kan_tile"])
    state.scores = [int(x) for x in row["v_scores"]]
    state.dora_indicators = _tiles(row["v_dora"])
    state.hand = _tiles(row["v_hand"])
    state.last_draw = _none(row["v_last_draw"])
    state.visible = [int(x) for x in row["v_visible"]]
    walls = [int(x) for x in row["v_seat_walls"]]
    state.seat_walls = None if walls[0] == S.PAD else walls
    for s in range(4):
        view = state.seats[s]
        for m in row["v_melds"][s]:
            if m[0] == S.PAD:
                break
            view.melds.append(Meld(S.MELD_KINDS[int(m[0])], tuple(_tiles(m[1:5])), _none(m[5]),
                                   _none(m[6])))
        for i in range(int(row["v_river_len"][s])):
            f = int(row["v_river_flags"][s][i])
            tsumogiri = None if f & S.RIVER_TSUMOGIRI_UNKNOWN else bool(f & S.RIVER_TSUMOGIRI)
            turn = int(row["v_river_turn"][s][i])
            view.river.append(RiverTile(int(row["v_river"][s][i]), tsumogiri,
                                        bool(f & S.RIVER_RIICHI), bool(f & S.RIVER_CLAIMED),
                                        -1 if turn == 255 else turn))
        view.flowers = _tiles(row["v_flowers"][s])
        sf = int(row["v_seat_flags"][s])
        view.riichi = bool(sf & S.SEAT_RIICHI)
        view.riichi_pending = bool(sf & S.SEAT_RIICHI_PENDING)
        view.double_riichi = bool(sf & S.SEAT_DOUBLE_RIICHI)
        view.ippatsu = bool(sf & S.SEAT_IPPATSU)
        view.draws = int(row["v_seat_draws"][s])
        mask = int(row["v_passed"][s])
        view.passed_since_riichi = {k for k in range(S.KINDS) if mask >> k & 1}
    flags = int(row["v_flags"])
    state.calls_made = bool(flags & S.FLAG_CALLS_MADE)
    state.temporary_furiten = bool(flags & S.FLAG_TEMPORARY_FURITEN)
    state.riichi_furiten = bool(flags & S.FLAG_RIICHI_FURITEN)
    state._missed_win = bool(flags & S.FLAG_MISSED_WIN)
    state.last_draw_replacement = bool(flags & S.FLAG_LAST_DRAW_REPLACEMENT)
    state.round_active = bool(flags & S.FLAG_ROUND_ACTIVE)
    if flags & S.FLAG_CALLED_THIS_TURN:
        state.called_this_turn = state.seats[seat].melds[-1]
    return state
