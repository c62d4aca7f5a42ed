"""A whole game as one full-information event stream, and one seat's view of it.

Imports (tenhou.net/6, mjlog, mjai, Botzone judge logs, NYCU SGF) produce a :class:`GameRecord`: the
events of the game with every tile that the source shows (others' draws, all four starting hands
in ``RoundStarted.hands``). :func:`seat_view` turns it into exactly the stream that seat would
have received from a platform, so the replayer, the state and the policies treat an imported
game like one the bot played.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

from brain.rules.variant import variant_of
from protocols import events as ev
from protocols import tiles as T
from replay import progress


@dataclass
class GameRecord:
    """``source`` names the format it came from; ``meta`` keeps that format's fields that have no
    event of their own (titles, rule strings, ids) so that an export can write them back."""

    variant: str
    source: str
    events: list[Any]
    meta: dict[str, Any] = field(default_factory=dict)
    # the file's line of each event, where the format is one message a line (mjai JSONL): a
    # damaged hand is named by it, which the user's editor shows; empty for other formats
    lines: list[int] = field(default_factory=list, compare=False)
    # the hands the reader could not read (a bad tile code or a wrong-type field in one
    # tenhou.net/6 log entry, a line the NTPU codec refuses): the index of the event that
    # stands for the hand (its start) -> why. Every consumer leaves that hand out as it
    # leaves out one the table refuses (replay.replayer.derive_decisions); the reader
    # refused the whole file for it, every other hand lost
    damaged: dict[int, str] = field(default_factory=dict, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        for e in self.events:
            if isinstance(e, ev.GameStarted):
                return tuple(e.names)
        return ("", "", "", "")

    def hands(self) -> list[list[Any]]:
        """The events split per hand: each list starts with a RoundStarted."""
        out: list[list[Any]] = []
        for e in self.events:
            if isinstance(e, ev.RoundStarted):
                out.append([e])
            elif out and not isinstance(e, ev.GameEnded | ev.GameStarted):
                out[-1].append(e)
        return out


class RecordError(ValueError):
    """A log file could not be imported: names the file format and what was wrong."""


class CutShort(RecordError):
    """A file of a one-document format (tenhou.net/6 JSON) that ends before its document
    closes: nothing before the cut can be read, and the reader that guessed the format says
    so in one line rather than each format's refusal of a broken file."""


# what a cut leaves of a token the parser refuses where the token starts, not at the end:
# part of a literal (a lone '-' of a negative number too), a number's '.' or exponent, part
# of a \uXXXX escape
_CUT_WORDS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_CUT_NUMBER = re.compile(r"\.|[eE][-+]?")  # after the digits it read
_CUT_ESCAPE = re.compile(r"u[0-9a-fA-F]{0,3}")  # the parser points past the backslash


def ran_out(exc: json.JSONDecodeError, text: str) -> bool:
    """The JSON parser stopped because ``text`` ended (a cut file), not at a wrong
    character: a one-document reader's ground for :class:`CutShort`."""
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return True
    if exc.msg.startswith("Extra data"):  # a whole document, then more: no cut
        return False
    tail = text[exc.pos:].rstrip()
    if exc.msg.startswith("Invalid \\uXXXX escape"):
        return _CUT_ESCAPE.fullmatch(text[exc.pos:]) is not None
    return (any(word.startswith(tail) for word in _CUT_WORDS)
            or _CUT_NUMBER.fullmatch(tail) is not None)


class Refused(RecordError):
    """A file its format reads, refused for what it holds (a Tenhou transcript of a sanma
    game, or of no game at all): where the file bears that format's mark, the refusal is said
    in one line, not after every other format's reason for not reading it."""


def unknown_start() -> ev.RoundStarted:
    """The start that stands for a hand its reader cannot read (its index in
    :attr:`GameRecord.damaged` says why): its round unknown, no scores, no tiles."""
    unknown: Any = None
    return ev.RoundStarted(round_wind=unknown, dealer=unknown, honba=unknown, sticks=unknown,
                           scores=(), round_number=unknown)


def canonical(tiles: Any) -> tuple[int, ...]:
    """Meld tiles in one order (by kind, a red five before the plain ones) whatever the source."""
    return tuple(sorted(tiles, key=T.sort_key))


def own_tiles(meld: ev.MeldCalled) -> list[int]:
    """A meld's tiles less the called one (for an added kan: less the added one, leaving the
    pon), removing the exact tile where present, else one of its kind. Order is kept."""
    tiles = list(meld.tiles)
    if meld.kind == "added_kan" and meld.called is None:
        return tiles[:-1]  # as the table state reads it: the last tile was added
    if meld.called is None or meld.kind == "closed_kan":
        return tiles
    if meld.called in tiles:
        tiles.remove(meld.called)
    else:
        tiles.remove(next(t for t in tiles if T.kind(t) == T.kind(meld.called)))
    return tiles


def view_event(e: Any, seat: int, variant: str) -> Any:
    """One event as ``seat`` would have received it: its own starting hand only, others'
    draws hidden, and (MCR, Taiwan: Botzone and the NTPU server hide them) others' concealed
    kongs without their tiles."""
    if isinstance(e, ev.GameStarted):
        return dataclasses.replace(e, seat=seat)
    if isinstance(e, ev.RoundStarted):
        hand = e.hands[seat] if len(e.hands) > seat else e.hand
        return dataclasses.replace(e, hand=tuple(hand), hands=())
    if isinstance(e, ev.TileDrawn) and e.seat != seat and e.tile is not None:
        return ev.TileDrawn(e.seat, None, e.replacement)
    if (isinstance(e, ev.MeldCalled) and e.kind == "closed_kan" and e.seat != seat
            and variant_of(variant).hidden_closed_kans):
        return dataclasses.replace(e, tiles=())
    return e


# The event types view_event hands to every seat as they are.
_SAME_FOR_EVERY_SEAT = frozenset({
    ev.TileDiscarded, ev.RiichiDeclared, ev.RiichiAccepted, ev.DoraRevealed, ev.FlowerReplaced,
    ev.RoundWon, ev.RoundDrawn, ev.GameEnded, ev.PlatformNotice})


# A draw as the other seats see it: (seat, replacement) -> the event without its tile.
_HIDDEN_DRAWS = {(s, r): ev.TileDrawn(s, None, r) for s in range(4) for r in (False, True)}


def seat_views(e: Any, variant: str) -> tuple[Any, Any, Any, Any]:
    """``view_event(e, seat, variant)`` for seats 0..3; a referee emits every event to all
    four, and most events need no rewriting at all (events are immutable: views share them)."""
    kind = type(e)
    if kind in _SAME_FOR_EVERY_SEAT:
        return (e, e, e, e)
    if kind is ev.TileDrawn and e.tile is not None and type(e.replacement) is bool:
        hidden = _HIDDEN_DRAWS.get((e.seat, e.replacement))
        if hidden is not None:
            views = [hidden, hidden, hidden, hidden]
            views[e.seat] = e
            return tuple(views)  # type: ignore[return-value]
    return (view_event(e, 0, variant), view_event(e, 1, variant), view_event(e, 2, variant),
            view_event(e, 3, variant))


def seat_view(record: GameRecord, seat: int) -> list[Any]:
    """The whole record as ``seat`` would have received it (see :func:`view_event`). Asks the
    caller's hook (replay/progress.py) every :data:`progress.EVERY` events: a 300-game
    match's view takes some 1.5 s, which an export or a seat's read given up could not be
    stopped in."""
    ask = progress.hook()
    if ask is None:
        return [view_event(e, seat, record.variant) for e in record.events]
    out = []
    for i, e in enumerate(record.events):
        if not i % progress.EVERY:
            ask()
        out.append(view_event(e, seat, record.variant))
    return out
