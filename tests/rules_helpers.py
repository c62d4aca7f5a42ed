"""Build win contexts from mpsz text for the rules tests."""

from brain.rules.base import WinContext
from brain.state import Meld
from protocols.tiles import kind, parse_mpsz


def meld(kind_: str, mpsz: str, from_seat=None, called=None) -> Meld:
    tiles = tuple(parse_mpsz(mpsz))
    if kind_ in ("chi", "pon", "open_kan") and called is None:
        called = tiles[0]
    return Meld(kind_, tiles, called, from_seat)


def ctx(concealed: str, win: str, melds=(), seat=0, from_seat=None, **kw) -> WinContext:
    tiles = tuple(parse_mpsz(concealed))
    win_tile = parse_mpsz(win)[0]
    assert any(kind(t) == kind(win_tile) for t in tiles), "concealed must include the win tile"
    return WinContext(concealed=tiles, melds=tuple(melds), win_tile=win_tile, seat=seat,
                      from_seat=from_seat, **kw)
