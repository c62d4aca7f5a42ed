"""The judge's side of Botzone's MCR protocol (sans-IO): the request lines one seat is sent for
the events it sees, and the action a response line makes on the request it answers.

One encoder for every judge we run: the local Botzone judge (adapter/fakes/botzone_judge.py)
and an outside Botzone bot seated at the local table (adapter/local/external/). The judge
leaves the same things unsaid as Botzone: a chow or pung is announced only with the discard
made after it (``3 s PENG t``, ``3 s CHI mid t``), and the response that made the call named
that discard, so the caller is not asked again (``planned_discard``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protocols import events as ev
from protocols import tiles as T
from protocols.botzone import parse_response
from protocols.codec import UnexpectedMessage


class RequestLines:
    """The request lines for one seat, event by event (``lines(event)``, the seat's own view
    of it); a chow / pung is held until the discard that completes its line."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.held_call: ev.MeldCalled | None = None

    def lines(self, e: Any) -> list[str]:
        if isinstance(e, ev.RoundStarted):
            hand = " ".join(T.to_botzone(t) for t in e.hand)
            return [f"0 {self.seat} {e.round_wind}", f"1 0 0 0 0 {hand}"]
        if isinstance(e, ev.TileDrawn):
            if e.seat == self.seat:
                if e.tile is None:
                    raise ValueError("a server shows a seat its own draw: the tile is missing")
                return [f"2 {T.to_botzone(e.tile)}"]
            return [f"3 {e.seat} DRAW"]
        if isinstance(e, ev.MeldCalled):
            if e.kind in ("chi", "pon"):
                self.held_call = e
                return []
            if e.kind == "added_kan":
                if e.called is None:
                    raise ValueError("an added kong names the tile added: it is missing")
                return [f"3 {e.seat} BUGANG {T.to_botzone(e.called)}"]
            return [f"3 {e.seat} GANG"]
        if isinstance(e, ev.TileDiscarded):
            call, self.held_call = self.held_call, None
            tile = T.to_botzone(e.tile)
            if call is not None and call.seat == e.seat and call.kind == "pon":
                return [f"3 {e.seat} PENG {tile}"]
            if call is not None and call.seat == e.seat:
                mid = sorted(T.kind(t) for t in call.tiles)[1]
                return [f"3 {e.seat} CHI {T.to_botzone(mid)} {tile}"]
            return [f"3 {e.seat} PLAY {tile}"]
        return []


@dataclass(frozen=True)
class Reading:
    """A response read against a request: the action, and the discard a ``PENG`` / ``CHI``
    named (played on the caller's next turn, unasked)."""

    action: Any
    planned_discard: int | None = None


def read_response(response: str, request: ev.DecisionRequest) -> Reading:
    """The action ``response`` makes on ``request``; ProtocolError when the line is malformed
    or is not an answer to this kind of request (whether the rules allow it is the
    referee's question)."""
    verb, tiles = parse_response(response)
    tile = request.tile
    if verb == "PASS":
        return Reading(ev.Pass())
    if verb == "HU":
        return Reading(ev.Win())
    if verb == "PLAY" and request.kind == "turn":
        return Reading(ev.Discard(tiles[0]))
    if verb == "GANG" and request.kind == "turn" and tiles:
        return Reading(ev.Kan("closed_kan", (T.kind(tiles[0]),) * 4))
    if verb == "BUGANG" and request.kind == "turn":
        return Reading(ev.Kan("added_kan", (T.kind(tiles[0]),)))
    if request.kind == "claim" and tile is not None:
        if verb == "GANG" and not tiles:
            return Reading(ev.Kan("open_kan", (tile,) * 3))
        if verb == "PENG":
            return Reading(ev.Pon((tile, tile)), tiles[0])
        if verb == "CHI":
            mid, claimed = T.kind(tiles[0]), T.kind(tile)
            if mid >= 27 or mid % 9 in (0, 8) or mid // 9 != claimed // 9 \
                    or abs(claimed - mid) > 1:
                # no chow of the discard has this middle (W1's neighbours are not tiles)
                raise UnexpectedMessage(f"CHI {T.to_botzone(mid)}: no chow with that middle "
                                        f"holds the discard {T.to_botzone(tile)}", response)
            own = tuple(k for k in (mid - 1, mid, mid + 1) if k != claimed)
            return Reading(ev.Chi(own), tiles[1])
    raise UnexpectedMessage(f"does not answer a {request.kind} request", response)
