"""A Tenhou client's transcript (``Send: <...>`` / ``Get: <...>`` lines) to one seat's events.

A capture of a client's connection (dnovikoff's tenhou captures, or a user's own client's)
writes each line the client sent after ``Send:`` and what it read after ``Get:``, several
server messages to a ``Get:`` line where one read held several: TCP tags (``<T68/>``), or
the WebSocket client's JSON objects (``{"tag": "T68"}``), as our own client's log has them.
The messages it got go through the Tenhou codec our own client plays with
(:class:`protocols.tenhou.TenhouCodec`), one at a time as the client reads them live, so
the record is what our client's game log holds: the seat's own hand, the others' draws
counted, every call, riichi and dora, and each hand's result from AGARI / RYUUKYOKU (the
final scores from ``owari``). What the client sent adds nothing (the server echoes every
discard and call it takes) and is only counted, but for two lines: ``HELO``, whose name is
the login ID (a credential: never shown, and masked wherever the server's text echoes it),
and ``BYE``, the client leaving: a game it left unfinished stops there, as our client's log
of a session that ended in a game does.

Session messages become the notices our client writes (a resumed game, a player who left),
and a message the codec cannot read an ``error:`` notice with what the client still read in
it, as in a live session; the game goes on. A three-player (sanma) game is refused in one
line: mjbot's Tenhou client and rules are four-player. Any other line is skipped and counted
by number only (its text may hold the ID).
"""

from __future__ import annotations

import dataclasses
import json
import re
import urllib.parse
from typing import Any

from protocols import events as ev
from protocols.codec import RAW_SHOWN, ProtocolError
from protocols.tenhou import (
    SANMA,
    GameOver,
    PlayerBack,
    PlayerLeft,
    Resumed,
    TenhouCodec,
    parse_tag,
    ready_from_payments,
    tag_from_json,
)
from replay.log import SCRUBBED, Scrubber
from replay.record import GameRecord, Refused

# the notice of a hand the client left (BYE): its game stops there, the log goes on with the
# next game, so the hand is neither one the log ends inside nor one whose result a drop lost
LEFT_NOTICE = "the client left (BYE) before the game's end: the game stops here"

SOURCE = "tenhou_client"
LABEL = "Tenhou client transcript"
SKIPPED_SHOWN = 3  # skipped line numbers kept in the record's meta
_LINE = re.compile(r"\s*(Get|Send)\s*:\s?(.*)$", re.S)
_TAG = re.compile(r"<[^<>]*>")
# within one tag ([^<>], not [^>]): each ``<HELO`` scanned up to the next ``>`` or the text's
# end, so a transcript of 16,000 ``<HELO `` and no ``>`` (96 KB) was 16,000 scans of the rest
# of the file, more than two minutes to read (the viewer's build held the interpreter with it)
_HELO_NAME = re.compile(r'<\s*HELO\b[^<>]*?\bname\s*=\s*"([^"]*)"')
# the WebSocket login: each brace-free object, then its tag (one pattern for both scanned, from
# each "tag":"HELO" of an object left open, to the object's end: 16,000 of them, 192 KB, took
# `mjbot replay` 83 s)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_HELO_JSON = re.compile(r'"tag"\s*:\s*"HELO"')
_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"]*)"')
_BYE = re.compile(r'<\s*BYE\b|"tag"\s*:\s*"BYE"')
# a Tenhou ID's shape ("ID" and two groups of eight): masked wherever quoted, the client's
# own or another's (a server's text may name one)
_ID_SHAPE = re.compile(r"ID[0-9A-Za-z]{8}-[0-9A-Za-z]{8}")


def draws_ready(events: list[Any]) -> list[Any]:
    """``events`` (a transcript's, or one of our own Tenhou game logs') with each exhaustive
    draw that names no ready seat given the seats it had: those its noten payments paid, as
    today's codec reads the RYUUKYOKU (:func:`protocols.tenhou.ready_from_payments`; a log
    our client wrote before the codec did, mjbot 8c8e7e0 and older, holds such a draw with
    none), and where nothing was paid (every seat ready, or none) all four where the next
    hand is the same hand again: Tenhou's dealer keeps the deal after an exhaustive draw only
    when ready. A draw the game or the file ends at, and any other event, as read."""
    out = list(events)
    hand: ev.RoundStarted | None = None  # the hand each draw ends
    for i, e in enumerate(out):
        if isinstance(e, ev.RoundStarted):
            hand = e
        elif isinstance(e, ev.GameStarted):
            hand = None
        if not isinstance(e, ev.RoundDrawn) or e.reason != "exhaustive" or e.tenpai:
            continue
        ready = ready_from_payments(e.deltas)
        if not ready and hand is not None and _deal_kept(hand, out[i + 1:]):
            ready = (0, 1, 2, 3)
        if ready:
            out[i] = dataclasses.replace(e, tenpai=ready)
    return out


def _deal_kept(hand: ev.RoundStarted, after: list[Any]) -> bool:
    """The hand after an exhaustive draw of ``hand`` is ``hand`` again, one honba on (the
    dealer was ready); False where the game ends first or ``after`` holds no next hand."""
    for e in after:
        if isinstance(e, ev.GameStarted | ev.GameEnded):
            return False
        if isinstance(e, ev.RoundStarted):
            return (e.round_wind, e.round_number, e.honba) == \
                (hand.round_wind, hand.round_number, hand.honba + 1)
    return False


def marked(head: str) -> bool:
    """The opening of a transcript: its first line is a ``Send:`` or ``Get:`` with a tag."""
    first = head.lstrip().split("\n", 1)[0]
    found = _LINE.match(first)
    return found is not None and found.group(2).lstrip().startswith(("<", "{"))


def login_id(text: str) -> str:
    """The name the client's HELO logged in with ("" where none, or anonymous)."""
    found = _HELO_NAME.search(text)
    if found is None:
        helo = next((o.group() for o in _JSON_OBJECT.finditer(text)
                     if _HELO_JSON.search(o.group())), None)
        found = _JSON_NAME.search(helo) if helo is not None else None
    name = urllib.parse.unquote(found.group(1)) if found is not None else ""
    return "" if name == "NoName" else name


def mask_ids(text: str, message: str) -> str:
    """``message`` (which may quote ``text``) with the login ID of a transcript in ``text``,
    and anything shaped like a Tenhou ID, masked."""
    secret = login_id(text) if "HELO" in text else ""
    masked = _ID_SHAPE.sub(SCRUBBED, Scrubber([secret] if secret else [])(message))
    # no part of the ID longer than the message can be in it: the parts of a name of 8,000
    # characters were one pattern of 32 million, 3 GB and 34 s to refuse a 13 KB file
    longest = min(len(secret), len(masked))
    if longest > 2:
        # a reader's reason quotes a line cut short (60, 200 characters): a cut inside the
        # ID left its first part, which neither the whole ID nor its shape matched
        starts = (re.escape(secret[:n]) for n in range(longest, 2, -1))
        masked = re.sub(f"(?:{'|'.join(starts)})(?![0-9A-Za-z])", SCRUBBED, masked)
    return masked


class _Reader:
    def __init__(self, secret: str) -> None:
        self.codec = TenhouCodec()  # no login name: the transcript's is never ours to hold
        self.scrub = Scrubber([secret] if secret else [])
        self.events: list[Any] = []
        self.errors = 0
        self.left = 0  # games the client left (BYE) before their end

    def mask(self, text: str) -> str:
        """``text`` with the login ID, and anything shaped like a Tenhou ID, masked."""
        return _ID_SHAPE.sub(SCRUBBED, self.scrub(text))

    def quote(self, text: str) -> str:
        """Text of the transcript as a message may show it: the ID masked, cut short."""
        return self.mask(text)[:RAW_SHOWN]

    def get(self, raw: str, where: str) -> None:
        """One message the client read, as our client reads it."""
        try:
            items = self.codec.feed(tag_from_json(raw) if raw.startswith("{")
                                    else parse_tag(raw))
        except ProtocolError as exc:
            self.errors += 1
            self.events.append(ev.PlatformNotice(
                # the codec's message may quote an attribute's value: masked as the raw is
                f"error: {where}: {self.mask(exc.message)}: {self.quote(exc.raw)!r}"))
            self.events += [e for e in self.codec.unreadable(raw)[0]
                            if type(e) in ev.EVENT_TYPES]
            return
        for item in items:
            if isinstance(item, ev.GameEnded) and item.abandoned:
                # as our client logs it: the scores are the last known, not the game's end
                self.events.append(ev.PlatformNotice(
                    f"abandoned: the server began a new game; last known scores {item.scores}"))
            elif isinstance(item, ev.GameStarted):
                if self.codec.game_type & SANMA:
                    raise Refused(
                        f"tenhou client: {where}: game type {self.codec.game_type} is a "
                        "three-player (sanma) game; mjbot's Tenhou client and rules are "
                        "four-player, so it is not read")
                self.events.append(item)
            elif type(item) in ev.EVENT_TYPES:
                self.events.append(item)
            elif isinstance(item, Resumed) and self.codec.started:
                self.events.append(ev.PlatformNotice("the server resumed our game (SAIKAI)"))
            elif isinstance(item, PlayerLeft | PlayerBack | GameOver) and self.codec.started:
                self.events.append(ev.PlatformNotice(self.quote(str(item))))

    def bye(self) -> None:
        """The client said BYE: a game still open stops here (the session is over)."""
        if self.codec.started:
            self.left += 1
            self.events.append(ev.PlatformNotice(LEFT_NOTICE))
            self.codec.forget_game()


def _messages(body: str) -> tuple[list[str], str]:
    """A ``Get:`` line's messages (tags, or JSON objects), and any text outside them."""
    if not body.startswith("{"):
        return _TAG.findall(body), _TAG.sub(" ", body).strip()
    out: list[str] = []
    decoder = json.JSONDecoder()
    at = 0
    while at < len(body):
        try:
            _, end = decoder.raw_decode(body, at)
        except (json.JSONDecodeError, RecursionError):
            return out, body[at:].strip()
        out.append(body[at:end])
        at = end
        while at < len(body) and body[at].isspace():
            at += 1
    return out, ""


def loads(text: str) -> GameRecord:
    """One client's games from its transcript."""
    lines = text.splitlines()
    # the number of the last line that holds anything (found once: asked at every Get: line,
    # a look at the lines after it made a long transcript's read quadratic)
    final = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    reader = _Reader(login_id(text))
    received = sent = 0
    skipped: list[int] = []
    cut = ""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        found = _LINE.match(line)
        if found is None:
            skipped.append(n)
            continue
        body = found.group(2).strip()
        if found.group(1) == "Send":
            sent += 1
            if _BYE.search(body):
                reader.bye()
            continue
        tags, rest = _messages(body)
        last = n == final
        if rest and last and rest.startswith(("<", "{")):
            cut = f"line {n} ends inside a message"  # the transcript's own cut
        elif rest:
            tags.append(rest)  # text outside any tag: the codec reports it, as live
        for k, raw in enumerate(tags, 1):
            received += 1
            reader.get(raw, f"line {n}" + (f" message {k}" if len(tags) > 1 else ""))
    events = draws_ready(reader.events)
    starts = [e for e in events if isinstance(e, ev.GameStarted)]
    if not starts:
        lines_shown = ", ".join(map(str, skipped[:SKIPPED_SHOWN]))
        shown = f"; not a Get:/Send: line: line(s) {lines_shown}" if skipped else ""
        raise Refused(f"tenhou client: no game in it (no INIT or REINIT among the {received} "
                      f"message(s) the client got){shown}")
    open_game = reader.codec.started
    if open_game and not cut:
        cut = ("it ends inside a hand" if reader.codec.in_hand else "it ends between hands") \
            + ", before the game's end (no owari)"
    meta: dict[str, Any] = {
        "players": 4, "view_seat": starts[0].seat, "received": received, "sent": sent,
        "skipped": len(skipped), "skipped_lines": [f"line {n}" for n in skipped[:SKIPPED_SHOWN]],
        "errors": reader.errors, "left": reader.left, "cut_in_hand": reader.codec.in_hand,
        "games": len(starts)}
    if open_game or cut:
        meta["cut"] = cut
    return GameRecord("riichi", SOURCE, events, meta)
