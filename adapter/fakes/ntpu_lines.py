"""The NTPU server's side of its protocol: the physical ids of a hand's tiles and the lines
each seat is sent for each event. One encoder for every server we run: the fake NTPU server
(ntpu_server.py) and an NTPU program seated at the local table (adapter/local/external/).

Ids are given from the full-information events (``before_event``, once per event, before any
seat is told), so a seat's lines (``lines_for``, from the event as that seat sees it) name
the very copies the server moves.

Two wordings: ``spec``, the published protocol (../shared/protocols/ntpu.md: ``/mo``, lowercase
winds, sorted ids), and ``lab``, the NYCU lab referee's as its records show it
(../shared/data/ntpu/lab_referee/): ``/draw`` for ``/mo``, ``East`` for ``east``, a hand's
``/initCard`` ids in the order they were dealt, a ``/pong`` naming the claimed id first and then
the claimer's two in the order of its reply, and a ``/start`` with no program name.
"""

from __future__ import annotations

from typing import Any

from adapter.fakes.tile_ids import take_ids
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import UnexpectedMessage
from protocols.ntpu import WIND_NAMES, parse_reply

WORDINGS = ("spec", "lab")


class HandIds:
    """The physical ids of one hand: every tile gets ``S*100 + R*10 + C`` when it is dealt or
    drawn (C counting the copies seen so far), and the server knows which ids each seat holds."""

    def __init__(self, tiles: T.NtpuTiles) -> None:
        self.tiles = tiles
        self.copies = [0] * 34
        self.held: list[list[int]] = [[] for _ in range(4)]
        self.discard: tuple[int, int] | None = None  # (seat, id) of the last discard
        self.chosen: dict[int, list[int]] = {}  # ids named in a seat's accepted reply
        self.last_move: dict[int, list[int]] = {}  # ids of the event being sent, per seat
        self.drawn: dict[int, int] = {}  # each seat's last drawn id
        self.robbable: tuple[int, int] | None = None  # (seat, id) of a kong's added tile
        self.win_line = ""

    def deal(self, seat: int, kind: int) -> int:
        k = T.kind(kind)
        tile_id = self.tiles.to_id(k, self.copies[k])
        self.copies[k] += 1
        self.held[seat].append(tile_id)
        return tile_id

    def take(self, seat: int, kinds: list[int]) -> list[int]:
        """Remove ids of ``kinds`` from the seat's hand (those its reply named first)."""
        return take_ids(self.held[seat], self.chosen.pop(seat, []),
                        [T.kind(k) for k in kinds], self.tiles.to_tile)


class NtpuLines:
    """One hand's ids and lines (a new one per hand); ``seed`` picks the seat that opens the
    wall in ``/initGame``, as the fake server always has."""

    def __init__(self, tiles: T.NtpuTiles, seed: int = 0, wording: str = "spec") -> None:
        if wording not in WORDINGS:
            raise ValueError(f"unknown wording {wording!r} (known: {', '.join(WORDINGS)})")
        self.ids = HandIds(tiles)
        self.seed = seed
        self.lab = wording == "lab"
        self.initcard_due: int | None = None  # the dealer, until its 17th tile is drawn

    def before_event(self, event: Any) -> None:
        """Give the event's tiles their ids (once, before any seat is told)."""
        ids = self.ids
        ids.last_move = {}
        if isinstance(event, ev.RoundStarted):
            for seat, hand in enumerate(event.hands):
                for kind in hand:
                    ids.deal(seat, kind)
            self.initcard_due = event.dealer
        elif isinstance(event, ev.TileDrawn) and event.tile is not None:
            ids.drawn[event.seat] = ids.deal(event.seat, event.tile)
            ids.last_move[event.seat] = [ids.drawn[event.seat]]
        elif isinstance(event, ev.TileDiscarded):
            (tile_id,) = ids.take(event.seat, [event.tile])
            ids.discard = (event.seat, tile_id)
            ids.last_move[event.seat] = [tile_id]
        elif isinstance(event, ev.MeldCalled):
            ids.last_move[event.seat] = self._meld_ids(event)
            if event.kind == "added_kan":
                ids.robbable = (event.seat, ids.last_move[event.seat][0])
        elif isinstance(event, ev.RoundWon):
            ids.win_line = self._win_line(event)
        if not isinstance(event, ev.MeldCalled | ev.RoundWon):
            ids.robbable = None

    def _win_line(self, won: ev.RoundWon) -> str:
        """``/hu <seat> <winning id> <the rest of the hand>``."""
        ids = self.ids
        held = ids.held[won.winner]
        if won.from_seat is None:
            win_id = ids.drawn[won.winner]
            rest = [i for i in held if i != win_id]
        elif ids.discard is not None and ids.discard[0] == won.from_seat:
            win_id, rest = ids.discard[1], list(held)
        else:
            assert ids.robbable is not None, "a win on a discard with no tile to win on"
            win_id, rest = ids.robbable[1], list(held)
        return f"/hu {won.winner + 1} {win_id} " + " ".join(map(str, sorted(rest)))

    def _meld_ids(self, meld: ev.MeldCalled) -> list[int]:
        ids = self.ids
        if meld.kind in ("chi", "pon", "open_kan"):
            assert ids.discard is not None and meld.called is not None
            own = list(meld.tiles)
            own.remove(meld.called)
            taken = ids.take(meld.seat, own)
            claimed = ids.discard[1]
            ids.discard = None
            if meld.kind == "chi":
                return [taken[0], claimed, taken[1]]
            if self.lab and meld.kind == "pon":
                return [claimed, *taken]
            return sorted([*taken, claimed])
        if meld.kind == "added_kan":
            assert meld.called is not None
            return ids.take(meld.seat, [meld.called])
        return sorted(ids.take(meld.seat, list(meld.tiles)))

    def _wind(self, index: int) -> str:
        name = WIND_NAMES[index]
        return name.capitalize() if self.lab else name

    def _dealt(self, held: list[int]) -> list[int]:
        """A dealt hand's ids: sorted (spec), or in the order dealt (lab)."""
        return list(held) if self.lab else sorted(held)

    def start_line(self, seat: int, name: str) -> str:
        """``/start MJ <seat> <name>``; the lab referee names no program (``/start MJ 1 ``)."""
        return f"/start MJ {seat + 1} " + ("" if self.lab else name)

    def lines_for(self, seat: int, event: Any) -> list[str]:
        """What the NTPU server sends ``seat`` for one event (as that seat sees it)."""
        ids = self.ids
        if isinstance(event, ev.RoundStarted):
            hand_wind = self._wind(event.round_number % 4)
            init = (f"/initGame {self._wind(event.round_wind)} {hand_wind} "
                    f"{(event.dealer + self.seed) % 4 + 1} {event.dealer + 1} 0")
            if seat == event.dealer:
                return [init]  # the dealer's /initCard waits for its 17th tile
            return [init, "/initCard " + " ".join(map(str, self._dealt(ids.held[seat])))]
        if isinstance(event, ev.TileDrawn):
            if event.seat != seat:
                return []
            if self.initcard_due == seat:
                self.initcard_due = None
                first = [i for i in ids.held[seat] if i not in ids.last_move[seat]]
                return ["/initCard " + " ".join(map(str, [*self._dealt(first),
                                                          *ids.last_move[seat]]))]
            return [f"{'/draw' if self.lab else '/mo'} {ids.last_move[seat][0]}"]
        if isinstance(event, ev.TileDiscarded):
            return [f"/throw {event.seat + 1} {ids.last_move[event.seat][0]}"]
        if isinstance(event, ev.MeldCalled):
            move = ids.last_move[event.seat]
            who = event.seat + 1
            if event.kind == "chi":
                return [f"/eat {who} {move[0]} {move[1]} {move[2]}"]
            if event.kind == "pon":
                return [f"/pong {who} " + " ".join(map(str, move))]
            if event.kind == "open_kan":
                return [f"/gong {who} 4 " + " ".join(map(str, move))]
            if event.kind == "added_kan":
                return [f"/gong {who} 1 {move[0]}"]
            if event.seat == seat:
                return [f"/gong {who} 0 " + " ".join(map(str, move))]
            return [f"/gong {who} 0"]
        if isinstance(event, ev.RoundWon):
            return [ids.win_line]
        return []


def reply_action(word: str, reply: str, ids: HandIds, seat: int) -> Any | None:
    """The action of a seat's reply to ``/ask word`` (None: a pass); UnexpectedMessage when it is no
    reply to that ask or names ids the seat does not hold. The ids it names are kept, so the
    server moves those very copies."""
    verb, numbers = parse_reply(reply)
    if verb == "/pass":
        return None
    expected = {"throw": "/throw", "hu": "/hu", "gong": "/gong", "pong": "/pong",
                "eat": "/eat"}[word]
    if verb != expected:
        raise UnexpectedMessage(f"{verb} is no answer to /ask {word}", reply)
    named = numbers[1:] if verb == "/gong" else numbers
    held = ids.held[seat]
    for tile_id in named:
        if tile_id not in held or named.count(tile_id) > 1:
            raise UnexpectedMessage(f"id {tile_id} is not in the seat's hand "
                            f"({' '.join(map(str, sorted(held)))})", reply)
    kinds = [ids.tiles.to_tile(i) for i in named]
    ids.chosen[seat] = list(named)
    if verb == "/hu":
        return ev.Win()
    if verb == "/throw":
        return ev.Discard(kinds[0])
    if verb == "/pong":
        return ev.Pon(tuple(kinds))
    if verb == "/eat":
        return ev.Chi(tuple(sorted(kinds)))
    form = numbers[0]
    kind = {0: "closed_kan", 1: "added_kan", 4: "open_kan"}[form]
    return ev.Kan(kind, tuple(kinds))
