"""A per-seat NTPU command log (the protocol lines one client received and sent) to events.

Three layouts read the same: the NYCU lab's client prints received lines after ``[ << ]`` and
sent ones after ``[ >> ]``; the lab referee's per-seat log (``*_PlayerN.log``) has the server's
lines bare and each reply it got as ``getCommand: [/throw 321]``; a bare list of the server's
lines has no replies at all. The received lines go through the NTPU codec exactly as a client
reads them live, so the record is that seat's own view: its own tiles, the others' discards and
calls, their hands unknown except where a ``/hu`` shows one. The server sends no value for a
win: every win is valued with our Taiwan rules from the seat's view (another seat's /hu
shows its concealed tiles and its calls are on the table; one with a concealed kong, whose
tiles no one is shown, keeps value 0 and says why). Replies add nothing (the server
echoes every move it accepts) and are only counted. Any other line (a client's debug output)
is skipped and counted, never fatal: a raw capture mixes them in.

The lab referee ends a drawn-out hand right after the draw that leaves 16 tiles and may write
no ``/exit``: a log that stops where the wall says the hand was over reads as a drawn hand,
not as one cut short.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from brain.rules import rules_for
from brain.rules.base import WinContext
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError
from protocols.ntpu import SERVER_COMMANDS, NtpuCodec, parse_reply
from replay.record import GameRecord, RecordError, unknown_start

if TYPE_CHECKING:
    from brain.rules.base import Rules, WinScore

SOURCE = "ntpu_log"
SKIPPED_SHOWN = 3  # skipped lines kept in the record's meta, to show what they were
_MARK = re.compile(r"\[\s*(<<|>>)\s*\]\s*")
_GET_COMMAND = re.compile(r"getCommand:\s*\[(.*)\]")  # the lab referee's log of a reply


class _Hand:
    """Whether a hand is open (read since its deal with no end line); its draws are the
    codec's count (NtpuCodec.draws, the dealer's 17th included)."""

    def __init__(self) -> None:
        self.open = False

    def see(self, event: Any) -> None:
        if isinstance(event, ev.RoundStarted):
            self.open = True
        elif isinstance(event, ev.RoundWon | ev.RoundDrawn):
            self.open = False

    def ended_by_the_wall(self, codec: NtpuCodec) -> list[Any]:
        """Where the open hand stops with no end line: its draw that left 16 tiles (told, or
        due to another seat) and the exhaustive draw; nothing if the wall was not there."""
        if not self.open:
            return []
        if codec.draws_left() != 0:
            return []
        events: list[Any] = []
        if codec.draw_due():
            assert codec.drawer is not None
            events.append(ev.TileDrawn(codec.drawer, None, codec.replacement))
        events.append(ev.RoundDrawn("exhaustive"))
        for e in events:
            self.see(e)
        return events


def robbed_kan(before: Any, won: ev.RoundWon) -> bool:
    """Whether ``won`` robs an added kan: ``before`` (the table event before the win, a
    notice not counted) is that kan and the win is on another seat's tile."""
    return isinstance(before, ev.MeldCalled) and before.kind == "added_kan" \
        and won.from_seat is not None


def value_own_win(rules: Rules, state: TableState, won: ev.RoundWon,
                  before: Any) -> tuple[WinScore | None, str]:
    """Our rules' value of the seat's own win ``won`` on ``state`` (its table before the
    win; ``before``: the table event before it, see :func:`robbed_kan`), as the live NTPU
    client logs it and replay shows it (the server sends no value): the score, or None and
    why. A hand our rules cannot read (a platform that dealt five of a tile, a view that
    no longer adds up) is not a win by them, never an exception."""
    try:
        score = rules.win_score(state, won.win_tile, won.from_seat, robbed_kan(before, won))
    except (ValueError, KeyError, IndexError, StateError) as exc:  # HandError: a ValueError
        return None, str(exc)
    return (score, "") if score is not None else (None, "not a win by our rules")


OTHERS_DETAIL = "valued by mjbot's rules (the NTPU server sends no value)"


def value_win(rules: Rules, state: TableState, won: ev.RoundWon,
              before: Any) -> tuple[WinScore | None, str]:
    """Our rules' value of any seat's win ``won`` on ``state`` (the view of the seat that
    logged it, before the win; ``before`` as in :func:`value_own_win`): the score, or None
    and what was missing or wrong."""
    if won.winner == state.seat:
        return value_own_win(rules, state, won, before)
    seat = state.seats[won.winner]
    if any(not m.tiles for m in seat.melds):
        return None, (f"seat {won.winner} has a concealed kong whose tiles the server never "
                      f"showed ('/gong {won.winner + 1} 0'), so its hand is not known")
    if not won.hand:
        return None, "the server showed no hand"
    ctx = WinContext(
        concealed=tuple(won.hand), melds=tuple(seat.melds), win_tile=won.win_tile,
        seat=won.winner, from_seat=won.from_seat, dealer=state.dealer,
        round_wind=state.round_wind_kind,
        after_kan=won.from_seat is None and isinstance(before, ev.TileDrawn)
        and before.seat == won.winner and before.replacement,
        robbing_kan=robbed_kan(before, won), last_tile=state.wall_remaining == 0,
        first_turn=not state.calls_made and seat.draws <= 1 and not seat.river,
        honba=state.honba)
    try:
        score = rules.score(ctx)
    except (ValueError, KeyError, IndexError) as exc:
        return None, str(exc)
    return (score, "") if score is not None else (None, "not a win by our rules")


class _OwnWins:
    """The seat's own state, to value every win it saw by our rules."""

    def __init__(self) -> None:
        self.rules = rules_for("taiwan16")
        self.state: TableState | None = None
        self.before: Any = None

    def see(self, event: Any) -> Any:
        """The event, a win valued (the seat's own as before; another seat's marked as
        valued by us, or with what kept it from being valued)."""
        if isinstance(event, ev.GameStarted):
            self.state = TableState("taiwan16", event.seat)
        state = self.state
        if isinstance(event, ev.RoundWon) and state is not None and event.value == 0 \
                and not any(event.deltas):
            own = event.winner == state.seat
            score, why = value_win(self.rules, state, event, self.before)
            if score is not None:
                event = dataclasses.replace(
                    event, value=score.value, deltas=tuple(score.deltas),
                    yaku=score.item_texts(),
                    detail="" if own else OTHERS_DETAIL)
            elif not own:
                event = dataclasses.replace(event, detail=f"not valued: {why}")
        if state is not None:
            try:
                state.apply(event)
            except StateError:
                self.state = None  # the view no longer adds up: later wins keep value 0
        if not isinstance(event, ev.PlatformNotice):
            self.before = event
        return event


def value_own_wins(events: list[Any]) -> list[Any]:
    """The events of one seat's view (an NTPU client's own game log too), each win valued
    by our rules as an import of its command log values it (a log written before other
    seats' wins were valued reads the same way: they are valued here)."""
    own = _OwnWins()
    return [own.see(e) for e in events]


# the lines that begin a game, a hand's setup or a hand: where the reading of a hand with a
# refused line picks up again
_FRESH = ("/start", "/initGame", "/initCard")


def loads(text: str, tiles: T.NtpuTiles | None = None) -> GameRecord:
    """One seat's games from its command log; ``tiles``: the id mapping the client ran with.

    A line the codec refuses (a tile id that is none, a seat 7, a move of a tile the seat
    does not hold) damages the hand it is in alone: a notice saying so stands at its place,
    :attr:`GameRecord.damaged` names it there, and the hand's other lines are not read (the
    codec's view of it no longer holds) up to the next game, hand setup or deal. A refused
    ``/start`` or ``/initGame`` damages the hand it sets up. The whole file
    was refused for one such line, every other hand lost."""
    codec = NtpuCodec(tiles)
    hand, own = _Hand(), _OwnWins()
    events: list[Any] = []
    lines: list[int] = []  # each event's line
    damaged: dict[int, str] = {}
    skipping = False  # the rest of a damaged hand: not read
    pending: str | None = None  # a line refused between hands: the next hand is damaged
    first = ""  # the first refused line, and why
    received = sent = 0
    skipped: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        body = line.strip()
        if not body or body.startswith("#"):
            continue
        mark = _MARK.match(body)
        if mark is not None:
            body = body[mark.end():].strip()
            if not body:
                continue
        reply = _GET_COMMAND.fullmatch(body)
        if (mark is not None and mark.group(1) == ">>") or reply is not None \
                or _is_reply(body):
            sent += 1
            continue
        if body.split()[0] not in SERVER_COMMANDS:
            skipped.append(f"line {n}: {_short(line.strip())}")
            continue
        received += 1
        command = body.split()[0]
        if skipping and command not in _FRESH:
            continue
        skipping = False
        if command in ("/start", "/initCard"):
            ended = hand.ended_by_the_wall(codec)
            events += ended
            lines += [n] * len(ended)
        try:
            out = codec.feed(body)
        except ProtocolError as exc:
            why = f"line {n}: {exc}"
            first = first or why
            if (command in _FRESH[:2] and not hand.open) or not events:
                pending = pending or why  # it sets up the next hand (or comes before any)
            elif command == "/initCard":  # the deal: the hand it deals is left out, its
                # round unknown (the codec read none of it), its lines not read; they were
                # read on as the hand before's
                damaged[len(events)] = pending or f"the line could not be read: {exc}"
                events.append(unknown_start())
                lines.append(n)
                hand.open, skipping, pending = False, True, None
            else:  # the notice says which line; the damage is named at it
                if hand.open:  # after a hand's end its moves and result were read whole:
                    # a notice alone (it marked the finished hand damaged)
                    damaged[len(events)] = f"the line could not be read: {exc}"
                events.append(ev.PlatformNotice(why))
                lines.append(n)
                hand.open, skipping = False, hand.open
            continue
        for e in out:
            if type(e) in ev.EVENT_TYPES:
                hand.see(e)
                if isinstance(e, ev.RoundStarted) and pending is not None:
                    damaged[len(events)] = pending  # the line before it set it up
                    pending, skipping = None, True
                events.append(own.see(e))
                lines.append(n)
        if skipping:
            hand.open = False
    ended = hand.ended_by_the_wall(codec)
    events += ended
    lines += [len(text.splitlines())] * len(ended)
    starts = [e for e in events if isinstance(e, ev.GameStarted)]
    if first and not any(isinstance(e, ev.RoundStarted) and i not in damaged
                         for i, e in enumerate(events)):
        raise RecordError(f"ntpu log: {first}")  # no hand reads: nothing of a game to show
    if not starts:
        junk = f"; {len(skipped)} lines are no protocol line, {skipped[0]}" if skipped else ""
        raise RecordError(f"ntpu log: no /start line (not a client's command log){junk}")
    meta = {"players": 4, "view_seat": starts[0].seat, "received": received, "sent": sent,
            "skipped": len(skipped), "skipped_lines": skipped[:SKIPPED_SHOWN],
            "cut_in_hand": hand.open}
    if pending is not None:  # refused after the last hand: said where it stands
        damaged[len(events)] = pending
        events.append(ev.PlatformNotice(pending))
        lines.append(int(pending.split()[1].rstrip(":")))
    return GameRecord("taiwan16", SOURCE, events, meta, lines=lines, damaged=damaged)


def _is_reply(body: str) -> bool:
    """A client's reply written bare (``/pass``; ``/throw 180`` with no seat), which no
    server line looks like."""
    if body.split()[0] not in ("/pass", "/throw", "/eat", "/pong", "/hu", "/gong"):
        return False
    try:
        verb, numbers = parse_reply(body)
    except ProtocolError:
        return False
    # the others' view of a concealed kong, ``/gong 1 0``, has the shape of a reply
    return verb != "/gong" or all(n >= 100 for n in numbers[1:])


def _short(line: str, limit: int = 60) -> str:
    return line if len(line) <= limit else line[:limit] + "..."
