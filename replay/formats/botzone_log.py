"""Botzone ChineseStandardMahjong judge logs (MCR) to events.

A log alternates judge entries (``output.display`` and the request lines sent to each seat in
``output.content``) and bot entries (``{"0": {"verdict", "response"}, ...}``). The deal comes
from ``display.hand``; every later move is read from the request lines, whose meaning
../shared/protocols/botzone.md fixes (``PENG t`` / ``CHI mid t`` name the discard *after* the
call, ``GANG`` is open after another seat's discard and concealed after one's own draw); the win
from ``display`` (fan list, total, scores). The judge's own request line for the drawer (``2 t``)
gives every draw's tile, so the record is full-information.
"""

from __future__ import annotations

import json
import math
from typing import Any

from protocols import events as ev
from protocols import tiles as T
from replay.record import CutShort, GameRecord, RecordError, canonical, ran_out

# the judge's verdicts that end a match, and what each means (replay's summary and the
# viewer's timeline say them; one table, so that the two cannot drift apart)
PENALTIES = {"WA": "a wrong answer", "WH": "a false win", "TLE": "out of time",
             "MLE": "out of memory", "OLE": "too much output", "RE": "the bot crashed",
             "NJ": "an answer that is no JSON"}


def _tile(text: Any, where: str) -> int:
    try:
        return T.from_botzone(str(text))
    except T.TileError:
        raise RecordError(f"botzone: bad tile {text!r} in {where}") from None


def _why(exc: Exception) -> str:
    """What was wrong, in words: a missing key by its name, else the error's own text."""
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}"


def loads(text: str) -> GameRecord:
    text = text.removeprefix("\ufeff")  # an editor's byte-order mark
    cut = ""  # where a log cut short ends, read up to there
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith(("[", "{")) and ran_out(exc, text):
            # a judge log cut: each entry of its list is whole JSON of its own, so those
            # before the cut are read, the log written as a bare list of entries or as the
            # object holding it (each was refused whole: "not JSON", then every format's
            # refusal, for the list; "nothing before the cut can be read" for the object)
            data, cut = _up_to_the_cut(text)
        else:
            raise RecordError(f"botzone: not JSON ({exc})") from None
    log = data.get("log") if isinstance(data, dict) else data
    if not isinstance(log, list):
        raise RecordError("botzone: expected a judge log with a 'log' list")
    reader = _Reader(data if isinstance(data, dict) else {})
    for n, entry in enumerate(log):
        if not isinstance(entry, dict):
            raise RecordError(f"botzone: entry {n} is not an object")
        output = entry.get("output")
        if not isinstance(output, dict):
            continue  # a bot turn: the next judge entry says what came of it
        display = output.get("display") or {}
        content = output.get("content") or {}
        if not isinstance(display, dict) or not isinstance(content, dict):
            raise RecordError(f"botzone: entry {n}: its output's display and content must be "
                              "objects")
        try:
            reader.judge(display, content, f"entry {n}")
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"botzone: entry {n} ({display.get('action')}): "
                              f"{_why(exc)}") from None
    return reader.finish(cut)


def _skip(text: str, pos: int, comma: bool) -> int:
    """``pos`` past white space (and, with ``comma``, the comma between two items)."""
    while pos < len(text) and (text[pos].isspace() or (comma and text[pos] == ",")):
        pos += 1
    return pos


def _whole_entries(text: str, pos: int) -> tuple[list[Any], int, bool]:
    """The whole entries of the list opened just before ``pos``, where reading stopped, and
    whether the list closed there."""
    decoder = json.JSONDecoder()
    entries: list[Any] = []
    while True:
        pos = _skip(text, pos, bool(entries))
        if text.startswith("]", pos):
            return entries, pos + 1, True
        try:
            entry, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return entries, pos, False
        entries.append(entry)


def _up_to_the_cut(text: str) -> tuple[Any, str]:
    """A judge log cut short read up to the cut: the bare list's whole entries, or the
    object's keys read whole before it with its 'log' list's whole entries; and where the
    cut is. CutShort where not one entry is whole."""
    ends = f"the JSON {'list ' if text.lstrip().startswith('[') else ''}ends at char {len(text)}"
    if text.lstrip().startswith("["):
        entries, pos, _ = _whole_entries(text, text.index("[") + 1)
        if not entries:
            raise CutShort(f"botzone: {ends} inside its first entry (nothing before the cut "
                           "can be read)")
        inside = (f"inside entry {len(entries)}" if text[pos:].strip(" \t\r\n,")
                  else f"after entry {len(entries) - 1}, before the list closes")
        return entries, f"{ends} {inside}: its {len(entries)} whole entries are read"
    decoder = json.JSONDecoder()
    data: dict[str, Any] = {}
    pos = text.index("{") + 1
    where = ""  # where in the 'log' list the cut is, once it is reached
    while not where:
        pos = _skip(text, pos, bool(data))
        try:
            key, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        pos = _skip(text, pos, False)
        if not isinstance(key, str) or not text.startswith(":", pos):
            break
        pos = _skip(text, pos + 1, False)
        if key == "log" and text.startswith("[", pos):
            entries, pos, closed = _whole_entries(text, pos + 1)
            data["log"] = entries
            if not closed:
                where = (f"inside entry {len(entries)} of its 'log' list"
                         if text[pos:].strip(" \t\r\n,") else f"after entry "
                         f"{len(entries) - 1} of its 'log' list, before the list closes")
            continue
        try:
            data[key], pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
    log = data.get("log")
    if not isinstance(log, list):
        raise CutShort(f"botzone: {ends} before its 'log' list (nothing before the cut can "
                       "be read)")
    if where and not log:
        raise CutShort(f"botzone: {ends} inside the first entry of its 'log' list (nothing "
                       "before the cut can be read)")
    at = where or "after its 'log' list, before its object closes"
    return data, f"{ends} {at}: its {len(log)} whole entries are read"


def _quan(value: Any, where: str) -> int:
    """The prevailing wind, 0-3 (East-North) as the judge writes it; anything else is named
    (a list or object was a bare TypeError, a 7 a wind no table has)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
        raise RecordError(f"botzone: {where}: 'quan' is {value!r}, not a wind 0-3")
    return value


class _Reader:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        init = data.get("initdata") or {}
        self.quan = _quan(init.get("quan", 0), "initdata") if isinstance(init, dict) else 0
        players = data.get("players", [])
        if not isinstance(players, list):
            raise RecordError(f"botzone: 'players' is {players!r}, not a list")
        names = tuple(str(p.get("name", "")) if isinstance(p, dict) else str(p)
                      for p in players)
        self.names = names if len(names) == 4 else ("", "", "", "")
        self.out: list[Any] = [ev.GameStarted("mcr", 0, self.names, {"duplicate_walls": True})]
        self.hands: list[list[int]] = [[], [], [], []]
        self.melds: list[list[ev.MeldCalled]] = [[], [], [], []]
        self.last_draw: list[int | None] = [None] * 4
        self.last: tuple[str, int, int | None] | None = None  # (action, seat, tile)
        self.replacement = [False] * 4
        self.started = False
        self.scores: tuple[int, ...] | None = None

    def judge(self, display: dict[str, Any], content: dict[str, Any], where: str) -> None:
        action = display.get("action")
        if action == "INIT":
            self.quan = _quan(display.get("quan", self.quan), where)
            return
        if action == "DEAL":
            self.hands = [[_tile(t, where) for t in h] for h in display["hand"]]
            self.out.append(ev.RoundStarted(
                round_wind=self.quan, dealer=0, scores=(0, 0, 0, 0), round_number=0,
                hands=tuple(tuple(h) for h in self.hands)))
            self.started = True
            return
        if not self.started:
            if action in PENALTIES and self.scores is None:  # a bad answer to the setup
                # request: Botzone's judge ends the match there, before any deal (no hand)
                self.scores = tuple(int(x) for x in display.get("score", (0, 0, 0, 0)))
                self.out.append(ev.PlatformNotice(f"{action} by seat {display.get('player')} "
                                                  "before the deal"))
                return
            raise RecordError(f"botzone: {action} before the deal in {where}")
        if action in ("HU", "HUANG", *PENALTIES):
            self._end(action, display, where)
            return
        line = self._line(content, where)
        parts = line.split()
        seat = int(parts[1]) if parts[0] == "3" else int(display["player"])
        if parts[0] == "2" or action == "DRAW":
            tile = _tile(parts[1] if parts[0] == "2" else display["tile"], where)
            self.hands[seat].append(tile)
            self.last_draw[seat] = tile
            self.out.append(ev.TileDrawn(seat, tile, self.replacement[seat]))
            self.replacement[seat] = False
            self.last = ("DRAW", seat, tile)
            return
        verb = parts[2]
        if verb == "PLAY":
            self._discard(seat, _tile(parts[3], where))
        elif verb in ("PENG", "CHI"):
            self._claim(seat, verb, parts, where)
        elif verb == "GANG":
            self._kong(seat, where)
        elif verb == "BUGANG":
            self._added_kong(seat, _tile(parts[3], where), where)
        elif verb == "BUHUA":
            flower = _tile(parts[3], where)
            self.out.append(ev.FlowerReplaced(seat, flower))
        else:
            raise RecordError(f"botzone: unknown request {line!r} in {where}")

    def _line(self, content: dict[str, Any], where: str) -> str:
        """The request line that tells the move: a ``3 ..`` line (sent to all), else the
        drawer's ``2 t``."""
        lines = [str(v) for v in content.values()]
        for line in lines:
            if line.startswith("3 "):
                return line
        for line in lines:
            if line.startswith("2 "):
                return line
        raise RecordError(f"botzone: no request line in {where}")

    def _discard(self, seat: int, tile: int) -> None:
        self._remove(seat, tile)
        tsumogiri = self.last is not None and self.last[:2] == ("DRAW", seat) and \
            self.last_draw[seat] == tile
        self.last_draw[seat] = None
        self.out.append(ev.TileDiscarded(seat, tile, tsumogiri))
        self.last = ("PLAY", seat, tile)

    def _remove(self, seat: int, tile: int) -> None:
        try:
            self.hands[seat].remove(tile)
        except ValueError:
            raise RecordError(f"botzone: seat {seat} plays {T.to_botzone(tile)} it does not "
                              "hold") from None

    def _claimed(self, where: str) -> tuple[int, int]:
        if self.last is None or self.last[0] not in ("PLAY", "PENG", "CHI") or \
                self.last[2] is None:
            raise RecordError(f"botzone: a claim in {where} with no discard before it")
        return self.last[1], self.last[2]

    def _claim(self, seat: int, verb: str, parts: list[str], where: str) -> None:
        from_seat, tile = self._claimed(where)
        if verb == "PENG":
            tiles = (tile, tile, tile)
            after = _tile(parts[3], where)
            kind = "pon"
        else:
            mid = T.kind(_tile(parts[3], where))
            tiles = (mid - 1, mid, mid + 1)
            after = _tile(parts[4], where)
            kind = "chi"
        own = list(tiles)
        own.remove(tile)
        for t in own:
            self._remove(seat, t)
        meld = ev.MeldCalled(seat, kind, canonical(tiles), tile, from_seat)
        self.melds[seat].append(meld)
        self.out.append(meld)
        self._discard(seat, after)
        self.last = (verb, seat, after)

    def _kong(self, seat: int, where: str) -> None:
        if self.last is not None and self.last[0] == "DRAW" and self.last[1] == seat:
            counts = T.counts34(self.hands[seat])
            kinds = [k for k in range(34) if counts[k] == 4]
            drawn = self.last[2]
            # the judge does not say which kong: the drawn tile's if it makes one, else the only
            # other four of a kind (ambiguous only with two concealed fours in one hand)
            if drawn is not None and T.kind(drawn) in kinds:
                k = T.kind(drawn)
            elif len(kinds) == 1:
                k = kinds[0]
            else:
                raise RecordError(f"botzone: cannot tell which concealed kong in {where}")
            tiles = (k, k, k, k)
            for t in tiles:
                self._remove(seat, t)
            meld = ev.MeldCalled(seat, "closed_kan", tiles)
        else:
            from_seat, tile = self._claimed(where)
            for _ in range(3):
                self._remove(seat, tile)
            meld = ev.MeldCalled(seat, "open_kan", (tile,) * 4, tile, from_seat)
        self.melds[seat].append(meld)
        self.out.append(meld)
        self.replacement[seat] = True
        self.last = ("GANG", seat, None)

    def _added_kong(self, seat: int, tile: int, where: str) -> None:
        self._remove(seat, tile)
        meld = ev.MeldCalled(seat, "added_kan", (tile,) * 4, tile)
        self.out.append(meld)
        self.replacement[seat] = True
        self.last = ("BUGANG", seat, tile)

    def _end(self, action: str, display: dict[str, Any], where: str) -> None:
        score = tuple(int(x) for x in display.get("score", (0, 0, 0, 0)))
        self.scores = score
        if action == "HUANG":
            self.out.append(ev.RoundDrawn("exhaustive", score))
            return
        if action in PENALTIES:
            seat = display.get("player")
            self.out.append(ev.PlatformNotice(f"{action} by seat {seat}"))
            self.out.append(ev.RoundDrawn(action, score))
            return
        seat = int(display["player"])
        if self.last is None:
            raise RecordError(f"botzone: HU in {where} with nothing to win on")
        what, by, tile = self.last
        if what == "DRAW" and by == seat:
            from_seat = None
            hand = list(self.hands[seat])
        elif what in ("PLAY", "PENG", "CHI", "BUGANG") and by != seat and tile is not None:
            from_seat = by
            hand = [*self.hands[seat], tile]
        else:
            raise RecordError(f"botzone: HU by seat {seat} in {where} after {what} by {by}")
        assert tile is not None
        fans = display.get("fan") or []
        yaku = tuple(f"{f['name']}×{f.get('cnt', 1)}={f['value'] * f.get('cnt', 1)}"
                     if f.get("cnt", 1) != 1 else f"{f['name']}={f['value']}" for f in fans)
        self.out.append(ev.RoundWon(
            winner=seat, from_seat=from_seat, hand=canonical(hand), win_tile=tile,
            value=int(display.get("fanCnt", 0)), deltas=score, yaku=yaku))

    def finish(self, cut: str = "") -> GameRecord:
        """The record; ``cut``: where a cut log ends (the hand unfinished unless its end came
        before the cut: no game end then)."""
        if not self.started and self.scores is None:  # no deal, and no verdict before one
            if cut:
                raise CutShort(f"botzone: {cut}, before the deal")
            raise RecordError("botzone: no DEAL in the log")
        if cut:
            meta = {"initdata": self.data.get("initdata"), "cut": cut}
            if self.scores is not None:  # the hand ended before the cut (the object's final
                # scores too where they were read before it)
                self.out.append(ev.GameEnded(self._final() or self.scores))
            return GameRecord("mcr", "botzone", self.out, meta)
        scores = self._final() or self.scores
        self.out.append(ev.GameEnded(tuple(scores or (0, 0, 0, 0))))
        return GameRecord("mcr", "botzone", self.out, {"initdata": self.data.get("initdata")})

    def _final(self) -> tuple[int, ...] | None:
        """The log's final 'scores' (None where it has none)."""
        final = self.data.get("scores")
        if not isinstance(final, list):
            return None
        # NaN and Infinity are JSON to Python's reader: int() of them raised past the check
        if len(final) != 4 or not all(isinstance(x, int | float) and not isinstance(x, bool)
                                      and math.isfinite(x) for x in final):
            raise RecordError(f"botzone: the final 'scores' {final!r} are not 4 numbers")
        return tuple(int(x) for x in final)
