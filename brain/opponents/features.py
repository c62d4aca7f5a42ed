"""Features of one opponent as the deciding seat sees it, vectorised over many (view, opponent)
pairs: the same code builds training matrices from dataset shards and the three rows of one
live decision.

Two blocks:

* :func:`public_features` (one vector per pair) - what seed 002's tenpai model reads (riichi,
  calls x discards, turn, hand-discards vs draw-discards, the latest discard, call kinds x
  discard kinds through per-kind counts of melds and discards, dora discarded, discarded
  pairs) plus what the value of a hand depends on (dealer, dora and honours in the melds, the
  shapes a one-suit / all-pungs / all-simples hand leaves) and what our variants add (Taiwan's
  flowers; MCR's chow positions per suit, the shapes its 8-fan minimum forces);
* :func:`kind_features` (one vector per pair and tile kind) - what makes a kind a likely wait:
  genbutsu and kinds passed since riichi, suji, visible copies and kabe (no-chance), the
  opponent's discards next to it early and late, its relation to the riichi tile and to the
  latest hand-discard, dora-ness, its position and suit against the opponent's melds and
  discards. Suits are interchangeable here (no kind one-hot), so 1m and 1s share what is
  learned.

Every name in :data:`PUBLIC_NAMES` / :data:`KIND_NAMES` is one column, so tests and the model
card can point at a feature by name.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from brain.opponents.view import (
    RIVER_RIICHI,
    RIVER_TSUMOGIRI,
    SEAT_RIICHI,
    SEAT_RIICHI_PENDING,
    TABLE_DEALER,
    TABLE_ROUND_WIND,
    TABLE_TURN,
    TABLE_WALL_REMAINING,
    OpponentInputs,
)

KINDS = 34
_KIND_OF = np.array([*range(34), 4, 13, 22, *range(37, 45)], np.int16)
SUIT = np.array([k // 9 if k < 27 else 3 for k in range(KINDS)], np.int16)
POS = np.array([k % 9 if k < 27 else -1 for k in range(KINDS)], np.int16)
DRAGONS = (31, 32, 33)
CHOW, PON, OPEN_KAN, ADDED_KAN, CLOSED_KAN = 0, 1, 2, 3, 4
EARLY = 6  # the first discards, read as the hand's early shape
LATE = 6  # the last discards


def _neighbours(offset: int) -> np.ndarray:
    """Kind k + offset in the same suit, else 34 (a padding column)."""
    out = np.full(KINDS, KINDS, np.int16)
    for k in range(27):
        p = k % 9 + offset
        if 0 <= p < 9:
            out[k] = k - k % 9 + p
    return out


NEIGHBOUR = {d: _neighbours(d) for d in (-3, -2, -1, 1, 2, 3)}


def dora_of(indicator_kind: np.ndarray) -> np.ndarray:
    """The dora kind each indicator kind points at (-1 stays -1)."""
    k = indicator_kind
    nxt = np.where(k < 27, k - k % 9 + (k % 9 + 1) % 9,
                   np.where(k < 31, 27 + (k - 26) % 4, 31 + (k - 30) % 3))
    return np.where(k >= 0, nxt, -1)


def tile_kind(tiles: np.ndarray) -> np.ndarray:
    """Kinds of tile ints (red fives as fives), -1 kept for padding."""
    t = np.asarray(tiles)
    return np.where(t >= 0, _KIND_OF[np.clip(t, 0, None)], -1).astype(np.int16)


def opponent_pairs(inputs: OpponentInputs) -> tuple[np.ndarray, np.ndarray]:
    """Every row with each of its three opponents: (row index, opponent seat), 3B pairs in
    seat order after the viewer (next seat first)."""
    b = np.repeat(np.arange(len(inputs)), 3)
    o = (inputs.seat.astype(np.int64)[b] + np.tile([1, 2, 3], len(inputs))) % 4
    return b, o


def _counts(kinds: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """(N, W) kinds with -1 padding -> (N, 34) counts (optionally weighted by a 0/1 mask)."""
    n = kinds.shape[0]
    mask = (kinds >= 0) & (kinds < KINDS)
    if weight is not None:
        mask &= weight.astype(bool)
    rows = np.broadcast_to(np.arange(n)[:, None], kinds.shape)[mask]
    flat = rows * KINDS + kinds[mask]
    return np.bincount(flat, minlength=n * KINDS).reshape(n, KINDS).astype(np.float32)


def _bucket(values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((values.shape[0], size), np.float32)
    out[np.arange(values.shape[0]), np.clip(values, 0, size - 1)] = 1
    return out


def _class4(kinds: np.ndarray) -> np.ndarray:
    """:func:`_cls` one-hot; all zeros for -1."""
    cls = _cls(kinds)
    out = np.zeros((kinds.shape[0], 4), np.float32)
    ok = cls >= 0
    out[np.nonzero(ok)[0], cls[ok]] = 1
    return out


def _cls(kinds: np.ndarray) -> np.ndarray:
    """Class index of each kind (0 honour, 1 terminal, 2 two/eight, 3 middle), -1 padding."""
    pos = np.where(kinds >= 0, POS[np.clip(kinds, 0, None)], -2)
    return np.where(kinds < 0, -1, np.where(kinds >= 27, 0, np.where(
        (pos == 0) | (pos == 8), 1, np.where((pos == 1) | (pos == 7), 2, 3))))


class _Pairs:
    """The arrays of each (view, opponent) pair that both feature blocks read."""

    def __init__(self, inputs: OpponentInputs, b: np.ndarray, o: np.ndarray) -> None:
        self.n = n = b.shape[0]
        self.rows = np.arange(n)
        self.river = tile_kind(inputs.river[b, o])  # (N, 40) kinds
        raw = inputs.river[b, o]
        self.red = (raw >= 34) & (raw <= 36)
        flags = inputs.river_flags[b, o]
        self.length = inputs.river_len[b, o].astype(np.int64)
        self.valid = self.river >= 0
        self.tsumogiri = self.valid & ((flags & RIVER_TSUMOGIRI) > 0)
        self.tedashi = self.valid & ~self.tsumogiri
        riichi_mark = self.valid & ((flags & RIVER_RIICHI) > 0)
        self.riichi_index = np.where(riichi_mark.any(1), riichi_mark.argmax(1), -1)
        self.riichi_kind = np.where(self.riichi_index >= 0,
                                    self.river[self.rows, np.clip(self.riichi_index, 0, None)],
                                    -1)
        sf = inputs.seat_flags[b, o]
        self.riichi = ((sf & (SEAT_RIICHI | SEAT_RIICHI_PENDING)) > 0).astype(np.float32)
        position = np.arange(self.river.shape[1])[None, :]
        self.early = self.valid & (position < EARLY)
        self.late = self.valid & (position >= (self.length[:, None] - LATE))
        ted_pos = np.where(self.tedashi, position, -1)
        self.last_tedashi_index = ted_pos.max(1)
        self.last_tedashi = np.where(
            self.last_tedashi_index >= 0,
            self.river[self.rows, np.clip(self.last_tedashi_index, 0, None)], -1)
        last = np.clip(self.length - 1, 0, None)
        self.latest = np.where(self.length > 0, self.river[self.rows, last], -1)
        self.latest_tsumogiri = np.where(self.length > 0, self.tsumogiri[self.rows, last], False)
        self.latest_red = np.where(self.length > 0, self.red[self.rows, last], False)
        # the hand-wide number of the opponent's last discard (255: none yet)
        turns = inputs.river_turn[b, o].astype(np.int64)
        self.last_turn = np.where(self.length > 0, turns[self.rows, last], -1)
        melds = inputs.melds[b, o]  # (N, 5, 7)
        self.meld_kind = melds[:, :, 0].astype(np.int64)
        self.meld_tiles = tile_kind(melds[:, :, 1:5])  # (N, 5, 4)
        self.meld_red = ((melds[:, :, 1:5] >= 34) & (melds[:, :, 1:5] <= 36)).sum((1, 2))
        self.is_open = np.isin(self.meld_kind, (CHOW, PON, OPEN_KAN, ADDED_KAN))
        self.open_melds = self.is_open.sum(1)
        self.closed_kans = (self.meld_kind == CLOSED_KAN).sum(1)
        self.discards = _counts(self.river)  # (N, 34)
        self.meld_counts = _counts(self.meld_tiles.reshape(n, -1))
        self.visible = inputs.visible[b].astype(np.float32)
        ind = tile_kind(inputs.dora[b])
        self.dora = _counts(dora_of(ind))  # (N, 34) dora count per kind
        table = inputs.table[b].astype(np.int64)
        self.dealer = (table[:, TABLE_DEALER] == o).astype(np.float32)
        self.seat_wind = 27 + (o - table[:, TABLE_DEALER]) % 4
        self.round_wind = 27 + table[:, TABLE_ROUND_WIND] % 4
        self.turn = table[:, TABLE_TURN]
        self.wall = table[:, TABLE_WALL_REMAINING]
        self.passed = inputs.passed[b, o].astype(np.int64)
        self.flowers = (inputs.flowers[b, o] >= 0).sum(1)
        seats = np.arange(4)[None, :]
        others = seats != o[:, None]
        allf = inputs.seat_flags[b]
        self.others_riichi = (((allf & (SEAT_RIICHI | SEAT_RIICHI_PENDING)) > 0)
                              & others).sum(1)
        # kinds discarded by anyone after the opponent's last discard
        all_turns = inputs.river_turn[b].astype(np.int64)  # (N, 4, 40)
        after = ((all_turns != 255) & (all_turns > self.last_turn[:, None, None])
                 & (self.last_turn[:, None, None] >= 0) & (seats[:, :, None] != o[:, None, None]))
        self.after_last = _counts(tile_kind(inputs.river[b]).reshape(n, -1),
                                  after.reshape(n, -1)) > 0

    def yakuhai(self) -> np.ndarray:
        """(N, 34): 1 on the honours a pung of which scores for this opponent."""
        out = np.zeros((self.n, KINDS), np.float32)
        out[:, list(DRAGONS)] = 1
        out[self.rows, self.seat_wind] = 1
        out[self.rows, self.round_wind] = 1
        return out


# --------------------------------------------------------------------------- public block

PUBLIC_NAMES: tuple[str, ...] = (
    "riichi", "riichi_age", *(f"open_melds_{i}" for i in range(5)), "closed_kans",
    "chows", "pungs", "discards", *(f"discards_{i}" for i in range(19)), "tedashi",
    "tedashi_last3", "tedashi_last6", "since_tedashi", "tsumogiri_streak", "tsumogiri_share",
    "turn", *(f"turn_{i}" for i in range(19)), "wall", "dealer", "others_riichi",
    *(f"latest_{k}" for k in range(KINDS)), "latest_tsumogiri", "latest_red",
    *(f"latest_class_{c}" for c in range(4)), *(f"last_tedashi_class_{c}" for c in range(4)),
    "latest_dora", "last_tedashi_dora",
    *(f"discard_suit_{s}" for s in range(4)), *(f"meld_suit_{s}" for s in range(4)),
    "meld_suits", *(f"early_class_{c}" for c in range(4)),
    *(f"late_class_{c}" for c in range(4)), *(f"discarded_{k}" for k in range(KINDS)),
    *(f"melded_{k}" for k in range(KINDS)),
    *(f"chow_{s}_{p}" for s in range(3) for p in range(7)),
    "discarded_pairs", "dora_discarded", "red_discarded", "dora_melded", "red_melded",
    "dora_indicators", "yakuhai_pungs", "honour_melds", "simple_melds_only",
    "one_suit_melds", "pungs_only", "flowers",
)


def public_features(inputs: OpponentInputs, b: np.ndarray, o: np.ndarray,
                    pairs: _Pairs | None = None) -> np.ndarray:
    """(N, len(PUBLIC_NAMES)) float32 for the pairs (row b, opponent seat o)."""
    p = pairs or _Pairs(inputs, b, o)
    n = p.n
    position = np.arange(p.river.shape[1])[None, :]
    length = p.length
    out = np.empty((n, len(PUBLIC_NAMES)), np.float32)
    at = 0

    def add(x: np.ndarray | float) -> None:
        nonlocal at
        a = np.asarray(x)
        width = a.shape[1] if a.ndim == 2 else 1
        out[:, at:at + width] = a.reshape(n, width) if a.ndim else a
        at += width

    add(p.riichi)
    add(np.where(p.riichi_index >= 0, (length - p.riichi_index - 1) / 10.0, 0))
    add(_bucket(p.open_melds, 5))
    add(p.closed_kans)
    add((p.meld_kind == CHOW).sum(1))
    add(np.isin(p.meld_kind, (PON, OPEN_KAN, ADDED_KAN, CLOSED_KAN)).sum(1))
    add(length / 20.0)
    add(_bucket(length, 19))
    tedashi = p.tedashi.sum(1)
    add(tedashi / 20.0)
    add((p.tedashi & (position >= length[:, None] - 3)).sum(1) / 3.0)
    add((p.tedashi & (position >= length[:, None] - 6)).sum(1) / 6.0)
    add(np.where(p.last_tedashi_index >= 0, length - 1 - p.last_tedashi_index,
                 length) / 18.0)
    streak = np.where(p.last_tedashi_index >= 0, length - 1 - p.last_tedashi_index, length)
    add(np.minimum(streak, 10) / 10.0)
    add(p.tsumogiri.sum(1) / np.maximum(length, 1))
    add(p.turn / 80.0)
    add(_bucket(p.turn // 4, 19))
    add(p.wall / 84.0)
    add(p.dealer)
    add(p.others_riichi / 3.0)
    latest = np.zeros((n, KINDS), np.float32)
    ok = p.latest >= 0
    latest[np.nonzero(ok)[0], p.latest[ok]] = 1
    add(latest)
    add(p.latest_tsumogiri)
    add(p.latest_red)
    add(_class4(p.latest))
    add(_class4(p.last_tedashi))
    add(np.where(p.latest >= 0, p.dora[p.rows, np.clip(p.latest, 0, None)] > 0, 0))
    add(np.where(p.last_tedashi >= 0, p.dora[p.rows, np.clip(p.last_tedashi, 0, None)] > 0, 0))
    disc_suit = np.stack([p.discards[:, s == SUIT].sum(1) for s in range(4)], 1)
    add(disc_suit / np.maximum(length, 1)[:, None])
    meld_suit = np.stack([p.meld_counts[:, s == SUIT].sum(1) for s in range(4)], 1)
    add(meld_suit / 12.0)
    add((meld_suit > 0).sum(1))
    add(np.stack([(p.early & (_cls(p.river) == c)).sum(1) for c in range(4)], 1) / EARLY)
    add(np.stack([(p.late & (_cls(p.river) == c)).sum(1) for c in range(4)], 1) / LATE)
    add(p.discards / 2.0)
    add(p.meld_counts / 3.0)
    add(_chow_starts(p))
    add((p.discards >= 2).sum(1) / 4.0)
    add((p.discards * (p.dora > 0)).sum(1))
    add(p.red.sum(1))
    add((p.meld_counts * p.dora).sum(1) / 3.0)
    add(p.meld_red)
    add(p.dora.sum(1))
    pung = np.isin(p.meld_kind, (PON, OPEN_KAN, ADDED_KAN, CLOSED_KAN))
    first = p.meld_tiles[:, :, 0]
    yakuhai = p.yakuhai()
    add((pung & (first >= 27) & (yakuhai[p.rows[:, None], np.clip(first, 0, None)] > 0)).sum(1))
    add(meld_suit[:, 3] > 0)
    simple = (p.meld_counts[:, [0, 8, 9, 17, 18, 26, *range(27, 34)]].sum(1) == 0)
    add(simple & (p.open_melds + p.closed_kans > 0))
    add(((meld_suit[:, :3] > 0).sum(1) == 1) & (p.open_melds + p.closed_kans > 0))
    add(pung.sum(1) == (p.meld_kind >= 0).sum(1))
    add(p.flowers / 8.0)
    assert at == len(PUBLIC_NAMES)
    return out


def _chow_starts(p: _Pairs) -> np.ndarray:
    """(N, 21): chows by suit and lowest number (MCR's 8 fan often come from their pattern)."""
    out = np.zeros((p.n, 21), np.float32)
    low = p.meld_tiles.min(2, initial=99, where=p.meld_tiles >= 0)
    is_chow = (p.meld_kind == CHOW) & (low < 27)
    r, m = np.nonzero(is_chow)
    k = low[r, m]
    np.add.at(out, (r, (k // 9) * 7 + k % 9), 1)
    return out


# --------------------------------------------------------------------------- per-kind block

KIND_NAMES: tuple[str, ...] = (
    "genbutsu", "passed_since_riichi", "passed_since_last_discard",
    *(f"visible_{c}" for c in range(5)), "suji_full", "suji_half", "no_chance",
    *(f"neighbour_visible_{d}" for d in (-2, -1, 1, 2)),
    *(f"neighbour_discarded_{d}" for d in (-2, -1, 1, 2)), "neighbour_early",
    "neighbour_late", *(f"riichi_tile_{d}" for d in (-3, -2, -1, 1, 2, 3)),
    *(f"last_tedashi_{d}" for d in (-3, -2, -1, 0, 1, 2, 3)), "dora", "next_to_dora",
    *(f"position_{i}" for i in range(9)), "honour", "honour_yakuhai", "melded",
    "suit_melds", "suit_discards", "suit_late_discards",
)


def kind_features(inputs: OpponentInputs, b: np.ndarray, o: np.ndarray,
                  pairs: _Pairs | None = None) -> np.ndarray:
    """(N, 34, len(KIND_NAMES)) float32: each kind's features against each pair's opponent."""
    p = pairs or _Pairs(inputs, b, o)
    n = p.n
    pad = np.zeros((n, 1), np.float32)
    out = np.empty((n, KINDS, len(KIND_NAMES)), np.float32)
    at = 0

    def add(x: np.ndarray | float) -> None:
        nonlocal at
        out[:, :, at] = x  # (N, 34) or (34,) broadcast over the pairs
        at += 1

    genbutsu = p.discards > 0
    passed = ((p.passed[:, None] >> np.arange(KINDS)[None, :]) & 1) > 0
    add(genbutsu)
    add(passed)
    add(p.after_last)
    vis = np.clip(p.visible, 0, 4).astype(np.int64)
    for c in range(5):
        add(vis == c)
    safe = np.concatenate([genbutsu | passed, pad > 0], 1)
    lo, hi = NEIGHBOUR[-3], NEIGHBOUR[3]
    has_lo, has_hi = lo < KINDS, hi < KINDS
    suji_n = safe[:, lo] * has_lo + safe[:, hi] * has_hi
    partners = (has_lo.astype(int) + has_hi.astype(int))[None, :]
    add((partners > 0) & (suji_n == partners))
    add((suji_n > 0) & (suji_n < partners))
    visp = np.concatenate([p.visible, np.full((n, 1), 4, np.float32)], 1)
    blocked_lo = (visp[:, NEIGHBOUR[-1]] >= 4) | (visp[:, NEIGHBOUR[-2]] >= 4)
    blocked_hi = (visp[:, NEIGHBOUR[1]] >= 4) | (visp[:, NEIGHBOUR[2]] >= 4)
    add(blocked_lo & blocked_hi & (SUIT < 3))
    for d in (-2, -1, 1, 2):
        add(visp[:, NEIGHBOUR[d]] / 4.0)
    disc = np.concatenate([genbutsu, pad > 0], 1)
    for d in (-2, -1, 1, 2):
        add(disc[:, NEIGHBOUR[d]])
    early = np.concatenate([_counts(p.river, p.early) > 0, pad > 0], 1)
    late = np.concatenate([_counts(p.river, p.late & p.tedashi) > 0, pad > 0], 1)
    add(sum(early[:, NEIGHBOUR[d]].astype(np.float32) for d in (-2, -1, 1, 2)) / 4.0)
    add(sum(late[:, NEIGHBOUR[d]].astype(np.float32) for d in (-2, -1, 1, 2)) / 4.0)
    for d in (-3, -2, -1, 1, 2, 3):
        add(_is_offset(p.riichi_kind, d))
    for d in (-3, -2, -1, 0, 1, 2, 3):
        add(_is_offset(p.last_tedashi, d))
    add(p.dora / 2.0)
    dorap = np.concatenate([p.dora > 0, pad > 0], 1)
    add(dorap[:, NEIGHBOUR[-1]] | dorap[:, NEIGHBOUR[1]] | dorap[:, NEIGHBOUR[-2]]
        | dorap[:, NEIGHBOUR[2]])
    for i in range(9):
        add(i == POS)
    add(SUIT == 3)
    add(p.yakuhai())
    add(p.meld_counts / 4.0)
    meld_suit = np.stack([p.meld_counts[:, s == SUIT].sum(1) for s in range(4)], 1)
    disc_suit = np.stack([p.discards[:, s == SUIT].sum(1) for s in range(4)], 1)
    late_suit = _counts(p.river, p.late)
    late_suit = np.stack([late_suit[:, s == SUIT].sum(1) for s in range(4)], 1)
    add(meld_suit[:, SUIT] / 12.0)
    add(disc_suit[:, SUIT] / np.maximum(p.length, 1)[:, None])
    add(late_suit[:, SUIT] / LATE)
    assert at == len(KIND_NAMES)
    return out


def _is_offset(base: np.ndarray, d: int) -> np.ndarray:
    """(N, 34): kind k == base + d in the same suit (d = 0: the kind itself); 0 for -1."""
    ks = np.arange(KINDS)[None, :]
    ok = base[:, None] >= 0
    if d == 0:
        return cast(np.ndarray, ok & (ks == base[:, None]))
    table = NEIGHBOUR[-d]  # k - d in the same suit, else 34
    return cast(np.ndarray, ok & (table[None, :] == base[:, None]))


class Features:
    """Both blocks for the same pairs, computing the shared arrays once."""

    def __init__(self, inputs: OpponentInputs, b: np.ndarray | None = None,
                 o: np.ndarray | None = None) -> None:
        if b is None or o is None:
            b, o = opponent_pairs(inputs)
        self.b, self.o = b, o
        self.pairs = _Pairs(inputs, b, o)
        self.inputs = inputs

    def public(self) -> np.ndarray:
        return public_features(self.inputs, self.b, self.o, self.pairs)

    def kinds(self) -> np.ndarray:
        return kind_features(self.inputs, self.b, self.o, self.pairs)
