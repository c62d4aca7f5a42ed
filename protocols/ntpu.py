"""NTPU / Cycgame Taiwan tournament server lines <-> internal events and actions (sans-IO).

The server (../shared/protocols/ntpu.md) speaks ASCII lines: ``/start``, ``/initGame``,
``/initCard``, ``/mo``, ``/ask ...``, the broadcast moves ``/throw`` ``/eat`` ``/pong``
``/gong`` ``/hu``, and ``/exit`` ``/close`` ``/ready``. Seats are 1..4 on the wire and 0..3
inside. Tiles are 3-digit physical ids (``S*100 + R*10 + C``): the codec keeps the ids we hold,
so that every reply names ids the server dealt us, while the events carry tile kinds.

The server leaves things unsaid that the codec fills in: other seats' draws are not announced
(a seat that acts on its own turn drew first, unless it just called; after a kong it drew a
replacement), the dealer's seventeenth tile is its first draw, a ``/hu`` on the last discard's
id is a win on that discard (otherwise a self-draw), and an ``/ask`` means our own turn or a
claim depending on what came before it. The lab referee's own words are read too: ``/draw`` for
``/mo``, and ``/hu <dealer> -1 <17 ids>`` for the dealer's win on the opening deal.

:class:`LineBuffer` frames bytes into lines (``\\n`` or ``\\r\\n``; a cut anywhere is fine).
:meth:`NtpuCodec.feed` turns one line into events and, last, what the line asks of us: a
:class:`~protocols.events.DecisionRequest` (``offered`` says which ``/ask``), :class:`Ready`,
or :class:`Closed`. :meth:`NtpuCodec.encode` writes the reply to an action.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocols import events as ev
from protocols import tiles as T
from protocols.codec import (
    Codec,
    EncodeError,
    MalformedMessage,
    ProtocolError,
    UnexpectedMessage,
    UnsupportedMessage,
)

PLATFORM = "ntpu"
HAND_SIZE = 16
WALL = 136
DEAD_END = 16  # the hand is drawn when 16 tiles remain
INITIAL_DRAWS = WALL - 4 * HAND_SIZE - DEAD_END
WIND_NAMES = ("east", "south", "west", "north")
MAX_LINE = 4096  # no server line is anywhere near this long
NO_TILE = "-1"  # /hu's winning id when the dealer wins on the opening deal
ENDED_BY_SERVER = "ended_by_server"  # a hand /exit ended before the wall's end, with no win
_MOVES = ("/mo", "/draw", "/throw", "/eat", "/pong", "/gong", "/hu")


@dataclass(frozen=True)
class Ready:
    """``/ready``: the server checks that we are alive; answer ``/ready``."""


@dataclass(frozen=True)
class Closed:
    """``/close``: the session is over."""


class LineBuffer:
    """Bytes (or text) in, complete lines out; a partial line waits for the rest."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._pending = b""
        self.max_line = max_line

    def feed(self, data: bytes | str) -> list[str]:
        if isinstance(data, str):
            data = data.encode()
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        if len(self._pending) > self.max_line:  # a line with no end: keep the stream going
            lines.append(self._pending)
            self._pending = b""
        return [raw.rstrip(b"\r").decode("ascii", errors="replace") for raw in lines]

    def close(self) -> list[str]:
        """The last line when the stream ends without a newline."""
        rest, self._pending = self._pending, b""
        text = rest.rstrip(b"\r").decode("ascii", errors="replace")
        return [text] if text else []


class NtpuCodec(Codec):
    """One connection's protocol state, from our seat's side."""

    platform = PLATFORM
    variant = "taiwan16"

    def __init__(self, tiles: T.NtpuTiles | None = None) -> None:
        self.tiles = tiles or T.NtpuTiles()
        self.seat: int | None = None
        self.name = ""
        self.round_wind = 0
        self.dealer = 0
        self.continuation = 0  # the dealer's repeat count (/initGame's last field)
        self._forget_hand()

    def _forget_hand(self) -> None:
        """No hand of ours in play: every field a hand sets, at its empty value (a new
        codec, a new game, a new deal; a field a hand adds belongs here)."""
        self.held: list[int] = []  # the ids in our concealed hand
        self.last_drawn_id: int | None = None
        self.my_turn = False  # we drew or called and have not discarded
        self.in_hand = False
        self.won = False
        self.opening = False  # dealt, and no move since: the dealer may win with no tile
        # (seat, id) of the last discard while it can still be claimed; an added kong's tile
        # while it can be robbed
        self.last_discard: tuple[int, int] | None = None
        self.added_kong: tuple[int, int] | None = None
        self.drawer: int | None = None  # the seat whose (unannounced) draw comes next
        self.replacement = False  # ... and whether it is a kong replacement
        self.draws = 0  # the hand's draws read (TileDrawn), the dealer's 17th tile the first

    # ------------------------------------------------------------------ server lines

    def feed(self, line: str) -> list[object]:
        raw = line.strip()
        parts = raw.split()
        if not parts:
            raise MalformedMessage("empty line", line)
        command, args = parts[0], parts[1:]
        handler = _HANDLERS.get(command)
        if handler is None:
            raise UnsupportedMessage(f"unknown command {command!r}", raw)
        try:
            items = handler(self, args, raw)
        except T.TileError as exc:
            raise MalformedMessage(f"bad tile id ({exc})", raw) from None
        except (IndexError, ValueError) as exc:
            if isinstance(exc, ProtocolError):
                raise
            raise MalformedMessage(f"malformed {command} ({exc})", raw) from None
        if command in _MOVES:
            self.opening = False
        self.draws += sum(isinstance(x, ev.TileDrawn) for x in items)
        return items

    def _seat(self, text: str, raw: str) -> int:
        if not text.isdigit() or not 1 <= int(text) <= 4:
            raise MalformedMessage(f"seat must be 1..4, got {text!r}", raw)
        return int(text) - 1

    def _id(self, text: str) -> tuple[int, int]:
        """(id, tile kind) of a tile token."""
        kind = self.tiles.parse(text)
        return int(text), kind

    def _need_seat(self, raw: str) -> int:
        if self.seat is None:
            raise UnexpectedMessage("a game message before /start", raw)
        return self.seat

    def _on_start(self, args: list[str], raw: str) -> list[object]:
        if len(args) < 2:
            raise MalformedMessage("/start needs 'MJ <seat> [<name>]'", raw)
        seat = self._seat(args[1], raw)
        self.seat, self.name = seat, " ".join(args[2:])
        self._forget_hand()  # a new game: nothing of a hand still in play before it is ours
        rules = {"platform": PLATFORM, "game": args[0]}
        return [ev.GameStarted("taiwan16", seat, rules=rules)]

    def _on_init_game(self, args: list[str], raw: str) -> list[object]:
        # a hand's line, as /initCard: before any /start it set the next game's dealer and
        # wind unsaid, where /initCard there was refused
        self._need_seat(raw)
        if len(args) != 5:
            raise MalformedMessage(
                "/initGame needs '<wind> <game> <open> <banker> <continue>'", raw)
        winds = []
        for word in args[:2]:
            if word.lower() not in WIND_NAMES:
                raise MalformedMessage(f"unknown wind {word!r}", raw)
            winds.append(WIND_NAMES.index(word.lower()))
        self._seat(args[2], raw)
        self.round_wind, self.dealer = winds[0], self._seat(args[3], raw)
        self.continuation = int(args[4])
        return []

    def _on_init_card(self, args: list[str], raw: str) -> list[object]:
        seat = self._need_seat(raw)
        if len(args) not in (HAND_SIZE, HAND_SIZE + 1):
            raise MalformedMessage(f"/initCard needs {HAND_SIZE} or {HAND_SIZE + 1} ids, got "
                                   f"{len(args)}", raw)
        ids = [self._id(a) for a in args]
        if len({i for i, _ in ids}) != len(ids):
            raise MalformedMessage("/initCard repeats an id", raw)
        if (len(ids) == HAND_SIZE + 1) != (seat == self.dealer):
            raise UnexpectedMessage(f"/initCard with {len(ids)} ids, but the dealer is seat "
                                    f"{self.dealer + 1} and we are seat {seat + 1}", raw)
        self._forget_hand()
        self.held = [i for i, _ in ids]
        self.in_hand, self.opening = True, True
        hand = tuple(k for _, k in ids[:HAND_SIZE])
        events: list[object] = [ev.RoundStarted(
            round_wind=self.round_wind, dealer=self.dealer, scores=(0, 0, 0, 0), hand=hand,
            round_number=self.dealer, honba=self.continuation,
            wall_remaining=INITIAL_DRAWS)]
        # the dealer's seventeenth tile is its first draw
        if seat == self.dealer:
            self.last_drawn_id = ids[-1][0]
            self.my_turn = True
            events.append(ev.TileDrawn(seat, ids[-1][1]))
        else:
            self.my_turn = False
            events.append(ev.TileDrawn(self.dealer, None))
        return events

    def _on_mo(self, args: list[str], raw: str) -> list[object]:
        seat = self._need_seat(raw)
        if len(args) != 1:
            raise MalformedMessage("/mo (/draw) needs one id", raw)
        tile_id, kind = self._id(args[0])
        if tile_id in self.held:
            raise UnexpectedMessage(f"/mo of id {tile_id}, which we already hold", raw)
        replacement = self.replacement and self.drawer == seat
        self.held.append(tile_id)
        self.last_drawn_id = tile_id
        self.my_turn = True
        self.drawer, self.replacement = None, False
        self.last_discard = self.added_kong = None
        return [ev.TileDrawn(seat, kind, replacement)]

    def _on_ask(self, args: list[str], raw: str) -> list[object]:
        self._need_seat(raw)
        if len(args) != 1:
            raise MalformedMessage("/ask needs one word", raw)
        what = args[0]
        if what == "throw":
            if not self.my_turn:
                raise UnexpectedMessage("asked to throw when it is not our turn", raw)
            return [ev.DecisionRequest("turn", offered=frozenset({"discard"}))]
        offered = {"hu": "win", "gong": "kan", "pong": "pon", "eat": "chi"}.get(what)
        if offered is None:
            raise UnsupportedMessage(f"unknown /ask {what!r}", raw)
        if self.my_turn and what in ("hu", "gong"):
            return [ev.DecisionRequest("turn", offered=frozenset({offered}))]
        if self.added_kong is not None and what == "hu":
            seat, tile_id = self.added_kong
            return [ev.DecisionRequest("rob_kan", offered=frozenset({"win"}),
                                       tile=self.tiles.to_tile(tile_id), from_seat=seat)]
        if self.last_discard is None or self.last_discard[0] == self.seat:
            raise UnexpectedMessage(f"/ask {what} with no discard of another seat to claim", raw)
        seat, tile_id = self.last_discard
        return [ev.DecisionRequest("claim", offered=frozenset({offered}),
                                   tile=self.tiles.to_tile(tile_id), from_seat=seat)]

    def _own_turn_events(self, seat: int) -> list[object]:
        """A seat acts on its own turn: the draw we were not told of, if it had one."""
        if seat == self.seat or self.drawer != seat:
            return []
        replacement = self.replacement
        self.drawer, self.replacement = None, False
        return [ev.TileDrawn(seat, None, replacement)]

    def _release(self, tile_ids: list[int], raw: str) -> None:
        """Our tiles leave the hand (the server's echo of our move)."""
        for tile_id in tile_ids:
            if tile_id not in self.held:
                raise UnexpectedMessage(f"the server moved id {tile_id}, which we do not hold "
                                        f"(held: {' '.join(map(str, sorted(self.held)))})", raw)
        for tile_id in tile_ids:
            self.held.remove(tile_id)

    def _on_throw(self, args: list[str], raw: str) -> list[object]:
        me = self._need_seat(raw)
        if len(args) != 2:
            raise MalformedMessage("/throw needs '<seat> <id>'", raw)
        seat = self._seat(args[0], raw)
        tile_id, kind = self._id(args[1])
        tsumogiri = None
        if seat == me:
            self._release([tile_id], raw)
            tsumogiri = tile_id == self.last_drawn_id
            self.my_turn = False
            self.last_drawn_id = None
        elif tile_id in self.held:
            raise UnexpectedMessage(f"seat {seat + 1} threw id {tile_id}, which we hold", raw)
        events = self._own_turn_events(seat)
        self.last_discard = (seat, tile_id)
        self.added_kong = None
        self.drawer, self.replacement = (seat + 1) % 4, False
        return [*events, ev.TileDiscarded(seat, kind, tsumogiri)]

    def _claimed(self, seat: int, tile_id: int, raw: str) -> int:
        if self.last_discard is None or self.last_discard[0] == seat:
            raise UnexpectedMessage("a call with no discard of another seat before it", raw)
        giver, discard_id = self.last_discard
        if tile_id != discard_id:
            raise UnexpectedMessage(f"the call claims id {tile_id}, the last discard was "
                                    f"{discard_id}", raw)
        return giver

    def _call(self, seat: int, kind: str, ids: list[tuple[int, int]], claimed: int,
              raw: str) -> list[object]:
        giver = self._claimed(seat, claimed, raw)
        own = [i for i, _ in ids if i != claimed]
        if seat == self.seat:
            self._release(own, raw)
            self.my_turn = kind != "open_kan"
            self.last_drawn_id = None
        self.last_discard = None
        self.drawer, self.replacement = (seat, True) if kind == "open_kan" else (None, False)
        tiles = tuple(sorted((k for _, k in ids), key=T.sort_key))
        return [ev.MeldCalled(seat, kind, tiles, self.tiles.to_tile(claimed), giver)]

    def _on_eat(self, args: list[str], raw: str) -> list[object]:
        self._need_seat(raw)
        if len(args) != 4:
            raise MalformedMessage("/eat needs '<seat> <a> <t> <b>'", raw)
        seat = self._seat(args[0], raw)
        ids = [self._id(a) for a in args[1:]]
        kinds = sorted(k for _, k in ids)
        if kinds[0] >= 27 or kinds[0] // 9 != kinds[2] // 9 or kinds != list(
                range(kinds[0], kinds[0] + 3)):
            raise MalformedMessage("/eat is not a run of three in one suit", raw)
        if self.last_discard is not None and (seat - self.last_discard[0]) % 4 != 1:
            raise UnexpectedMessage(f"seat {seat + 1} may not chow a discard of seat "
                                    f"{self.last_discard[0] + 1}", raw)
        return self._call(seat, "chi", ids, ids[1][0], raw)

    def _on_pong(self, args: list[str], raw: str) -> list[object]:
        self._need_seat(raw)
        if len(args) != 4:
            raise MalformedMessage("/pong needs '<seat> <x> <y> <z>'", raw)
        seat = self._seat(args[0], raw)
        ids = [self._id(a) for a in args[1:]]
        if len({k for _, k in ids}) != 1:
            raise MalformedMessage("/pong of different tiles", raw)
        claimed = self._claimed_id(ids, raw)
        return self._call(seat, "pon", ids, claimed, raw)

    def _claimed_id(self, ids: list[tuple[int, int]], raw: str) -> int:
        """Which of a pung's / kong's ids is the claimed discard (the server sorts them)."""
        if self.last_discard is None:
            raise UnexpectedMessage("a call with no discard before it", raw)
        if self.last_discard[1] not in [i for i, _ in ids]:
            raise UnexpectedMessage(f"the call does not hold the last discard (id "
                                    f"{self.last_discard[1]})", raw)
        return self.last_discard[1]

    def _on_gong(self, args: list[str], raw: str) -> list[object]:
        me = self._need_seat(raw)
        if len(args) < 2:
            raise MalformedMessage("/gong needs '<seat> <0|1|4> ...'", raw)
        seat, form = self._seat(args[0], raw), args[1]
        ids = [self._id(a) for a in args[2:]]
        if len({k for _, k in ids}) > 1:
            raise MalformedMessage("/gong of different tiles", raw)
        if form == "4":
            if len(ids) != 4:
                raise MalformedMessage("an open kong needs four ids", raw)
            return self._call(seat, "open_kan", ids, self._claimed_id(ids, raw), raw)
        if form not in ("0", "1"):
            raise MalformedMessage(f"unknown kong form {form!r} (0, 1 or 4)", raw)
        if form == "0":
            if len(ids) not in ((4,) if seat == me else (0, 4)):
                raise MalformedMessage(
                    "a concealed kong names four ids (or none, for another seat)", raw)
            if seat == me:
                self._release([i for i, _ in ids], raw)
            tiles = tuple(k for _, k in ids)
            meld = ev.MeldCalled(seat, "closed_kan", tiles)
        else:
            if len(ids) != 1:
                raise MalformedMessage("an added kong names one id", raw)
            (tile_id, kind), = ids
            if seat == me:
                self._release([tile_id], raw)
            self.added_kong = (seat, tile_id)
            meld = ev.MeldCalled(seat, "added_kan", (kind,) * 4, kind)
        events = self._own_turn_events(seat)  # read, nothing refused: now infer the draw
        if seat == me:
            self.my_turn = False
            self.last_drawn_id = None
        self.last_discard = None
        self.drawer, self.replacement = seat, True
        return [*events, meld]

    def _on_hu(self, args: list[str], raw: str) -> list[object]:
        self._need_seat(raw)
        if len(args) < 2:
            raise MalformedMessage("/hu needs '<seat> <winning id> <rest of hand>'", raw)
        seat = self._seat(args[0], raw)
        if args[1] == NO_TILE:
            return self._win_on_the_deal(seat, args[2:], raw)
        win_id, win_kind = self._id(args[1])
        rest = [self._id(a) for a in args[2:]]
        events: list[object] = []
        from_seat: int | None = None
        if self.last_discard is not None and self.last_discard[1] == win_id \
                and self.last_discard[0] != seat:
            from_seat = self.last_discard[0]
        elif self.added_kong is not None and self.added_kong[1] == win_id \
                and self.added_kong[0] != seat:
            from_seat = self.added_kong[0]
        else:
            events = self._own_turn_events(seat)
        self.won = True
        hand = tuple(sorted([*(k for _, k in rest), win_kind], key=T.sort_key))
        return [*events, ev.RoundWon(seat, from_seat, hand, win_kind, 0, (0, 0, 0, 0),
                                     detail="the NTPU server sends no value")]

    def _win_on_the_deal(self, seat: int, tokens: list[str], raw: str) -> list[object]:
        """``/hu <dealer> -1 <17 ids>``: the dealer's 17 dealt tiles win (天胡), so the line
        names no winning tile. The event stream needs one, and one the winner drew: the codec
        already reads the dealer's 17th dealt tile as its first draw (the TileDrawn of
        /initCard), so the win is a self-draw on that tile, which is how the rules see (and
        value) a heavenly win. Our own 17th id is known; another dealer's is not (we saw none
        of its tiles), so the line's last id stands for it: removing any tile of a complete
        hand leaves a hand waiting on it, and we value only our own wins. Only the dealer,
        before any move, can win so: anything else is refused."""
        if not self.in_hand or not self.opening:
            raise UnexpectedMessage(
                "a win with no winning tile (-1) comes only on the opening deal", raw)
        if seat != self.dealer:
            raise UnexpectedMessage(
                f"a win with no winning tile (-1) is the dealer's; seat {seat + 1} is not the "
                f"dealer (seat {self.dealer + 1})", raw)
        ids = [self._id(a) for a in tokens]
        if len(ids) != HAND_SIZE + 1 or len({i for i, _ in ids}) != len(ids):
            raise MalformedMessage(f"a win on the deal lists the dealer's {HAND_SIZE + 1} distinct "
                                   f"ids, got {len(ids)}", raw)
        listed = sorted(i for i, _ in ids)
        if seat == self.seat:
            if listed != sorted(self.held) or self.last_drawn_id is None:
                raise UnexpectedMessage(
                    "our win on the deal lists ids that are not the ids dealt us "
                    f"({' '.join(map(str, sorted(self.held)))})", raw)
            win_id = self.last_drawn_id
        else:
            if set(listed) & set(self.held):
                raise UnexpectedMessage("a win on the deal lists ids that we hold", raw)
            win_id = ids[-1][0]
        self.won = True
        hand = tuple(sorted((k for _, k in ids), key=T.sort_key))
        return [ev.RoundWon(seat, None, hand, self.tiles.to_tile(win_id), 0, (0, 0, 0, 0),
                            detail="a win on the opening deal (no winning tile); the NTPU "
                                   "server sends no value")]

    def draw_due(self) -> bool:
        """Another seat's draw comes next, which the server does not tell this seat."""
        return self.drawer is not None and self.drawer != self.seat

    def draws_left(self) -> int:
        """The hand's draws before the wall's end (16 tiles left), the one due counted as
        made: /exit's test and the command log reader's (replay/formats/ntpu_log.py)."""
        return INITIAL_DRAWS - self.draws - self.draw_due()

    def _on_exit(self, args: list[str], raw: str) -> list[object]:
        events: list[object] = []
        if self.in_hand and not self.won:
            # the wall's end (16 tiles left; the last drawer's draw unannounced if another
            # seat's) is an exhaustive draw; before it, the server ended the hand (it was read
            # as an exhaustive draw too)
            left = self.draws_left()
            if left <= 0:
                events.append(ev.RoundDrawn("exhaustive"))
            else:
                events.append(ev.PlatformNotice(
                    f"/exit with {left} draw(s) left before the wall's end: no win and no "
                    "exhaustive draw; the server ended the hand"))
                events.append(ev.RoundDrawn(ENDED_BY_SERVER))
        if args:
            events.append(ev.PlatformNotice(f"/exit {' '.join(args)}"))
        self.in_hand = self.my_turn = False
        self.held = []
        self.last_discard = self.added_kong = None
        return events

    def _on_close(self, args: list[str], raw: str) -> list[object]:
        return [Closed()]

    def _on_ready(self, args: list[str], raw: str) -> list[object]:
        return [Ready()]

    # ------------------------------------------------------------------ our replies

    def _pick(self, kinds: list[int], prefer: int | None = None) -> list[int]:
        """Held ids for ``kinds`` (one id per entry), the just-drawn id first where it fits."""
        try:
            return T.choose_ids(self.held, [T.kind(k) for k in kinds], self.tiles.to_tile,
                                [prefer])
        except T.TileError as exc:
            raw = T.tile_name(exc.raw) if T.is_valid(exc.raw) else repr(exc.raw)
            raise EncodeError(str(exc), raw) from None

    def encode(self, action: object, request: ev.DecisionRequest | None = None) -> str:
        """The reply line (no newline) to the last ask; EncodeError if we hold no ids for it."""
        if isinstance(action, Ready):
            return "/ready"
        if isinstance(action, ev.Pass):
            return "/pass"
        if isinstance(action, ev.Win):
            return "/hu"
        if isinstance(action, ev.Discard):
            (tile_id,) = self._pick([action.tile], prefer=self.last_drawn_id)
            return f"/throw {tile_id}"
        if isinstance(action, ev.Chi):
            return "/eat " + _ids(self._pick(list(action.tiles)))
        if isinstance(action, ev.Pon):
            return "/pong " + _ids(self._pick(list(action.tiles)))
        if isinstance(action, ev.Kan):
            kind = action.tiles[0]
            if action.kind == "closed_kan":
                return "/gong 0 " + _ids(self._pick([kind] * 4))
            if action.kind == "added_kan":
                (tile_id,) = self._pick([kind], prefer=self.last_drawn_id)
                return f"/gong 1 {tile_id}"
            return "/gong 4 " + _ids(self._pick([kind] * 3))
        raise EncodeError("the NTPU server has no reply for this action", repr(action))

    def safe_reply(self, line: str) -> str | None:
        """What to answer a line we could not read: ``/ready`` to a readiness check, a
        discard of the drawn id (or any held id) to ``/ask throw``, ``/pass`` to any other
        ask; None where no answer is owed."""
        parts = line.split()
        if parts[:1] == ["/ready"]:
            return "/ready"
        if parts[:1] != ["/ask"]:
            return None
        if parts[1:2] == ["throw"] and self.held:
            tile_id = self.last_drawn_id if self.last_drawn_id in self.held else self.held[-1]
            return f"/throw {tile_id}"
        return "/pass"


def _ids(ids: list[int]) -> str:
    return " ".join(map(str, sorted(ids)))


_HANDLERS = {
    "/start": NtpuCodec._on_start, "/initGame": NtpuCodec._on_init_game,
    "/initCard": NtpuCodec._on_init_card, "/mo": NtpuCodec._on_mo, "/draw": NtpuCodec._on_mo,
    "/ask": NtpuCodec._on_ask,
    "/throw": NtpuCodec._on_throw, "/eat": NtpuCodec._on_eat, "/pong": NtpuCodec._on_pong,
    "/gong": NtpuCodec._on_gong, "/hu": NtpuCodec._on_hu, "/exit": NtpuCodec._on_exit,
    "/close": NtpuCodec._on_close, "/ready": NtpuCodec._on_ready,
}


def parse_reply(line: str) -> tuple[str, list[int]]:
    """A client reply as (verb, numbers), for the fake server and tests; ProtocolError if it is
    not one of the protocol's replies."""
    parts = line.split()
    shapes = {"/throw": (1,), "/eat": (2,), "/pong": (2,), "/hu": (0,), "/pass": (0,),
              "/ready": (0,), "/gong": (2, 4, 5)}
    if not parts or parts[0] not in shapes:
        raise UnsupportedMessage("unknown reply", line)
    if len(parts) - 1 not in shapes[parts[0]] or not all(p.isdigit() for p in parts[1:]):
        raise MalformedMessage(f"malformed {parts[0]} reply", line)
    numbers = [int(p) for p in parts[1:]]
    if parts[0] == "/gong":
        form = {2: 1, 4: 4, 5: 0}[len(numbers)]
        if numbers[0] != form:
            raise MalformedMessage(f"/gong {numbers[0]} with {len(numbers) - 1} ids", line)
    return parts[0], numbers


SERVER_COMMANDS = frozenset(_HANDLERS)  # the first words of the lines a server sends
