"""The internal tile model and every platform's tile notation.

A tile is a small int:

* 0..33  the 34 kinds in Tenhou's order: 1-9m (0-8), 1-9p (9-17), 1-9s (18-26),
  East South West North (27-30), white green red (31-33);
* 34, 35, 36  the red 5m, 5p, 5s (same kind as 4, 13, 22);
* 37..44  the eight flowers (plum orchid chrysanthemum bamboo spring summer autumn winter).

Every conversion here is exact and total on its domain: malformed input raises
:class:`TileError` naming the offending text, never returns a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeGuard

Tile = int

NUM_KINDS = 34
RED_5M, RED_5P, RED_5S = 34, 35, 36
FLOWER_FIRST, FLOWER_LAST = 37, 44
EAST, SOUTH, WEST, NORTH = 27, 28, 29, 30
WHITE, GREEN, RED = 31, 32, 33
WINDS = (EAST, SOUTH, WEST, NORTH)
DRAGONS = (WHITE, GREEN, RED)
TERMINALS_AND_HONOURS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)

_RED_TO_KIND = {RED_5M: 4, RED_5P: 13, RED_5S: 22}
_KIND_TO_RED = {v: k for k, v in _RED_TO_KIND.items()}
_SUITS = "mps"


MESSAGE_SHOWN = 200  # characters of a TileError's message kept, the offending text included


class TileError(ValueError):
    """A tile or tile string could not be understood; ``raw`` is the offending input."""

    def __init__(self, message: str, raw: object = None) -> None:
        if len(message) > MESSAGE_SHOWN:  # a tile a megabyte long is named by its start
            message = f"{message[:MESSAGE_SHOWN]}... ({len(message)} characters)"
        super().__init__(message)
        self.raw = raw


# --------------------------------------------------------------------------- basics


def is_valid(tile: object) -> TypeGuard[Tile]:
    """True for any internal tile int (kinds, red fives, flowers)."""
    return isinstance(tile, int) and not isinstance(tile, bool) and 0 <= tile <= FLOWER_LAST


def check(tile: object) -> Tile:
    """Return ``tile`` if it is a valid internal tile, else raise TileError."""
    if not is_valid(tile):
        raise TileError(f"not a tile: {tile!r}", tile)
    return tile


_KIND_TABLE = [*range(34), 4, 13, 22, *range(37, 45)]

#: The kind 0..33 of a tile (red fives map to their plain five); flowers map to themselves.
#: A bound list lookup: it is called millions of times in a match, a Python function costs 3x.
kind: Callable[[Tile], int] = _KIND_TABLE.__getitem__


def is_red(tile: Tile) -> bool:
    return tile in _RED_TO_KIND


def red_of(kind_: int) -> Tile:
    """The red copy of a five kind (4, 13, 22); TileError for other kinds."""
    try:
        return _KIND_TO_RED[kind_]
    except KeyError:
        raise TileError(f"kind {kind_} has no red copy", kind_) from None


def is_flower(tile: Tile) -> bool:
    return FLOWER_FIRST <= tile <= FLOWER_LAST


def is_honour(tile: Tile) -> bool:
    return 27 <= kind(tile) <= 33


def is_suited(tile: Tile) -> bool:
    return kind(tile) < 27


def is_terminal(tile: Tile) -> bool:
    """A 1 or 9 of a number suit."""
    k = kind(tile)
    return k < 27 and k % 9 in (0, 8)


def is_terminal_or_honour(tile: Tile) -> bool:
    return is_terminal(tile) or is_honour(tile)


def suit(tile: Tile) -> int:
    """0 characters, 1 dots, 2 bamboo, 3 honours, 4 flowers."""
    if is_flower(tile):
        return 4
    return kind(tile) // 9


def rank(tile: Tile) -> int:
    """1..9 for suited tiles, 1..7 for honours (E S W N white green red), 1..8 for flowers."""
    if is_flower(tile):
        return tile - FLOWER_FIRST + 1
    k = kind(tile)
    return k % 9 + 1 if k < 27 else k - 26


def counts34(tiles: Iterable[Tile]) -> list[int]:
    """Count vector over the 34 kinds (red fives counted as fives, flowers ignored)."""
    counts = [0] * (NUM_KINDS + 11)  # scratch slots for flowers, cut off below
    index = _COUNT_INDEX
    for t in tiles:
        counts[index[t]] += 1
    del counts[NUM_KINDS:]
    return counts


# tile -> slot in counts34's vector: kinds as themselves, red fives as fives, flowers past 33
_COUNT_INDEX = [*range(NUM_KINDS), 4, 13, 22, *range(NUM_KINDS, NUM_KINDS + 8)]


def dora_from_indicator(indicator: Tile) -> int:
    """The dora kind that an indicator points at (riichi): next in suit, winds and dragons cycle."""
    k = kind(indicator)
    if k < 27:
        return k - k % 9 + (k % 9 + 1) % 9
    if k <= NORTH:
        return EAST + (k - EAST + 1) % 4
    return WHITE + (k - WHITE + 1) % 3


def _sort_key(tile: Tile) -> tuple[int, int]:
    return (kind(tile), 0 if is_red(tile) else 1)


_SORT_KEYS = [_sort_key(t) for t in range(FLOWER_LAST + 1)]

#: Order tiles by kind; a red five sorts just before the plain fives (as Tenhou shows them).
#: A bound list lookup like :data:`kind`: every legal set and hand is sorted with it.
sort_key: Callable[[Tile], tuple[int, int]] = _SORT_KEYS.__getitem__


# --------------------------------------------------------------------------- mpsz

_MPSZ_GROUP = re.compile(r"([0-9]+)([mpszf])")


def parse_mpsz(text: str) -> list[Tile]:
    """``"123m406p789s1177z"`` -> tiles. 0 = red five; 1z..7z = E S W N white green red;
    1f..8f = flowers (an mjbot extension). Whitespace is ignored."""
    if not isinstance(text, str):
        raise TileError(f"mpsz must be a string, got {type(text).__name__}", text)
    compact = "".join(text.split())
    tiles: list[Tile] = []
    pos = 0
    for match in _MPSZ_GROUP.finditer(compact):
        if match.start() != pos:
            raise TileError(f"bad mpsz {text!r}: {_mpsz_fault(compact[pos:])}", text)
        pos = match.end()
        digits, suit_ = match.groups()
        for ch in digits:
            tiles.append(_mpsz_tile(int(ch), suit_, text))
    if pos != len(compact):
        raise TileError(f"bad mpsz {text!r}: {_mpsz_fault(compact[pos:])}", text)
    return tiles


def _mpsz_fault(rest: str) -> str:
    """What is wrong at the start of ``rest``, the part of a hand no group matched, named
    for the person who typed it: "trailing '123M456P'" or "at '12x3m'" quoted the rest of the
    hand and left the mistake (an upper-case suit, an ``x``) to be found."""
    digits = rest[:len(rest) - len(rest.lstrip("0123456789"))]
    after = rest[len(digits):]
    if not after:
        return f"{digits!r} at the end has no suit letter (m, p, s, z; f for flowers)"
    ch = after[0]
    if ch in "MPSZF":
        return f"suits are lower-case m, p, s, z (f: flowers), not {ch!r}"
    if ch in "mpszf":  # a suit letter with no digits before it
        return f"{ch!r} has no digits before it (write 123{ch}, not {ch}123)"
    return (f"{ch!r} is not a digit or a suit letter (tiles are digits then m, p, s, z or f: "
            "123m406p)")


def _mpsz_tile(digit: int, suit_: str, text: str) -> Tile:
    if suit_ in _SUITS:
        base = _SUITS.index(suit_) * 9
        if digit == 0:
            return _KIND_TO_RED[base + 4]
        return base + digit - 1
    if suit_ == "z":
        if not 1 <= digit <= 7:
            raise TileError(f"bad honour {digit}z in {text!r}", text)
        return 26 + digit
    if not 1 <= digit <= 8:
        raise TileError(f"bad flower {digit}f in {text!r}", text)
    return FLOWER_FIRST + digit - 1


def to_mpsz(tiles: Iterable[Tile], sort: bool = True) -> str:
    """Tiles -> compact mpsz; sorted by kind unless ``sort=False`` (then runs of one suit group)."""
    seq = [check(t) for t in tiles]
    if sort:
        seq.sort(key=sort_key)
    out: list[str] = []
    cur_suit = ""
    digits: list[str] = []
    for t in seq:
        letter, digit = _mpsz_parts(t)
        if letter != cur_suit and digits:
            out.append("".join(digits) + cur_suit)
            digits = []
        cur_suit = letter
        digits.append(digit)
    if digits:
        out.append("".join(digits) + cur_suit)
    return "".join(out)


def _mpsz_parts(tile: Tile) -> tuple[str, str]:
    if is_flower(tile):
        return "f", str(tile - FLOWER_FIRST + 1)
    if is_red(tile):
        return _SUITS[kind(tile) // 9], "0"
    if tile >= 27:
        return "z", str(tile - 26)
    return _SUITS[tile // 9], str(tile % 9 + 1)


def tile_name(tile: Tile) -> str:
    """One tile in mpsz, e.g. ``5m``, ``0p``, ``7z``."""
    letter, digit = _mpsz_parts(check(tile))
    return digit + letter


# --------------------------------------------------------------------------- Botzone

_BZ_SUIT = {"W": 0, "B": 9, "T": 18}
# Botzone J1 = red (中), J2 = green (發), J3 = white (白): the reverse of Tenhou's order.
_BZ_DRAGON = {1: RED, 2: GREEN, 3: WHITE}
_DRAGON_BZ = {v: k for k, v in _BZ_DRAGON.items()}


def from_botzone(text: str) -> Tile:
    """``W1``..``W9`` ``B1``.. ``T1``.. ``F1``-``F4`` (E S W N) ``J1``-``J3`` (red green white)
    ``H1``-``H8`` (flowers)."""
    if not isinstance(text, str) or len(text) != 2 or not text[1].isdigit():
        raise TileError(f"bad Botzone tile {text!r}", text)
    letter, n = text[0], int(text[1])
    if letter in _BZ_SUIT and 1 <= n <= 9:
        return _BZ_SUIT[letter] + n - 1
    if letter == "F" and 1 <= n <= 4:
        return EAST + n - 1
    if letter == "J" and 1 <= n <= 3:
        return _BZ_DRAGON[n]
    if letter == "H" and 1 <= n <= 8:
        return FLOWER_FIRST + n - 1
    raise TileError(f"bad Botzone tile {text!r}", text)


def to_botzone(tile: Tile) -> str:
    """Internal tile -> Botzone string. Botzone has no red fives: they become plain fives."""
    check(tile)
    if is_flower(tile):
        return f"H{tile - FLOWER_FIRST + 1}"
    k = kind(tile)
    if k < 27:
        return "WBT"[k // 9] + str(k % 9 + 1)
    if k <= NORTH:
        return f"F{k - EAST + 1}"
    return f"J{_DRAGON_BZ[k]}"


# --------------------------------------------------------------------------- Tenhou ids

TENHOU_RED_IDS = (16, 52, 88)
_TENHOU_RED = dict(zip(TENHOU_RED_IDS, (RED_5M, RED_5P, RED_5S), strict=True))


def from_tenhou_id(tile_id: int, red_fives: bool = True) -> Tile:
    """Tenhou physical id 0..135 -> tile; ids 16, 52, 88 are red fives when the game has them."""
    if not isinstance(tile_id, int) or isinstance(tile_id, bool) or not 0 <= tile_id <= 135:
        raise TileError(f"bad Tenhou tile id {tile_id!r}", tile_id)
    if red_fives and tile_id in _TENHOU_RED:
        return _TENHOU_RED[tile_id]
    return tile_id // 4


def tenhou_ids(tile: Tile, red_fives: bool = True) -> tuple[int, ...]:
    """The physical Tenhou ids that carry ``tile`` (a red five: its one id; a plain five in a
    red-five game: the three non-red copies)."""
    check(tile)
    if is_flower(tile):
        raise TileError(f"Tenhou has no flowers: {tile}", tile)
    if is_red(tile):
        if not red_fives:
            raise TileError("red five in a game without red fives", tile)
        return (TENHOU_RED_IDS[tile - RED_5M],)
    ids = tuple(range(tile * 4, tile * 4 + 4))
    if red_fives and tile in _KIND_TO_RED:
        ids = ids[1:]
    return ids


def to_tenhou_id(tile: Tile, copy: int = 0, red_fives: bool = True) -> int:
    """A physical id for ``tile``: the ``copy``-th of :func:`tenhou_ids`."""
    ids = tenhou_ids(tile, red_fives)
    if not 0 <= copy < len(ids):
        raise TileError(f"tile {tile} has no copy {copy}", copy)
    return ids[copy]


# --------------------------------------------------------------------------- tenhou.net/6

_T6_RED = {51: RED_5M, 52: RED_5P, 53: RED_5S}


def from_tenhou6(code: int) -> Tile:
    """tenhou.net/6 code: 11-19 m, 21-29 p, 31-39 s, 41-47 E S W N white green red, 51-53 red
    fives. (60, tsumogiri, is a marker, not a tile.)"""
    if not isinstance(code, int) or isinstance(code, bool):
        raise TileError(f"bad tenhou6 tile code {code!r}", code)
    if code in _T6_RED:
        return _T6_RED[code]
    s, n = divmod(code, 10)
    if 1 <= s <= 3 and 1 <= n <= 9:
        return (s - 1) * 9 + n - 1
    if s == 4 and 1 <= n <= 7:
        return 26 + n
    raise TileError(f"bad tenhou6 tile code {code!r}", code)


def to_tenhou6(tile: Tile) -> int:
    check(tile)
    if is_flower(tile):
        raise TileError(f"tenhou6 has no flowers: {tile}", tile)
    if is_red(tile):
        return 51 + tile - RED_5M
    if tile >= 27:
        return 40 + tile - 26
    return (tile // 9 + 1) * 10 + tile % 9 + 1


# --------------------------------------------------------------------------- mjai

_MJAI_HONOURS = ("E", "S", "W", "N", "P", "F", "C")  # P white (haku), F green, C red (chun)


def from_mjai(text: str) -> Tile | None:
    """mjai tile string -> tile; ``"?"`` (a hidden tile) -> None."""
    if text == "?":
        return None
    if not isinstance(text, str):
        raise TileError(f"bad mjai tile {text!r}", text)
    if text in _MJAI_HONOURS:
        return EAST + _MJAI_HONOURS.index(text)
    if len(text) in (2, 3) and text[0] in "123456789" and text[1] in _SUITS:
        n, base = int(text[0]), _SUITS.index(text[1]) * 9
        if len(text) == 2:
            return base + n - 1
        if text[2] == "r" and n == 5:
            return _KIND_TO_RED[base + 4]
    raise TileError(f"bad mjai tile {text!r}", text)


def to_mjai(tile: Tile | None) -> str:
    if tile is None:
        return "?"
    check(tile)
    if is_flower(tile):
        raise TileError(f"mjai has no flowers: {tile}", tile)
    if is_red(tile):
        return f"5{_SUITS[kind(tile) // 9]}r"
    if tile >= 27:
        return _MJAI_HONOURS[tile - EAST]
    return f"{tile % 9 + 1}{_SUITS[tile // 9]}"


# --------------------------------------------------------------------------- NTPU


def choose_ids(held: Sequence[int], tiles: Iterable[Tile], tile_of: Callable[[int], Tile],
               preferred: Iterable[int | None] = ()) -> list[int]:
    """Physical ids (Tenhou's, NTPU's) from ``held`` carrying ``tiles``, one per tile, the
    ``preferred`` ones first where they fit (the drawn copy, the ids a reply named); ``held``
    is left as it is. TileError when no held id is left for a tile."""
    first = [i for i in preferred if i is not None and i in held]
    free = [*first, *(i for i in held if i not in first)]
    out = []
    for tile in tiles:
        match = next((i for i in free if tile_of(i) == tile), None)
        if match is None:
            raise TileError(f"no held id for {tile_name(tile)} (held: "
                            f"{' '.join(map(str, sorted(held)))})", tile)
        free.remove(match)
        out.append(match)
    return out


class NtpuTiles:
    """NTPU / Cycgame 3-digit ids ``S*100 + R*10 + C``: S = 1..3 number suits, 4 honours,
    R the rank, C = 0..3 the physical copy.

    Which suit is S = 1, 2, 3 and the honour order are not published: both are configurable.
    ``suit_order`` lists the mpsz suit letters for S = 1, 2, 3 (default ``"mps"``);
    ``honour_order`` lists, for R = 1..7, the honour as mjai letters (default E S W N red green
    white = ``"ESWNCFP"``) or as internal kinds.
    """

    DEFAULT_HONOUR_ORDER = "ESWNCFP"

    def __init__(
        self, honour_order: str | Sequence[int] = DEFAULT_HONOUR_ORDER, suit_order: str = "mps"
    ) -> None:
        if isinstance(honour_order, str):
            try:
                kinds = [EAST + _MJAI_HONOURS.index(ch) for ch in honour_order]
            except ValueError:
                raise TileError(f"bad honour order {honour_order!r}", honour_order) from None
        else:
            kinds = [int(k) for k in honour_order]
        if sorted(kinds) != list(range(EAST, RED + 1)):
            raise TileError(f"honour order must list each honour once: {honour_order!r}",
                            honour_order)
        if sorted(suit_order) != sorted(_SUITS) or len(suit_order) != 3:
            raise TileError(f"suit order must be a permutation of 'mps': {suit_order!r}",
                            suit_order)
        self.honour_kinds: tuple[int, ...] = tuple(kinds)
        self.suit_order = suit_order
        self._rank_of_honour = {k: r + 1 for r, k in enumerate(kinds)}

    def to_tile(self, ntpu_id: int) -> Tile:
        """NTPU id -> internal tile (the copy digit is dropped; see :meth:`copy_of`)."""
        if not isinstance(ntpu_id, int) or isinstance(ntpu_id, bool):
            raise TileError(f"bad NTPU tile id {ntpu_id!r}", ntpu_id)
        s, rest = divmod(ntpu_id, 100)
        r, c = divmod(rest, 10)
        if not 0 <= c <= 3:
            raise TileError(f"bad NTPU tile id {ntpu_id!r}: copy {c}", ntpu_id)
        if 1 <= s <= 3 and 1 <= r <= 9:
            return _SUITS.index(self.suit_order[s - 1]) * 9 + r - 1
        if s == 4 and 1 <= r <= 7:
            return self.honour_kinds[r - 1]
        raise TileError(f"bad NTPU tile id {ntpu_id!r}", ntpu_id)

    def parse(self, text: str) -> Tile:
        """A token of a server line, e.g. ``"142"``."""
        if not isinstance(text, str) or not text.isdigit() or len(text) != 3:
            raise TileError(f"bad NTPU tile id {text!r}", text)
        return self.to_tile(int(text))

    @staticmethod
    def copy_of(ntpu_id: int) -> int:
        return ntpu_id % 10

    def to_id(self, tile: Tile, copy: int = 0) -> int:
        check(tile)
        if is_flower(tile):
            raise TileError(f"NTPU has no flowers: {tile}", tile)
        if not 0 <= copy <= 3:
            raise TileError(f"bad copy {copy}", copy)
        k = kind(tile)
        if k < 27:
            s = self.suit_order.index(_SUITS[k // 9]) + 1
            return s * 100 + (k % 9 + 1) * 10 + copy
        return 400 + self._rank_of_honour[k] * 10 + copy
