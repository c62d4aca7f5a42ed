"""Botzone ChineseStandardMahjong (MCR) request lines <-> internal events and actions (sans-IO).

One request line per turn (../shared/protocols/botzone.md). The judge leaves things unsaid that
the codec fills in: ``PENG t`` / ``CHI mid t`` name the discard made *after* the call (the
claimed tile is the previous discard), ``GANG`` is an open kong when the previous event was
another seat's discard and a concealed one when the player had just drawn (its tile is shown
only to the player, who chose it), and a draw right after one's own kong is a replacement.

``feed(line)`` returns the events and, last, the :class:`DecisionRequest` the line asks
(``ack`` where only ``PASS`` is allowed). ``encode(action, discard=tile)`` writes the response; a
chow or pung and the discard after it are one response (``PENG t``), so ``discard`` is
required with :class:`Chi` / :class:`Pon`. ``sent(response)`` tells the codec what was
answered (replaying a history), so that one's own concealed kong is known.
"""

from __future__ import annotations

from typing import Any

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

DUPLICATE_WALL = 34
HAND = 13


class BotzoneCodec(Codec):
    platform = "botzone"
    variant = "mcr"

    def __init__(self) -> None:
        self.seat: int | None = None
        self.quan = 0
        self.turn = 0  # request lines fed
        # (kind, seat, tile) of the previous event: "draw", "discard", "gang", "bugang", ...
        self.previous: tuple[str, int, int | None] | None = None
        self.last_discard: tuple[int, int] | None = None  # (seat, tile) open to claims
        self.own_kong_tile: int | None = None  # the tile of our own GANG t / BUGANG t answer
        self.replacement = [False] * 4

    # ------------------------------------------------------------------ requests

    def feed(self, line: str) -> list[Any]:
        raw = line.strip()
        parts = raw.split()
        if not parts:
            raise MalformedMessage("empty request", line)
        self.turn += 1
        code = parts[0]
        try:
            if code == "0":
                return self._setup(parts, raw)
            if code == "1":
                return self._deal(parts, raw)
            if self.seat is None:
                raise UnexpectedMessage("a game request before the setup request (0 ...)", raw)
            if code == "2":
                return self._own_draw(parts, raw)
            if code == "3":
                return self._event(parts, raw)
        except T.TileError as exc:
            raise MalformedMessage(f"bad tile ({exc})", raw) from None
        except (IndexError, ValueError) as exc:
            if isinstance(exc, ProtocolError):
                raise
            raise MalformedMessage(f"malformed request ({exc})", raw) from None
        raise UnsupportedMessage(f"unknown request code {code!r}", raw)

    def _setup(self, parts: list[str], raw: str) -> list[Any]:
        if len(parts) != 3:
            raise MalformedMessage("setup needs '0 myID quan'", raw)
        seat, quan = int(parts[1]), int(parts[2])
        if not (0 <= seat <= 3 and 0 <= quan <= 3):
            raise MalformedMessage("seat and prevalent wind must be 0..3", raw)
        self.seat, self.quan = seat, quan
        rules = {"duplicate_walls": True, "min_fan": 8, "platform": "botzone"}
        return [ev.GameStarted("mcr", seat, rules=rules), ev.DecisionRequest("ack")]

    def _deal(self, parts: list[str], raw: str) -> list[Any]:
        if self.seat is None:
            raise UnexpectedMessage("deal before the setup request", raw)
        flower_counts = [int(x) for x in parts[1:5]]
        if len(flower_counts) != 4 or min(flower_counts) < 0:
            raise MalformedMessage("deal needs four flower counts", raw)
        tiles = [T.from_botzone(x) for x in parts[5:]]
        hand = tiles[:HAND]
        if len(hand) != HAND:
            raise MalformedMessage(f"deal needs {HAND} tiles, got {len(hand)}", raw)
        flowers = tiles[HAND:]
        if len(flowers) != sum(flower_counts):
            raise MalformedMessage(f"deal names {len(flowers)} flowers after the hand, its "
                                   f"counts {sum(flower_counts)}", raw)
        # the flowers come seat by seat, as many as each seat's count (never dealt online)
        owners = [seat for seat, count in enumerate(flower_counts) for _ in range(count)]
        events: list[Any] = [ev.RoundStarted(
            round_wind=self.quan, dealer=0, scores=(0, 0, 0, 0), hand=tuple(hand),
            wall_remaining=4 * (DUPLICATE_WALL - HAND))]
        events.extend(ev.FlowerReplaced(seat, f) for seat, f in zip(owners, flowers, strict=True))
        self.previous = ("deal", 0, None)
        return [*events, ev.DecisionRequest("ack")]

    def _own_draw(self, parts: list[str], raw: str) -> list[Any]:
        if len(parts) != 2:
            raise MalformedMessage("a draw needs '2 tile'", raw)
        assert self.seat is not None
        tile = T.from_botzone(parts[1])
        replacement = self.replacement[self.seat]
        self.replacement[self.seat] = False
        self.previous = ("draw", self.seat, tile)
        self.last_discard = None
        return [ev.TileDrawn(self.seat, tile, replacement), ev.DecisionRequest("turn")]

    def _event(self, parts: list[str], raw: str) -> list[Any]:
        if len(parts) < 3:
            raise MalformedMessage("an event needs '3 player ACTION ...'", raw)
        seat = int(parts[1])
        if not 0 <= seat <= 3:
            raise MalformedMessage("player must be 0..3", raw)
        action, args = parts[2], parts[3:]
        handler = {
            "DRAW": self._draw, "PLAY": self._play, "PENG": self._peng, "CHI": self._chi,
            "GANG": self._gang, "BUGANG": self._bugang, "BUHUA": self._buhua,
        }.get(action)
        if handler is None:
            raise UnsupportedMessage(f"unknown action {action!r}", raw)
        return handler(seat, args, raw)

    def _args(self, args: list[str], n: int, raw: str) -> list[int]:
        if len(args) != n:
            raise MalformedMessage(f"expected {n} tile(s)", raw)
        return [T.from_botzone(a) for a in args]

    def _draw(self, seat: int, args: list[str], raw: str) -> list[Any]:
        self._args(args, 0, raw)
        replacement = self.replacement[seat]
        self.replacement[seat] = False
        self.previous = ("draw", seat, None)
        self.last_discard = None
        return [ev.TileDrawn(seat, None, replacement), ev.DecisionRequest("ack")]

    def _after_discard(self, seat: int, tile: int) -> list[Any]:
        """The discard event and the request it makes of us."""
        self.previous = ("discard", seat, tile)
        self.last_discard = (seat, tile)
        if seat == self.seat:
            return [ev.TileDiscarded(seat, tile), ev.DecisionRequest("ack")]
        return [ev.TileDiscarded(seat, tile),
                ev.DecisionRequest("claim", tile=tile, from_seat=seat)]

    def _play(self, seat: int, args: list[str], raw: str) -> list[Any]:
        (tile,) = self._args(args, 1, raw)
        return self._after_discard(seat, tile)

    def _claimed(self, seat: int, raw: str) -> tuple[int, int]:
        if self.last_discard is None or self.last_discard[0] == seat:
            raise UnexpectedMessage("a call with no discard of another seat before it", raw)
        return self.last_discard

    def _peng(self, seat: int, args: list[str], raw: str) -> list[Any]:
        (discard,) = self._args(args, 1, raw)
        giver, tile = self._claimed(seat, raw)
        meld = ev.MeldCalled(seat, "pon", (tile,) * 3, tile, giver)
        return [meld, *self._after_discard(seat, discard)]

    def _chi(self, seat: int, args: list[str], raw: str) -> list[Any]:
        middle, discard = self._args(args, 2, raw)
        giver, tile = self._claimed(seat, raw)
        mid = T.kind(middle)
        if mid >= 27 or mid % 9 in (0, 8) or abs(T.kind(tile) - mid) > 1 \
                or T.kind(tile) // 9 != mid // 9:
            raise UnexpectedMessage("the chow does not hold the claimed tile", raw)
        meld = ev.MeldCalled(seat, "chi", (mid - 1, mid, mid + 1), tile, giver)
        return [meld, *self._after_discard(seat, discard)]

    def _gang(self, seat: int, args: list[str], raw: str) -> list[Any]:
        self._args(args, 0, raw)
        previous = self.previous
        if previous is not None and previous[0] == "discard" and previous[1] != seat:
            giver, tile = previous[1], previous[2]
            assert tile is not None
            meld = ev.MeldCalled(seat, "open_kan", (tile,) * 4, tile, giver)
        elif previous is not None and previous[0] == "draw" and previous[1] == seat:
            tiles: tuple[int, ...] = ()
            if seat == self.seat:
                if self.own_kong_tile is None:
                    raise UnexpectedMessage("our concealed kong, but we did not answer GANG t",
                                            raw)
                tiles = (self.own_kong_tile,) * 4
            meld = ev.MeldCalled(seat, "closed_kan", tiles)
        else:
            raise UnexpectedMessage("a kong after neither a discard nor the player's draw", raw)
        self.own_kong_tile = None
        self.replacement[seat] = True
        self.previous = ("gang", seat, None)
        self.last_discard = None
        return [meld, ev.DecisionRequest("ack")]

    def _bugang(self, seat: int, args: list[str], raw: str) -> list[Any]:
        (tile,) = self._args(args, 1, raw)
        self.own_kong_tile = None
        self.replacement[seat] = True
        self.previous = ("bugang", seat, tile)
        self.last_discard = None
        meld = ev.MeldCalled(seat, "added_kan", (tile,) * 4, tile)
        if seat == self.seat:
            return [meld, ev.DecisionRequest("ack")]
        return [meld, ev.DecisionRequest("rob_kan", tile=tile, from_seat=seat)]

    def _buhua(self, seat: int, args: list[str], raw: str) -> list[Any]:
        (flower,) = self._args(args, 1, raw)
        self.previous = ("buhua", seat, flower)
        return [ev.FlowerReplaced(seat, flower), ev.DecisionRequest("ack")]

    # ------------------------------------------------------------------ responses

    def encode(self, action: Any, request: ev.DecisionRequest | None = None,
               discard: int | None = None) -> str:
        """The response line for ``action`` (with the discard after a chow or pung)."""
        if isinstance(action, ev.Pass):
            return "PASS"
        if isinstance(action, ev.Win):
            return "HU"
        if isinstance(action, ev.Discard):
            return f"PLAY {T.to_botzone(action.tile)}"
        if isinstance(action, ev.Kan):
            if action.kind == "open_kan":
                return "GANG"
            tile = T.to_botzone(action.tiles[0])
            self.own_kong_tile = T.kind(action.tiles[0])
            return f"GANG {tile}" if action.kind == "closed_kan" else f"BUGANG {tile}"
        if isinstance(action, ev.Pon | ev.Chi):
            if discard is None:
                raise EncodeError(f"{type(action).__name__} needs the discard that follows it",
                                  repr(action))
            if isinstance(action, ev.Pon):
                return f"PENG {T.to_botzone(discard)}"
            if self.last_discard is None:
                raise EncodeError("a chow with no discard to claim", repr(action))
            kinds = sorted([*(T.kind(t) for t in action.tiles), T.kind(self.last_discard[1])])
            return f"CHI {T.to_botzone(kinds[1])} {T.to_botzone(discard)}"
        raise EncodeError("Botzone has no response for this action", repr(action))

    def sent(self, response: str) -> None:
        """Note a response given earlier (history replay): our concealed kong's tile."""
        parts = response.split()
        if len(parts) == 2 and parts[0] in ("GANG", "BUGANG"):
            try:
                self.own_kong_tile = T.kind(T.from_botzone(parts[1]))
            except T.TileError:
                self.own_kong_tile = None


def parse_response(line: str) -> tuple[str, list[int]]:
    """A response line as (verb, tiles), for judges and tests; ProtocolError if malformed."""
    parts = line.split()
    if not parts or parts[0] not in ("PASS", "HU", "PLAY", "GANG", "BUGANG", "PENG", "CHI"):
        raise UnsupportedMessage("unknown response", line)
    expected = {"PASS": (0,), "HU": (0,), "PLAY": (1,), "GANG": (0, 1), "BUGANG": (1,),
                "PENG": (1,), "CHI": (2,)}[parts[0]]
    if len(parts) - 1 not in expected:
        raise MalformedMessage(f"{parts[0]} takes {' or '.join(map(str, expected))} tile(s)",
                               line)
    try:
        return parts[0], [T.from_botzone(p) for p in parts[1:]]
    except T.TileError as exc:
        raise MalformedMessage(f"bad tile ({exc})", line) from None
