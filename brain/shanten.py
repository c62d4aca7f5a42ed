"""Shanten (向聽 / 進胡 / 距胡) numbers and useful tiles, table-based, for 4 or 5 groups.

``counts`` is a length-34 vector of concealed tiles per kind (called melds excluded). A hand of
3k+1 or 3k+2 tiles is measured against k groups + a pair, so 13/14-tile riichi/MCR hands, 16/17-tile
Taiwan hands and hands after calls all work. Shanten is the number of tiles still to exchange
before the hand is ready: 0 = ready (tenpai), -1 = complete. Seven pairs and thirteen orphans count
for 13/14-tile hands only. A kind held four times is never expected to be drawn again.

Each suit and the honours map, by table lookup, to a small vector id (see
:mod:`brain.shanten_tables`); combining the four ids is three lookups in a dense table, so a call
costs a few microseconds in pure Python and a numpy batch millions of hands per second.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import compress
from typing import NamedTuple, cast

import numpy as np

from brain import shanten_tables as _t

_TABLES = _t.load_tables()
_VECTORS: np.ndarray = _TABLES["vectors"]
_SUIT_IDS: np.ndarray = _TABLES["suit_ids"]  # uint16, read one part at a time here
_HONOUR_IDS: np.ndarray = _TABLES["honour_ids"]

# A hand's 34 counts as :func:`shanten` takes them: a list or tuple, or a numpy array (as the
# playouts and the features keep hands); _parts reads either as a list.
Counts = Sequence[int] | np.ndarray
# regular shanten per (vector id, k groups): distance to k groups + 1 pair, minus one
_REGULAR_NP: np.ndarray = (_VECTORS[:, 1::2].astype(np.int8) - 1)

# Python-side copies for the single-call path (list indexing beats numpy scalars there).
_COMBINE: list[list[int]] = _TABLES["combine"].tolist()
_REGULAR: list[list[int]] = _REGULAR_NP.tolist()
_DISTANCES: list[list[int]] = _VECTORS.tolist()

_M = _t.STAT_MASK
_POW5_SUIT = [5**j for j in range(9)]
_POW5_HONOUR = [5**j for j in range(7)]
_SUIT_ORPHANS = (0, 8)  # the positions of a part whose kinds are terminals or honours
_HONOUR_ORPHANS = tuple(range(7))

# bytes(counts of one part) -> (vector id, packed stats); filled on first sight of a pattern.
_SUIT_CACHE: dict[bytes, tuple[int, int]] = {}
_HONOUR_CACHE: dict[bytes, tuple[int, int]] = {}


class HandError(ValueError):
    """The count vector is not a hand this module can measure."""


def _part_entry(key: bytes, ids: np.ndarray, orphans: tuple[int, ...],
                cache: dict[bytes, tuple[int, int]]) -> tuple[int, int]:
    """Look a part's count pattern up in the tables (validating it) and cache the result."""
    weights = _POW5_SUIT if ids is _SUIT_IDS else _POW5_HONOUR
    if len(key) != len(weights) or max(key) > 4:
        raise HandError(f"bad part counts {list(key)}: need {len(weights)} counts of 0..4")
    code = sum(c * p for c, p in zip(key, weights, strict=True))
    entry = (int(ids[code]), _part_stats(key, orphans))
    cache[key] = entry
    return entry


def _part_stats(key: bytes, orphans: tuple[int, ...]) -> int:
    """One part's packed statistics (:func:`brain.shanten_tables.part_stats`' entry for it),
    counted from its digits: the single-call path needs no table of every pattern's."""
    stats = 0
    for j, d in enumerate(key):
        stats += ((d >= 2) << _t.PAIRS_SHIFT) + ((d >= 1) << _t.KINDS_SHIFT) + (
            d << _t.TILES_SHIFT)
        if j in orphans:
            stats += ((d >= 1) << _t.ORPHAN_KINDS_SHIFT) + ((d >= 2) << _t.ORPHAN_PAIRS_SHIFT)
    return stats


def _suit_entry(key: bytes) -> tuple[int, int]:
    return _part_entry(key, _SUIT_IDS, _SUIT_ORPHANS, _SUIT_CACHE)


def _honour_entry(key: bytes) -> tuple[int, int]:
    return _part_entry(key, _HONOUR_IDS, _HONOUR_ORPHANS, _HONOUR_CACHE)


def _parts(counts: Counts) -> tuple[tuple[int, int], ...]:
    """The four (vector id, stats) entries of a hand; validates on first sight of each pattern."""
    if type(counts) is not list:
        counts = list(counts)
    if len(counts) != 34:
        raise HandError(f"need 34 counts, got {len(counts)}")
    try:
        m = bytes(counts[0:9])
        p = bytes(counts[9:18])
        s = bytes(counts[18:27])
        z = bytes(counts[27:34])
    except (ValueError, TypeError) as exc:
        raise HandError(f"bad counts {counts}: {exc}") from None
    sc = _SUIT_CACHE
    return (
        sc.get(m) or _suit_entry(m),
        sc.get(p) or _suit_entry(p),
        sc.get(s) or _suit_entry(s),
        _HONOUR_CACHE.get(z) or _honour_entry(z),
    )


def _groups(tiles: int) -> int:
    k, r = divmod(tiles, 3)
    if r == 0 or k > _t.MAX_GROUPS:
        raise HandError(f"a hand of {tiles} tiles is not 3k+1 or 3k+2 with k <= 5")
    return k


def _special(stats: int) -> int:
    """min(seven pairs, thirteen orphans) shanten from summed stats of a 13/14-tile hand."""
    pairs = stats & _M
    kinds = (stats >> _t.KINDS_SHIFT) & _M
    chiitoi = 6 - pairs + (7 - kinds if kinds < 7 else 0)
    orphans = (stats >> _t.ORPHAN_KINDS_SHIFT) & _M
    kokushi = 13 - orphans - (1 if (stats >> _t.ORPHAN_PAIRS_SHIFT) & _M else 0)
    return chiitoi if chiitoi < kokushi else kokushi


def shanten(counts: Counts, regular_only: bool = False) -> int:
    """Shanten over every form: regular, and for 13/14 tiles seven pairs and thirteen orphans
    (``regular_only``: the regular form alone, as in a variant without the special hands)."""
    if regular_only:
        return regular_shanten(counts)
    (a, sa), (b, sb), (c, sc), (h, sh) = _parts(counts)
    stats = sa + sb + sc + sh
    tiles = stats >> _t.TILES_SHIFT
    cmb = _COMBINE
    regular = _REGULAR[cmb[cmb[cmb[a][b]][c]][h]][_groups(tiles)]
    if 13 <= tiles <= 14:
        special = _special(stats)
        if special < regular:
            return special
    return regular


def regular_shanten(counts: Counts) -> int:
    """Shanten towards k groups + a pair only."""
    (a, sa), (b, sb), (c, sc), (h, sh) = _parts(counts)
    cmb = _COMBINE
    return _REGULAR[cmb[cmb[cmb[a][b]][c]][h]][_groups((sa + sb + sc + sh) >> _t.TILES_SHIFT)]


def shape_distance(counts: Sequence[int], groups: int, pair: bool = True) -> int:
    """Tiles to *add* to ``counts`` (any number of tiles) before it holds ``groups`` chows or
    pungs and, with ``pair``, a pair, never a fifth copy: the tables' own distance, for shapes
    that are part of a larger hand (e.g. the set and pair beside MCR's knitted straight)."""
    if not 0 <= groups <= _t.MAX_GROUPS:
        raise HandError(f"groups must be 0..{_t.MAX_GROUPS}, got {groups}")
    (a, _), (b, _), (c, _), (h, _) = _parts(counts)
    cmb = _COMBINE
    return _DISTANCES[cmb[cmb[cmb[a][b]][c]][h]][groups * 2 + int(pair)]


def regular_and_seven_pairs_shanten(counts: Sequence[int]) -> tuple[int, int]:
    """(:func:`regular_shanten`, :func:`seven_pairs_shanten`) from one pass over the tables:
    planners that weigh both, for every discard, need not count the pairs again."""
    (a, sa), (b, sb), (c, sc), (h, sh) = _parts(counts)
    stats = sa + sb + sc + sh
    cmb = _COMBINE
    regular = _REGULAR[cmb[cmb[cmb[a][b]][c]][h]][_groups(stats >> _t.TILES_SHIFT)]
    pairs = stats & _M
    kinds = (stats >> _t.KINDS_SHIFT) & _M
    return regular, 6 - pairs + (7 - kinds if kinds < 7 else 0)


def seven_pairs_shanten(counts: Sequence[int]) -> int:
    pairs = sum(1 for c in counts if c >= 2)
    kinds = sum(1 for c in counts if c >= 1)
    return 6 - pairs + max(0, 7 - kinds)


def thirteen_orphans_shanten(counts: Sequence[int]) -> int:
    orphans = [counts[i] for i in (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)]
    return 13 - sum(1 for c in orphans if c) - (1 if any(c >= 2 for c in orphans) else 0)


_PART_SPANS = ((0, 9, _SUIT_CACHE, _suit_entry), (9, 9, _SUIT_CACHE, _suit_entry),
               (18, 9, _SUIT_CACHE, _suit_entry), (27, 7, _HONOUR_CACHE, _honour_entry))


# part pattern -> ((position, vector id, stats) for each tile that can still be drawn into it)
_NEIGHBOURS: dict[bytes, tuple[tuple[int, int, int], ...]] = {}


def _draw_neighbours(key: bytes, cache: dict[bytes, tuple[int, int]],
                     miss: object) -> tuple[tuple[int, int, int], ...]:
    """The table entries of a part after drawing each possible tile into it, cached per
    pattern (suits and honours have distinct key lengths, so one cache serves both)."""
    found = _NEIGHBOURS.get(key)
    if found is None:
        segment = bytearray(key)
        out = []
        for j in range(len(segment)):
            if segment[j] >= 4:
                continue
            segment[j] += 1
            drawn = bytes(segment)
            segment[j] -= 1
            vid, part_stats = cache.get(drawn) or miss(drawn)  # type: ignore[operator]
            out.append((j, vid, part_stats))
        found = _NEIGHBOURS[key] = tuple(out)
    return found


# (part start, part pattern, combined id of the other parts, groups, shanten) -> kinds in the
# part whose draw lowers the regular shanten. Hands repeat these a lot; the cap bounds memory.
_LOWERING: dict[tuple[int, bytes, int, int, int], tuple[int, ...]] = {}
_LOWERING_MAX = 400_000


def useful_tiles(counts: Sequence[int], known_shanten: int | None = None,
                 regular_only: bool = False) -> set[int]:
    """Kinds whose draw lowers the shanten number (``known_shanten``: the hand's shanten where
    the caller has it already; ``regular_only``: of the regular form alone).

    For a 3k+1 hand: the kinds (not already held four times) that, drawn, lower its shanten.
    For a 3k+2 hand (after a draw): the union of that set over every discard that keeps the
    shanten number as low as it is - the tiles a player would still welcome.
    """
    counts = list(counts)
    parts = _parts(counts)
    stats = parts[0][1] + parts[1][1] + parts[2][1] + parts[3][1]
    tiles = stats >> _t.TILES_SHIFT
    if tiles % 3 == 2:
        return _useful_after_draw(counts, regular_only)
    k = _groups(tiles)
    base = shanten(counts, regular_only) if known_shanten is None else known_shanten
    keys = [bytes(counts[lo:lo + length]) for lo, length, _, _ in _PART_SPANS]
    return _useful(counts, keys, [p[0] for p in parts], stats, k, base, regular_only)


def discard_table(counts: Sequence[int], kinds: set[int] | frozenset[int] | None = None,
                  slack: int = 0, regular_only: bool = False
                  ) -> dict[int, tuple[int, frozenset[int] | None]]:
    """Kind -> (:func:`shanten` of the 3k+2 hand ``counts`` less one tile of that kind, its
    :func:`useful_tiles`) for every kind held (or held in ``kinds``), in kind order; the useful
    kinds only for discards within ``slack`` of the best shanten (None for the others);
    ``regular_only``: the regular form alone. One split of the hand serves every discard: each
    changes one part, and a part's entry after a tile is taken out is cached per pattern."""
    counts = list(counts)
    parts = _parts(counts)
    stats = parts[0][1] + parts[1][1] + parts[2][1] + parts[3][1]
    tiles = (stats >> _t.TILES_SHIFT) - 1
    k = _groups(tiles)
    # as in shanten_after_discards
    floor = _special(stats) if 13 <= tiles <= 14 and not regular_only else 99
    ids = [p[0] for p in parts]
    a, b, c, h = ids
    cmb = _COMBINE
    rests = (cmb[cmb[b][c]][h], cmb[cmb[a][c]][h], cmb[cmb[a][b]][h], cmb[cmb[a][b]][c])
    keys = [bytes(counts[lo:lo + length]) for lo, length, _, _ in _PART_SPANS]
    found = []
    for index, (lo, _, cache, miss) in enumerate(_PART_SPANS):
        rest = cmb[rests[index]]
        others = stats - parts[index][1]
        for j, vid, part_stats, left in _discard_neighbours(keys[index], cache, miss):
            if kinds is not None and lo + j not in kinds:
                continue
            value = _REGULAR[rest[vid]][k]
            if value > floor:
                special = _special(others + part_stats)
                if special < value:
                    value = special
            found.append((lo + j, value, index, vid, others + part_stats, left))
    best = min(f[1] for f in found)
    out: dict[int, tuple[int, frozenset[int] | None]] = {}
    for kind, value, index, vid, left_stats, left in found:
        useful = None
        if value <= best + slack:
            left_keys = keys.copy()
            left_keys[index] = left
            left_ids = ids.copy()
            left_ids[index] = vid
            counts[kind] -= 1
            useful = frozenset(_useful(counts, left_keys, left_ids, left_stats, k, value,
                                       regular_only))
            counts[kind] += 1
        out[kind] = (value, useful)
    return out


def _useful(counts: list[int], keys: list[bytes], ids: list[int], stats: int, k: int,
            base: int, regular_only: bool = False) -> set[int]:
    """The useful kinds of a 3k+1 hand of shanten ``base`` given its part patterns, vector ids
    and summed stats (``k`` groups)."""
    a, b, c, h = ids
    cmb = _COMBINE
    # Only one part changes per candidate draw: combine the other three once.
    rests = (cmb[cmb[b][c]][h], cmb[cmb[a][c]][h], cmb[cmb[a][b]][h], cmb[cmb[a][b]][c])
    useful: set[int] = set()
    for index, (lo, _, cache, miss) in enumerate(_PART_SPANS):
        key = keys[index]
        memo = (lo, key, rests[index], k, base)
        lowering = _LOWERING.get(memo)
        if lowering is None:
            rest = cmb[rests[index]]
            lowering = tuple(lo + j for j, vid, _ in _draw_neighbours(key, cache, miss)
                             if _REGULAR[rest[vid]][k] < base)
            if len(_LOWERING) >= _LOWERING_MAX:
                _LOWERING.clear()
            _LOWERING[memo] = lowering
        useful.update(lowering)
    # a drawn tile lowers seven-pairs / thirteen-orphans shanten by at most one: skip them
    # when even that could not beat the regular form
    tiles = stats >> _t.TILES_SHIFT
    if not regular_only and 13 <= tiles + 1 <= 14 and _special(stats) - 1 < base:
        useful.update(_special_useful(counts, stats, base))
    return useful


_ORPHAN_KINDS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


def _special_useful(counts: list[int], stats: int, base: int) -> list[int]:
    """Kinds (held fewer than four times) whose draw brings seven pairs or thirteen orphans
    below ``base``: at a hand's true shanten only a draw that lowers a form already at
    ``base`` can (a new pair or kind for seven pairs, a new orphan or the orphan pair)."""
    pairs = stats & _M
    kinds = (stats >> _t.KINDS_SHIFT) & _M
    orphan_pair = ((stats >> _t.ORPHAN_PAIRS_SHIFT) & _M) > 0
    chiitoi = 6 - pairs + (7 - kinds if kinds < 7 else 0)
    kokushi = 13 - ((stats >> _t.ORPHAN_KINDS_SHIFT) & _M) - (1 if orphan_pair else 0)
    if chiitoi < base or kokushi < base:  # a base above the hand's shanten: the long way
        special = _special_after_draw(counts, stats)
        return [j for j in range(34) if special[j] < base and counts[j] < 4]
    out = []
    if chiitoi - 1 < base:  # a new pair (a single), or a new kind while short of seven
        wanted = (2).__gt__ if kinds < 7 else (1).__eq__  # held at most once, or once
        out = list(compress(range(34), map(wanted, counts)))
    if kokushi - 1 < base:
        out.extend(j for j in _ORPHAN_KINDS
                   if counts[j] == 0 or (counts[j] == 1 and not orphan_pair))
    return out


# part pattern -> ((position, vector id, stats, pattern) for each tile that can be taken out)
_TAKEN: dict[bytes, tuple[tuple[int, int, int, bytes], ...]] = {}


def _discard_neighbours(key: bytes, cache: dict[bytes, tuple[int, int]],
                        miss: object) -> tuple[tuple[int, int, int, bytes], ...]:
    """The table entries (and the pattern) of a part after taking out each tile it holds,
    cached per pattern."""
    found = _TAKEN.get(key)
    if found is None:
        segment = bytearray(key)
        out = []
        for j in range(len(segment)):
            if not segment[j]:
                continue
            segment[j] -= 1
            left = bytes(segment)
            segment[j] += 1
            vid, part_stats = cache.get(left) or miss(left)  # type: ignore[operator]
            out.append((j, vid, part_stats, left))
        found = _TAKEN[key] = tuple(out)
    return found


def shanten_after_discards(counts: Sequence[int],
                           kinds: set[int] | frozenset[int] | None = None,
                           regular_only: bool = False) -> dict[int, int]:
    """Kind -> :func:`shanten` (:func:`regular_shanten` with ``regular_only``) of the hand
    less one tile of that kind, for every kind held (or every kind held in ``kinds``), in kind
    order. One table pass for the whole hand: only the part that loses the tile changes, so
    the other three are combined once."""
    counts = list(counts)
    parts = _parts(counts)
    stats = parts[0][1] + parts[1][1] + parts[2][1] + parts[3][1]
    tiles = (stats >> _t.TILES_SHIFT) - 1
    k = _groups(tiles)
    # Taking a tile out never lowers seven pairs / orphans: the whole hand's figure is a floor
    # under every discard's, and only a regular value above it needs the special forms.
    floor = _special(stats) if 13 <= tiles <= 14 and not regular_only else 99
    a, b, c, h = parts[0][0], parts[1][0], parts[2][0], parts[3][0]
    cmb = _COMBINE
    rests = (cmb[cmb[b][c]][h], cmb[cmb[a][c]][h], cmb[cmb[a][b]][h], cmb[cmb[a][b]][c])
    out: dict[int, int] = {}
    for index, (lo, length, cache, miss) in enumerate(_PART_SPANS):
        rest = cmb[rests[index]]
        others = stats - parts[index][1]
        for j, vid, part_stats, _ in _discard_neighbours(bytes(counts[lo:lo + length]), cache,
                                                         miss):
            if kinds is not None and lo + j not in kinds:
                continue
            value = _REGULAR[rest[vid]][k]
            if value > floor:
                special = _special(others + part_stats)
                if special < value:
                    value = special
            out[lo + j] = value
    return out


_ORPHANS = frozenset((0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33))


def _special_after_draw(counts: list[int], stats: int) -> list[int]:
    """Seven-pairs / thirteen-orphans shanten after drawing each kind into a 13-tile hand: a
    draw makes a new pair or a new kind (seven pairs), or a new orphan or the orphan pair."""
    pairs = stats & _M
    kinds = (stats >> _t.KINDS_SHIFT) & _M
    orphan_pair = ((stats >> _t.ORPHAN_PAIRS_SHIFT) & _M) > 0
    chiitoi = 6 - pairs + (7 - kinds if kinds < 7 else 0)
    kokushi = 13 - ((stats >> _t.ORPHAN_KINDS_SHIFT) & _M) - (1 if orphan_pair else 0)
    out = []
    for j in range(34):
        c = counts[j]
        seven = chiitoi - 1 if c == 1 or (c == 0 and kinds < 7) else chiitoi
        thirteen = kokushi
        if j in _ORPHANS and (c == 0 or (c == 1 and not orphan_pair)):
            thirteen -= 1
        out.append(seven if seven < thirteen else thirteen)
    return out


def waits(counts: Sequence[int], regular_only: bool = False) -> set[int]:
    """Kinds that complete a ready 3k+1 hand (any shape; ``regular_only``: a regular one);
    empty if not ready or not 3k+1."""
    counts = list(counts)
    if sum(counts) % 3 != 1 or shanten(counts, regular_only) != 0:
        return set()
    return useful_tiles(counts, 0, regular_only)


def _useful_after_draw(counts: list[int], regular_only: bool = False) -> set[int]:
    best = shanten(counts, regular_only)
    useful: set[int] = set()
    for discard in range(34):
        if not counts[discard]:
            continue
        counts[discard] -= 1
        if shanten(counts, regular_only) == best:
            useful |= useful_tiles(counts, best, regular_only)
        counts[discard] += 1
    return useful


def _code_weights() -> np.ndarray:
    """(34, 4) float32 weights: one matmul turns count rows into the four base-5 part codes
    (exact in float32: codes stay below 2**24)."""
    w = np.zeros((34, 4), np.float32)
    for j in range(9):
        w[j, 0] = w[9 + j, 1] = w[18 + j, 2] = 5**j
    for j in range(7):
        w[27 + j, 3] = 5**j
    return w


class _BatchTables(NamedTuple):
    """What :func:`shanten_batch` indexes with whole arrays: int32 ids (the uint16 ones would
    overflow ``id * nv``) and every pattern's packed statistics (16 MB for the suits)."""

    code_weights: np.ndarray
    suit_ids: np.ndarray
    honour_ids: np.ndarray
    suit_stats: np.ndarray
    honour_stats: np.ndarray
    combine_flat: np.ndarray
    regular_flat: np.ndarray


@functools.cache
def _batch_tables() -> _BatchTables:
    """Built at the first batch, not at import: a process that never batches (a one-shot
    Botzone turn of ``rulebased`` or ``nn``, whose start is timed) does not pay for them."""
    return _BatchTables(_code_weights(), _SUIT_IDS.astype(np.int32),
                        _HONOUR_IDS.astype(np.int32), _t.part_stats(9, _SUIT_ORPHANS),
                        _t.part_stats(7, _HONOUR_ORPHANS),
                        _TABLES["combine"].astype(np.int32).ravel(), _REGULAR_NP.ravel())


_NV = len(_VECTORS)
_GROUP_SLOTS = _REGULAR_NP.shape[1]


def shanten_batch(hands: np.ndarray, regular_only: bool = False) -> np.ndarray:
    """Shanten of every row of an (N, 34) count array, as an int8 array of length N.

    Rows may hold different tile counts (3k+1 or 3k+2, k <= 5); a bad row raises HandError.
    """
    arr = np.asarray(hands)
    if arr.ndim != 2 or arr.shape[1] != 34:
        raise HandError(f"need an (N, 34) array, got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() > 4):
        raise HandError("counts must be 0..4")
    b = _batch_tables()
    codes = (arr.astype(np.float32) @ b.code_weights).astype(np.int32)
    cm, cp, cs, cz = codes[:, 0], codes[:, 1], codes[:, 2], codes[:, 3]
    flat, nv, suit_ids, suit_stats = b.combine_flat, _NV, b.suit_ids, b.suit_stats
    ids = flat[suit_ids[cm] * nv + suit_ids[cp]]
    ids = flat[ids * nv + suit_ids[cs]]
    ids = flat[ids * nv + b.honour_ids[cz]]
    stats = suit_stats[cm] + suit_stats[cp] + suit_stats[cs] + b.honour_stats[cz]
    tiles = stats >> _t.TILES_SHIFT
    groups, rem = np.divmod(tiles, 3)
    bad = (rem == 0) | (groups > _t.MAX_GROUPS)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise HandError(f"row {row} holds {int(tiles[row])} tiles: not 3k+1 or 3k+2 with k <= 5")
    result = cast(np.ndarray, b.regular_flat[ids * _GROUP_SLOTS + groups])
    if regular_only:
        return result
    full = (tiles >= 13) & (tiles <= 14)
    if full.all():
        both = np.minimum(result, _special_batch(stats))
        return cast(np.ndarray, both.astype(np.int8, copy=False))
    if full.any():
        result[full] = np.minimum(result[full], _special_batch(stats[full]))
    return result


def _special_batch(stats: np.ndarray) -> np.ndarray:
    pairs = stats & _M
    kinds = (stats >> _t.KINDS_SHIFT) & _M
    chiitoi = 6 - pairs + np.maximum(0, 7 - kinds)
    kokushi = (13 - ((stats >> _t.ORPHAN_KINDS_SHIFT) & _M)
               - (((stats >> _t.ORPHAN_PAIRS_SHIFT) & _M) > 0))
    return cast(np.ndarray, np.minimum(chiitoi, kokushi))
