"""A client's seat at a fake Tenhou table (tenhou_table.py): what Tenhou tells a client
(relative seats, ids, ``t`` flags, the hand's result with the next event, ``owari`` with PROF)
and the answers it takes, through the seat's own :class:`SeatLink`.

What a seat owes is one request at a time: the first answer that fits is taken, a second one
(or one to nothing, or one left from an earlier request) is logged, counted and dropped, so that
a client that answers twice never has its answers shifted onto later requests. Tenhou's answers
carry no request number; the server tells a stale repeat from an answer by what the request
allows: a repeat of an answer read earlier in the game (taken or dropped) that the request now
owed does not allow (a discard of a tile that has left the hand, a pon when a discard is asked,
a pon or chi that does not meld with the discard asked about) is dropped as stale, even when
it comes in a later write, after the next request went out. A seat whose client is away is
waited for a short while (``absent`` seconds from its leaving), then played for it until it
is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adapter.fakes.tenhou_results import owari
from adapter.local.game import placement
from brain.brain import safest_action
from brain.rules.riichi import is_furiten
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError
from protocols.tenhou import DRAW_TYPES, Tag, format_tag, meld_code, read_reply
from protocols.tenhou_values import fu_of, hand_points, limit_class, yaku_attrs

if TYPE_CHECKING:
    from adapter.fakes.tenhou_table import TenhouTable

Send = Callable[[list[Tag]], Coroutine[Any, Any, None]]  # run_coroutine_threadsafe needs one
ANONYMOUS = "NoName"


def shown_name(name: str) -> str:
    """A client's name as others see it: an ID is a secret, so it shows as "player"."""
    return name if name == ANONYMOUS else "player"


# ---------------------------------------------------------------------- a remote seat's line


class SeatLink:
    """A remote seat's connection as the game thread sees it: tags out (each call one write,
    as one read of the client), answers in; it survives the client dropping and coming back.

    The game thread hands its writes to the server's loop and goes on: it never waits for the
    loop to write them. (It used to wait for each write, and each wait was a round trip
    between the two threads, a wake-up of the loop and one of the game thread, queued behind
    whatever the loop was doing: most of a game's time was spent so.) The writes of a seat
    stay in order on the loop, one write per call, and the test's cut (:meth:`then`) comes
    after the writes handed over before it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, absent: float,
                 tasks: set[asyncio.Task[None]] | None = None) -> None:
        self.loop = loop
        self.absent = absent
        self.replies: queue.Queue[Tag] = queue.Queue()
        self.connected = threading.Event()
        self.ready = threading.Event()  # NEXTREADY (or a returning client's GOK)
        self._send: Send | None = None
        self.away_since: float | None = None
        self.sent = 0  # tags
        self.conn: Any = None  # the connection that holds the seat (playing or returning)
        # on the loop: the writes (and the cut) handed over and not yet done, in order
        self._outbox: deque[tuple[Send, list[Tag]] | Callable[[], None]] = deque()
        self._writer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = tasks if tasks is not None else set()

    def attach(self, send: Send) -> None:
        self._send = send
        self.away_since = None
        self.connected.set()

    def detach(self) -> None:
        self._send = None
        self.connected.clear()
        if self.away_since is None:
            self.away_since = time.monotonic()

    def wait_back(self) -> bool:
        """True when the client is here; while it is away, wait for its return at most
        ``absent`` seconds from its leaving (then the seat is played for it)."""
        if self.connected.is_set():
            return True
        since = self.away_since if self.away_since is not None else time.monotonic()
        return self.connected.wait(max(0.0, since + self.absent - time.monotonic()))

    def send(self, tags: list[Tag]) -> bool:
        """From the game thread: ``tags`` in one write, after the writes handed over before,
        not waited for. False if the client is away (the tags are lost, as on a dropped line:
        the REINIT after its return covers them) or the loop is gone."""
        send = self._send
        if send is None or not tags:
            return False
        try:
            self.loop.call_soon_threadsafe(self._queue, (send, list(tags)))
        except RuntimeError:  # the loop is closed: nobody to tell
            return False
        self.sent += len(tags)
        return True

    def then(self, action: Callable[[], None]) -> None:
        """From the game thread: ``action`` on the loop once the writes handed over before it
        are done (the test's cut comes after the tags it counted)."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._queue, action)

    def _queue(self, item: tuple[Send, list[Tag]] | Callable[[], None]) -> None:
        self._outbox.append(item)
        if self._writer is None:
            self._writer = self.loop.create_task(self._write_all())
            self._tasks.add(self._writer)
            self._writer.add_done_callback(self._tasks.discard)

    async def _write_all(self) -> None:
        """The outbox, in order; a write to a line that is gone is lost, as on the wire."""
        try:
            while self._outbox:
                item = self._outbox.popleft()
                if callable(item):
                    item()
                    continue
                send, tags = item
                with contextlib.suppress(ConnectionError, OSError):
                    await send(tags)
        finally:
            self._writer = None


# ---------------------------------------------------------------------- the remote seat


_TURN_VERBS = frozenset({"discard", "riichi", "closed_kan", "added_kan", "tsumo",
                         "nine_terminals", "nuki"})
_OFFER_VERBS = ((1, "pon"), (2, "open_kan"), (4, "chi"), (8, "ron"))


@dataclass
class Owed:
    """The request a remote seat owes an answer to: ``kind`` "turn" or "claim"; ``held`` the
    seat's ids when it was asked."""

    kind: str
    tag: Tag
    held: frozenset[int] = frozenset()
    answered: bool = False

    def verbs(self) -> frozenset[str]:
        """The answers this request allows (read_reply's verbs)."""
        if self.kind == "turn":  # a draw, or our chi / pon whose discard is asked
            return _TURN_VERBS if self.tag.name.startswith("T") else frozenset({"discard"})
        flags = int(self.tag.attrs.get("t", "0"))
        return frozenset({"pass"} | {verb for bit, verb in _OFFER_VERBS if flags & bit})

    def allows(self, tag: Tag) -> bool:
        """``tag`` is an answer this request allows, naming only ids the seat holds."""
        try:
            reply = read_reply(tag)
        except ProtocolError:
            return False
        named = reply.get("ids") or ([reply["id"]] if "id" in reply else [])
        if reply["verb"] not in self.verbs() or not all(i in self.held for i in named):
            return False
        if reply["verb"] in ("pon", "chi"):  # it must meld with the discard asked about
            return _melds_with(reply["verb"], named, self.tag)
        return True


def _melds_with(verb: str, ids: list[int], claim: Tag) -> bool:
    """Two held ids make a pon or a chi with the discard a claim asks about (its tag names
    the discarded id: ``<e37 t="1"/>``); a pon answered for an earlier discard does not."""
    found = re.fullmatch(r"[A-Za-z](\d+)", claim.name)
    if found is None:
        return False
    kinds = sorted([i // 4 for i in ids] + [int(found.group(1)) // 4])
    if verb == "pon":
        return len(set(kinds)) == 1
    return (kinds[2] < 27 and kinds[0] // 9 == kinds[2] // 9
            and kinds == list(range(kinds[0], kinds[0] + 3)))


_ABSENT = object()  # no answer: the client is away
# RYUUKYOKU's ``type`` for a draw's reason: the codec's own table turned round, so that every
# reason the referee gives (nagashi mangan's "nm" too) reads back as itself
_DRAW_TYPE_OF = {reason: word for word, reason in DRAW_TYPES.items()}


class RemoteSeat:
    """A client's seat at the referee's table (told and asked in the game thread; its answers
    arrive from the server's event loop through :meth:`accept`)."""

    def __init__(self, table: TenhouTable, seat: int, name: str, link: SeatLink) -> None:
        self.table, self.seat, self.link = table, seat, link
        self.login = name  # as the client logged in (an ID is a secret)
        self.name = shown_name(name)
        self.login_label = self.name  # the login as reports show it (tenhou_server.py)
        self.label = self.name  # the login and the seat: which client played it, in reports
        self.illegal = self.timeouts = 0  # this seat's, for reports
        self.owed: Owed | None = None
        self.answers = threading.Lock()  # owed and the reply queue, between the two threads
        self.held: list[Tag] = []  # the hand's AGARI / RYUUKYOKU, sent with the next event
        # told, not yet written: Tenhou writes what happens between two decisions in one go
        # (a discard with the next draw), so a seat's tags wait for the next request of any
        # seat (:meth:`flush`), or the hand's end; a REINIT covers them (under the table's lock)
        self.unsent: list[Tag] = []
        self.furiten = False  # as last shown by FURITEN
        self.given: set[str] = set()  # every answer read in this game, to know a repeat
        self.scores = [0, 0, 0, 0]

    def rel(self, seat: int) -> int:
        return (seat - self.seat) % 4

    def send(self, *tags: Tag) -> None:
        """Told, written with the next request of any seat (:meth:`flush`)."""
        self.unsent.extend(tags)

    def flush(self, *tags: Tag) -> None:
        """What the seat was told since its last write, and ``tags``, in one write (under the
        table's lock, so that a REINIT never repeats nor loses any of it)."""
        out, self.unsent = [*self.unsent, *tags], []
        if out:
            self.table.send(self, out)

    # ------------------------------------------------------------------ answers

    def ask(self, kind: str, tag: Tag) -> None:
        """Send a request; answers left from an earlier one are dropped, never carried."""
        with self.answers:
            while True:
                try:
                    late = self.link.replies.get_nowait()
                except queue.Empty:
                    break
                self.table.dropped("a late answer", late)
            self.owed = Owed(kind, tag, frozenset(self.table.ids.held[self.seat]))
        self.flush(tag)  # a request ends its write, as on Tenhou

    def accept(self, tags: list[Tag]) -> None:
        """From the server's loop: the answers of one read. The first that fits what is owed
        is taken (a riichi's REACH and then its discard); the rest are logged and dropped, and
        so is a stale repeat of an earlier answer (see the module's docstring)."""
        with self.answers:
            for tag in tags:
                owed = self.owed
                text = format_tag(tag)
                repeat = text in self.given
                self.given.add(text)  # taken or dropped: a later copy of it is a repeat
                if owed is not None and owed.answered:
                    self.table.dropped("a second answer", tag)
                    continue
                if owed is not None and repeat and not owed.allows(tag):
                    self.table.dropped("stale, a repeat of an earlier answer", tag)
                    continue
                fits = owed is not None and (
                    not (tag.name == "N" and "type" not in tag.attrs) if owed.kind == "turn"
                    else tag.name == "N")
                if owed is None or not fits:
                    self.table.dropped("unasked", tag)
                    continue  # Tenhou ignores an answer to nothing
                if tag.name != "REACH":  # a riichi's discard is still to come
                    owed.answered = True
                self.link.replies.put(tag)

    def _next_reply(self, deadline: float) -> Tag | object | None:
        """The next answer; None when none came in time, _ABSENT when the client is away."""
        while True:
            if not self.link.connected.is_set():
                if not self.link.wait_back():
                    return _ABSENT
                deadline = time.monotonic() + self.table.time_limit
            try:
                return self.link.replies.get(timeout=min(0.05, max(0.0, deadline
                                                                   - time.monotonic())))
            except queue.Empty:
                if time.monotonic() >= deadline:
                    return None

    # ------------------------------------------------------------------ what it is told

    def observe(self, event: Any) -> None:
        table, ids = self.table, self.table.ids
        referee = table.referee
        view = referee.views[self.seat]
        self._show_furiten(event, view)
        if isinstance(event, ev.RoundStarted):
            self.scores = list(event.scores)
            kyoku = event.round_wind * 4 + event.round_number
            self.send(Tag("INIT", {
                "seed": f"{kyoku},{event.honba},{event.sticks},3,4,{ids.dora_ids[0]}",
                "ten": self._ten(), "oya": str(self.rel(event.dealer)),
                "hai": ",".join(map(str, ids.held[self.seat]))}))
        elif isinstance(event, ev.TileDrawn):
            if event.seat != self.seat:
                self.send(Tag("UVW"[self.rel(event.seat) - 1]))
                return
            legal = referee.rules.legal_actions(view, ev.DecisionRequest("turn"))
            flags = sum(bit for bit, kind in ((16, ev.Win), (64, ev.AbortiveDraw))
                        if any(isinstance(a, kind) for a in legal))
            if any(isinstance(a, ev.Discard) and a.riichi for a in legal):
                flags |= 32
            self.ask("turn", Tag(f"T{ids.drawn[self.seat]}", {"t": str(flags)} if flags else {}))
        elif isinstance(event, ev.TileDiscarded):
            self._discarded(event)
        elif isinstance(event, ev.MeldCalled):
            attrs = {"who": str(self.rel(event.seat)), "m": str(ids.meld_code)}
            if event.kind == "added_kan" and event.seat != self.seat:
                request = ev.DecisionRequest("rob_kan", tile=event.called, from_seat=event.seat)
                if any(isinstance(a, ev.Win) for a in referee.rules.legal_actions(view,
                                                                                   request)):
                    self.ask("claim", Tag("N", {**attrs, "t": "8"}))
                    return
            if event.seat == self.seat and event.kind in ("chi", "pon"):
                self.ask("turn", Tag("N", attrs))  # its discard after the call
                return
            self.send(Tag("N", attrs))
        elif isinstance(event, ev.RiichiDeclared):
            self.send(Tag("REACH", {"who": str(self.rel(event.seat)), "step": "1"}))
        elif isinstance(event, ev.RiichiAccepted):
            if event.scores:
                self.scores = list(event.scores)
            self.send(Tag("REACH", {"who": str(self.rel(event.seat)), "step": "2",
                                    "ten": self._ten()}))
        elif isinstance(event, ev.DoraRevealed):
            self.send(Tag("DORA", {"hai": str(ids.dora_ids[-1])}))
        elif isinstance(event, ev.RoundWon):
            self._agari(event)
        elif isinstance(event, ev.RoundDrawn):
            self._ryuukyoku(event)

    def _show_furiten(self, event: Any, view: TableState) -> None:
        """``<FURITEN show="1"/>`` when the seat becomes furiten, ``show="0"`` when it is no
        more (:func:`furiten_now`), before the tag of the event that changed it."""
        if isinstance(event, ev.RoundStarted):
            self.furiten = False  # a new hand: not furiten, and nothing said
            return
        now = furiten_now(view)
        if now is not None and now != self.furiten:
            self.furiten = now
            self.send(Tag("FURITEN", {"show": "1" if now else "0"}))

    def _discarded(self, event: ev.TileDiscarded) -> None:
        tile_id = self.table.ids.move[0]
        if event.seat == self.seat:
            self.send(Tag(f"D{tile_id}"))
            return
        referee = self.table.referee
        letter = "EFG"[self.rel(event.seat) - 1]
        if event.tsumogiri:
            letter = letter.lower()
        request = ev.DecisionRequest("claim", tile=event.tile, from_seat=event.seat)
        legal = referee.rules.legal_actions(referee.views[self.seat], request)
        flags = sum(bit for bit, kind in ((1, ev.Pon), (4, ev.Chi), (8, ev.Win))
                    if any(isinstance(a, kind) for a in legal))
        if any(isinstance(a, ev.Kan) for a in legal):
            flags |= 2
        if flags:
            self.ask("claim", Tag(f"{letter}{tile_id}", {"t": str(flags)}))
        else:
            self.send(Tag(f"{letter}{tile_id}"))

    def _ten(self) -> str:
        return ",".join(str(self.scores[(self.seat + r) % 4] // 100) for r in range(4))

    def _sc(self, deltas: tuple[int, ...]) -> str:
        parts = []
        for r in range(4):
            s = (self.seat + r) % 4
            parts += [str(self.scores[s] // 100), str(deltas[s] // 100 if deltas else 0)]
        return ",".join(parts)

    def _agari(self, won: ev.RoundWon) -> None:
        table, ids = self.table, self.table.ids
        if won.from_seat is None:
            win_id = ids.drawn[won.winner]
        elif ids.last_discard is not None and ids.last_discard[0] == won.from_seat:
            win_id = ids.last_discard[1]
        else:  # robbing an added kan
            assert ids.last_added is not None
            win_id = ids.last_added
        hand = sorted([*ids.held[won.winner], *([win_id] if won.from_seat is not None else [])])
        # a double ron's second winner gets neither honba nor sticks (上家取り): Tenhou writes
        # its AGARI with ba="0,0", and its ten (the hand's value) has no honba to take off
        first = not any(tag.name == "AGARI" for tag in self.held)
        honba, sticks = (table.honba, table.sticks) if first else (0, 0)
        attrs = {"ba": f"{honba},{sticks}", "hai": ",".join(map(str, hand))}
        if ids.melds[won.winner]:
            attrs["m"] = ",".join(str(meld_code(m)) for m in ids.melds[won.winner])
        attrs |= {"machi": str(win_id),
                  "ten": f"{fu_of(won.detail)},{hand_points(won, honba)},"
                         f"{limit_class(won.detail)}",
                  **yaku_attrs(won.yaku, bool(won.ura_dora_indicators)),
                  "doraHai": ",".join(map(str, ids.dora_ids))}
        if won.ura_dora_indicators:
            attrs["doraHaiUra"] = ",".join(map(str, ids.ura(won.ura_dora_indicators)))
        attrs |= {"who": str(self.rel(won.winner)),
                  "fromWho": str(self.rel(won.from_seat if won.from_seat is not None
                                          else won.winner)),
                  "sc": self._sc(won.deltas)}
        self.scores = [a + b for a, b in zip(self.scores, won.deltas, strict=True)]
        self.held.append(Tag("AGARI", attrs))

    def _ryuukyoku(self, drawn: ev.RoundDrawn) -> None:
        attrs = {"ba": f"{self.table.honba},{self.table.sticks}", "sc": self._sc(drawn.deltas)}
        if drawn.reason in _DRAW_TYPE_OF:  # Tenhou's word for it; none for an exhaustive draw
            attrs = {"type": _DRAW_TYPE_OF[drawn.reason], **attrs}
        for seat in drawn.tenpai:
            attrs[f"hai{self.rel(seat)}"] = ",".join(map(str, self.table.ids.held[seat]))
        if drawn.deltas:
            self.scores = [a + b for a, b in zip(self.scores, drawn.deltas, strict=True)]
        self.held.append(Tag("RYUUKYOKU", attrs))

    def send_results(self) -> None:
        """The hand's result(s), with the tags told since the last request (one write: the
        hand is over), and NEXTREADY waited for."""
        with self.table.lock:
            held, self.held = self.held, []
            if held:
                self.link.ready.clear()  # a NEXTREADY read before these results answers nothing
            self.flush(*held)
        if held:
            self.table.wait_ready(self)

    def game_over(self, scores: list[int]) -> None:
        """PROF and the last result with ``owari``, in one write as Tenhou sends them."""
        ranks = placement(scores)
        text = owari(scores, ranks, self.seat)
        held, self.held = self.held, []
        last = held.pop() if held else Tag("RYUUKYOKU", {"ba": "0,0", "sc": self._sc(())})
        prof = Tag("PROF", {"lobby": "0", "type": str(self.table.game_type),
                            "add": text.split(",")[1]})
        with self.table.lock:
            self.flush(*held, prof, Tag(last.name, {**last.attrs, "owari": text}))

    # ------------------------------------------------------------------ what it is asked

    def decide(self, request: ev.DecisionRequest) -> Any:
        referee = self.table.referee
        legal = referee.asked_legal
        action = _matching(self._reply(request), legal)
        with self.answers:
            self.owed = None
        if action is None or action not in legal:
            if action is not None:
                self.table.stats.illegal += 1
                self.illegal += 1
                self.table.problem(f"{action!r} is not allowed on {request.kind}")
            return safest_action(referee.views[self.seat], legal)
        return action

    def _reply(self, request: ev.DecisionRequest) -> Any | None:
        """The client's answer as an action; None when it sent none in time or is away."""
        stats = self.table.stats
        deadline = time.monotonic() + self.table.time_limit
        riichi = False
        while True:
            tag = self._next_reply(deadline)
            if tag is _ABSENT:
                stats.absent += 1
                return None
            if not isinstance(tag, Tag):
                stats.timeouts += 1
                self.timeouts += 1
                self.table.problem(f"no answer to a {request.kind} request")
                return None
            try:
                reply = read_reply(tag)
            except ProtocolError as exc:
                stats.illegal += 1
                self.illegal += 1
                self.table.problem(str(exc))
                return None
            if reply["verb"] == "riichi":
                riichi = True
                continue
            try:
                return self._action(reply, request, riichi)
            except (ValueError, KeyError, StopIteration) as exc:
                stats.illegal += 1
                self.illegal += 1
                self.table.problem(f"{format_tag(tag)}: {exc}")
                return None

    def _action(self, reply: dict[str, Any], request: ev.DecisionRequest, riichi: bool) -> Any:
        ids = self.table.ids
        held = ids.held[self.seat]
        named = reply.get("ids") or ([reply["id"]] if "id" in reply else [])
        for tile_id in named:
            if tile_id not in held:
                raise ValueError(f"id {tile_id} is not in the seat's hand")
        ids.chosen[self.seat] = list(named)
        tiles = [T.from_tenhou_id(i) for i in named]
        verb = reply["verb"]
        if verb == "discard":
            return ev.Discard(tiles[0], riichi=riichi)
        if verb == "pass":
            return ev.Pass()
        if verb in ("ron", "tsumo"):
            return ev.Win()
        if verb == "pon":
            return ev.Pon(tuple(sorted(tiles, key=T.sort_key)))
        if verb == "chi":
            return ev.Chi(tuple(sorted(tiles, key=T.sort_key)))
        if verb == "nine_terminals":
            return ev.AbortiveDraw()
        if verb == "open_kan":
            if request.tile is None:  # our own turn: there is no discard to make it from
                raise ValueError("an open kan answers only a discard offered to the seat")
            own = [t for t in (T.from_tenhou_id(i) for i in held)
                   if T.kind(t) == T.kind(request.tile)]
            return ev.Kan("open_kan", tuple(own[:3]))
        if verb == "closed_kan":
            k = T.kind(tiles[0])
            return ev.Kan("closed_kan", tuple(t for t in (T.from_tenhou_id(i) for i in held)
                                              if T.kind(t) == k))
        if verb == "added_kan":
            return ev.Kan("added_kan", (tiles[0],))
        raise ValueError(f"{verb} is no answer here")

    # ------------------------------------------------------------------ a returning client

    def dealer(self) -> int:
        """The dealer of the hand in play, relative to this seat."""
        referee = self.table.referee
        return self.rel(referee.views[self.seat].dealer if self.table.dealt else 0)

    def saikai(self) -> Tag:
        return Tag("SAIKAI", {"ba": f"{self.table.honba},{self.table.sticks}",
                              "oya": str(self.dealer()), "sc": self._sc(())})

    def reinit(self) -> list[Tag]:
        """The table as this seat sees it now, and the request it still owes (under the
        table's lock: no event is being told)."""
        ids = self.table.ids
        view = self.table.referee.views[self.seat]
        hand = list(ids.held[self.seat])
        rivers = [list(r) for r in ids.rivers]
        owed: list[Tag] = []
        self.unsent = []  # the REINIT says all of it
        with self.answers:
            if self.owed is not None and not self.owed.answered:
                tag = self.owed.tag  # still owed: asked again after the table
                if self.owed.kind == "turn" and tag.name.startswith("T"):
                    hand.remove(int(tag.name[1:]))
                elif self.owed.kind == "claim" and tag.name != "N" \
                        and ids.last_discard is not None:
                    rivers[ids.last_discard[0]].pop()
                owed = [tag]
        kyoku = view.round_wind * 4 + view.round_number
        attrs = {"seed": f"{kyoku},{view.honba},{view.sticks},3,4,{ids.dora_ids[0]}",
                 "ten": self._ten(), "oya": str(self.rel(view.dealer)),
                 "hai": ",".join(map(str, sorted(hand)))}
        for seat in range(4):
            r = self.rel(seat)
            if ids.melds[seat]:
                attrs[f"m{r}"] = ",".join(str(meld_code(m)) for m in ids.melds[seat])
            if rivers[seat]:
                attrs[f"kawa{r}"] = ",".join(map(str, rivers[seat]))
        return [Tag("REINIT", attrs), *owed]


def furiten_now(view: TableState) -> bool | None:
    """Whether Tenhou shows the seat as furiten now: a wait in its own river, or a win passed
    up (the rules' furiten). The real capture (kokushi.log) has ``<FURITEN show="1"/>`` right
    after the client discarded one of its waits, before the discard's echo, and nowhere else.
    None on the seat's turn (3k+2 tiles held): a hand with a drawn tile has no waits yet."""
    if len(view.hand) % 3 != 1:
        return None
    return is_furiten(view)


def _matching(action: Any, legal: list[Any]) -> Any:
    """The legal action that ``action`` names (tiles in any order), else ``action``."""
    if action is None or action in legal:
        return action
    for candidate in legal:
        if type(candidate) is type(action) and getattr(candidate, "kind", None) == getattr(
                action, "kind", None) and getattr(candidate, "riichi", None) == getattr(
                action, "riichi", None) and sorted(getattr(candidate, "tiles", ())) == sorted(
                getattr(action, "tiles", ())) and getattr(candidate, "tile", None) == getattr(
                action, "tile", None):
            return candidate
    return action
