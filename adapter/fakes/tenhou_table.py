"""One table of the fake Tenhou server: the local riichi referee in its own thread, with one or
more seats played by remote clients (tenhou_seat.py) and the others by mjbot's policies. The
server side (logins, sockets) is in tenhou_server.py.
"""

from __future__ import annotations

import threading
import urllib.parse
from typing import TYPE_CHECKING, Any

from adapter.fakes.tenhou_seat import RemoteSeat, SeatLink
from adapter.fakes.tile_ids import take_ids
from adapter.local.game import GameConfig, GameResult, play_game
from adapter.local.referee import HandReferee
from adapter.local.seat import BrainSeat
from protocols import events as ev
from protocols import tiles as T
from protocols.tenhou import MeldIds, Tag, format_tag, meld_code

if TYPE_CHECKING:
    from adapter.fakes.tenhou_server import FakeTenhouServer


# ---------------------------------------------------------------------- ids


class TableIds:
    """Tenhou ids for one hand: each physical tile gets the next free id of its tile (red fives
    their own), and the server knows every seat's hand, melds and river by id."""

    def __init__(self) -> None:
        self.used: set[int] = set()
        self.held: list[list[int]] = [[] for _ in range(4)]
        self.melds: list[list[MeldIds]] = [[] for _ in range(4)]
        # the discards still in each river (a called one leaves it); 255 marks riichi
        self.rivers: list[list[int]] = [[] for _ in range(4)]
        self.drawn: dict[int, int] = {}
        self.last_discard: tuple[int, int] | None = None
        self.chosen: dict[int, list[int]] = {}  # ids named in a seat's last reply
        self.move: list[int] = []  # ids of the event being told
        self.last_added: int | None = None  # an added kan's tile, robbable
        self.meld_code = 0
        self.dora_ids: list[int] = []
        self.ura_ids: list[int] = []

    def new(self, tile: int) -> int:
        tile_id = next(i for i in T.tenhou_ids(tile) if i not in self.used)
        self.used.add(tile_id)
        return tile_id

    def take(self, seat: int, tiles: list[int]) -> list[int]:
        """Remove ids of ``tiles`` from the seat's hand (those its reply named first)."""
        return take_ids(self.held[seat], self.chosen.pop(seat, []), tiles, T.from_tenhou_id)

    def ura(self, indicators: tuple[int, ...]) -> list[int]:
        """The ura indicators' ids (the same for both winners of a double ron)."""
        if not self.ura_ids:
            self.ura_ids = [self.new(t) for t in indicators]
        return self.ura_ids


class _Referee(HandReferee):
    """The referee, with every full-information event given its ids before the seats see it."""

    def __init__(self, table: TenhouTable, players: list[Any]) -> None:
        super().__init__("riichi", players, table.log)
        self.table = table
        self._late_discard: ev.TileDiscarded | None = None  # told after the kan's DORA
        self.pending_dora = 0  # play() sets it again for each hand

    def emit(self, event: Any) -> None:
        if isinstance(event, ev.TileDiscarded) and self.pending_dora:
            # a kan's new indicator is turned before the discard after the kan, as Tenhou
            # tells it (the capture 82093: "<DORA hai=64/><F42/><W/>"); the referee turns it
            # just after, so the discard waits for it
            self._late_discard = event
            return
        if isinstance(event, ev.RoundStarted | ev.GameEnded):
            self.table.between_hands(event)  # outside the lock: a client may come back
        # one event at a time against a returning client's REINIT (see TenhouTable.lock)
        with self.table.lock:
            self.table.before_event(event)
            super().emit(event)
        late = self._late_discard
        if isinstance(event, ev.DoraRevealed) and late is not None and not self.pending_dora:
            self._late_discard = None
            self.emit(late)

    def ask(self, seat: int, request: ev.DecisionRequest,
            legal: list[Any] | None = None) -> Any:
        """Any seat asked to decide ends every client's write: what was told since the last
        decision goes out together (Tenhou's "<D12/><U/>"), and nothing waits behind a wait."""
        with self.table.lock:
            for remote in self.table.remotes.values():
                remote.flush()
        return super().ask(seat, request, legal)


# ---------------------------------------------------------------------- the table


class TenhouTable:
    """One game in its own thread: the referee, the remote seats and mjbot's players."""

    def __init__(self, server: FakeTenhouServer, game_index: int,
                 seated: dict[int, tuple[str, SeatLink]]) -> None:
        self.server = server
        self.stats = server.stats
        self.time_limit = server.time_limit
        self.game_type = server.game_type
        self.game_index = game_index
        self.remotes = {seat: RemoteSeat(self, seat, name, link)
                        for seat, (name, link) in seated.items()}
        self.players: list[Any] = [self.remotes.get(s) or
                                   BrainSeat("riichi", s, server.opponents[s % 3])
                                   for s in range(4)]
        self.log = server.open_log(game_index)
        # held by the game thread while it tells an event and by a returning client's REINIT,
        # so that neither sees the other half done
        self.lock = threading.Lock()
        self.referee = _Referee(self, self.players)
        self.ids = TableIds()
        self.honba = self.sticks = 0
        self.dealt = False  # a hand has been dealt: a returning client gets a REINIT
        self.over = False  # owari sent: a login from now on is a new one
        self.done = threading.Event()
        self.result: GameResult | None = None

    def problem(self, text: str) -> None:
        self.stats.problems.append(text)

    def dropped(self, why: str, tag: Tag) -> None:
        """An answer that answers nothing now: logged and counted, never applied."""
        self.stats.dropped += 1
        self.problem(f"dropped, {why}: {format_tag(tag)}")

    def names(self, seat: int) -> dict[str, str]:
        """UN's names, relative to ``seat``."""
        names = [self.players[s].name if s in self.remotes else "COM" for s in range(4)]
        return {f"n{r}": urllib.parse.quote(names[(seat + r) % 4]) for r in range(4)}

    def send(self, remote: RemoteSeat, tags: list[Tag]) -> None:
        if self.log is not None:
            for tag in tags:
                self.log.tx(format_tag(tag))
        if remote.link.send(tags):
            self.server.maybe_cut(remote)

    def wait_ready(self, remote: RemoteSeat) -> None:
        """NEXTREADY between hands; an absent client is not waited for."""
        if remote.link.wait_back():
            remote.link.ready.wait(self.time_limit)
        remote.link.ready.clear()

    def between_hands(self, event: ev.RoundStarted | ev.GameEnded) -> None:
        """The last hand's results: before the next INIT (NEXTREADY waited for), or with
        PROF and ``owari`` at the end; the game is over from that moment."""
        if isinstance(event, ev.GameEnded):
            self.over = True
        for remote in self.remotes.values():
            if isinstance(event, ev.GameEnded):
                remote.game_over(list(event.scores))
            else:
                remote.send_results()

    def before_event(self, event: Any) -> None:
        ids = self.ids
        ids.move = []
        if isinstance(event, ev.RoundStarted):
            self.stats.hands += 1
            self.ids = ids = TableIds()
            self.honba, self.sticks = event.honba, event.sticks
            for seat, hand in enumerate(event.hands):
                ids.held[seat] = sorted(ids.new(t) for t in hand)
            ids.dora_ids = [ids.new(t) for t in event.dora_indicators]
            self.dealt = True
        elif isinstance(event, ev.TileDrawn) and event.tile is not None:
            tile_id = ids.new(event.tile)
            ids.held[event.seat].append(tile_id)
            ids.drawn[event.seat] = tile_id
        elif isinstance(event, ev.RiichiDeclared):
            ids.rivers[event.seat].append(255)
        elif isinstance(event, ev.RiichiAccepted):
            self.sticks += 1
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
            giver, called = ids.last_discard
            # Tenhou's REINIT leaves a called tile out of its giver's river (kawa)
            ids.rivers[giver].remove(called)
            all_ids = tuple(sorted([*own, called]))
            offset = (giver - seat) % 4
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
        """The game (in its own thread), after each client's GOK / NEXTREADY."""
        try:
            for remote in self.remotes.values():
                self.wait_ready(remote)
            config = GameConfig("riichi", self.server.length)
            self.result = play_game(config, self.players, self.server.seed, self.game_index,
                                    self.log, self.referee)
            self.stats.result = self.result
            self.stats.games += 1
        except Exception as exc:
            self.problem(f"game thread: {type(exc).__name__}: {exc}")
            raise
        finally:
            self.over = True
            for p in self.players:
                if isinstance(p, BrainSeat):
                    p.close()
            self.done.set()
