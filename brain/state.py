"""The table as one seat sees it, changed only by events.

This is the single source of truth for policies and rules: own concealed tiles, every seat's
melds and river (tsumogiri and riichi marks), visible counts of each kind, tiles left in the wall,
dora, scores, winds, dealer and turn number. ``apply(event)`` is the only mutator, so replaying a
game log through a fresh state rebuilds exactly what the bot knew at each decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from brain.rules.variant import Variant, variant_of
from brain.shanten import shanten, waits
from protocols import events as ev
from protocols import tiles as T


@dataclass(frozen=True, slots=True)
class Meld:
    """A called or declared meld. ``tiles`` is empty where the platform hides a concealed kong."""

    kind: str
    tiles: tuple[int, ...]
    called: int | None = None
    from_seat: int | None = None

    @property
    def is_kan(self) -> bool:
        return self.kind in ev.KAN_KINDS

    @property
    def is_open(self) -> bool:
        """Open for concealment purposes: everything but a closed kan (and nuki)."""
        return self.kind not in ("closed_kan", "nuki")

    @property
    def kind_of_tiles(self) -> int | None:
        """The tile kind of a pon/kan, the lowest kind of a chi; None if hidden."""
        if not self.tiles:
            return None
        return min(T.kind(t) for t in self.tiles)


@dataclass(slots=True)
class RiverTile:
    tile: int
    tsumogiri: bool | None = None
    riichi: bool = False
    claimed: bool = False  # taken by another seat's call
    turn: int = -1  # the hand's discard number (0 = first discard): orders the four rivers


@dataclass(slots=True)
class SeatView:
    melds: list[Meld] = field(default_factory=list)
    river: list[RiverTile] = field(default_factory=list)
    riichi: bool = False
    double_riichi: bool = False
    riichi_pending: bool = False  # declared, the declaring discard not yet passed
    ippatsu: bool = False
    flowers: list[int] = field(default_factory=list)
    draws: int = 0
    # kinds discarded by anyone since this seat's riichi was accepted: safe against it
    passed_since_riichi: set[int] = field(default_factory=set)


class TableState:
    """What one seat knows. Construct, then feed every event to :meth:`apply`."""

    def __init__(self, variant: str = "riichi", seat: int = 0,
                 rules: dict[str, object] | None = None) -> None:
        self.variant = variant
        self.spec: Variant = variant_of(variant)  # what the variant's name stands for
        self.seat = seat
        self.names: tuple[str, ...] = ("", "", "", "")
        self.rules: dict[str, object] = dict(rules or {})
        self.scores: list[int] = [0, 0, 0, 0]
        self.game_over = False
        self.hand_count = 0
        self._reset_round()

    @property
    def hand(self) -> list[int]:
        """Our concealed tiles; change the list in place only through the event handlers."""
        return self._hand

    @hand.setter
    def hand(self, tiles: list[int]) -> None:
        self._hand = tiles
        self._counts = T.counts34(tiles)
        self._hand_version += 1

    # ------------------------------------------------------------------ derived facts

    def _reset_round(self) -> None:
        self.round_wind = 0
        self.round_number = 0
        self.dealer = 0
        self.honba = 0
        self.sticks = 0
        self.dora_indicators: list[int] = []
        # kept in step with ``hand`` by the handlers (the only code that changes the list in
        # place): counts and waits are asked for on every request and every other seat's
        # discard. Assigning a new hand (a restored snapshot) goes through the setter.
        self._hand = []  # typed by the ``hand`` setter above
        self._counts = [0] * 34
        self._hand_version = 0
        self._waits_key: int | None = None
        self._waits: frozenset[int] = frozenset()
        self._shanten_key: int | None = None
        self._shanten = 0
        self.seats = [SeatView() for _ in range(4)]
        self.visible = [0] * 34
        self.wall_remaining = self.spec.live_wall
        self.seat_walls: list[int] | None = None
        self.turn = 0  # discards so far this hand
        self.current: int | None = None  # seat whose move it is
        self.last_draw: int | None = None  # own drawn tile, until discarded
        self.last_draw_replacement = False
        self.last_discard: tuple[int, int] | None = None  # (seat, tile), until the next draw
        self.last_added_kan: tuple[int, int] | None = None  # (seat, tile) a rob-kan chance
        self.called_this_turn: Meld | None = None  # own chi/pon awaiting its discard
        self.calls_made = False  # any call (including closed kans) this hand
        self.kans = 0
        self.temporary_furiten = False
        self.riichi_furiten = False
        self._missed_win = False  # a wait of ours was just discarded / added to a kan
        # the platform's word on our furiten, shown before the echo of our discard that
        # changed it: taken once that discard is (see _on_furiten_shown)
        self._furiten_word: bool | None = None
        self.round_active = False

    def seat_wind(self, seat: int | None = None) -> int:
        """Seat wind as a kind (27..30)."""
        s = self.seat if seat is None else seat
        return T.EAST + (s - self.dealer) % 4

    @property
    def round_wind_kind(self) -> int:
        return T.EAST + self.round_wind % 4

    @property
    def me(self) -> SeatView:
        return self.seats[self.seat]

    @property
    def melds(self) -> list[Meld]:
        return self.me.melds

    def counts(self) -> list[int]:
        """Own concealed tiles as a 34-count vector (red fives as fives); a fresh list."""
        return self._counts.copy()

    def unseen(self, kind: int) -> int:
        """Copies of ``kind`` this seat has not seen anywhere (hand, rivers, melds, indicators)."""
        return 4 - self.visible[kind]

    def unseen_counts(self) -> list[int]:
        return [4 - v for v in self.visible]

    def is_concealed(self, seat: int | None = None) -> bool:
        s = self.seats[self.seat if seat is None else seat]
        return not any(m.is_open for m in s.melds)

    def next_seat_wall(self) -> int | None:
        """MCR duplicate walls: draws left in the wall of the seat after ``current``."""
        if self.seat_walls is None or self.current is None:
            return None
        return self.seat_walls[(self.current + 1) % 4]

    # ------------------------------------------------------------------ events

    def waits(self) -> frozenset[int]:
        """Kinds that would complete our ready hand (empty when not ready or not 3k+1 tiles).
        Cached per hand: it is asked on every other seat's discard."""
        if self._waits_key != self._hand_version:
            # HandError for a hand of no possible size; the key is set only once they are known
            self._waits = frozenset(waits(self._counts, self.spec.regular_shapes_only))
            self._waits_key = self._hand_version
        return self._waits

    def hand_shanten(self) -> int:
        """:func:`brain.shanten.shanten` of our concealed hand in the variant's winning forms,
        cached per hand: the legal set of a turn asks it for the win and again for riichi."""
        if self._shanten_key != self._hand_version:
            # HandError for a hand of 3k tiles
            self._shanten = shanten(self._counts, self.spec.regular_shapes_only)
            self._shanten_key = self._hand_version
        return self._shanten

    def apply(self, event: object) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is None:
            return
        if self._missed_win and isinstance(event, _PLAY_GOES_ON):
            # the play went on past a tile we could have won on: furiten (riichi rules)
            self._missed_win = False
            self.temporary_furiten = True
            if self.me.riichi:
                self.riichi_furiten = True
        handler(self, event)

    def _see(self, tile: int, n: int = 1) -> None:
        k = T.kind(tile)
        if k < 34:
            seen = self.visible[k] + n
            self.visible[k] = 4 if seen > 4 else (0 if seen < 0 else seen)

    def _remove_from_hand(self, tile: int) -> None:
        """Remove ``tile`` from our hand, preferring the exact tile (red or not), else its kind."""
        k = T.kind(tile)
        if tile in self.hand:
            self.hand.remove(tile)
        else:
            for i, t in enumerate(self.hand):
                if T.kind(t) == k:
                    del self.hand[i]
                    break
            else:
                raise StateError(f"tile {T.tile_name(tile)} not in hand {T.to_mpsz(self.hand)}")
        if k < 34:
            self._counts[k] -= 1
        self._hand_version += 1

    def _on_game_started(self, e: ev.GameStarted) -> None:
        self.variant = e.variant
        self.spec = variant_of(e.variant)
        self.seat = e.seat
        self.names = tuple(e.names)
        self.rules = dict(e.rules)
        self.game_over = False
        self.hand_count = 0
        self._reset_round()

    def _on_round_started(self, e: ev.RoundStarted) -> None:
        self._reset_round()
        self.round_wind = e.round_wind
        self.round_number = e.round_number
        self.dealer = e.dealer
        self.honba = e.honba
        self.sticks = e.sticks
        if e.scores:
            self.scores = list(e.scores)
        self.dora_indicators = list(e.dora_indicators)
        for t in self.dora_indicators:
            self._see(t)
        self.hand = list(e.hand)  # the setter counts it
        for t in self.hand:
            self._see(t)
        if e.wall_remaining is not None:
            self.wall_remaining = e.wall_remaining
        if self.spec.private_walls and self.rules.get("duplicate_walls", True):
            self.seat_walls = [34 - 13] * 4
        self.current = e.dealer
        self.hand_count += 1
        self.round_active = True

    def _on_tile_drawn(self, e: ev.TileDrawn) -> None:
        self.wall_remaining = max(0, self.wall_remaining - 1)
        if self.seat_walls is not None:
            self.seat_walls[e.seat] = max(0, self.seat_walls[e.seat] - 1)
        self.seats[e.seat].draws += 1
        self.current = e.seat
        self.last_discard = None
        self.last_added_kan = None
        if e.seat == self.seat:
            if e.tile is None:
                raise StateError("own draw without a tile")
            self.hand.append(e.tile)
            k = T.kind(e.tile)
            if k < 34:
                self._counts[k] += 1
            self._hand_version += 1
            self._see(e.tile)
            self.last_draw = e.tile
            self.last_draw_replacement = e.replacement
            self.called_this_turn = None

    def _on_tile_discarded(self, e: ev.TileDiscarded) -> None:
        seat = self.seats[e.seat]
        riichi_mark = seat.riichi_pending
        if e.seat == self.seat:
            self._remove_from_hand(e.tile)
            self.last_draw = None
            self.called_this_turn = None
            if not self.me.riichi:
                self.temporary_furiten = False
        else:
            self._see(e.tile)
            if self.spec.has_riichi and T.kind(e.tile) in self.waits():
                self._missed_win = True
        seat.river.append(RiverTile(e.tile, e.tsumogiri, riichi_mark, turn=self.turn))
        if e.seat == self.seat and self._furiten_word is not None:
            # taken with the tile in our river: a wait we discarded is the river's furiten,
            # not a win passed up
            word, self._furiten_word = self._furiten_word, None
            self._take_furiten_word(word)
        for other in self.seats:
            if other.riichi:
                other.passed_since_riichi.add(T.kind(e.tile))
        if seat.ippatsu and not riichi_mark:
            seat.ippatsu = False
        self.turn += 1
        self.current = e.seat
        self.last_discard = (e.seat, e.tile)
        self.last_draw_replacement = False

    def _on_meld_called(self, e: ev.MeldCalled) -> None:
        meld = Meld(e.kind, tuple(e.tiles), e.called, e.from_seat)
        seat = self.seats[e.seat]
        mine = e.seat == self.seat
        self.calls_made = True
        for s in self.seats:
            s.ippatsu = False
        if e.kind == "added_kan":
            self._upgrade_pon(seat, meld, mine)
        else:
            if e.from_seat is not None and e.kind in ("chi", "pon", "open_kan"):
                river = self.seats[e.from_seat].river
                if river:
                    river[-1].claimed = True
            own_tiles = list(meld.tiles)
            if e.called is not None and e.kind in ("chi", "pon", "open_kan"):
                _remove_one(own_tiles, e.called)
            if mine:
                for t in own_tiles:
                    self._remove_from_hand(t)
            else:
                for t in own_tiles:
                    self._see(t)
            seat.melds.append(meld)
        if meld.is_kan:
            self.kans += 1
        if e.kind == "nuki" and e.called is not None:
            if mine:
                self._remove_from_hand(e.called)
            else:
                self._see(e.called)
        self.current = e.seat
        self.last_discard = None
        if mine and e.kind in ("chi", "pon"):
            self.called_this_turn = meld
            self.last_draw = None
        if e.kind == "added_kan":
            added = e.called if e.called is not None else meld.tiles[-1]
            self.last_added_kan = (e.seat, added)
            if not mine and self.spec.has_riichi and T.kind(added) in self.waits():
                self._missed_win = True

    def _upgrade_pon(self, seat: SeatView, meld: Meld, mine: bool) -> None:
        added = meld.called if meld.called is not None else meld.tiles[-1]
        k = T.kind(added)
        for i, m in enumerate(seat.melds):
            if m.kind == "pon" and m.tiles and T.kind(m.tiles[0]) == k:
                tiles = meld.tiles if len(meld.tiles) == 4 else (*m.tiles, added)
                seat.melds[i] = Meld("added_kan", tiles, added, m.from_seat)
                break
        else:
            seat.melds.append(meld)
        if mine:
            self._remove_from_hand(added)
            self.last_draw = None
        else:
            self._see(added)

    def _on_riichi_declared(self, e: ev.RiichiDeclared) -> None:
        seat = self.seats[e.seat]
        seat.riichi_pending = True
        if seat.draws <= 1 and not self.calls_made and not seat.river:
            seat.double_riichi = True

    def _on_riichi_accepted(self, e: ev.RiichiAccepted) -> None:
        seat = self.seats[e.seat]
        seat.riichi_pending = False
        seat.riichi = True
        seat.ippatsu = True
        self.sticks += 1
        if e.scores is not None:
            self.scores = list(e.scores)
        else:
            self.scores[e.seat] -= 1000

    def _on_furiten_shown(self, e: ev.FuritenShown) -> None:
        """The platform's word on our furiten sets the flags the rules and the network read:
        after a reconnect our own reading (each river replayed in a guessed order) can be
        wrong either way. Tenhou shows it before the echo of the discard that changed it
        (kokushi.log): with the discard still in hand, it is taken once the echo is."""
        if e.seat != self.seat or not self.spec.has_riichi or not self.round_active:
            return
        if len(self._hand) % 3 == 2:
            self._furiten_word = e.furiten
            return
        self._take_furiten_word(e.furiten)

    def _take_furiten_word(self, furiten: bool) -> None:
        """Furiten said: where a wait in our own river does not already make it so, a win
        passed up (kept through riichi). Not furiten: no win passed up counts, nor one the
        table is about to count (a wait another seat discarded last in a REINIT's replay)."""
        if not furiten:
            self.temporary_furiten = self.riichi_furiten = self._missed_win = False
            return
        if self.temporary_furiten or self.riichi_furiten:
            return
        waits = self.waits() if len(self._hand) % 3 == 1 else frozenset()
        if any(T.kind(r.tile) in waits for r in self.me.river):
            return
        self.temporary_furiten = True
        self.riichi_furiten = self.me.riichi

    def _on_dora_revealed(self, e: ev.DoraRevealed) -> None:
        self.dora_indicators.append(e.indicator)
        self._see(e.indicator)

    def _on_flower(self, e: ev.FlowerReplaced) -> None:
        self.seats[e.seat].flowers.append(e.flower)
        if e.seat == self.seat and e.flower in self.hand:
            self.hand.remove(e.flower)  # flowers are not counted: counts stay as they are
            self._hand_version += 1

    def _on_round_won(self, e: ev.RoundWon) -> None:
        self._end_round(e.deltas)

    def _on_round_drawn(self, e: ev.RoundDrawn) -> None:
        self._end_round(e.deltas)

    def _end_round(self, deltas: tuple[int, ...]) -> None:
        for i, d in enumerate(deltas[:4]):
            self.scores[i] += d
        self.round_active = False
        self.current = None

    def _on_game_ended(self, e: ev.GameEnded) -> None:
        if e.scores:  # mjai's end_game may carry none: the hands' tally stands
            self.scores = list(e.scores)
        self.game_over = True
        self.round_active = False


class StateError(ValueError):
    """An event contradicts what this seat knows (e.g. discarding a tile it does not hold)."""


def _remove_one(tiles: list[int], tile: int) -> None:
    if tile in tiles:
        tiles.remove(tile)
        return
    k = T.kind(tile)
    for i, t in enumerate(tiles):
        if T.kind(t) == k:
            del tiles[i]
            return


_PLAY_GOES_ON = (ev.TileDrawn, ev.TileDiscarded, ev.MeldCalled)

# each handler takes its own event type: Any is the join the table's value type can name
_HANDLERS: dict[type, Callable[[TableState, Any], None]] = {
    ev.GameStarted: TableState._on_game_started,
    ev.RoundStarted: TableState._on_round_started,
    ev.TileDrawn: TableState._on_tile_drawn,
    ev.TileDiscarded: TableState._on_tile_discarded,
    ev.MeldCalled: TableState._on_meld_called,
    ev.RiichiDeclared: TableState._on_riichi_declared,
    ev.RiichiAccepted: TableState._on_riichi_accepted,
    ev.DoraRevealed: TableState._on_dora_revealed,
    ev.FuritenShown: TableState._on_furiten_shown,
    ev.FlowerReplaced: TableState._on_flower,
    ev.RoundWon: TableState._on_round_won,
    ev.RoundDrawn: TableState._on_round_drawn,
    ev.GameEnded: TableState._on_game_ended,
}
