"""A fake Tenhou server: the server side of the Tenhou protocol over real TCP (NUL-framed tags)
and WebSocket (JSON tags) sockets, for one client playing a test game (type 64) against three
local computer players dealt by the local table's riichi referee. (Recorded server streams are
played by tenhou_recording.py.)

What it does as Tenhou does (../shared/protocols/tenhou.md): HELO with an ``auth`` challenge
that it checks, REJOIN once before the table is found, GO / UN / TAIKYOKU, INIT per hand with
the client's 13 ids, relative seats, ``T`` with ``t`` flags, ``U V W`` for others' draws,
discards with the lower-case tsumogiri letter and ``t`` offer flags, N with 16-bit meld codes
(``t="8"`` where the client may rob an added kan), REACH steps, DORA, AGARI / RYUUKYOKU with
``sc`` and, at the end, PROF then ``owari``; it waits for NEXTREADY between hands. A client that
drops is waited for (``grace`` seconds) and taken back by its HELO: GO, UN, SAIKAI, and after
its GOK a REINIT of the table, then the request it still owes. A reply that is not allowed, or
none in time, is counted and the seat plays its safest move (as Tenhou ignores it).

``drop_after``: the server cuts the connection once, after that many tags sent to the client
(at a moment when nothing is asked of it), to test reconnection.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.server import ServerConnection, serve

from adapter.fakes.tile_ids import take_ids
from adapter.local.game import GameConfig, GameResult, placement, play_game
from adapter.local.referee import HandReferee
from adapter.local.seat import BrainSeat
from brain.brain import safest_action
from protocols import events as ev
from protocols import tiles as T
from protocols.tenhou import (
    TEST_GAME,
    YAKU,
    MeldIds,
    Tag,
    TagStream,
    TenhouError,
    auth_reply,
    format_tag,
    meld_code,
    parse_tag,
    read_reply,
    tag_from_json,
    tag_to_json,
)
from replay.log import GameLogWriter, Header

AUTH_CHALLENGE = "20180120-be208bdd"
_YAKU_INDEX = {
    "Menzen Tsumo": 0, "Riichi": 1, "Ippatsu": 2, "Chankan": 3, "Rinshan Kaihou": 4,
    "Haitei Raoyue": 5, "Houtei Raoyui": 6, "Pinfu": 7, "Tanyao": 8, "Iipeiko": 9,
    "Yakuhai (seat wind east)": 10, "Yakuhai (seat wind south)": 11,
    "Yakuhai (seat wind west)": 12, "Yakuhai (seat wind north)": 13,
    "Yakuhai (round wind east)": 14, "Yakuhai (round wind south)": 15,
    "Yakuhai (round wind west)": 16, "Yakuhai (round wind north)": 17,
    "Yakuhai (haku)": 18, "Yakuhai (hatsu)": 19, "Yakuhai (chun)": 20, "Double Riichi": 21,
    "Chiitoitsu": 22, "Chantai": 23, "Ittsu": 24, "Sanshoku Doujun": 25,
    "Sanshoku Doukou": 26, "San Kantsu": 27, "Toitoi": 28, "San Ankou": 29,
    "Shou Sangen": 30, "Honroutou": 31, "Ryanpeikou": 32, "Junchan": 33, "Honitsu": 34,
    "Chinitsu": 35, "Renhou": 36, "Tenhou": 37, "Chiihou": 38, "Daisangen": 39,
    "Suu Ankou": 40, "Suu Ankou Tanki": 41, "Tsuu Iisou": 42, "Ryuuiisou": 43,
    "Chinroutou": 44, "Chuuren Poutou": 45, "Daburu Chuuren Poutou": 46, "Kokushi Musou": 47,
    "Kokushi Musou Juusanmen Matchi": 48, "Dai Suushii": 49, "Shousuushii": 50,
    "Suu Kantsu": 51, "Dora": 52, "Ura Dora": 53, "Aka Dora": 54,
}
assert all(0 <= i < len(YAKU) for i in _YAKU_INDEX.values())


@dataclass
class ServerStats:
    """What the client did, for the tests."""

    games: int = 0
    hands: int = 0
    illegal: int = 0
    timeouts: int = 0
    reconnects: int = 0
    auth_ok: bool | None = None
    keepalives: int = 0
    byes: int = 0
    problems: list[str] = field(default_factory=list)
    result: GameResult | None = None


# ---------------------------------------------------------------------- the client's link


class _Link:
    """The client's connection as the game thread sees it: tags out, replies in; survives the
    client dropping and coming back."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.replies: queue.Queue[Tag] = queue.Queue()
        self.connected = threading.Event()
        self.ready = threading.Event()  # NEXTREADY
        self._send: Any = None  # coroutine function of the live connection
        self.sent = 0

    def attach(self, send: Any) -> None:
        self._send = send
        self.connected.set()

    def detach(self) -> None:
        self._send = None
        self.connected.clear()

    def send(self, tag: Tag) -> bool:
        """From the game thread; False if the client is away (the tag is lost, as on a real
        dropped line: the REINIT after its return covers it)."""
        send = self._send
        if send is None:
            return False
        future = asyncio.run_coroutine_threadsafe(send(tag), self.loop)
        try:
            future.result(timeout=10)
        except Exception:
            return False
        self.sent += 1
        return True


# ---------------------------------------------------------------------- ids


class _Ids:
    """Tenhou ids for one hand: each physical tile gets the next free id of its tile (red fives
    their own), and the server knows every seat's hand, melds and river by id."""

    def __init__(self) -> None:
        self.used: set[int] = set()
        self.held: list[list[int]] = [[] for _ in range(4)]
        self.melds: list[list[MeldIds]] = [[] for _ in range(4)]
        self.rivers: list[list[int]] = [[] for _ in range(4)]  # 255 marks riichi
        self.drawn: dict[int, int] = {}
        self.last_discard: tuple[int, int] | None = None
        self.chosen: dict[int, list[int]] = {}  # ids named in a seat's last reply
        self.move: list[int] = []  # ids of the event being told
        self.last_added: int | None = None  # an added kan's tile, robbable
        self.meld_code = 0
        self.dora_ids: list[int] = []

    def new(self, tile: int) -> int:
        tile_id = next(i for i in T.tenhou_ids(tile) if i not in self.used)
        self.used.add(tile_id)
        return tile_id

    def take(self, seat: int, tiles: list[int]) -> list[int]:
        """Remove ids of ``tiles`` from the seat's hand (those its reply named first)."""
        return take_ids(self.held[seat], self.chosen.pop(seat, []), tiles, T.from_tenhou_id)


class _Referee(HandReferee):
    """The referee, with every full-information event given its ids before the seats see it."""

    def __init__(self, game: _Game, players: list[Any]) -> None:
        super().__init__("riichi", players, game.log)
        self.game = game

    def emit(self, event: Any) -> None:
        # one event at a time against a returning client's REINIT (see _Game.lock)
        with self.game.lock:
            self.game.before_event(event)
            super().emit(event)


# ---------------------------------------------------------------------- the remote seat


class _RemoteSeat:
    """The client's seat at the referee's table (runs in the game thread)."""

    def __init__(self, game: _Game, seat: int) -> None:
        self.game, self.seat = game, seat
        self.name = "client"
        self.pending: tuple[str, Tag] | None = None  # what the client owes an answer to
        self.held_result: Tag | None = None  # the hand's AGARI / RYUUKYOKU, sent later
        self.scores = [0, 0, 0, 0]

    def rel(self, seat: int) -> int:
        return (seat - self.seat) % 4

    def send(self, tag: Tag) -> None:
        self.game.send(tag)

    # ------------------------------------------------------------------ what it is told

    def observe(self, event: Any) -> None:
        game, ids = self.game, self.game.ids
        referee = game.referee
        assert referee is not None
        view = referee.views[self.seat]
        if self.held_result is not None and not isinstance(event, ev.GameEnded):
            self.send(self.held_result)
            self.held_result = None
            game.wait_ready()
        if isinstance(event, ev.RoundStarted):
            self.scores = list(event.scores)
            kyoku = event.round_wind * 4 + event.round_number
            dora = ids.dora_ids[0]
            self.send(Tag("INIT", {
                "seed": f"{kyoku},{event.honba},{event.sticks},3,4,{dora}",
                "ten": ",".join(str(self.scores[(self.seat + r) % 4] // 100) for r in range(4)),
                "oya": str(self.rel(event.dealer)),
                "hai": ",".join(map(str, ids.held[self.seat]))}))
            game.stats.hands += 1
        elif isinstance(event, ev.TileDrawn):
            if event.seat == self.seat:
                legal = referee.rules.legal_actions(view, ev.DecisionRequest("turn"))
                flags = sum(bit for bit, kind in ((16, ev.Win), (64, ev.AbortiveDraw))
                            if any(isinstance(a, kind) for a in legal))
                if any(isinstance(a, ev.Discard) and a.riichi for a in legal):
                    flags |= 32
                attrs = {"t": str(flags)} if flags else {}
                tag = Tag(f"T{ids.drawn[self.seat]}", attrs)
                self.pending = ("turn", tag)
                self.send(tag)
            else:
                self.send(Tag("UVW"[self.rel(event.seat) - 1]))
        elif isinstance(event, ev.TileDiscarded):
            tile_id = ids.move[0]
            if event.seat == self.seat:
                self.send(Tag(f"D{tile_id}"))
                return
            letter = "EFG"[self.rel(event.seat) - 1]
            if event.tsumogiri:
                letter = letter.lower()
            request = ev.DecisionRequest("claim", tile=event.tile, from_seat=event.seat)
            legal = referee.rules.legal_actions(view, request)
            flags = sum(bit for bit, kind in ((1, ev.Pon), (4, ev.Chi), (8, ev.Win))
                        if any(isinstance(a, kind) for a in legal))
            if any(isinstance(a, ev.Kan) for a in legal):
                flags |= 2
            tag = Tag(f"{letter}{tile_id}", {"t": str(flags)} if flags else {})
            if flags:
                self.pending = ("claim", tag)
            self.send(tag)
        elif isinstance(event, ev.MeldCalled):
            attrs = {"who": str(self.rel(event.seat)), "m": str(ids.meld_code)}
            if event.kind == "added_kan" and event.seat != self.seat:
                request = ev.DecisionRequest("rob_kan", tile=event.called, from_seat=event.seat)
                if any(isinstance(a, ev.Win) for a in referee.rules.legal_actions(view,
                                                                                   request)):
                    attrs["t"] = "8"
            if event.seat == self.seat and event.kind in ("chi", "pon"):
                self.pending = ("turn", Tag("N", attrs))
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
        elif isinstance(event, ev.GameEnded):
            self._game_over(event)

    def _ten(self) -> str:
        return ",".join(str(self.scores[(self.seat + r) % 4] // 100) for r in range(4))

    def _sc(self, deltas: tuple[int, ...]) -> str:
        parts = []
        for r in range(4):
            s = (self.seat + r) % 4
            parts += [str(self.scores[s] // 100), str(deltas[s] // 100 if deltas else 0)]
        return ",".join(parts)

    def _agari(self, won: ev.RoundWon) -> None:
        ids = self.game.ids
        pairs, yakuman = [], []
        for text in won.yaku:
            name, _, value = text.rpartition("(")
            index, han = _YAKU_INDEX.get(name), int(value.rstrip(")") or 0)
            if index is None or han <= 0:
                continue
            if han >= 13 and index < 52:
                yakuman.append(str(index))
            else:
                pairs += [str(index), str(han)]
        fu = int(won.detail.split("符")[0]) if "符" in won.detail else 0
        if won.from_seat is None:
            win_id = ids.drawn[won.winner]
        elif ids.last_discard is not None and ids.last_discard[0] == won.from_seat:
            win_id = ids.last_discard[1]
        else:  # robbing an added kan
            assert ids.last_added is not None
            win_id = ids.last_added
        hand = sorted([*ids.held[won.winner], *([win_id] if won.from_seat is not None else [])])
        attrs = {"ba": f"{self.game.honba},{self.game.sticks}",
                 "hai": ",".join(map(str, hand)), "machi": str(win_id),
                 "ten": f"{fu},{max(0, won.deltas[won.winner])},0",
                 "yaku": ",".join(pairs), "doraHai": ",".join(map(str, ids.dora_ids)),
                 "who": str(self.rel(won.winner)),
                 "fromWho": str(self.rel(won.from_seat if won.from_seat is not None
                                         else won.winner)),
                 "sc": self._sc(won.deltas)}
        if yakuman:
            attrs["yakuman"] = ",".join(yakuman)
        if ids.melds[won.winner]:
            attrs["m"] = ",".join(str(meld_code(m)) for m in ids.melds[won.winner])
        self.scores = [a + b for a, b in zip(self.scores, won.deltas, strict=True)]
        self._hold(Tag("AGARI", attrs))

    def _ryuukyoku(self, drawn: ev.RoundDrawn) -> None:
        types = {"nine_terminals": "yao9", "four_riichi": "reach4", "triple_ron": "ron3",
                 "four_kans": "kan4", "four_winds": "kaze4"}
        attrs = {"ba": f"{self.game.honba},{self.game.sticks}", "sc": self._sc(drawn.deltas)}
        if drawn.reason in types:
            attrs = {"type": types[drawn.reason], **attrs}
        for seat in drawn.tenpai:
            attrs[f"hai{self.rel(seat)}"] = ",".join(map(str, self.game.ids.held[seat]))
        if drawn.deltas:
            self.scores = [a + b for a, b in zip(self.scores, drawn.deltas, strict=True)]
        self._hold(Tag("RYUUKYOKU", attrs))

    def _hold(self, tag: Tag) -> None:
        """The hand's result goes out with the next event: with ``owari`` if it ends the game."""
        self.held_result = tag

    def _game_over(self, ended: ev.GameEnded) -> None:
        ranks = placement(list(ended.scores))
        points = {1: 20, 2: 10, 3: -10, 4: -30}
        owari = []
        for r in range(4):
            s = (self.seat + r) % 4
            owari += [str(ended.scores[s] // 100),
                      f"{(ended.scores[s] - 30000) / 1000 + points[ranks[s]]:.1f}"]
        self.send(Tag("PROF", {"lobby": "0", "type": str(TEST_GAME), "add": "0"}))
        result = self.held_result or Tag("RYUUKYOKU", {"ba": "0,0", "sc": self._sc(())})
        self.held_result = None
        self.send(Tag(result.name, {**result.attrs, "owari": ",".join(owari)}))

    # ------------------------------------------------------------------ what it is asked

    def decide(self, request: ev.DecisionRequest) -> Any:
        game = self.game
        referee = game.referee
        assert referee is not None
        legal = referee.asked_legal
        action = _matching(self._reply(request), legal)
        self.pending = None
        if action is None or action not in legal:
            if action is not None:
                game.stats.illegal += 1
                game.stats.problems.append(f"{action!r} is not allowed on {request.kind}")
            return safest_action(referee.views[self.seat], legal)
        return action

    def _reply(self, request: ev.DecisionRequest) -> Any | None:
        """The client's answer as an action; None when it sent none in time."""
        game = self.game
        deadline = time.monotonic() + game.time_limit
        riichi = False
        while True:
            tag = game.next_reply(deadline, self)
            if tag is None:
                game.stats.timeouts += 1
                game.stats.problems.append(f"no answer to a {request.kind} request")
                return None
            try:
                reply = read_reply(tag)
            except TenhouError as exc:
                game.stats.illegal += 1
                game.stats.problems.append(str(exc))
                return None
            if reply["verb"] == "riichi":
                riichi = True
                continue
            try:
                return self._action(reply, request, riichi)
            except (ValueError, KeyError, StopIteration) as exc:
                game.stats.illegal += 1
                game.stats.problems.append(f"{format_tag(tag)}: {exc}")
                return None

    def _action(self, reply: dict[str, Any], request: ev.DecisionRequest, riichi: bool) -> Any:
        ids = self.game.ids
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
            assert request.tile is not None
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

    def reinit(self) -> list[Tag]:
        """The table as this seat sees it now, and the request it still owes."""
        game, ids = self.game, self.game.ids
        referee = game.referee
        assert referee is not None
        view = referee.views[self.seat]
        hand = list(ids.held[self.seat])
        rivers = [list(r) for r in ids.rivers]
        owed: list[Tag] = []
        if self.pending is not None and self.game.link.replies.empty():
            # still owed (an answer already here means the client saw the request)
            kind, tag = self.pending
            if kind == "turn" and tag.name.startswith("T"):
                hand.remove(int(tag.name[1:]))
            elif kind == "claim" and ids.last_discard is not None:
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


# ---------------------------------------------------------------------- the game


class _Game:
    """One game in its own thread: the referee, three local players and the remote seat."""

    def __init__(self, server: FakeTenhouServer, link: _Link, game_index: int) -> None:
        self.server, self.link = server, link
        self.stats = server.stats
        self.time_limit = server.time_limit
        self.seat = (server.seed + game_index) % 4
        self.remote = _RemoteSeat(self, self.seat)
        players: list[Any] = [self.remote if s == self.seat else
                              BrainSeat("riichi", s, server.opponents[s % 3]) for s in range(4)]
        self.players = players
        self.log = server.open_log(game_index)
        # held by the game thread while it tells an event, and by a returning client's REINIT
        # and by the taking of an answer, so that none of them sees the others half done
        self.lock = threading.Lock()
        self.referee: _Referee | None = _Referee(self, players)
        self.ids = _Ids()
        self.honba = self.sticks = 0
        self.game_index = game_index
        self.done = threading.Event()

    def send(self, tag: Tag) -> None:
        if self.log is not None:
            self.log.tx(format_tag(tag))
        sent = self.link.send(tag)
        drop = self.server.drop_after
        if sent and drop is not None and self.link.sent >= drop and self.remote.pending is None \
                and not self.server.dropped:
            self.server.dropped = True
            self.server.cut_connection()

    def wait_ready(self) -> None:
        """NEXTREADY between hands (a client away is waited for by ``next_reply`` later)."""
        self.link.ready.wait(self.time_limit)
        self.link.ready.clear()

    def next_reply(self, deadline: float, seat: _RemoteSeat) -> Tag | None:
        """The client's next game reply; while it is away the clock waits for its return."""
        while True:
            if not self.link.connected.is_set():
                if not self.link.connected.wait(self.server.grace):
                    return None
                deadline = time.monotonic() + self.time_limit
            with self.lock:
                try:
                    tag = self.link.replies.get_nowait()
                except queue.Empty:
                    tag = None
                else:
                    if tag.name != "REACH":  # a riichi's discard is still to come
                        seat.pending = None  # answered: a REINIT from now on owes nothing
            if tag is not None:
                return tag
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def before_event(self, event: Any) -> None:
        ids = self.ids
        ids.move = []
        if isinstance(event, ev.RoundStarted):
            self.ids = ids = _Ids()
            self.honba, self.sticks = event.honba, event.sticks
            for seat, hand in enumerate(event.hands):
                ids.held[seat] = sorted(ids.new(t) for t in hand)
            ids.dora_ids = [ids.new(t) for t in event.dora_indicators]
        elif isinstance(event, ev.TileDrawn) and event.tile is not None:
            tile_id = ids.new(event.tile)
            ids.held[event.seat].append(tile_id)
            ids.drawn[event.seat] = tile_id
        elif isinstance(event, ev.RiichiDeclared):
            ids.rivers[event.seat].append(255)
        elif isinstance(event, ev.TileDiscarded):
            (tile_id,) = ids.take(event.seat, [event.tile])
            ids.rivers[event.seat].append(tile_id)
            ids.last_discard = (event.seat, tile_id)
            ids.move = [tile_id]
        elif isinstance(event, ev.DoraRevealed):
            ids.dora_ids.append(ids.new(event.indicator))
        elif isinstance(event, ev.MeldCalled):
            self._meld(event)

    def _meld(self, meld: ev.MeldCalled) -> None:
        ids = self.ids
        seat = meld.seat
        if meld.kind in ("chi", "pon", "open_kan"):
            assert ids.last_discard is not None and meld.called is not None
            own_tiles = list(meld.tiles)
            own_tiles.remove(meld.called)
            own = ids.take(seat, own_tiles)
            called = ids.last_discard[1]
            all_ids = tuple(sorted([*own, called]))
            offset = (ids.last_discard[0] - seat) % 4
            index = all_ids.index(called) if meld.kind != "open_kan" else called % 4
            record = MeldIds(meld.kind, all_ids, called, offset, index)
            ids.last_discard = None
        elif meld.kind == "added_kan":
            assert meld.called is not None
            (added,) = ids.take(seat, [meld.called])
            pon = next(m for m in ids.melds[seat] if m.kind == "pon"
                       and m.ids[0] // 4 == added // 4)
            ids.melds[seat].remove(pon)
            record = MeldIds("added_kan", tuple(sorted([*pon.ids, added])), added, pon.offset,
                             pon.index)
            ids.move = [added]
            ids.last_added = added
        else:
            own = ids.take(seat, list(meld.tiles))
            record = MeldIds("closed_kan", tuple(sorted(own)), None, 0, 0)
        ids.melds[seat].append(record)
        ids.meld_code = meld_code(record)

    def run(self) -> None:
        try:
            config = GameConfig("riichi", self.server.length)
            self.stats.result = play_game(config, self.players, self.server.seed,
                                          self.game_index, self.log, self.referee)
            self.stats.games += 1
        except Exception as exc:
            self.stats.problems.append(f"game thread: {type(exc).__name__}: {exc}")
            raise
        finally:
            for p in self.players:
                if isinstance(p, BrainSeat):
                    p.close()
            self.done.set()


# ---------------------------------------------------------------------- the server


class FakeTenhouServer:
    """Serves test games (as many as the client joins) to one client at a time, over TCP and
    / or WebSocket."""

    def __init__(self, seed: int = 0, length: str = "east",
                 opponents: tuple[str, str, str] = ("greedy", "rulebased", "greedy"),
                 time_limit: float = 10.0, grace: float = 30.0, drop_after: int | None = None,
                 log_dir: str | None = None, junk: tuple[str, ...] = ()) -> None:
        self.seed, self.length = seed, length
        self.opponents = opponents
        self.time_limit, self.grace = time_limit, grace
        self.drop_after = drop_after
        self.dropped = False
        self.log_dir = log_dir
        self.junk = list(junk)  # raw tags sent once, mid-game, to test the client's resilience
        self.stats = ServerStats()
        self.link: _Link | None = None
        self.game: _Game | None = None
        self.games_started = 0
        self._resuming = False
        self.name = ""
        self.finished = asyncio.Event()
        self._cut: Any = None
        self._servers: list[Any] = []

    def open_log(self, game_index: int) -> GameLogWriter | None:
        if self.log_dir is None:
            return None
        header = Header(platform="tenhou-server", variant="riichi", seat=None,
                        policy="fake-tenhou", game_id=f"fake-s{self.seed}-g{game_index}",
                        extra={"full_information": True})
        return GameLogWriter.create(self.log_dir, header, flush_per_hand=True)

    def cut_connection(self) -> None:
        """From the game thread: drop the client's line (on the event loop's thread)."""
        if self._cut is not None and self.link is not None:
            self.link.loop.call_soon_threadsafe(self._cut)

    # ------------------------------------------------------------------ transports

    async def start_tcp(self, host: str = "127.0.0.1", port: int = 0) -> int:
        server = await asyncio.start_server(self._tcp_client, host, port)
        self._servers.append(server)
        return server.sockets[0].getsockname()[1]

    async def start_ws(self, host: str = "127.0.0.1", port: int = 0) -> int:
        server = await serve(self._ws_client, host, port)
        self._servers.append(server)
        return next(iter(server.sockets)).getsockname()[1]

    async def close(self) -> None:
        for server in self._servers:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _tcp_client(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        async def send(tag: Tag | str) -> None:
            text = tag if isinstance(tag, str) else format_tag(tag)  # str: raw test input
            writer.write(text.encode() + b"\0")
            await writer.drain()

        def cut() -> None:
            self.stats.problems.append("(test) connection cut by the server")
            writer.transport.abort()

        stream = TagStream()

        async def receive() -> list[Tag | str]:
            data = await reader.read(65536)
            if not data:
                raise ConnectionError("closed")
            return list(stream.feed(data))

        try:
            await self._session(send, receive, cut)
        finally:
            writer.close()

    async def _ws_client(self, connection: ServerConnection) -> None:
        async def send(tag: Tag | str) -> None:
            try:
                await connection.send(tag if isinstance(tag, str)
                                      else json.dumps(tag_to_json(tag)))
            except websockets.ConnectionClosed:
                raise ConnectionError("closed") from None

        def cut() -> None:
            self.stats.problems.append("(test) connection cut by the server")
            transport = connection.transport
            if transport is not None:
                transport.abort()

        async def receive() -> list[Tag | str]:
            try:
                message = await connection.recv()
            except websockets.ConnectionClosed:
                raise ConnectionError("closed") from None
            text = message if isinstance(message, str) else message.decode()
            return [text if text.lstrip().startswith("<") else tag_from_json(text)]

        await self._session(send, receive, cut)

    # ------------------------------------------------------------------ the session

    async def _session(self, send: Any, receive: Any, cut: Any) -> None:
        """One connection: login, queue, game (or the return of a dropped client)."""
        loop = asyncio.get_running_loop()
        joined = 0
        try:
            while True:
                for item in await receive():
                    tag = item if isinstance(item, Tag) else parse_tag(item)
                    if tag.name == "HELO":
                        self.name = urllib.parse.unquote(tag.attrs.get("name", ""))
                        if self.link is not None and self.game is not None \
                                and not self.game.done.is_set():
                            await self._resume(send, cut)
                            continue
                        await send(Tag("HELO", {"uname": urllib.parse.quote(
                            self.name if self.name == "NoName" else "player"),
                            "auth": AUTH_CHALLENGE}))
                    elif tag.name == "AUTH":
                        self.stats.auth_ok = tag.attrs.get("val") == auth_reply(AUTH_CHALLENGE)
                    elif tag.name == "PXR":
                        await send(Tag("LN", {"n": "x", "j": "y", "g": "z"}))
                    elif tag.name == "JOIN":
                        joined += 1
                        if joined == 1 and "r" not in tag.attrs.get("t", ""):
                            await send(Tag("REJOIN", {"t": tag.attrs.get("t", "0,64") + ",r"}))
                        else:
                            self._start_game(loop, send, cut)
                            await self._begin(send)
                    elif tag.name == "GOK" and self.game is not None and self._resuming:
                        self._resuming = False
                        await self._reinit(self.game, send)
                    elif tag.name == "NEXTREADY" and self.link is not None:
                        self.link.ready.set()
                    elif tag.name == "BYE":
                        self.stats.byes += 1
                        return
                    elif tag.name == "Z":
                        self.stats.keepalives += 1
                    elif tag.name in ("D", "N", "REACH") and self.link is not None:
                        if self._cut is not cut:
                            return  # a line already dropped: what it still held is stale
                        if not self._answers_pending(tag):
                            self.stats.problems.append(f"unasked: {format_tag(tag)}")
                            continue  # Tenhou ignores an answer to nothing
                        self.link.replies.put(tag)
                        await self._send_junk(send)
        except (ConnectionError, TenhouError, asyncio.IncompleteReadError):
            pass
        finally:
            if self.link is not None and self._cut is cut:
                self.link.detach()

    def _answers_pending(self, tag: Tag) -> bool:
        """Whether a reply can answer what the client owes now: a pass (``<N/>``) never
        answers a turn, a discard never answers an offer."""
        pending = self.game.remote.pending if self.game is not None else None
        if pending is None:
            return False
        if pending[0] == "turn":
            return not (tag.name == "N" and "type" not in tag.attrs)
        return tag.name == "N"

    async def _send_junk(self, send: Any) -> None:
        """Test input: raw bad tags, sent once each, between the client's moves."""
        while self.junk:
            await send(self.junk.pop(0))

    def _start_game(self, loop: asyncio.AbstractEventLoop, send: Any, cut: Any) -> None:
        self.link = _Link(loop)
        self._cut = cut
        self.game = _Game(self, self.link, self.games_started)
        self.games_started += 1

    async def _begin(self, send: Any) -> None:
        game = self.game
        assert game is not None and self.link is not None
        names = ["COM", "COM", "COM", "COM"]
        names[game.seat] = self.name if self.name == "NoName" else "player"
        rel = {f"n{r}": urllib.parse.quote(names[(game.seat + r) % 4]) for r in range(4)}
        await send(Tag("GO", {"type": str(TEST_GAME), "lobby": "0"}))
        await send(Tag("UN", {**rel, "dan": "0,0,0,0", "rate": "1500,1500,1500,1500",
                              "sx": "M,M,M,M"}))
        await send(Tag("TAIKYOKU", {"oya": str((0 - game.seat) % 4),
                                    "log": f"fake-{self.seed}-{game.game_index}"}))
        self.link.attach(send)
        thread = threading.Thread(target=self._run_game, args=(game,), daemon=True)
        thread.start()

    def _run_game(self, game: _Game) -> None:
        game.link.ready.wait(self.time_limit)  # GOK, NEXTREADY before the first INIT
        game.link.ready.clear()
        try:
            game.run()
        finally:
            game.link.loop.call_soon_threadsafe(self.finished.set)

    async def _reinit(self, game: _Game, send: Any) -> None:
        """The table as the returning client's seat sees it, then the live line again."""
        await asyncio.to_thread(game.lock.acquire)
        try:
            for owed in game.remote.reinit():
                await send(owed)
            game.link.attach(send)
        finally:
            game.lock.release()

    async def _resume(self, send: Any, cut: Any) -> None:
        game = self.game
        assert game is not None
        self.stats.reconnects += 1
        self._cut = cut
        self._resuming = True
        names = ["COM", "COM", "COM", "COM"]
        names[game.seat] = self.name if self.name == "NoName" else "player"
        await send(Tag("GO", {"type": str(TEST_GAME), "lobby": "0"}))
        await send(Tag("UN", {f"n{r}": urllib.parse.quote(names[(game.seat + r) % 4])
                              for r in range(4)}))
        await send(Tag("SAIKAI", {"ba": f"{game.honba},{game.sticks}",
                                  "oya": "0", "sc": game.remote._sc(())}))
