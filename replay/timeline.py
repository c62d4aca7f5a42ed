"""A game as the web viewer steps through it: per hand, the table after every event.

Any log the replayer reads comes in: our own logs (one seat's view, or the local table's full
information) and imports (full records). Each step is a complete snapshot of the table as
plain JSON-ready data (tiles in mpsz, e.g. ``5m``, ``0p`` a red five, ``7z`` red dragon):
the four hands where known (else how many tiles are hidden), the tile just drawn, rivers with
tsumogiri / riichi / called-away marks, melds, dora indicators, scores, riichi sticks and the
hand's result (each yaku / fan / tai also in English, replay/yaku_names.py); and where our
logs have them, the decisions asked at that point with the policy's candidates and scores,
and per hand the log's notices (what it says beside the table), each at the step it follows.
Snapshots rather than events, so that the page only draws.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

from brain.rules.variant import VARIANTS
from brain.state import StateError
from protocols import events as ev
from protocols import tiles as T
from protocols.ntpu import ENDED_BY_SERVER
from replay import formats, progress
from replay.formats import Loaded
from replay.formats.botzone_log import PENALTIES
from replay.log import DecisionFrame, EventFrame
from replay.record import GameRecord, own_tiles
from replay.replayer import (
    DAMAGED,
    action_text,
    check_event,
    damage_note,
    damage_reason,
    damages_at,
    event_text,
    furiten_text,
    round_label,
    table_damage,
)
from replay.yaku_names import english

WINDS = "ESWN"
DRAW_REASONS = {"exhaustive": "exhaustive draw", "nine_terminals": "nine terminals",
                "four_riichi": "four riichi", "four_kans": "four kans",
                "four_winds": "four winds", "triple_ron": "triple ron",
                ENDED_BY_SERVER: "ended by the server"}


def tile(t: int | None) -> str | None:
    return None if t is None else T.tile_name(t)


def _sorted(tiles: list[int]) -> list[str]:
    return [T.tile_name(t) for t in sorted(tiles, key=T.sort_key)]


@dataclass
class _Seat:
    hand: list[int] | None = None  # None: not known to this log
    hidden: int = 0
    drawn: int | None = None
    drew_hidden: bool = False
    river: list[dict[str, Any]] = field(default_factory=list)
    melds: list[dict[str, Any]] = field(default_factory=list)
    flowers: list[int] = field(default_factory=list)
    riichi: bool = False
    riichi_next: bool = False

    def take_drawn(self) -> None:
        """The drawn tile joins the hand (before a discard or a call from the hand)."""
        if self.hand is not None and self.drawn is not None:
            self.hand.append(self.drawn)
        elif self.drew_hidden:
            self.hidden += 1
        self.drawn, self.drew_hidden = None, False

    def remove(self, tiles: list[int]) -> None:
        if self.hand is None:
            self.hidden = max(0, self.hidden - len(tiles))
            return
        for t in tiles:
            if t in self.hand:
                self.hand.remove(t)
            else:
                same = [x for x in self.hand if T.kind(x) == T.kind(t)]
                if same:
                    self.hand.remove(same[0])

    def view(self) -> dict[str, Any]:
        return {"hand": _sorted(self.hand) if self.hand is not None else None,
                "hidden": self.hidden if self.hand is None else 0,
                "drawn": tile(self.drawn) if self.drawn is not None
                else ("?" if self.drew_hidden else None),
                "river": copy.deepcopy(self.river), "melds": copy.deepcopy(self.melds),
                "flowers": [T.tile_name(f) for f in self.flowers], "riichi": self.riichi}


class _Table:
    def __init__(self, variant: str, names: list[str]) -> None:
        self.variant = variant
        self.names = names
        self.seats = [_Seat() for _ in range(4)]
        self.round = ""
        self.dealer = 0
        self.honba = self.sticks = 0
        self.scores: list[int] = [0, 0, 0, 0]
        self.dora: list[int] = []
        self.wall: int | None = None
        self.result: dict[str, Any] | None = None

    def who(self, seat: int | None) -> str:
        if seat is None:
            return "?"
        name = self.names[seat] if seat < len(self.names) and self.names[seat] else ""
        return f"{WINDS[(seat - self.dealer) % 4]} {name}".strip() if name else \
            f"{WINDS[(seat - self.dealer) % 4]} (seat {seat})"

    def snapshot(self, text: str, actor: int | None) -> dict[str, Any]:
        return {"text": text, "actor": actor, "round": self.round, "dealer": self.dealer,
                "honba": self.honba, "sticks": self.sticks, "scores": list(self.scores),
                "dora": [T.tile_name(d) for d in self.dora], "wall": self.wall,
                "seats": [s.view() for s in self.seats], "result": self.result,
                "decisions": []}

    # ------------------------------------------------------------------ events

    def round_started(self, e: ev.RoundStarted, own_seat: int | None) -> str:
        self.round = f"{WINDS[e.round_wind % 4]}{e.round_number + 1}"
        self.dealer, self.honba, self.sticks = e.dealer, e.honba, e.sticks
        if any(e.scores):
            self.scores = list(e.scores)
        self.dora = list(e.dora_indicators)
        self.wall = e.wall_remaining if e.wall_remaining is not None else None
        self.result = None
        spec = VARIANTS.get(self.variant)  # a log may name a variant this build lacks
        size = spec.hand_size if spec else 13  # dealt to a seat we cannot see
        self.seats = [_Seat() for _ in range(4)]
        for s, seat in enumerate(self.seats):
            if len(e.hands) == 4 and e.hands[s]:
                seat.hand = list(e.hands[s])
            elif s == own_seat and e.hand:
                seat.hand = list(e.hand)
            else:
                seat.hidden = size
        return f"{self.round}-{self.honba}: dealer {self.who(e.dealer)}"

    def apply(self, e: Any) -> tuple[str, int | None] | None:
        """The step's text and actor, or None for an event that is no step of its own."""
        if isinstance(e, ev.TileDrawn):
            seat = self.seats[e.seat]
            seat.take_drawn()
            if e.tile is not None and seat.hand is not None:
                seat.drawn = e.tile
            else:
                seat.drew_hidden = True
            if self.wall is not None:
                self.wall = max(0, self.wall - 1)
            what = tile(e.tile) if e.tile is not None else "a tile"
            return (f"{self.who(e.seat)} draws {what}"
                    f"{' (replacement)' if e.replacement else ''}", e.seat)
        if isinstance(e, ev.TileDiscarded):
            return self._discard(e)
        if isinstance(e, ev.MeldCalled):
            return self._meld(e)
        if isinstance(e, ev.RiichiDeclared):
            self.seats[e.seat].riichi = self.seats[e.seat].riichi_next = True
            return f"{self.who(e.seat)} declares riichi", e.seat
        if isinstance(e, ev.RiichiAccepted):
            self.sticks += 1
            if e.scores:
                self.scores = list(e.scores)
            else:
                self.scores[e.seat] -= 1000
            return None
        if isinstance(e, ev.DoraRevealed):
            self.dora.append(e.indicator)
            return f"new dora indicator {tile(e.indicator)}", None
        if isinstance(e, ev.FlowerReplaced):
            seat = self.seats[e.seat]
            seat.take_drawn()
            seat.remove([e.flower])
            seat.flowers.append(e.flower)
            return f"{self.who(e.seat)} shows flower {tile(e.flower)}", e.seat
        if isinstance(e, ev.RoundWon):
            return self._won(e)
        if isinstance(e, ev.RoundDrawn):
            self.scores = [a + b for a, b in zip(self.scores, e.deltas or (0,) * 4,
                                                 strict=False)]
            spec = VARIANTS.get(self.variant)
            if e.reason in PENALTIES and spec is not None and spec.botzone_penalties:
                # Botzone's judge ends the match on a bad answer: no draw, a penalty
                reason = f"{e.reason} (penalty: {PENALTIES[e.reason]})"
                self.result = {"type": "penalty", "reason": reason, "deltas": list(e.deltas),
                               "tenpai": []}
                return f"hand ended: {reason}", None
            reason = DRAW_REASONS.get(e.reason, e.reason)
            self.result = {"type": "draw", "reason": reason, "deltas": list(e.deltas),
                           "tenpai": list(e.tenpai)}
            return f"drawn hand: {reason}", None
        if isinstance(e, ev.GameEnded):
            self.scores = list(e.scores)
            return "game over: " + " / ".join(f"{self.who(s)} {v}"
                                              for s, v in enumerate(e.scores)), None
        return None

    def _discard(self, e: ev.TileDiscarded) -> tuple[str, int | None]:
        seat = self.seats[e.seat]
        drawn = seat.drawn
        tsumogiri = e.tsumogiri if e.tsumogiri is not None else (
            drawn is not None and e.tile == drawn)
        seat.take_drawn()
        seat.remove([e.tile])
        seat.river.append({"t": T.tile_name(e.tile), "tsumogiri": bool(tsumogiri),
                           "riichi": seat.riichi_next, "called": False})
        seat.riichi_next = False
        return (f"{self.who(e.seat)} discards {tile(e.tile)}"
                f"{' (tsumogiri)' if tsumogiri else ''}", e.seat)

    def _meld(self, e: ev.MeldCalled) -> tuple[str, int | None]:
        seat = self.seats[e.seat]
        seat.take_drawn()
        if e.kind == "added_kan":
            added = e.called if e.called is not None else e.tiles[-1]
            seat.remove([added])
            for meld in seat.melds:
                if meld["kind"] == "pon" and meld["tiles"] and \
                        T.kind(T.parse_mpsz(meld["tiles"][0])[0]) == T.kind(added):
                    meld["kind"] = "added_kan"
                    meld["tiles"].append(T.tile_name(added))
                    break
            else:
                seat.melds.append({"kind": "added_kan", "tiles": _sorted(list(e.tiles)),
                                   "called": None, "from": None})
            return f"{self.who(e.seat)} adds {tile(added)} to a kan", e.seat
        if e.kind in ("closed_kan", "nuki"):
            seat.remove(list(e.tiles))
        else:
            seat.remove(own_tiles(e))
        if e.from_seat is not None and e.kind in ("chi", "pon", "open_kan"):
            river = self.seats[e.from_seat].river
            if river:
                river[-1]["called"] = True
        seat.melds.append({"kind": e.kind, "tiles": _sorted(list(e.tiles)),
                           "called": tile(e.called), "from": e.from_seat})
        shown = T.to_mpsz(e.tiles) if e.tiles else "(hidden)"
        frm = f" from {self.who(e.from_seat)}" if e.from_seat is not None else ""
        return f"{self.who(e.seat)} calls {e.kind.replace('_', ' ')} {shown}{frm}", e.seat

    def _won(self, e: ev.RoundWon) -> tuple[str, int | None]:
        self.scores = [a + b for a, b in zip(self.scores, e.deltas, strict=False)]
        winner = self.seats[e.winner]
        if e.hand:
            winner.hand = [t for t in e.hand]
            winner.remove([e.win_tile])  # shown beside the hand, as the winning tile
            winner.drawn = e.win_tile
            winner.drew_hidden = False
        how = "tsumo" if e.from_seat is None else f"ron on {self.who(e.from_seat)}"
        # a double ron: the earlier win on the same discard stays with the later one, so the
        # hand's last step (and its outline) shows both, not only the last winner
        before = self.result
        earlier: list[dict[str, Any]] = []
        if before is not None and before.get("type") == "win" and e.from_seat is not None \
                and before.get("from") == e.from_seat:
            earlier = [*before.get("earlier", ()),
                       {k: v for k, v in before.items() if k != "earlier"}]
        self.result = {"type": "win", "winner": e.winner, "from": e.from_seat,
                       "win_tile": tile(e.win_tile), "value": e.value, "yaku": list(e.yaku),
                       "yaku_en": [english(y, self.variant) for y in e.yaku],
                       "deltas": list(e.deltas), "detail": e.detail,
                       "ura": [T.tile_name(t) for t in e.ura_dora_indicators],
                       "pao": e.pao_seat, **({"earlier": earlier} if earlier else {})}
        self.sticks = 0
        return f"{self.who(e.winner)} wins ({how}) on {tile(e.win_tile)}, value {e.value}", \
            e.winner


def decision_view(d: DecisionFrame, seat: int | None) -> dict[str, Any]:
    return {"seat": d.seat if d.seat is not None else seat, "kind": d.request.kind,
            "action": action_text(d.action), "policy": d.policy,
            "elapsed_ms": round(d.elapsed * 1000, 3), "fallback": d.fallback,
            "fallback_kind": d.fallback_kind, "legal": len(d.legal),
            "candidates": [[action_text(a), round(s, 4)] for a, s in d.candidates]}


@dataclass
class _Start:
    """Where a hand begins: the table as its RoundStarted left it (pickled: each build
    unpickles a copy of its own), the seat the log sees from, its first step's text and the
    hand's items after it (:func:`_packed`); ``failure``: why the outline's pass could not
    walk the hand (a damaged event), which its steps then raise."""

    table: bytes
    own_seat: int | None
    text: str
    items: bytes = b""
    failure: str | None = None
    opening: bytes = b""  # the hand's RoundStarted, pickled: the seats' tables start from it


def _packed(items: list[tuple[str, Any]]) -> bytes:
    """A hand's items as one bytes object, which the cycle collector does not walk. Kept as
    objects, a local-table log's were some 1,700 tracked objects per hand (each decision's
    request, legal moves and candidates): with 800 hands held in the viewer's cache each
    full collection walked 1.4 million of them and held the interpreter, and so
    ``mjbot serve``'s event loop and its sessions' answers, for 0.7 to 1.9 s. Unpickled
    only here, from bytes this process made (never a file's)."""
    return pickle.dumps(items, pickle.HIGHEST_PROTOCOL)


@dataclass
class Timeline:
    """The outline of every hand, built in one pass without the steps; a hand's steps are
    built when asked (:meth:`steps`), from the table as the hand began. Keeping every step of
    every hand made opening a long file cost a copy of each seat's river and melds per step
    of the whole file (800 hands: some 34,000 snapshots), and kept them all in memory."""

    meta: dict[str, Any]
    # {"label", "steps" (how many), "result", "decisions", "names", "notices"}: the outline's
    hands: list[dict[str, Any]]
    # per event of the log, in order (decision frames not counted): the (hand, step) that
    # shows it, None before the first hand; the commentary's subtitles are placed by it
    event_steps: list[tuple[int, int] | None] = field(default_factory=list)
    starts: list[_Start] = field(default_factory=list, repr=False)
    # the file's line of each event, where its format tells it (GameRecord.lines)
    lines: list[int] = field(default_factory=list, repr=False)

    def damage(self, n: int) -> str | None:
        """The note `mjbot replay` gives of hand ``n`` (0 = the first) where it is damaged:
        the outline's (its reader could not read it, or the outline's table failed it), else
        the seats' tables' word on its events (a discard of a tile the seat does not hold,
        which the outline's table draws), worked out for this hand alone when it is asked
        for: for every hand at open, four more tables would near double a long file's
        outline. None where the hand is sound."""
        known = self.hands[n].get("damaged")
        start = self.starts[n]
        if known is not None or start.failure is not None or not start.opening:
            return known
        first = next(i for i, place in enumerate(self.event_steps)
                     if place is not None and place[0] == n)  # the hand's RoundStarted
        events = [pickle.loads(start.opening)] + [
            item for kind, item in pickle.loads(start.items) if kind == "event"]
        one = {} if start.own_seat is None else {"view_seat": start.own_seat}
        hand = GameRecord(str(self.meta.get("variant") or "riichi"), "", events, one)
        found = table_damage(hand).get(1)
        if found is None:
            return None
        index, why = first + found[0], found[1]
        at = f" at line {self.lines[index]}" if index < len(self.lines) else ""
        return damage_note({"hand": n + 1, "round": self.hands[n]["label"], "event": index,
                            "what": event_text(events[found[0]]), "at": at, "why": why})

    def outline(self) -> dict[str, Any]:
        """Everything but the steps: the page's first load."""
        return {**self.meta, "hands": [dict(h) for h in self.hands]}

    def steps(self, n: int) -> list[dict[str, Any]]:
        """Hand ``n``'s snapshots, one per step: its items replayed from the table as the hand
        began (unpickled, so that two builds at once share nothing they change). A hand
        the table cannot walk (a damaged event: a tile, seat or list that is none) is a
        ValueError naming the hand, as a tile that is none was: the viewer's 422."""
        start = self.starts[n]
        if start.failure is not None:
            raise ValueError(f"hand {n + 1}: {start.failure}")
        walk = _Walk(pickle.loads(start.table), start.own_seat, {}, snap=True)
        try:
            walk.begin_hand(start.text)
            for kind, item in pickle.loads(start.items):
                walk.item(kind, item)
        except DAMAGED as exc:
            raise ValueError(f"hand {n + 1}: {damage_reason(exc)}") from None
        return walk.steps[0]


def _kept(e: Any) -> Any:
    """An event as a packed hand keeps it: a game's start (a match log's next game) without
    its rules, which no step shows; a crafted log's rules nested some 900 deep went past
    pickle's recursion limit, and the game, harmless field and all, was a 500."""
    if isinstance(e, ev.GameStarted) and e.rules:
        return dataclasses.replace(e, rules={})
    return e


def build(loaded: Loaded) -> Timeline:
    """The outline of a game read by :func:`replay.formats.read`, its hands' steps built
    when asked. A hand that cannot be followed (its reader could not read it, or the
    outline's table refuses one of its events: a damaged or edited file) carries
    ``damaged``, the note `mjbot replay` gives of it; the outline listed it with nothing
    said. (A hand only a seat's own table refuses is named when asked: :meth:`Timeline.damage`.)"""
    items, meta, own_seat = _items(loaded)
    walk = _walked(items, meta, own_seat, snap=False)
    timeline = _timeline(walk, meta)
    failed = dict(walk.failed)
    record = loaded.record
    timeline.lines = record.lines if record is not None else []
    if failed or (record is not None and record.damaged):
        events = [item for kind, item in items if kind == "event"]
        unread = {} if record is None else record.damaged  # its reader's word first
        for d in damages_at(events, list(unread.items())):  # one pass for them all
            failed[d["hand"] - 1] = (d["event"], d["why"])
        hands = list(failed)
        for n, d in zip(hands, damages_at(events, [failed[n] for n in hands], timeline.lines),
                        strict=True):
            if 0 <= n < len(timeline.hands):
                timeline.hands[n]["damaged"] = damage_note(d)
    return timeline


def _items(loaded: Loaded) -> tuple[list[tuple[str, Any]], dict[str, Any], int | None]:
    """The game's events and decision frames in order, what the outline says of the game
    itself, and the seat the log sees from (None: every seat)."""
    items: list[tuple[str, Any]] = []  # ("event", e) / ("decision", frame)
    own_seat: int | None = None
    meta: dict[str, Any] = {"format": loaded.label, "notes": []}
    if loaded.log is not None:
        header = loaded.log.header
        assert header is not None
        full = bool(header.extra.get("full_information"))
        own_seat = None if full else header.seat
        meta.update(source=header.platform, variant=header.variant, policy=header.policy,
                    started=header.started, game_id=header.game_id, full_information=full,
                    players=header.extra.get("players"), our_seat=header.extra.get("our_seat",
                                                                                 own_seat))
        frames = formats.own_log_frames(header.platform, loaded.log.frames)
        events = [f.event for f in frames if isinstance(f, EventFrame)]
        events = formats.own_log_events(header.platform, events)
        valued = iter(events)
        for f in frames:
            if isinstance(f, EventFrame):
                items.append(("event", next(valued)))
            elif isinstance(f, DecisionFrame):
                items.append(("decision", f))
        if (newer := loaded.log.newer_note()) is not None:
            meta["notes"].append(newer)
        if loaded.log.truncated is not None:
            meta["notes"].append(loaded.log.truncated.note())
        footer = loaded.log.footer
        meta["complete"] = footer is not None and loaded.log.truncated is None
        meta["footer"] = dict(footer.result) if footer is not None else None
    else:
        record = loaded.record
        assert record is not None
        items = [("event", e) for e in record.events]
        # a file cut short (an mjai log with no end_game, an mjlog whose XML ends early, a
        # tenhou.net/6 file that stops before the game is over): noted as replay notes it and
        # not complete, as our own cut logs are; it was shown as a whole game
        cut = record.meta.get("cut")
        # a command log or transcript that stops inside a hand (NTPU, a Tenhou client's)
        in_hand = bool(record.meta.get("cut_in_hand"))
        meta.update(source=record.source, variant=record.variant, full_information=True,
                    title=record.meta.get("title"), complete=not cut and not in_hand,
                    our_seat=None)
        if cut:
            meta["notes"].append(f"the file is cut short: {cut}; the moves before the cut "
                                 "are shown")
        elif in_hand:
            meta["notes"].append("the log ends inside a hand: the moves before the cut are "
                                 "shown")
        view_seat = record.meta.get("view_seat")
        if view_seat is not None:
            own_seat = int(view_seat)
            meta["full_information"] = False
            meta["our_seat"] = own_seat
    return items, meta, own_seat


def _timeline(walk: _Walk, meta: dict[str, Any]) -> Timeline:
    """The outline's pass done: its hands packed into the timeline."""
    walk.pack()
    meta.setdefault("names", walk.table.names)
    meta["final_scores"] = walk.final
    return Timeline(meta, walk.hands, walk.places, walk.starts)


def every_step(loaded: Loaded) -> list[list[dict[str, Any]]]:
    """Every hand's steps in one walk of the whole game, as the viewer built them before
    :meth:`Timeline.steps` (each hand's own, when asked): ``mjbot bench view``'s reference,
    and what the tests hold the hand-at-a-time steps to."""
    return _walked(*_items(loaded), snap=True).steps


def _walked(items: list[tuple[str, Any]], meta: dict[str, Any], own_seat: int | None,
            snap: bool) -> _Walk:
    """The game's items walked in order on a fresh table (:class:`_Walk`)."""
    walk = _Walk(_Table(meta.get("variant", "riichi"), ["", "", "", ""]), own_seat, meta,
                 snap=snap)
    for kind, item in items:
        walk.item(kind, item)
    return walk


class _Walk:
    """The game's items in order, on one table. Without ``snap`` (the outline's pass) it
    counts each hand's steps and decisions, keeps its result and notices, places every event
    and notes where each hand begins, with the hand's items packed (:func:`_packed`: each
    decision as its view, which is all a step shows of it); with ``snap`` it also keeps
    every step's snapshot, the decisions' views on them."""

    def __init__(self, table: _Table, own_seat: int | None, meta: dict[str, Any],
                 snap: bool) -> None:
        self.table, self.own_seat, self.meta, self.snap = table, own_seat, meta, snap
        self.hands: list[dict[str, Any]] = []
        self.steps: list[list[dict[str, Any]]] = []  # per hand, with ``snap``
        self.starts: list[_Start] = []
        self.places: list[tuple[int, int] | None] = []
        self.final: list[int] | None = None
        self.hand_items: list[tuple[str, Any]] = []  # the last hand's, without ``snap``
        self.broken = False  # the outline's pass: the hand in walk failed, its rest skipped
        # the outline's pass: hand (0 = the first) -> the event that failed it (index), why
        self.failed: dict[int, tuple[int, str]] = {}

    def pack(self) -> None:
        """The last hand's items (those after its RoundStarted) packed into its start; items
        pickle cannot pack (a value nested past its recursion limit in a damaged or crafted
        log) fail that hand, which says so, where they were a 500 for the whole game."""
        start = self.starts[-1] if self.starts else None
        if start is not None and not start.items and start.failure is None:
            try:
                start.items = _packed(self.hand_items)
            except RecursionError:
                start.failure = "a value nested too deep to keep (RecursionError)"
        self.hand_items = []

    def _view(self, frame: DecisionFrame) -> tuple[str, Any]:
        """A decision as its packed hand keeps it: its view, made now with the seat the log
        sees from at this point; a frame whose view cannot be made stays a frame, so that its
        hand, not the outline, fails as it did: a tile that is none (a ValueError), and as
        much an action or request of another type in a damaged file (a KeyError, an
        AttributeError: the log's reader takes any type its schema knows there)."""
        try:
            return "view", decision_view(frame, self.own_seat)
        except Exception:  # raised again, as before, when its hand is built
            return "decision", frame

    def _shown(self, frame: DecisionFrame) -> dict[str, Any]:
        """The decision's view for its step; a decision no view can be made of (an action or
        request of another type in a damaged file: not only a tile that is none) is a
        ValueError, so that the viewer says it cannot show the hand (422) and keeps that,
        where a KeyError or AttributeError was a 500 with a traceback at every ask."""
        try:
            return decision_view(frame, self.own_seat)
        except (LookupError, AttributeError, TypeError) as exc:
            raise ValueError(f"a decision the table cannot show ({type(exc).__name__}: "
                             f"{exc})") from None

    def begin_hand(self, text: str) -> None:
        """A hand's first step (the table as its RoundStarted left it)."""
        names = self.table.names
        # the players of this hand: a match log's clients move between its games
        # (ntpu-server), so the outline's names (the first game's) are not every hand's
        self.hands.append({"label": f"{self.table.round}-{self.table.honba}", "steps": 1,
                           "result": None, "decisions": 0, "names": list(names),
                           "notices": []})
        if self.snap:
            self.steps.append([self.table.snapshot(text, None)])

    def item(self, kind: str, item: Any) -> None:
        """One of the game's items: ("event", e), ("decision", frame) or, from a packed hand,
        ("view", the frame's decision_view)."""
        if kind != "event":
            if self.hands and not self.broken:
                if self.snap:
                    self.steps[-1][-1]["decisions"].append(
                        item if kind == "view" else self._shown(item))
                else:
                    self.hand_items.append(self._view(item))
                self.hands[-1]["decisions"] += 1
            return
        if self.starts and not self.snap and not self.broken \
                and not isinstance(item, ev.RoundStarted):
            self.hand_items.append((kind, _kept(item)))
        if self.snap:
            self.event(item)
        else:
            self._outline_event(item)
        self.places.append((len(self.hands) - 1, self.hands[-1]["steps"] - 1)
                           if self.hands else None)

    def _outline_event(self, e: Any) -> None:
        """An event in the outline's pass. A damaged one in a hand (a tile, seat or list that
        is none: the log's reader takes any value) fails that hand alone: why is kept in its
        start (its steps raise it: the viewer's 422 for that hand) and its other events are
        skipped, up to the next hand's start, which sets a new table. It was a 500 at the
        outline, the whole game unshown. Before the first hand it is the file's ValueError.
        The game's own events after it (its end, a match log's next game's start) are still
        read: a damaged last hand took the game's final scores with it, and the next game's
        players and seat."""
        starting = isinstance(e, ev.RoundStarted)
        if starting:  # a long game's outline given up between two hands (replay/progress.py)
            progress.check()
        if self.broken and not starting:
            if isinstance(e, ev.GameStarted | ev.GameEnded):  # the game's, not the hand's
                with contextlib.suppress(*DAMAGED):  # a damaged one: the hand failed already
                    if isinstance(e, ev.GameEnded):
                        self.final = list(e.scores)
                    else:
                        self.event(e)
            return
        try:
            self.event(e)
            self.broken = False
        except DAMAGED as exc:
            if not self.hands and not starting:
                raise ValueError(f"before the first hand: {damage_reason(exc)}") from None
            if starting:  # the hand's start itself: a hand is still listed, that says so
                self.pack()
                self.starts.append(_Start(b"", self.own_seat, "", failure=damage_reason(exc)))
                self.begin_hand("")
                self.hands[-1]["label"] = round_label(e)  # not the hand before's
            elif self.starts[-1].failure is None:
                self.starts[-1].failure = damage_reason(exc)
            # the event's index (one place per event before it) and why, in the words of the
            # seats' tables where they refuse it (as `mjbot replay` says it): the outline's note
            why = damage_reason(exc)
            try:
                check_event(e)
            except StateError as unsound:
                why = damage_reason(unsound)
            self.failed.setdefault(len(self.hands) - 1, (len(self.places), why))
            self.broken = True

    def event(self, e: Any) -> None:
        table, meta = self.table, self.meta
        if isinstance(e, ev.GameStarted):
            table.names[:] = list(e.names) + [""] * (4 - len(e.names))
            if "names" not in meta:
                meta["names"] = list(table.names)
            if self.own_seat is not None:
                self.own_seat = e.seat
                meta["our_seat"] = self.own_seat
            table.variant = e.variant or table.variant
            meta["variant"] = table.variant
            return
        if isinstance(e, ev.RoundStarted):
            text = table.round_started(e, self.own_seat)
            if not self.snap:  # the seats are new: a small copy to build the steps from
                self.pack()
                self.starts.append(_Start(pickle.dumps(table, pickle.HIGHEST_PROTOCOL),
                                          self.own_seat, text,
                                          opening=pickle.dumps(e, pickle.HIGHEST_PROTOCOL)))
            self.begin_hand(text)
            return
        if isinstance(e, ev.PlatformNotice | ev.FuritenShown):
            # what the log says beside the table (mjbot replay prints it): an NTPU client's
            # own win value, the referee's illegal-action notices, a Tenhou reconnect, its
            # furiten word. It goes with its hand, after the step it follows; before the
            # first hand, with the game's notes
            text = e.text if isinstance(e, ev.PlatformNotice) else furiten_text(e)
            if not self.hands:
                meta.setdefault("notes", []).append(text)
            else:
                self.hands[-1]["notices"].append({"step": self.hands[-1]["steps"] - 1,
                                                  "text": text})
            return
        if isinstance(e, ev.GameEnded):
            self.final = list(e.scores)
        if not self.hands:
            return
        applied = table.apply(e)
        if applied is None:
            return
        self.hands[-1]["steps"] += 1
        if self.snap:
            self.steps[-1].append(table.snapshot(*applied))
        if table.result is not None:
            self.hands[-1]["result"] = table.result
