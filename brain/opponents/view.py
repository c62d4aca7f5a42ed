"""The public table as fixed-shape arrays: what the opponent models read.

The layout is the one of the decision datasets' ``v_`` fields (replay/dataset/README.md), so
training reads dataset shards straight into an :class:`OpponentInputs` (``from_fields``) and
play builds the same arrays from a live :class:`~brain.state.TableState` (``from_state``);
one feature code path serves both, and a test checks that the two agree on every row of a
self-play run. Only the fields the models use are kept. The brain may not import ``replay``,
so the few bit values below repeat the schema's (a test compares them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from brain.state import TableState
from protocols import events as ev

MAX_RIVER = 40
MAX_MELDS = 5
MAX_DORA = 5
MAX_FLOWERS = 8
PAD = -1

# v_river_flags bits
RIVER_TSUMOGIRI, RIVER_TSUMOGIRI_UNKNOWN, RIVER_RIICHI, RIVER_CLAIMED = 1, 2, 4, 8
# v_seat_flags bits
SEAT_RIICHI, SEAT_RIICHI_PENDING, SEAT_DOUBLE_RIICHI, SEAT_IPPATSU = 1, 2, 4, 8
# v_table columns the models read
TABLE_ROUND_WIND, TABLE_DEALER, TABLE_WALL_REMAINING, TABLE_TURN = 0, 2, 5, 6
TABLE_WIDTH = 13

MELD_KINDS: tuple[str, ...] = ev.MELD_KINDS

#: dataset field name -> attribute of OpponentInputs
FIELDS: dict[str, str] = {
    "seat": "seat", "v_river": "river", "v_river_flags": "river_flags",
    "v_river_turn": "river_turn", "v_river_len": "river_len", "v_melds": "melds",
    "v_seat_flags": "seat_flags", "v_passed": "passed", "v_dora": "dora",
    "v_visible": "visible", "v_table": "table", "v_flowers": "flowers",
}


@dataclass(frozen=True)
class OpponentInputs:
    """B views, one per row; arrays as the dataset fields of the same names hold them."""

    seat: np.ndarray  # (B,) the seat whose view this is
    river: np.ndarray  # (B, 4, 40) tiles, -1 pad
    river_flags: np.ndarray  # (B, 4, 40) RIVER_* bits
    river_turn: np.ndarray  # (B, 4, 40) hand-wide discard number, 255 pad
    river_len: np.ndarray  # (B, 4)
    melds: np.ndarray  # (B, 4, 5, 7) kind, tiles x4, called, from
    seat_flags: np.ndarray  # (B, 4)
    passed: np.ndarray  # (B, 4) int64 bit k: kind k discarded since that seat's riichi
    dora: np.ndarray  # (B, 5) indicators, -1 pad
    visible: np.ndarray  # (B, 34) copies of each kind this seat has seen
    table: np.ndarray  # (B, 13) v_table columns
    flowers: np.ndarray  # (B, 4, 8) -1 pad

    def __len__(self) -> int:
        return int(self.seat.shape[0])

    @classmethod
    def from_fields(cls, fields: Mapping[str, np.ndarray]) -> OpponentInputs:
        """From dataset arrays with a leading row axis (shard or loader batch)."""
        return cls(**{attr: np.asarray(fields[name]) for name, attr in FIELDS.items()})

    @classmethod
    def from_state(cls, state: TableState) -> OpponentInputs:
        """One row from the live state (what :func:`replay.dataset.snapshot.write_view`
        writes for these fields)."""
        river = np.full((1, 4, MAX_RIVER), PAD, np.int8)
        flags = np.zeros((1, 4, MAX_RIVER), np.uint8)
        turns = np.full((1, 4, MAX_RIVER), 255, np.uint8)
        melds = np.full((1, 4, MAX_MELDS, 7), PAD, np.int8)
        flowers = np.full((1, 4, MAX_FLOWERS), PAD, np.int8)
        for s, view in enumerate(state.seats):
            n = min(len(view.river), MAX_RIVER)
            for i, r in enumerate(view.river[:n]):
                river[0, s, i] = r.tile
                f = RIVER_TSUMOGIRI_UNKNOWN if r.tsumogiri is None else (
                    RIVER_TSUMOGIRI if r.tsumogiri else 0)
                flags[0, s, i] = (f | (RIVER_RIICHI if r.riichi else 0)
                                  | (RIVER_CLAIMED if r.claimed else 0))
                turns[0, s, i] = r.turn if 0 <= r.turn < 255 else 255
            for j, m in enumerate(view.melds[:MAX_MELDS]):
                tiles = list(m.tiles[:4]) + [PAD] * (4 - len(m.tiles[:4]))
                melds[0, s, j] = [MELD_KINDS.index(m.kind), *tiles,
                                  PAD if m.called is None else m.called,
                                  PAD if m.from_seat is None else m.from_seat]
            fl = view.flowers[:MAX_FLOWERS]
            flowers[0, s, :len(fl)] = fl
        dora = np.full((1, MAX_DORA), PAD, np.int8)
        ind = state.dora_indicators[:MAX_DORA]
        dora[0, :len(ind)] = ind
        last_discard = state.last_discard or (PAD, PAD)
        last_kan = state.last_added_kan or (PAD, PAD)
        table = np.array([[state.round_wind, state.round_number, state.dealer, state.honba,
                           state.sticks, state.wall_remaining, state.turn, state.kans,
                           PAD if state.current is None else state.current, *last_discard,
                           *last_kan]], np.int16)
        return cls(
            seat=np.array([state.seat], np.int8), river=river, river_flags=flags,
            river_turn=turns,
            river_len=np.array([[min(len(v.river), MAX_RIVER) for v in state.seats]], np.uint8),
            melds=melds,
            seat_flags=np.array([[(SEAT_RIICHI if v.riichi else 0)
                                  | (SEAT_RIICHI_PENDING if v.riichi_pending else 0)
                                  | (SEAT_DOUBLE_RIICHI if v.double_riichi else 0)
                                  | (SEAT_IPPATSU if v.ippatsu else 0)
                                  for v in state.seats]], np.uint8),
            passed=np.array([[sum(1 << k for k in v.passed_since_riichi)
                              for v in state.seats]], np.int64),
            dora=dora, visible=np.array([state.visible], np.uint8), table=table,
            flowers=flowers)
