"""Offline replay of a game from one seat: per-hand summary, policy agreement, codec re-parse.

Any log becomes a :class:`Replay` — the events one seat saw and the decisions it made, in order.
The bot's own logs carry both (``decision`` frames); imported games (tenhou.net/6, mjlog, mjai,
Botzone, NYCU SGF, NTPU command logs, Tenhou client transcripts) have no decisions written
down, so they are read off the record the way review tools do: after each of the seat's draws
or calls its next move is its choice (Taiwan's last drawer, asked only Win or Pass, passed
where the hand is drawn);
after another seat's discard (or added kan) where our rules give it something to do
besides passing, its call, win or pass is (unless another seat's call or win outranked it:
then the record cannot show the seat's answer). Which reader a file needs is found in
:mod:`replay.formats`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brain.brain import check
from brain.policies import get_policy
from brain.rules import rules_for
from brain.rules.variant import VARIANTS
from brain.shanten import HandError
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.botzone import BotzoneCodec
from protocols.events import EVENT_TYPES
from protocols.mjai import RESULT_NOT_SENT, MjaiCodec
from protocols.ntpu import NtpuCodec
from protocols.tenhou import REINIT_NOTICE, TenhouCodec, parse_tag, tag_from_json
from replay import formats, progress
from replay.formats.botzone_log import PENALTIES
from replay.formats.tenhou_client import LEFT_NOTICE
from replay.log import DecisionFrame, EventFrame, GameLog, Header, RxFrame, TxFrame
from replay.record import GameRecord, RecordError, own_tiles, seat_view, seat_views


@dataclass(frozen=True)
class Decision:
    """One recorded decision; ``index`` is its place in the event list (events before it are
    what the seat knew)."""

    index: int
    request: ev.DecisionRequest
    legal: tuple[Any, ...]
    action: Any
    policy: str = ""
    elapsed: float | None = None
    fallback: str = ""
    fallback_kind: str = ""  # the log's (DecisionFrame.fallback_kind): "" where not recorded


@dataclass
class Replay:
    path: str
    source: str
    variant: str
    seat: int
    events: list[Any]
    decisions: list[Decision]
    record: GameRecord | None = None
    log: GameLog | None = None
    notes: list[str] = field(default_factory=list)
    # the hands whose moves did not fit the seat's table (a damaged or edited log), each
    # {"hand", "round", "event", "what", "why"} (:func:`_damage`): their moves from there on
    # are not read
    damaged: list[dict[str, Any]] = field(default_factory=list)
    # the seat shown as its platform numbers it, where that is not from 0 as a replay's (and
    # --seat's) are: NTPU's 1..4, which its lines and our client logs' file names (seatN)
    # use; said beside the seat, so that a user matching a file to a seat is not misled
    platform_seat: int | None = None


# what a damaged or hand-edited log's event raises on the table (a tile out of range, a seat
# that is none, a list that is a number, a score that is text, a value nested some 900 deep
# that a copy or the packing recurses into; a discard of a tile the hand does not hold, a
# StateError): its reader takes any value
DAMAGED = (LookupError, TypeError, AttributeError, ValueError, ArithmeticError,
           RecursionError)


SEAT_FIELDS = ("seat", "winner", "from_seat", "pao_seat", "dealer")
TILE_FIELDS = ("tile", "win_tile", "called", "indicator", "flower")
TILE_LISTS = ("tiles", "hand", "dora_indicators", "ura_dora_indicators")


def check_event(e: Any) -> None:
    """A StateError naming the field where ``e`` holds a seat outside 0..3 (a tenpai seat
    too), a tile that is none, a hand's round, repeat or deposit count out of range or a
    score that is no number a dataset holds: the table takes such a value without a word (a
    win of seat 9, a dealer -1 read from the end of the list), so a damaged or hand-edited
    file's hand was read as sound, its seat written into a dataset's rows (or its round
    number, 99998, overflowed the dataset's column: a traceback)."""
    kind: Any = type(e)
    seats, points, tiles, lists, others = _checked(kind)
    for name in seats:
        seat = getattr(e, name, None)
        if seat is not None and (type(seat) is not int or not 0 <= seat < 4):
            raise StateError(f"{name} {seat!r} is not a seat (0..3)")
    if isinstance(e, ev.RoundStarted):  # the dataset's int16 round columns held 99998 once
        for name, top in (("round_wind", 3), ("round_number", 3), ("honba", 999),
                          ("sticks", 999)):
            value = getattr(e, name)
            if type(value) is not int or not 0 <= value <= top:
                raise StateError(f"{name} {value!r} is out of range (0..{top})")
    for name in points:
        for value in getattr(e, name, None) or ():
            if type(value) is not int or not -2**31 < value < 2**31:
                raise StateError(f"{name}: {value!r} is not a score")
    if "tenpai" in others:
        for seat in getattr(e, "tenpai", ()):
            if type(seat) is not int or not 0 <= seat < 4:
                raise StateError(f"tenpai seat {seat!r} is not a seat (0..3)")
    for name in tiles:
        tile = getattr(e, name, None)
        if tile is not None and not T.is_valid(tile):
            raise StateError(f"{name} {tile!r} is not a tile")
    for name in lists:
        for tile in getattr(e, name, None) or ():
            if not T.is_valid(tile):
                raise StateError(f"{name}: {tile!r} is not a tile")
    if "hands" in others:  # every seat's: the table reads one alone
        for hand in getattr(e, "hands", None) or ():
            for tile in hand:
                if not T.is_valid(tile):
                    raise StateError(f"hands: {tile!r} is not a tile")


_ALL_CHECKED = (SEAT_FIELDS, ("scores", "deltas"), TILE_FIELDS, TILE_LISTS, ("tenpai", "hands"))


@functools.cache
def _checked(kind: Any) -> tuple[tuple[str, ...], ...]:
    """The fields of :func:`check_event`'s lists that events of ``kind`` have (all of them
    for a kind that is no dataclass): asking every event for all 20 names, most of which it
    lacks, was most of the time of following a long record's tables."""
    if not dataclasses.is_dataclass(kind):
        return _ALL_CHECKED
    names = {f.name for f in dataclasses.fields(kind)}
    return tuple(tuple(n for n in group if n in names) for group in _ALL_CHECKED)


def sound(e: Any) -> bool:
    """Whether :func:`check_event` takes ``e``."""
    try:
        check_event(e)
    except StateError:
        return False
    return True


def check_exportable(record: GameRecord) -> None:
    """A ValueError naming the first event :func:`check_event` refuses (a name that is no
    tile, which the mjai reader keeps as its text; a seat that is none): such a game cannot
    be written in a format that holds tiles and seats (`mjbot replay --export`, the viewer's
    exports). The tenhou6 writer died on it (a TypeError) or wrote a discard of '0x' as a
    sound tsumogiri."""
    for i, e in enumerate(record.events):
        try:
            if i in record.damaged:  # a hand its reader could not read: nothing to write
                raise StateError(record.damaged[i])
            check_event(e)
        except StateError as exc:
            d = damage_at(record.events, i, str(exc), record.lines)
            raise ValueError(f"hand {d['hand']} ({d['round']}) cannot be exported: event "
                             f"{d['event']} ({d['what']}){d['at']}: {d['why']} (a damaged "
                             "or edited log)") from None


def damage_reason(exc: BaseException) -> str:
    """Why a :data:`DAMAGED` error failed a hand, in one short line (its message may quote
    the file)."""
    return f"{type(exc).__name__}: {str(exc)[:200]}"


# --------------------------------------------------------------------------- loading


def load(path: str | Path, seat: int | None = None) -> Replay:
    """A replay of any supported log, from ``seat``'s point of view (own logs: the bot's seat
    unless another is asked for; imports: seat 0 by default; one seat's command log: that
    seat). A file no reader accepts raises :class:`formats.UnknownFormat`, naming why each
    format refused it."""
    path = Path(path)
    loaded = formats.read(path.read_bytes(), path)
    if loaded.log is not None:
        replay = _from_own_log(loaded.log, seat)
        origin = loaded.log.header.platform if loaded.log.header is not None else ""
    else:
        assert loaded.record is not None
        replay = (from_seat_record(loaded.record, seat, str(path))
                  if loaded.record.meta.get("view_seat") is not None
                  else from_record(loaded.record, seat if seat is not None else 0, str(path)))
        origin = loaded.record.source
    if origin in NTPU_ORIGINS:  # NTPU numbers its seats 1..4 (see Replay.platform_seat)
        replay.platform_seat = replay.seat + 1
    return replay


NTPU_ORIGINS = ("ntpu", "ntpu-server", "ntpu_log")  # our client's, our server's, a command log


def from_record(record: GameRecord, seat: int, path: str = "") -> Replay:
    events = seat_view(record, seat)
    failed: list[tuple[int, str]] = []
    decisions = derive_decisions(record, seat, events, lambda i, why: failed.append((i, why)))
    damaged = damages_at(record.events, failed, record.lines)
    notes = [damage_note(d) for d in damaged]
    if record.meta.get("players", 4) != 4:
        notes.append("a three-player (sanma) game: shown as read, but mjbot plays and scores "
                     "four-player rules, so values and policy agreement are approximate")
    if record.meta.get("cut"):
        notes.append(f"the file is cut short: {record.meta['cut']}; the moves before the cut "
                     "are shown")
    return Replay(path, record.source, record.variant, seat, events, decisions, record=record,
                  notes=notes, damaged=damaged)


def damage_at(events: list[Any], index: int, why: str,
              lines: list[int] | None = None) -> dict[str, Any]:
    """Where a hand failed: its number in the file (1 = the first hand), its round, the
    event's index in the record and what it was (``at``: " at line N" where ``lines``, the
    record's :attr:`GameRecord.lines`, tells the file's line; else empty), and why the table
    refused it."""
    return damages_at(events, [(index, why)], lines)[0]


def damages_at(events: list[Any], failed: Sequence[tuple[int, str]],
               lines: list[int] | None = None) -> list[dict[str, Any]]:
    """:func:`damage_at` of each (index, why) of ``failed``, in its order, from one pass over
    ``events``: one pass per failure (a file of thousands of damaged hands, each a start of
    unknown round) was seconds of `mjbot replay`, `view` and `dataset import` per thousand."""
    found: dict[int, tuple[int, str]] = {}  # index -> (hand, round) there
    wanted = sorted({i for i, _ in failed})
    hand, label, at = 0, "before the first hand", 0
    for index in wanted:
        for e in events[at:index + 1]:
            if isinstance(e, ev.RoundStarted):
                hand += 1
                label = round_label(e)
        at = max(at, index + 1)
        found[index] = (hand, label)
    out = []
    for index, why in failed:
        place = f" at line {lines[index]}" if lines and index < len(lines) else ""
        out.append({"hand": found[index][0], "round": found[index][1], "event": index,
                    "what": event_text(events[index]), "at": place, "why": why})
    return out


def damage_note(d: dict[str, Any]) -> str:
    """The note of one hand that failed (:func:`derive_decisions`' ``damaged``)."""
    return (f"hand {d['hand']} ({d['round']}) cannot be followed from event {d['event']} "
            f"({d['what']}){d.get('at', '')}: {d['why']}; its moves from there are not read "
            "(a damaged or edited log), the hands after it are")


def table_damage(record: GameRecord) -> dict[int, tuple[int, str]]:
    """The hands of ``record`` that a seat's table cannot follow, by number (1 = the first):
    the index of the first event that failed and why, from any seat's view (a record of one
    seat's view: that seat's, game by game). What :func:`derive_decisions` notes, with the
    same checks (the reader's :attr:`GameRecord.damaged`, :func:`check_event`, the seat's
    table), without working out the decisions (a quarter of the time of deriving them for
    one seat): the viewer names such a hand as `mjbot replay` does, when it is asked for."""
    found: dict[int, tuple[int, str]] = {}
    one_view = record.meta.get("view_seat") is not None
    seats = [int(record.meta["view_seat"])] if one_view else [0, 1, 2, 3]
    states = [TableState(record.variant, s) for s in seats]
    broken = [False] * len(seats)
    hidden = [False] * len(seats)
    hand = 0
    for i, e in enumerate(record.events):
        if isinstance(e, ev.RoundStarted):
            hand += 1
        if one_view and isinstance(e, ev.GameStarted) and type(e.seat) is int:
            states = [TableState(record.variant, e.seat)]  # the seat this game was played from
        unsound: StateError | None = None  # one check for every seat's table
        try:
            check_event(e)
        except StateError as exc:
            unsound = exc
        views = (e,) if one_view else seat_views(e, record.variant)
        for k, state in enumerate(states):
            if broken[k] and not isinstance(e, ev.RoundStarted | ev.GameStarted):
                continue
            broken[k] = False
            why = record.damaged.get(i)
            if why is None:
                seen = views[0] if one_view else views[state.seat]
                if isinstance(seen, ev.RoundStarted):
                    hidden[k] = not seen.hand
                try:
                    if unsound is not None:
                        raise unsound
                    state.apply(seen)
                    continue
                except DAMAGED as exc:
                    if hidden[k]:  # a hand the record does not deal this seat: no damage
                        broken[k] = True
                        continue
                    why = damage_reason(exc)
            broken[k] = True
            if hand not in found or i < found[hand][0]:
                found[hand] = (i, why)
    return found


def round_label(e: ev.RoundStarted) -> str:
    """A hand's round as the notes name it (``E1-0``; ``round unknown`` where it is none)."""
    try:
        return f"{'ESWN'[e.round_wind % 4]}{e.round_number + 1}-{e.honba}"
    except DAMAGED:  # a round that is no number in a damaged log
        return "round unknown"


def event_text(e: Any) -> str:
    """A short account of an event: its kind, seat and tile where it has them."""
    parts = [type(e).__name__]
    seat = getattr(e, "seat", None)
    if seat is not None:
        parts.append(f"seat {seat}")
    tile = getattr(e, "tile", None)
    if tile is not None:
        try:
            parts.append(T.tile_name(tile))
        except DAMAGED:
            parts.append(repr(tile)[:40])
    return " ".join(parts)


def from_seat_record(record: GameRecord, seat: int | None = None, path: str = "") -> Replay:
    """A record of what one seat saw (a platform's command log), shown as it is. Its
    decisions are read off each game in it from the seat that game was played from: a server
    may move a client to another seat from one game to the next."""
    starts = [(i, e.seat) for i, e in enumerate(record.events) if isinstance(e, ev.GameStarted)]
    decisions: list[Decision] = []
    failed: list[tuple[int, str]] = []
    for n, (start, own) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(record.events)
        part = GameRecord(record.variant, record.source, record.events[start:end], record.meta,
                          damaged={i - start: why for i, why in record.damaged.items()
                                   if start <= i < end})

        def note(i: int, why: str, at: int = start) -> None:
            failed.append((i + at, why))

        decisions += [dataclasses.replace(d, index=d.index + start)
                      for d in derive_decisions(part, own, part.events, note)]
    damaged = damages_at(record.events, failed, record.lines)
    seats = sorted({s for _, s in starts})
    shown = starts[0][1] if starts else int(record.meta["view_seat"])
    notes = [damage_note(d) for d in damaged]
    if len(seats) > 1:
        notes.append(f"the seat changes between games (seats {', '.join(map(str, seats))}): "
                     f"each game is read from the seat it was played from")
    if seat is not None and seat not in seats:
        notes.append(f"this log is seat {shown}'s own view; seat {seat} cannot be shown")
    if record.meta.get("cut"):  # a transcript says where and how it was cut
        notes.append(f"the file is cut short: {record.meta['cut']}; the moves before the cut "
                     "are shown")
    elif record.meta.get("cut_in_hand"):
        notes.append("the log ends inside a hand: the moves before the cut are shown")
    if record.meta.get("left"):
        notes.append(f"{record.meta['left']} game(s) the client left (BYE) before their end: "
                     "each stops there")
    if record.meta.get("errors"):
        notes.append(f"{record.meta['errors']} message(s) could not be read: an 'error:' "
                     "notice at each, as the client logged it")
    if record.meta.get("skipped"):
        first = record.meta.get("skipped_lines", ["?"])[0]
        notes.append(f"{record.meta['skipped']} lines that are no protocol line were skipped "
                     f"(first: {first})")
    return Replay(path, record.source, record.variant, shown, list(record.events), decisions,
                  record=record, notes=notes, damaged=damaged)


def _from_own_log(log: GameLog, seat: int | None) -> Replay:
    header = log.header
    assert header is not None
    if header.seat is None and header.extra.get("full_information"):
        return _from_table_log(log, seat if seat is not None else 0)
    events: list[Any] = []
    decisions: list[Decision] = []
    ask = progress.hook()
    for f in formats.own_log_frames(header.platform, log.frames):
        if isinstance(f, EventFrame):
            events.append(f.event)
            if ask is not None and not len(events) % progress.EVERY:
                ask()
        elif isinstance(f, DecisionFrame):
            decisions.append(Decision(len(events), f.request, f.legal, f.action, f.policy,
                                      f.elapsed, f.fallback, f.fallback_kind))
    events = formats.own_log_events(header.platform, events)
    own = header.seat if header.seat is not None else 0
    for e in events:
        if isinstance(e, ev.GameStarted):
            own = e.seat
            break
    lost = unknown = 0
    if header.platform == "botzone":  # the one platform whose answer carries the discard
        decisions, lost, unknown = _after_own_calls(decisions, events, own)
    notes = []
    if lost:
        notes.append(f"{lost} discard decision(s) made with a chow or pung that another "
                     "seat's claim overrode are left out (the call never happened)")
    if unknown:
        notes.append("the log ends after a chow or pung the bot answered, before the judge "
                     "said whether it was taken: the discard decided with it is left out")
    if (newer := log.newer_note()) is not None:
        notes.append(newer)
    if log.truncated is not None:
        notes.append(f"log cut at {log.truncated.place()} ({log.truncated.reason}): the "
                     "frames before it are shown")
    if seat is not None and seat != own:
        notes.append(f"this log is seat {own}'s own view; seat {seat} cannot be shown")
    return Replay(str(log.path), header.platform, header.variant, own, events, decisions,
                  log=log, notes=notes)


def _after_own_calls(decisions: list[Decision], events: list[Any], own: int
                     ) -> tuple[list[Decision], int, int]:
    """The discard a platform takes with the call (Botzone's ``CHI mid t`` / ``PENG t``) is
    decided, and logged, before the judge's line that carries the call comes back: such a
    turn decision, logged at the same place as its chow or pung, is moved after that call's
    event, where the seat then stood. One whose call never came is left out; returns the
    decisions, how many another seat's claim overrode, and how many the log ends before the
    judge's answer to (the last turn of a one-shot bot so far, or a match that ended there:
    a win on that discard, a penalty; Botzone tells the bot nothing after the end)."""
    out: list[Decision] = []
    lost = unknown = 0
    for n, d in enumerate(decisions):
        before = decisions[n - 1] if n else None
        if (d.request.kind != "turn" or before is None or before.index != d.index
                or before.request.kind != "claim"
                or not isinstance(before.action, ev.Chi | ev.Pon)):
            out.append(d)
            continue
        call = events[d.index] if d.index < len(events) else None
        if isinstance(call, ev.MeldCalled) and call.seat == own and call.kind in ("chi", "pon"):
            out.append(dataclasses.replace(d, index=d.index + 1))
        elif call is None:
            unknown += 1
        else:
            lost += 1
    return out, lost, unknown


def _from_table_log(log: GameLog, seat: int) -> Replay:
    """A local-table log holds every seat's tiles and decisions: show one seat's view."""
    header = log.header
    assert header is not None
    events: list[Any] = []
    decisions: list[Decision] = []
    ask = progress.hook()
    for f in log.frames:
        if isinstance(f, EventFrame):
            events.append(f.event)
            if ask is not None and not len(events) % progress.EVERY:
                ask()
        elif isinstance(f, DecisionFrame) and f.seat == seat:
            decisions.append(Decision(len(events), f.request, f.legal, f.action, f.policy,
                                      f.elapsed, f.fallback, f.fallback_kind))
    record = GameRecord(header.variant, "local", events, {"players": 4})
    notes = []
    if (newer := log.newer_note()) is not None:
        notes.append(newer)
    if log.truncated is not None:
        notes.append(f"log cut at {log.truncated.place()} ({log.truncated.reason}): the "
                     "frames before it are shown")
    players = header.extra.get("players")
    sat = [e.names[seat] for e in events if isinstance(e, ev.GameStarted) and e.names]
    if len(set(sat)) <= 1 and isinstance(players, list) and len(players) == 4:
        notes.append(f"local table, seat {seat} played by {players[seat]} "
                     f"(seats: {', '.join(map(str, players))})")
    elif len(set(sat)) > 1:  # a match log whose players moved between games (ntpu-server)
        counts = Counter(sat)
        notes.append(f"the players change seats between the {len(sat)} games of this log: "
                     f"seat {seat} is played by "
                     + ", ".join(f"{n} ({counts[n]} game{'s' * (counts[n] > 1)})"
                                 for n in dict.fromkeys(sat)))
    return Replay(str(log.path), "local", header.variant, seat, seat_view(record, seat),
                  decisions, record=record, log=log, notes=notes)


# --------------------------------------------------------------------------- decisions


def derive_decisions(record: GameRecord, seat: int, view: list[Any] | None = None,
                     damaged: Callable[[int, str], None] | None = None) -> list[Decision]:
    """The decisions ``seat`` made in a full record (see the module docstring); ``view`` is
    that seat's :func:`seat_view` where the caller has it already. ``damaged``: where given, a
    hand whose moves no longer fit the seat's table (a damaged or hand-edited log: a discard
    of a tile the hand does not hold) is left from there up to the next hand's or game's
    start, and ``damaged`` called with the event's index and why; the hands after it are
    read. Without it deriving stops there (a dataset leaves the rest of such a game out). A
    hand the record does not deal this seat (its tiles hidden) is no damage: its moves are
    left out quietly, as they always were."""
    rules = rules_for(record.variant)
    if view is None:
        view = seat_view(record, seat)
    state = TableState(record.variant, seat)
    out: list[Decision] = []
    turn: tuple[int, ev.DecisionRequest, tuple[Any, ...]] | None = None
    riichi = False
    broken = False  # this hand failed: its events skipped up to the next hand's start
    hidden = False  # this hand's tiles are not in the record for this seat
    full = record.events
    unread = record.damaged  # hands the reader could not read: each its start and why
    for i, (e, seen) in enumerate(zip(full, view, strict=True)):
        if i in unread:  # named whatever this seat sees of it: no seat sees its moves
            if damaged is None:
                break
            damaged(i, unread[i])
            broken, turn, riichi = True, None, False
            continue
        if broken:
            if not isinstance(e, ev.RoundStarted | ev.GameStarted):
                continue
            broken = False
        if isinstance(seen, ev.RoundStarted):
            hidden = not seen.hand
            progress.check()  # a long import's read given up between two hands
        unsound: StateError | None = None  # one check, for the decision and for the table
        try:
            check_event(e)
        except StateError as exc:
            unsound = exc
        if turn is not None and unsound is not None:
            turn = None  # a move that names no tile is no decision: check_event says why
        if turn is not None:
            action = _turn_action(e, seat, riichi)
            if action is None and isinstance(e, ev.RoundDrawn) and e.reason == "exhaustive":
                # Taiwan's last drawer (asked Win or Pass only) that did not win passed; a
                # turn with nothing else to do was not asked (the table does not ask it)
                legal = turn[2]
                action = ev.Pass() if len(legal) > 1 and ev.Pass() in legal else None
            if action is not None:
                out.append(Decision(turn[0], turn[1], turn[2], action))
            if action is not None or isinstance(e, ev.RoundDrawn):
                turn = None
                riichi = False
            elif isinstance(e, ev.RiichiDeclared) and e.seat == seat:
                riichi = True
        try:
            if unsound is not None:
                raise unsound
            state.apply(seen)
            if (isinstance(e, ev.TileDrawn) and e.seat == seat) or (
                    isinstance(e, ev.MeldCalled) and e.seat == seat
                    and e.kind in ("chi", "pon")):
                req = ev.DecisionRequest("turn")
                turn = (i + 1, req, tuple(rules.legal_actions(state, req)))
            elif isinstance(e, ev.TileDiscarded) and e.seat != seat and state.round_active:
                req = ev.DecisionRequest("claim", tile=e.tile, from_seat=e.seat)
                _claim(out, rules, state, req, full, i, seat)
            elif (isinstance(e, ev.MeldCalled) and e.kind == "added_kan" and e.seat != seat
                  and state.round_active):
                req = ev.DecisionRequest("rob_kan", tile=e.called, from_seat=e.seat)
                _claim(out, rules, state, req, full, i, seat)
        except DAMAGED as exc:
            # a seat whose tiles the record does not show, or one seat's view that no longer
            # adds up (a transcript missing a message: a hand of 12 tiles; a damaged log)
            if damaged is None:
                if isinstance(exc, StateError | HandError):
                    break
                raise
            if not hidden:
                damaged(i, damage_reason(exc))
            broken = True
            turn = None
            riichi = False
    return out


def _turn_action(e: Any, seat: int, riichi: bool) -> Any:
    if isinstance(e, ev.TileDiscarded) and e.seat == seat:
        return ev.Discard(e.tile, riichi)
    if isinstance(e, ev.MeldCalled) and e.seat == seat and e.kind == "closed_kan":
        return ev.Kan("closed_kan", tuple(e.tiles))
    if isinstance(e, ev.MeldCalled) and e.seat == seat and e.kind == "added_kan":
        return ev.Kan("added_kan", (e.called if e.called is not None else e.tiles[-1],))
    if isinstance(e, ev.MeldCalled) and e.seat == seat and e.kind == "nuki":
        return ev.Nuki()
    if isinstance(e, ev.RoundWon) and e.winner == seat and e.from_seat is None:
        return ev.Win()
    if isinstance(e, ev.RoundDrawn) and e.reason == "nine_terminals":
        return ev.AbortiveDraw()
    return None


def furiten_text(e: ev.FuritenShown) -> str:
    """The platform's furiten word as the replay shows it."""
    return f"the server shows seat {e.seat} {'furiten' if e.furiten else 'not furiten'}"


def _claim(out: list[Decision], rules: Any, state: TableState, req: ev.DecisionRequest,
           full: list[Any], i: int, seat: int) -> None:
    legal = tuple(rules.legal_actions(state, req))
    if len(legal) <= 1:
        return
    action: Any = ev.Pass()
    taken_by: Any = None  # another seat's win or call that took the tile
    for e in full[i + 1:]:
        if isinstance(e, ev.RiichiAccepted | ev.DoraRevealed | ev.PlatformNotice
                      | ev.FuritenShown):
            continue
        if isinstance(e, ev.RoundWon):
            if e.winner == seat and e.from_seat == req.from_seat:
                action = ev.Win()
                break
            taken_by = taken_by or e
            continue  # several winners on one discard
        if isinstance(e, ev.MeldCalled) and e.from_seat == req.from_seat:
            if e.seat != seat:
                taken_by = e
                break
            if not sound(e):  # a call that names no tile is no answer: check_event says why
                return
            own = own_tiles(e)
            if e.kind == "chi":
                action = ev.Chi(tuple(own))
            elif e.kind == "pon":
                action = ev.Pon(tuple(own))
            else:
                action = ev.Kan("open_kan", tuple(own))
        break
    if isinstance(action, ev.Pass) and taken_by is not None and not _pass_shown(
            state.spec.multi_ron, legal, taken_by):
        return  # the record cannot say what this seat answered: the tile went elsewhere first
    out.append(Decision(i + 1, req, legal, action))


def _pass_shown(multi_ron: bool, legal: tuple[Any, ...], taken_by: Any) -> bool:
    """Whether a seat's pass can be read off a record where another seat took the discard:
    only where the seat could have outranked the taker (a win over a call, a pung over a
    chow; a win beside another where several may win). A chow or pung the taker outranked
    (or a win a head bump gave to the first seat) was never settled by the seat's answer,
    which the record does not show (a full record of a rulebased table read as its calls'
    passes)."""
    can_win = any(isinstance(a, ev.Win) for a in legal)
    if isinstance(taken_by, ev.RoundWon):
        return can_win and multi_ron
    ours = max(_CLAIM_RANK.get(ev.action_kind(a), 0) for a in legal)
    return ours > _CLAIM_RANK.get(taken_by.kind, 0)


# what outranks what on a discard: a win, then a pung or kong, then a chow
_CLAIM_RANK = {"win": 3, "pon": 2, "open_kan": 2, "kan": 2, "chi": 1}


# --------------------------------------------------------------------------- summary


def action_text(action: Any) -> str:
    if isinstance(action, ev.Discard):
        return ("riichi " if action.riichi else "discard ") + T.tile_name(action.tile)
    if isinstance(action, ev.Chi | ev.Pon):
        return f"{ev.action_kind(action)} {T.to_mpsz(action.tiles)}"
    if isinstance(action, ev.Kan):
        return f"{action.kind} {T.to_mpsz(action.tiles)}"
    return ev.action_kind(action)


def action_key(action: Any) -> tuple[Any, ...]:
    """What counts as the same choice: the kind and the tile kinds (a red five or a plain one
    of the same kind is the same discard)."""
    tiles: tuple[int, ...] = ()
    if isinstance(action, ev.Discard):
        tiles = (T.kind(action.tile),)
    elif isinstance(action, ev.Chi | ev.Pon | ev.Kan):
        tiles = tuple(sorted(T.kind(t) for t in action.tiles))
    return (ev.action_kind(action), tiles)


def step_pass(request: ev.DecisionRequest, action: Any) -> bool:
    """Whether ``action`` is a discard chosen where the ask offers none: a platform that asks
    our turn in steps (NTPU: ``/ask hu``, ``/ask gong``, then ``/ask throw``) lets the policy
    weigh the whole turn at each step, and a discard chosen at an earlier step went out as
    ``/pass``. Any discard there is the same choice (not to win, not to kong); which tile
    goes is the next step's decision, compared there."""
    return (request.kind == "turn" and request.offered is not None
            and "discard" not in request.offered and isinstance(action, ev.Discard))


def summarize(replay: Replay) -> dict[str, Any]:
    """Per-hand summary as plain data (the ``--json`` output; the text form prints it)."""
    hands: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    names: tuple[str, ...] = ("", "", "", "")
    game_names = names
    dec_iter = iter(replay.decisions)
    next_dec = next(dec_iter, None)
    final: list[int] | None = None
    notes = list(replay.notes)
    # a one-seat view of several games (a command log, a client transcript) may be read
    # from another seat in each: each hand says its own where it is not the first game's
    one_view = replay.record is not None and "view_seat" in replay.record.meta
    game_seat = replay.seat
    left_out = {d["hand"]: d["why"] for d in replay.damaged}
    for i, e in enumerate(replay.events):
        while next_dec is not None and next_dec.index <= i:
            if current is not None:
                _add_decision(current, next_dec)
            next_dec = next(dec_iter, None)
        if isinstance(e, ev.GameStarted):
            # the header names the first game's players; a log of several games whose
            # players moved (ntpu-server rotates the clients) names them at each hand
            game_names = tuple(e.names)
            if not any(names):
                names = game_names
            if one_view:
                game_seat = e.seat
        elif isinstance(e, ev.RoundStarted):
            try:
                label = f"{'ESWN'[e.round_wind % 4]}{e.round_number + 1}"
            except DAMAGED:  # a damaged hand's start, its round unknown: a traceback
                label = "?"
            current = {
                "round": label, "honba": e.honba,
                "sticks": e.sticks, "dealer": e.dealer, "scores_before": list(e.scores),
                "hand": _hand_text(e.hand),
                "discards": {str(s): [] for s in range(4)}, "calls": [], "riichi": [],
                "results": [], "deltas": [0, 0, 0, 0], "decision_times": [], "fallbacks": [],
                "decisions": 0, "forced": 0, "notices": [],
            }
            if game_names != names:
                current["players"] = list(game_names)
            if game_seat != replay.seat:
                current["seat"] = game_seat
            hands.append(current)
            if len(hands) in left_out:  # a damaged hand: the note says why, not "unfinished"
                current["damaged"] = left_out[len(hands)]
        elif isinstance(e, ev.GameEnded):
            final = list(e.scores)
        elif current is None:
            if isinstance(e, ev.PlatformNotice):  # before any hand: a Botzone verdict on
                notes.append(e.text)  # the setup request, which ends the match there
            continue
        elif isinstance(e, ev.TileDiscarded):
            current["discards"][str(e.seat)].append(_tile_text(e.tile))
        elif isinstance(e, ev.MeldCalled):
            frm = "" if e.from_seat is None else f" from {e.from_seat}"
            current["calls"].append(f"seat {e.seat} {e.kind} {_meld_text(e.tiles)}{frm}")
        elif isinstance(e, ev.RiichiDeclared):
            current["riichi"].append(e.seat)
        elif isinstance(e, ev.RoundWon):
            current["results"].append({
                "type": "win", "winner": e.winner, "from": e.from_seat,
                "self_draw": e.from_seat is None, "value": e.value,
                "hand": _hand_text(e.hand),
                "win_tile": _tile_text(e.win_tile), "yaku": list(e.yaku),
                "deltas": list(e.deltas), "detail": e.detail, "pao": e.pao_seat})
            current["deltas"] = [a + b for a, b in zip(current["deltas"], e.deltas, strict=False)]
        elif isinstance(e, ev.RoundDrawn):
            current["results"].append({"type": "draw", "reason": e.reason,
                                       "deltas": list(e.deltas), "tenpai": list(e.tenpai)})
            current["deltas"] = [a + b for a, b in
                                 zip(current["deltas"], e.deltas or (0,) * 4, strict=False)]
        elif isinstance(e, ev.PlatformNotice):
            # what the log adds beside the table: our rules' value of an NTPU win (the server
            # sends none), an illegal answer the referee replaced, a reconnect, an abandon
            current["notices"].append(e.text)
        elif isinstance(e, ev.FuritenShown):
            current["notices"].append(furiten_text(e))
    while next_dec is not None and current is not None:
        _add_decision(current, next_dec)
        next_dec = next(dec_iter, None)
    for h in hands:
        times = h.pop("decision_times")
        h["time_median_ms"] = round(statistics.median(times) * 1000, 3) if times else None
        h["time_max_ms"] = round(max(times) * 1000, 3) if times else None
        # a hand the log ends inside has no result: no score changes to show, not zeros; nor
        # has one that ended with its result kept from us (mjai.app), but it is not unfinished
        h["result_unknown"] = not h["results"] and RESULT_NOT_SENT in h["notices"]
        h["unfinished"] = not h["results"] and not h["result_unknown"] and "damaged" not in h
        h["resumed_below"] = False
        if not h["results"]:
            h["deltas"] = None
    for h, after in itertools.pairwise(hands):
        # a hand of the same round, honba and dealer right after one with no result is that
        # hand told anew on a reconnect (Tenhou's REINIT; its scores less a riichi stick put
        # out before the drop): the first part is not one the log ends inside, as it read.
        # Told anew: it begins with the REINIT's notice; a new game's first hand after one
        # left in its first (a transcript's BYE) is E1-0 with dealer 0 too, and no resume
        h["resumed_below"] = h["unfinished"] and all(
            h[k] == after[k] for k in ("round", "honba", "dealer")) and any(
            n.startswith(REINIT_NOTICE) for n in after["notices"])
        h["unfinished"] = h["unfinished"] and not h["resumed_below"]
    return {"path": replay.path, "source": replay.source, "variant": replay.variant,
            "seat": replay.seat, "platform_seat": replay.platform_seat,
            "names": list(names), "hands": hands,
            "final_scores": final, "unfinished": unfinished_game(replay),
            "decisions": len(replay.decisions), "notes": notes}


def _tile_text(tile: Any) -> str:
    """A tile's name; a damaged file's name that is no tile (the reader keeps its text) as
    written: the summary of its game failed there (`mjbot replay`'s exit 2)."""
    return T.tile_name(tile) if T.is_valid(tile) else str(tile)[:40]


def _meld_text(tiles: Any) -> str:
    """A meld's tiles in mpsz, in their order; as read where a tile is none (the reader
    keeps a call's tiles unsorted then): the summary of its game failed there."""
    if all(T.is_valid(t) for t in tiles):
        return T.to_mpsz(tiles)
    return " ".join(_tile_text(t) for t in tiles)


def _hand_text(tiles: Any) -> str:
    """A hand in mpsz, sorted; as read where a tile is none (:func:`_tile_text`)."""
    if all(T.is_valid(t) for t in tiles):
        return T.to_mpsz(sorted(tiles, key=T.sort_key)) if tiles else ""
    return " ".join(_tile_text(t) for t in tiles)


def unfinished_game(replay: Replay) -> str | None:
    """Why the game of one of our own logs did not reach its end (None: it did, or the log is
    an import, whose end the events alone say): its footer's word, or no footer at all."""
    log = replay.log
    if log is None:
        return None
    if log.footer is None:
        if replay.source == "botzone":  # each turn a new process, none told of the end
            return ("no footer: Botzone never tells a bot how its match ended (a log cut in "
                    "the match reads the same)")
        return "the log ends without a footer (cut, or its process ended in the game)"
    return footer_unfinished(log.footer.result)


def footer_unfinished(result: Any) -> str | None:
    """Why a footer's ``result`` says its game did not reach its end (None: it did)."""
    if not isinstance(result, dict):
        return None
    for key, why in (("abandoned", "abandoned by the server"),
                     ("stopped", "stopped on request"),
                     ("unfinished", "the session ended before the game did")):
        if result.get(key):
            return why
    return None


def _add_decision(hand: dict[str, Any], d: Decision) -> None:
    hand["decisions"] += 1
    if len(d.legal) == 1:  # no choice, the policy not asked: its time is no thinking time
        hand["forced"] += 1  # (an mjai TCP or Botzone log has every pass-only offer)
    elif d.elapsed is not None:
        hand["decision_times"].append(d.elapsed)
    if d.fallback:
        # its kind (brain/tally.py's FallbackKind value) as the log gives it; None in a log
        # from before it was recorded
        hand["fallbacks"].append({"action": action_text(d.action), "why": d.fallback,
                                  "kind": d.fallback_kind or None})


def unfinished_why(hand: dict[str, Any], last: bool) -> str:
    """Why an unfinished hand of a summary has no result, as replay and an export say it: the
    client left its game in it (a transcript's BYE: the log goes on with the next game), the
    log ends inside it, or a result that never came (a dropped line lost it) with the log
    going on after it. A left hand said "which goes on with the next hand" beside the
    notice that the game stops there."""
    if LEFT_NOTICE in hand.get("notices", ()):
        return "the client left the game in this hand"
    if last:
        return "the log ends inside this hand"
    return "no result in the log, which goes on with the next hand"


def fallback_text(fallback: dict[str, Any]) -> str:
    """A fallback as `mjbot replay` words it: ``late: mc missed its budget``, the reason alone
    where the log recorded no kind, or where the reason starts with it (an outside program's:
    ``illegal: discard C ...``)."""
    why, kind = str(fallback["why"]), fallback.get("kind")
    return (f"{kind}: " if kind and not why.startswith(f"{kind}:") else "") + why


def _platform_seat_text(summary: dict[str, Any]) -> str:
    """`` (NTPU seat 2: NTPU counts from 1, replay from 0)`` beside the seat where the platform
    numbers its seats otherwise than the replay does."""
    seat = summary.get("platform_seat")
    return "" if seat is None else f" (NTPU seat {seat}: NTPU counts from 1, replay from 0)"


def format_summary(summary: dict[str, Any]) -> str:
    lines = [f"{summary['path']}  [{summary['source']}, {summary['variant']}] "
             f"seat {summary['seat']}{_platform_seat_text(summary)}  "
             f"{' / '.join(n or '-' for n in summary['names'])}"]
    lines += [f"  note: {n}" for n in summary["notes"]]
    spec = VARIANTS.get(summary["variant"])
    last = len(summary["hands"]) - 1
    for at, h in enumerate(summary["hands"]):
        # riichi sticks left on the table by the hands before: the next win takes them, and
        # its deltas hold them
        sticks = f"  sticks {h['sticks']}" if h.get("sticks") else ""
        if h.get("damaged") and not any(h["discards"].values()) and not h["results"]:
            where = "round unknown" if h["round"] == "?" else f"{h['round']}-{h['honba']}"
            lines.append(f"- {where}  left out: {h['damaged']}")
            continue  # a hand its reader could not read: nothing of it to show
        lines.append(f"- {h['round']}-{h['honba']} dealer {h['dealer']}{sticks}  scores "
                     f"{h['scores_before']}")
        if h.get("players"):
            lines.append(f"    players {' / '.join(n or '-' for n in h['players'])}")
        if h["hand"]:
            lines.append(f"    start   {h['hand']}")
        for s in range(4):
            mark = "*" if s == h.get("seat", summary["seat"]) else " "
            riichi = " (riichi)" if s in h["riichi"] else ""
            lines.append(f"   {mark}seat {s}  {' '.join(h['discards'][str(s)])}{riichi}")
        for c in h["calls"]:
            lines.append(f"    call    {c}")
        for r in h["results"]:
            if r["type"] == "win":
                how = "tsumo" if r["self_draw"] else f"ron from seat {r['from']}"
                # 責任払い: the seat that fed the third dragon / fourth wind set pays
                pao = f"  pao: seat {r['pao']} liable" if r.get("pao") is not None else ""
                lines.append(f"    WIN     seat {r['winner']} {how} on {r['win_tile']} "
                             f"value {r['value']}  {r['hand']}  {' '.join(r['yaku'])}"
                             + (f"  ({r['detail']})" if r.get("detail") else "") + pao)
            elif r["reason"] in PENALTIES and spec is not None and spec.botzone_penalties:
                # Botzone's judge ends the match on a bad answer: no draw, a penalty
                lines.append(f"    ENDED   {r['reason']} (penalty)")
            else:  # who was ready only matters where a draw pays it (riichi's noten)
                tenpai = f"  tenpai {r['tenpai']}" if spec is None or spec.noten_payments \
                    else ""
                lines.append(f"    DRAW    {r['reason']}{tenpai}")
        lines += [f"    notice  {n}" for n in h.get("notices", ()) if n != RESULT_NOT_SENT]
        if h.get("unfinished"):
            lines.append(f"    unfinished ({unfinished_why(h, at == last)})")
        elif h.get("resumed_below"):
            lines.append("    line dropped: the hand goes on below, as the server gave it back")
        elif h.get("result_unknown"):
            lines.append("    ended   result not sent (mjai.app sends no hora or ryukyoku)")
        else:
            lines.append(f"    deltas  {h['deltas']}")
        if h["time_median_ms"] is not None:
            forced = f" ({h['forced']} forced, not timed)" if h.get("forced") else ""
            lines.append(f"    time    {h['decisions']} decisions{forced}, median "
                         f"{h['time_median_ms']} ms, max {h['time_max_ms']} ms")
        for f in h["fallbacks"]:
            lines.append(f"    FALLBACK {f['action']} ({fallback_text(f)})")
    if summary["final_scores"] is not None:
        lines.append(f"final scores {summary['final_scores']}")
    if summary.get("unfinished"):
        lines.append(f"game unfinished: {summary['unfinished']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- walking


def walk(replay: Replay) -> Iterator[tuple[Decision, TableState]]:
    """Each decision of the replay's seat with its table as it stood then (the same table,
    changed in place). A hand that failed when the replay was read (``replay.damaged``) is
    left from the failing event up to the next hand's or game's start, as its decisions
    were; any other event the table refuses (a damaged log of our own, whose recorded
    decisions are not derived from the table) is noted in ``replay.damaged``
    (:func:`damaged_hand`) and its hand left the same way: `mjbot review` of such a log was
    a traceback."""
    noted = {d["hand"] for d in replay.damaged}
    table = TableWalk(replay)

    def refused(index: int, why: str) -> None:
        if table.hand not in noted:
            damaged_hand(replay, index, why)
            noted.add(table.hand)

    for d in replay.decisions:
        if table.to(d.index, refused):
            yield d, table.state


class TableWalk:
    """The replay's seat's table taking its events in order up to each decision (:meth:`to`),
    a hand whose event the table refuses left from there up to the next hand's or game's
    start (a match log's next game: its seat and rules, as :func:`walk` reads): the
    commentary's walk, and its lookahead's, a table of its own ahead of the commentary's."""

    def __init__(self, replay: Replay) -> None:
        self.events = replay.events
        self.state = TableState(replay.variant, replay.seat)
        self.applied = 0  # events the table has taken
        self.broken = False  # the hand in walk failed: its events skipped up to the next start
        self.hand = 0  # hands begun among those events (damage_at's count)

    def to(self, index: int, refused: Callable[[int, str], object] | None = None) -> bool:
        """The table as it stands before event ``index``; whether it follows the hand (False:
        the hand is broken). An event the table refuses is raised, or with ``refused`` told
        (its index, why) and its hand broken."""
        while self.applied < index:
            event = self.events[self.applied]
            self.applied += 1
            if isinstance(event, ev.RoundStarted):
                self.hand += 1
            if self.broken and not isinstance(event, ev.RoundStarted | ev.GameStarted):
                continue
            try:
                self.state.apply(event)
                self.broken = False
            except DAMAGED as exc:
                if refused is None:
                    raise
                refused(self.applied - 1, damage_reason(exc))
                self.broken = True
        return not self.broken


def damaged_hand(replay: Replay, index: int, why: str) -> None:
    """Note a hand that failed at event ``index`` after the replay was read (a move the
    commentary's table refused), unless it is noted already."""
    d = damage_at(replay.events, index, why)
    if all(x["hand"] != d["hand"] for x in replay.damaged):
        replay.damaged.append(d)


# --------------------------------------------------------------------------- policy agreement


def agreement(replay: Replay, policy_name: str, budget: float | None = None) -> dict[str, Any]:
    """Re-run a policy on every recorded decision from the state the seat had then, and compare
    its answer with the recorded one."""
    policy = get_policy(policy_name)
    rules = rules_for(replay.variant)
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    disagreements: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    started = time.perf_counter()
    for d, state in walk(replay):  # a hand our own log's table refuses: noted
        legal = list(d.legal) or rules.legal_actions(state, d.request)
        kind = d.request.kind
        by_kind[kind]["total"] += 1
        chosen = _ask(policy, policy_name, state, d.request, legal, budget)
        if isinstance(chosen, str):
            failures.append({"event_index": d.index, "round": _round_of(state), "kind": kind,
                             "error": chosen})
            continue
        same = action_key(chosen) == action_key(d.action) or (
            step_pass(d.request, chosen) and step_pass(d.request, d.action))
        by_kind[kind]["agree"] += int(same)
        if not same:
            disagreements.append({
                "event_index": d.index, "round": _round_of(state), "kind": kind,
                "hand": T.to_mpsz(sorted(state.hand, key=T.sort_key)),
                "recorded": action_text(d.action), "policy": action_text(chosen)})
    total = sum(c["total"] for c in by_kind.values())
    agree = sum(c["agree"] for c in by_kind.values())
    return {
        "policy": policy_name, "path": replay.path, "seat": replay.seat, "decisions": total,
        "agree": agree, "agreement": agree / total if total else None,
        "by_kind": {k: {"decisions": c["total"], "agree": c["agree"],
                        "agreement": c["agree"] / c["total"]} for k, c in by_kind.items()},
        "disagreements": disagreements, "failed": len(failures), "failures": failures,
        "seconds": round(time.perf_counter() - started, 3)}


def _ask(policy: Any, name: str, state: TableState, request: ev.DecisionRequest,
         legal: list[Any], budget: float | None) -> Any:
    """The policy's action, or (a str) why it gave none: it raised, or answered something
    that is no legal action. Counted as failed, not as a disagreement: a policy that did not
    really answer must not read as one that played otherwise (nor take the log's name, as
    its ValueError did, for a file that could not be read)."""
    try:
        decision = policy.decide(state, request, legal, budget)
    except Exception as exc:
        return f"{name} raised {type(exc).__name__}: {exc}"
    return check(name, decision, legal) or decision.action  # the brain's own judgement


def _round_of(state: TableState) -> str:
    return f"{'ESWN'[state.round_wind % 4]}{state.round_number + 1}-{state.honba}"


def format_agreement(result: dict[str, Any], limit: int = 20) -> str:
    pct = "n/a" if result["agreement"] is None else f"{100 * result['agreement']:.1f}%"
    lines = [f"policy {result['policy']} vs recorded play, seat {result['seat']}: "
             f"{result['agree']}/{result['decisions']} agree ({pct})"]
    if result["failed"]:
        first = result["failures"][0]
        lines.append(f"  FAILED: {result['policy']} gave no answer on {result['failed']}/"
                     f"{result['decisions']} decisions (counted as not agreeing); first, "
                     f"{first['round']} {first['kind']}: {first['error']}")
    for k, c in sorted(result["by_kind"].items()):
        lines.append(f"  {k:8s} {c['agree']}/{c['decisions']} ({100 * c['agreement']:.1f}%)")
    for d in result["disagreements"][:limit]:
        lines.append(f"  {d['round']:7s} {d['kind']:6s} {d['hand']:24s} recorded "
                     f"{d['recorded']:16s} policy {d['policy']}")
    more = len(result["disagreements"]) - limit
    if more > 0:
        lines.append(f"  ... {more} more (--json lists all)")
    return "\n".join(lines)


# --------------------------------------------------------------------------- re-parse


# the log's header in, an object with feed(raw) out, and optionally unreadable(raw): the
# events a message feed could not read still told the session (Tenhou: an unread draw)
CodecFactory = Callable[[Header], Any]


class _NtpuLines:
    """The NTPU codec as ``--reparse`` feeds it: one recorded line at a time, with the tile
    orders the client ran with (from the log header)."""

    def __init__(self, header: Header) -> None:
        honours = header.extra.get("honour_order", T.NtpuTiles.DEFAULT_HONOUR_ORDER)
        tiles = T.NtpuTiles(honours, header.extra.get("suit_order", "mps"))
        self.codec = NtpuCodec(tiles)

    def feed(self, raw: str | bytes) -> list[Any]:
        return self.codec.feed(raw.decode() if isinstance(raw, bytes) else raw)


class _TenhouTags:
    """The Tenhou codec fed one recorded tag (TCP text or WebSocket JSON) at a time."""

    def __init__(self, header: Header) -> None:
        self.codec = TenhouCodec()

    def feed(self, raw: str | bytes) -> list[Any]:
        text = raw.decode() if isinstance(raw, bytes) else raw
        tag = parse_tag(text) if text.lstrip().startswith("<") else tag_from_json(text)
        return self.codec.feed(tag)

    def unreadable(self, raw: str | bytes) -> list[Any]:
        """What the session still read in a message feed could not (our draw: the events of
        TenhouCodec.unreadable, as the client applied them)."""
        return self.codec.unreadable(raw.decode() if isinstance(raw, bytes) else raw)[0]


class _MjaiLines:
    """The mjai codec fed one recorded input line (an array of events, or one event)."""

    def __init__(self, header: Header) -> None:
        self.codec = MjaiCodec()

    def feed(self, raw: str | bytes) -> list[Any]:
        value = json.loads(raw)
        out: list[Any] = []
        for message in value if isinstance(value, list) else [value]:
            out += self.codec.feed(message)
        return out


class _BotzoneLines:
    """The Botzone codec fed one recorded request line at a time, and told each recorded
    response as the bot told it (``sent``): a concealed kong's tile is only in our answer."""

    def __init__(self, header: Header) -> None:
        self.codec = BotzoneCodec()

    def feed(self, raw: str | bytes) -> list[Any]:
        return self.codec.feed(raw.decode() if isinstance(raw, bytes) else raw)

    def sent(self, raw: str | bytes) -> None:
        self.codec.sent(raw.decode() if isinstance(raw, bytes) else raw)


_CODECS: dict[str, CodecFactory] = {"ntpu": _NtpuLines, "tenhou": _TenhouTags,
                                    "mjai": _MjaiLines, "botzone": _BotzoneLines}


def register_codec(platform: str, factory: CodecFactory) -> None:
    """Make a platform's codec available to ``--reparse`` (each platform's codec module
    registers itself; see protocols/)."""
    _CODECS[platform] = factory


def reparse(replay: Replay) -> dict[str, Any]:
    """Feed the recorded raw inbound messages through a fresh codec of the log's platform and
    compare the events it yields with the recorded ones, in order."""
    if replay.log is None:
        raise RecordError("--reparse needs one of mjbot's own logs (imports have no raw "
                          "messages)")
    platform = replay.log.header.platform if replay.log.header is not None else ""
    if platform == "ntpu-server":  # it said "no codec for platform 'local'"
        return _reparse_match(replay)
    if replay.source == "local":  # a table's full view: no client's codec to compare
        if not any(isinstance(f, (RxFrame, TxFrame)) for f in replay.log.frames):
            raise RecordError(f"a {platform} log holds the table's own events, no platform's "
                              "messages (the table runs in mjbot's process): nothing to "
                              "re-parse; --reparse reads a client's log")
        raise RecordError(f"a {platform} log holds the table's events and the lines of "
                          "every client: --reparse reads a client's own log")
    factory = _CODECS.get(replay.source)
    if factory is None:
        raise RecordError(f"no codec for platform {replay.source!r} to re-parse with "
                          f"(known: {', '.join(sorted(_CODECS)) or 'none yet'})")
    if replay.log.header is None:  # our reader never returns a log without one
        raise RecordError("--reparse needs the log's header frame")
    codec = factory(replay.log.header)
    # notices are commentary (our own errors, our value of a win), not what the server said
    recorded = [f.event for f in replay.log.frames if isinstance(f, EventFrame)
                and not isinstance(f.event, ev.PlatformNotice)]
    produced: list[Any] = []
    errors: list[str] = []
    as_in_game: list[str] = []  # failed again where the session noted an error too
    frames = replay.log.frames
    sent = getattr(codec, "sent", None)  # a codec that must know our answers (Botzone)
    for n, f in enumerate(frames):
        if isinstance(f, TxFrame) and sent is not None:
            sent(f.raw)
        elif isinstance(f, RxFrame):
            try:
                produced += [x for x in codec.feed(f.raw) if x.__class__ in EVENT_TYPES
                             and not isinstance(x, ev.PlatformNotice)]
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}"
                (as_in_game if _noted_as_error(frames, n) else errors).append(message)
                unreadable = getattr(codec, "unreadable", None)  # what the session still
                if unreadable is not None:  # read in it (Tenhou: an unread draw of ours)
                    produced += [x for x in unreadable(f.raw) if x.__class__ in EVENT_TYPES
                                 and not isinstance(x, ev.PlatformNotice)]
    mismatches = [{"index": i, "recorded": repr(a), "reparsed": repr(b)}
                  for i, (a, b) in enumerate(zip(recorded, produced, strict=False)) if a != b]
    same = not mismatches and len(recorded) == len(produced) and not errors
    return {"path": replay.path, "platform": replay.source, "recorded_events": len(recorded),
            "reparsed_events": len(produced), "identical": same,
            "mismatches": mismatches[:50], "errors": errors[:50],
            "unreadable_in_the_game": as_in_game[:50]}


def _reparse_match(replay: Replay) -> dict[str, Any]:
    """An ``ntpu-server`` match log: the lines it sent each client (``N> line``) fed through
    a fresh NTPU codec per client, as that client read them. Only read, not compared: the
    log's events are the referee's whole table, not what a client's codec makes of its
    lines (its own log holds those)."""
    assert replay.log is not None and replay.log.header is not None
    codecs: dict[str, _NtpuLines] = {}
    lines: Counter[str] = Counter()
    events: Counter[str] = Counter()
    errors: list[str] = []
    for f in replay.log.frames:
        if not isinstance(f, TxFrame):
            continue
        raw = f.raw.decode(errors="replace") if isinstance(f.raw, bytes) else f.raw
        client, sep, line = raw.partition("> ")
        if not sep or not client.isdigit():
            continue
        codec = codecs.setdefault(client, _NtpuLines(replay.log.header))
        lines[client] += 1
        try:
            events[client] += sum(x.__class__ in EVENT_TYPES for x in codec.feed(line))
        except Exception as exc:
            errors.append(f"client {client}, {line!r}: {type(exc).__name__}: {exc}")
    return {"path": replay.path, "platform": "ntpu-server",
            "clients": {c: {"lines": lines[c], "events": events[c]} for c in sorted(codecs)},
            "lines": sum(lines.values()), "reparsed_events": sum(events.values()),
            # the count of them all: ``errors`` lists the first 50 (it said "50 unreadable")
            "unreadable": len(errors),
            "errors": errors[:50], "mismatches": [], "unreadable_in_the_game": []}


def _noted_as_error(frames: list[Any], n: int) -> bool:
    """The session noted an error on reading raw frame ``n`` (an ``error:`` notice before the
    next raw frame): a message that failed in the game, and fails again, is read as it was
    (a bad tag from the server), not a difference of the codec."""
    for f in frames[n + 1:]:
        if isinstance(f, RxFrame):
            return False
        if isinstance(f, EventFrame) and isinstance(f.event, ev.PlatformNotice) \
                and f.event.text.startswith("error:"):
            return True
    return False


def export_notes(replay: Replay) -> tuple[list[str], int]:
    """What a tenhou.net/6 or mjai export of ``replay``'s whole game cannot say itself (neither
    format has a place for a note), as `mjbot replay --export` says it after ``PATH: `` and
    the viewer's export in its ``X-Mjbot-Export-Note`` header: what this version skipped,
    how far a cut game goes, and each hand a seat's table cannot follow (written as
    recorded); with the number of those hands (the CLI's exit 1). The viewer's export was
    the CLI's bytes, a 200 and no word, so a cut or damaged game passed for a whole one."""
    assert replay.record is not None
    lines = []
    if replay.log is not None and (newer := replay.log.newer_note()) is not None:
        lines.append(f"{newer}; the export leaves out what was skipped")
    partial = _partial_export(replay)
    if partial:
        lines.append(f"exported as far as the log goes: {partial}")
    # a hand whose moves stop fitting a seat's hand (a discard of a tile not held) is written
    # as recorded, both formats having a place for it: said, as replay says it, of any
    # seat's (the export writes every seat; replay.damaged is the read seat's only)
    found = table_damage(replay.record)
    unfit = [f"hand {d['hand']} ({d['round']}) cannot be followed from event {d['event']} "
             f"({d['what']}){d.get('at', '')}: {d['why']}; exported as recorded (a damaged or "
             "edited log)"
             for d in damages_at(replay.record.events, [found[h] for h in sorted(found)],
                                 replay.record.lines)]
    return lines + unfit, len(unfit)


def _partial_export(replay: Replay) -> str:
    """What of the game an export lacks, as replay's notes say it ("" for a whole game): the
    hands with no result (written so: the one the log ends inside, and any before it whose
    result a dropped line lost) and why the game did not end."""
    summary = summarize(replay)
    last = len(summary["hands"]) - 1  # a hand before it lost its result, as replay says
    parts = [f"hand {h['round']}-{h['honba']} unfinished ("
             + unfinished_why(h, at == last).replace("this hand", "it")
             + "; exported with no result)"
             for at, h in enumerate(summary["hands"]) if h["unfinished"]]
    if summary["unfinished"]:
        parts.append(f"game unfinished: {summary['unfinished']}")
    cut = replay.record.meta.get("cut") if replay.record is not None else None
    if cut and not parts:  # an import cut between hands: no hand unfinished to say it by
        parts.append(f"game unfinished: the file is cut short: {cut}")
    return "; ".join(parts)
