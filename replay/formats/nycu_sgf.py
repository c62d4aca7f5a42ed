"""NYCU CGI lab Taiwan 16-tile game records (SGF, ``GM[84]``) to events and back.

The lab's referee writes one SGF game tree per hand, with every tile shown:
``(;GM[84]DEALER[E]SQRWALL[id][id]...`` (``WALL`` is read too: the 136 ids in draw order from
the front; replacement draws after a kong come from the rear), then one node per move,
``;E[M131]``, and ``)``. A node's property is the mover's absolute seat (E, S, W, N = our seats
0..3), its value a move code and a tile id. Ids are the NTPU protocol's ``S*100 + R*10 + C``
(:class:`protocols.tiles.NtpuTiles`, whose suit and honour orders are configurable).

Move codes: ``M`` draw, ``D`` discard, ``EL``/``EM``/``ER`` chow of the discard where the
claimed tile is the lowest / middle / highest of the run (the other two tiles come by kind from
the claimant's hand), ``P`` pong and ``G`` open kong of the discard, ``HG`` concealed kong,
``UG`` added kong, ``H`` win on a discard (or on a kong's added tile: robbing the kong), ``SM``
self-drawn win on the tile just drawn (``SM-1``: the dealer's win on the deal).

The deal is the lab referee's: the dealer's 17 tiles in a row from the front of the wall,
then 16 to each other seat in turn order (the 17th in the row is the dealer's first draw); it
may be written as leading ``M`` nodes, and a seat without them is dealt from the wall. The
dealer's win on the deal is ``SM-1`` (no tile drawn). The hand is drawn right after the draw
that leaves 16 tiles in the wall: the record ends there, or with that drawer's self-drawn win
(a record of our own table, whose last drawer still discards, reads too).

Everything the file says is checked against the wall and the hands it implies (a draw must be
the wall's next tile, a discard a tile the seat holds); a failure (a tile id 999, a draw that is
not the wall's) damages its hand alone: the hand is read up to that node, a notice naming the
node stands there and :attr:`GameRecord.damaged` names it, and the other hands are read (one
bad node refused the whole file). A file none of whose hands reads is still refused, naming
the first failure. A file cut short reads up to its last whole node, the hand it ends in
unfinished, said in the meta's ``cut`` (it was refused: "property W has no [value]"). The SGF
carries no scores: wins are valued with our Taiwan 16-tile rules, as the mjai import values
riichi wins.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from brain.rules import rules_for
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from replay.formats.sgf import Node, parse_trees
from replay.record import (
    CutShort,
    GameRecord,
    RecordError,
    canonical,
    unknown_start,
    view_event,
)

VARIANT: Final = "taiwan16"  # the one variant this format holds: where the name enters
SOURCE = "nycu_sgf"
GAME_NUMBER = "84"
SEATS = "ESWN"
WALL_SIZE = 136
HAND_SIZE = 16
DEAD_END = 16  # tiles left when the hand is drawn
ROOT_PROPERTIES = ("GM", "DEALER", "WALL", "SQRWALL")
CODES = ("M", "D", "EL", "EM", "ER", "P", "G", "HG", "UG", "H", "SM")
CHOW_PARTNERS = {"EL": (1, 2), "EM": (-1, 1), "ER": (-2, -1)}  # the others, from the claimed
NO_TILE = -1  # ``SM-1``: the dealer's win on the deal, no tile drawn
_MOVE = re.compile(r"([A-Z]+)(-?\d+)")


# --------------------------------------------------------------------------- import


@dataclass(frozen=True)
class _Move:
    node: Node
    seat: int
    code: str
    tile_id: int


def loads(text: str, tiles: T.NtpuTiles | None = None) -> GameRecord:
    """A game (one hand per game tree) from SGF text; ``tiles``: the id mapping to read with."""
    trees, cut = parse_trees(text.lstrip("\ufeff"), "nycu sgf")
    tiles = tiles or T.NtpuTiles()
    events: list[Any] = [ev.GameStarted(VARIANT, 0, ("", "", "", ""), {"platform": "nycu"})]
    extra: list[dict[str, list[str]]] = []
    damaged: dict[int, str] = {}
    first = ""  # the first hand's failure, and why: the file's refusal where none reads
    for n, nodes in enumerate(trees, 1):
        reader = _HandReader(nodes, tiles, f"hand {n}, " if len(trees) > 1 else "",
                             cut=cut is not None and n == len(trees))
        try:
            events += reader.read()
        except RecordError as exc:
            first = first or str(exc)
            why = str(exc).removeprefix(f"nycu sgf: {reader.where}")
            why = f"game tree {n}, {why}" if len(trees) > 1 else why
            # this hand alone, from the node that failed (before: the whole file refused)
            events += reader.out
            damaged[len(events)] = why
            events.append(ev.PlatformNotice(f"{why} (the record could not be read from "
                                            "there)") if reader.out else unknown_start())
        extra.append(reader.extra)
    dealt = [i for i, e in enumerate(events) if isinstance(e, ev.RoundStarted)
             and i not in damaged]
    if first and not dealt:
        raise RecordError(first)  # no hand is dealt: nothing of a game to show, refused whole
    if not dealt:
        raise CutShort(f"nycu sgf: {cut}, before its first hand is dealt")
    meta: dict[str, Any] = {"players": 4, "properties": extra}
    if cut is not None:
        meta["cut"] = cut
    return GameRecord(VARIANT, SOURCE, events, meta, damaged=damaged)


class _HandReader:
    """One game tree: its root properties, the deal, then every move checked in order."""

    def __init__(self, nodes: list[Node], tiles: T.NtpuTiles, where: str,
                 cut: bool = False) -> None:
        self.nodes, self.tiles, self.where = nodes, tiles, where
        self.cut = cut  # the file ends in this hand: it may stop anywhere
        self.bad: RecordError | None = None  # the first node that cannot be read
        self.bad_node = 0  # its number
        self.rules = rules_for(VARIANT)
        self.extra: dict[str, list[str]] = {}
        self.dealer: int | None = None
        self.wall: list[int] | None = None
        self.out: list[Any] = []
        self.held: list[list[int]] = [[] for _ in range(4)]
        self.in_melds: list[list[int]] = [[] for _ in range(4)]  # ids we picked for calls
        self.pons: list[dict[int, ev.MeldCalled]] = [{} for _ in range(4)]
        self.seen: set[int] = set()
        self.front, self.rear, self.taken = 0, WALL_SIZE, 0
        self.turn: int | None = None  # the seat that must discard, kong or win now
        self.to_draw: tuple[int, bool] | None = None  # (seat, replacement) due to draw
        self.discard: tuple[int, int] | None = None  # (seat, id) while it can be claimed
        self.added: tuple[int, int] | None = None  # (seat, id) while the kong can be robbed
        self.last_draw: list[int | None] = [None] * 4
        self.ended = False

    def fail(self, node: Node, message: str) -> NoReturn:
        raise RecordError(f"nycu sgf: {self.where}node {node.number} ({node.text}): {message}")

    # ---------------------------------------------------------------- reading

    def read(self) -> list[Any]:
        """The hand's events; RecordError at the first node that cannot be read or does not
        fit, ``out`` then holding the events before it."""
        moves = self._moves()
        root = self.nodes[0]
        if self.bad is not None and self.bad_node == 1:
            raise self.bad  # its root: no dealer or wall to deal from
        if self.dealer is None:
            self.fail(root, "no DEALER[E|S|W|N]")
        lead = 0
        while lead < len(moves) and moves[lead].code == "M":
            lead += 1
        try:
            self._deal(moves[:lead])
        except RecordError:
            if self.bad is not None:  # a deal node that could not be read: that, not its gap
                raise self.bad from None
            if self.cut and lead == len(moves):  # cut inside the deal: no hand to show
                self.out = []
                return []
            raise
        for move in moves[lead:]:
            if self.ended:
                self.fail(move.node, "a move after the end of the hand")
            self._play(move)
        if self.bad is not None:  # the moves before it are read
            raise self.bad
        if not self.ended and self.cut:
            return self.out  # the file ends inside this hand: unfinished, no result
        if not self.ended:
            left = WALL_SIZE - self.taken
            last = moves[-1].node if moves else root
            after_draw = moves[-1].code == "M" if moves[lead:] else False
            due = self.to_draw is not None and not self.to_draw[1]
            if left > DEAD_END or not (due or after_draw):
                self.fail(last, f"the record stops with {left} tiles left and no win (an "
                                f"exhaustive draw leaves {DEAD_END}): cut short?")
            self.out.append(ev.RoundDrawn("exhaustive"))
        return self.out

    def _moves(self) -> list[_Move]:
        """The moves of every node up to the first that cannot be read (``bad``)."""
        moves: list[_Move] = []
        for node in self.nodes:
            try:
                moves += self._node_moves(node)
            except RecordError as exc:
                self.bad, self.bad_node = exc, node.number
                break
        return moves

    def _node_moves(self, node: Node) -> list[_Move]:
        """One node's moves (a root property kept on the way); RecordError naming it."""
        moves: list[_Move] = []
        for name, values in node.properties:
            if name in SEATS and len(name) == 1:
                moves += [self._move(node, SEATS.index(name), v) for v in values]
            elif name == "C":
                continue
            elif name in ROOT_PROPERTIES:
                if node.number != 1:
                    self.fail(node, f"{name} belongs in the first node")
                self._root_property(node, name, values)
            elif len(name) == 1:
                self.fail(node, f"{name!r} is not a seat (E, S, W or N)")
            elif node.number == 1:
                self.extra[name] = list(values)
            else:
                self.fail(node, f"unknown property {name}")
        return moves

    def _root_property(self, node: Node, name: str, values: tuple[str, ...]) -> None:
        if name == "GM":
            if values != (GAME_NUMBER,):
                self.fail(node, f"GM[{']['.join(values)}] is not a mahjong record "
                                f"(GM[{GAME_NUMBER}])")
        elif name == "DEALER":
            word = values[0].strip().upper()
            if len(values) != 1 or word not in (*SEATS, "1", "2", "3", "4"):
                self.fail(node, f"DEALER must be E, S, W or N, got {values[0]!r}")
            self.dealer = SEATS.index(word) if word in SEATS else int(word) - 1
        else:
            words = [w for v in values for w in re.split(r"[\s,]+", v.strip()) if w]
            wall = [self._id(node, w) for w in words]
            if len(wall) != WALL_SIZE or len(set(wall)) != WALL_SIZE:
                self.fail(node, f"{name} must list {WALL_SIZE} different ids, got {len(wall)} "
                                f"({len(set(wall))} different)")
            self.wall = wall

    def _move(self, node: Node, seat: int, value: str) -> _Move:
        m = _MOVE.fullmatch(value.strip())
        if m is None:
            self.fail(node, f"{value!r} is not a move (a code and a tile id, e.g. D131)")
        if m.group(1) not in CODES:
            self.fail(node, f"unknown move code {m.group(1)!r} (known: {', '.join(CODES)})")
        if m.group(1) == "SM" and m.group(2) == str(NO_TILE):
            return _Move(node, seat, "SM", NO_TILE)
        return _Move(node, seat, m.group(1), self._id(node, m.group(2)))

    def _id(self, node: Node, text: str) -> int:
        try:
            self.tiles.parse(text)
        except T.TileError:
            self.fail(node, f"bad tile id {text!r}")
        return int(text)

    def _kind(self, tile_id: int) -> int:
        return self.tiles.to_tile(tile_id)

    # ---------------------------------------------------------------- the deal

    def _deal(self, lead: list[_Move]) -> None:
        dealer = self.dealer
        assert dealer is not None
        explicit: list[list[_Move]] = [[] for _ in range(4)]
        first_draw: _Move | None = None
        if len(lead) == 1 and lead[0].seat == dealer:
            first_draw = lead[0]  # the deal is the wall's; only the dealer's 17th is written
        else:
            for move in lead:
                explicit[move.seat].append(move)
                if len(explicit[move.seat]) > HAND_SIZE + (move.seat == dealer):
                    self.fail(move.node, f"a {len(explicit[move.seat])}th tile dealt to "
                                         f"{SEATS[move.seat]} (16 each, the dealer 17)")
            for seat in range(4):
                got = len(explicit[seat])
                if 0 < got < HAND_SIZE:
                    self.fail(explicit[seat][-1].node, f"{SEATS[seat]} is dealt only {got} "
                                                       f"tiles (16 each, the dealer 17)")
            if len(explicit[dealer]) == HAND_SIZE + 1:
                # the 17th in the wall's row, wherever the nodes list it (else the last one)
                seventeenth = self.wall[HAND_SIZE] if self.wall is not None else None
                at = next((i for i, m in enumerate(explicit[dealer])
                           if m.tile_id == seventeenth), HAND_SIZE)
                first_draw = explicit[dealer].pop(at)
        hands: list[list[int]] = []
        for seat in range(4):
            block = self._wall_block((seat - dealer) % 4)
            if explicit[seat]:
                ids = [m.tile_id for m in explicit[seat]]
                if block is not None and sorted(ids) != sorted(block):
                    self.fail(explicit[seat][0].node, f"{SEATS[seat]}'s dealt ids are not the "
                              f"wall's deal (the dealer's 17 in a row from the front, then 16 "
                              f"to each other seat in turn)")
            elif block is None:
                self.fail(self.nodes[0], f"no deal for {SEATS[seat]} and no WALL to deal from")
            else:
                ids = block
            for tile_id in ids:
                if tile_id in self.seen:
                    node = explicit[seat][0].node if explicit[seat] else self.nodes[0]
                    self.fail(node, f"id {tile_id} is dealt twice")
                self.seen.add(tile_id)
            hands.append(ids)
        self.held = [list(h) for h in hands]
        self.taken = 4 * HAND_SIZE
        self.out.append(ev.RoundStarted(
            round_wind=0, dealer=dealer, round_number=dealer,
            wall_remaining=WALL_SIZE - 4 * HAND_SIZE - DEAD_END,
            hands=tuple(tuple(self._kind(i) for i in h) for h in hands)))
        if first_draw is None:
            if self.wall is None:
                self.fail(self.nodes[0], "no 17th tile for the dealer and no WALL to take it "
                                         "from")
            first_draw = _Move(self.nodes[0], dealer, "M", self.wall[HAND_SIZE])
        self.front = HAND_SIZE  # the dealer's 17th lies in the row of its 17
        self.to_draw = (dealer, False)
        self._draw(first_draw)
        self.front = 4 * HAND_SIZE + 1  # then the others' 48; draws go on after them

    def _wall_block(self, index: int) -> list[int] | None:
        """The 16 dealt ids of the seat ``index`` places after the dealer (the dealer's 17th
        is its first draw)."""
        if self.wall is None:
            return None
        start = 0 if index == 0 else HAND_SIZE * index + 1
        return self.wall[start:start + HAND_SIZE]

    # ---------------------------------------------------------------- moves

    def _play(self, move: _Move) -> None:
        code = move.code
        if code == "M":
            self._draw(move)
        elif code == "D":
            self._discard(move)
        elif code in ("EL", "EM", "ER", "P", "G"):
            self._claim(move)
        elif code in ("HG", "UG"):
            self._own_kong(move)
        else:
            self._win(move)

    def _draw(self, move: _Move) -> None:
        seat, tile_id = move.seat, move.tile_id
        if self.to_draw is None or self.to_draw[0] != seat:
            self.fail(move.node, f"{SEATS[seat]} draws, but {self._whose_move()}")
        replacement = self.to_draw[1]
        if not replacement and WALL_SIZE - self.taken <= DEAD_END:
            self.fail(move.node, f"a draw with {DEAD_END} tiles left: the hand was over (an "
                                 f"exhaustive draw)")
        if self.wall is not None:
            if self.front >= self.rear:
                self.fail(move.node, "a draw from an empty wall")
            expected = self.wall[self.rear - 1] if replacement else self.wall[self.front]
            if tile_id != expected:
                where = "last (a kong's replacement)" if replacement else "next"
                self.fail(move.node, f"draws {tile_id}, the wall's {where} tile is {expected}")
            if replacement:
                self.rear -= 1
            else:
                self.front += 1
        if tile_id in self.seen:
            self.fail(move.node, f"draws {tile_id}, which is already in play")
        self.seen.add(tile_id)
        self.taken += 1
        self.held[seat].append(tile_id)
        self.last_draw[seat] = tile_id
        self.turn, self.to_draw = seat, None
        self.discard = self.added = None
        self.out.append(ev.TileDrawn(seat, self._kind(tile_id), replacement))

    def _whose_move(self) -> str:
        if self.to_draw is not None:
            return f"it is {SEATS[self.to_draw[0]]}'s draw"
        if self.turn is not None:
            return f"it is {SEATS[self.turn]}'s turn to play"
        return "no draw is due"

    def _discard(self, move: _Move) -> None:
        seat, tile_id = move.seat, move.tile_id
        if self.turn != seat:
            self.fail(move.node, f"{SEATS[seat]} discards, but {self._whose_move()}")
        self._take_id(move, tile_id)
        tsumogiri = tile_id == self.last_draw[seat]
        self.last_draw[seat] = None
        self.turn, self.to_draw = None, ((seat + 1) % 4, False)
        self.discard, self.added = (seat, tile_id), None
        self.out.append(ev.TileDiscarded(seat, self._kind(tile_id), tsumogiri))

    def _take_id(self, move: _Move, tile_id: int) -> None:
        """The named id leaves the seat's hand. Where an earlier call of ours took that very
        id by kind (the file does not say which copies a call used), the call gets another
        held copy of the kind instead."""
        held = self.held[move.seat]
        if tile_id in held:
            held.remove(tile_id)
            return
        kind = self._kind(tile_id)
        melded = self.in_melds[move.seat]
        other = next((i for i in held if self._kind(i) == kind), None)
        if tile_id in melded and other is not None:
            melded[melded.index(tile_id)] = other
            held.remove(other)
            return
        self.fail(move.node, f"{SEATS[move.seat]} does not hold {tile_id} "
                             f"({T.tile_name(kind)})")

    def _take_kind(self, move: _Move, kind: int, n: int, what: str) -> None:
        held = self.held[move.seat]
        ids = [i for i in held if self._kind(i) == kind][:n]
        if len(ids) < n:
            self.fail(move.node, f"{SEATS[move.seat]} holds {len(ids)} {T.tile_name(kind)}, "
                                 f"a {what} needs {n}")
        for tile_id in ids:
            held.remove(tile_id)
        self.in_melds[move.seat] += ids

    def _claim(self, move: _Move) -> None:
        seat, tile_id, code = move.seat, move.tile_id, move.code
        if self.discard is None:
            self.fail(move.node, f"claims {tile_id}, but there is no discard to claim")
        giver, discarded = self.discard
        if tile_id != discarded:
            self.fail(move.node, f"claims {tile_id}, the last discard is {discarded}")
        if giver == seat:
            self.fail(move.node, "claims its own discard")
        kind = self._kind(tile_id)
        if code in CHOW_PARTNERS:
            if (giver + 1) % 4 != seat:
                self.fail(move.node, f"{SEATS[seat]} chows a discard of {SEATS[giver]}: only "
                                     f"the next seat may chow")
            rank = kind % 9
            partners = [kind + d for d in CHOW_PARTNERS[code]]
            if kind >= 27 or not all(0 <= rank + d <= 8 for d in CHOW_PARTNERS[code]):
                self.fail(move.node, f"{code} makes no run with {T.tile_name(kind)}")
            for k in partners:
                self._take_kind(move, k, 1, "chow")
            meld = ev.MeldCalled(seat, "chi", canonical([kind, *partners]), kind, giver)
        elif code == "P":
            self._take_kind(move, kind, 2, "pong")
            meld = ev.MeldCalled(seat, "pon", (kind,) * 3, kind, giver)
            self.pons[seat][kind] = meld
        else:
            self._take_kind(move, kind, 3, "kong")
            meld = ev.MeldCalled(seat, "open_kan", (kind,) * 4, kind, giver)
        self.discard = None
        self.last_draw[seat] = None
        if code == "G":
            self.turn, self.to_draw = None, (seat, True)
        else:
            self.turn, self.to_draw = seat, None
        self.out.append(meld)

    def _own_kong(self, move: _Move) -> None:
        seat, tile_id = move.seat, move.tile_id
        if self.turn != seat:
            self.fail(move.node, f"{SEATS[seat]} kongs, but {self._whose_move()}")
        kind = self._kind(tile_id)
        self._take_id(move, tile_id)
        if move.code == "HG":
            self._take_kind(move, kind, 3, "concealed kong")
            meld = ev.MeldCalled(seat, "closed_kan", (kind,) * 4)
        else:
            if self.pons[seat].pop(kind, None) is None:
                self.fail(move.node, f"{SEATS[seat]} has no pong of {T.tile_name(kind)} to add "
                                     f"to")
            meld = ev.MeldCalled(seat, "added_kan", (kind,) * 4, kind)  # as every import has it
            self.added = (seat, tile_id)
        self.last_draw[seat] = None
        self.turn, self.to_draw = None, (seat, True)
        self.out.append(meld)

    def _win(self, move: _Move) -> None:
        seat, tile_id = move.seat, move.tile_id
        if tile_id == NO_TILE:
            dealt = self.last_draw[seat]  # the 17th dealt tile
            if move.code != "SM" or seat != self.dealer or len(self.out) != 2 \
                    or self.turn != seat or dealt is None:
                self.fail(move.node, "a win with no tile (SM-1) is the dealer's win on the "
                                     "deal, its first move")
            tile_id = dealt
        kind = self._kind(tile_id)
        robbing = False
        if move.code == "SM":
            if self.turn != seat or self.last_draw[seat] != tile_id:
                drew = self.last_draw[seat]
                self.fail(move.node, f"a self-drawn win on {tile_id}, but "
                          + (f"{SEATS[seat]} just drew {drew}" if self.turn == seat
                             and drew is not None else self._whose_move()))
            from_seat = None
            hand = [self._kind(i) for i in self.held[seat]]
        else:
            if self.added is not None and self.added[1] == tile_id and self.added[0] != seat:
                from_seat, robbing = self.added[0], True
            elif self.discard is not None and self.discard[1] == tile_id \
                    and self.discard[0] != seat:
                from_seat = self.discard[0]
            else:
                self.fail(move.node, f"a win on {tile_id}, which is neither the last discard of "
                                     f"another seat nor a kong's added tile")
            hand = [*(self._kind(i) for i in self.held[seat]), kind]
        value, deltas, items, detail = self._value(seat, kind, from_seat, robbing)
        self.out.append(ev.RoundWon(seat, from_seat, canonical(hand), kind, value, deltas,
                                    items, detail=detail))
        self.ended = True

    def _value(self, seat: int, kind: int, from_seat: int | None, robbing: bool) \
            -> tuple[int, tuple[int, ...], tuple[str, ...], str]:
        """Tai, payments and items by our rules, from the winner's own view of the hand."""
        state = TableState(VARIANT, seat)
        try:
            for e in self.out:
                state.apply(view_event(e, seat, VARIANT))
        except StateError:
            return 0, (0, 0, 0, 0), (), "no value: the hand does not replay (a record error)"
        score = self.rules.win_score(state, kind, from_seat, robbing)
        if score is None:
            return 0, (0, 0, 0, 0), (), "no value: not a win under mjbot's taiwan16 rules"
        return (score.value, tuple(score.deltas),
                score.item_texts(), "")


# --------------------------------------------------------------------------- export


def dumps(record: GameRecord, tiles: T.NtpuTiles | None = None,
          deal_nodes: bool = False) -> str:
    """A Taiwan 16-tile record with every tile shown (an import, a local-table log) as SGF,
    one game tree per hand. Copies are numbered in wall order; the tiles nobody drew fill the
    middle of the wall in kind order. ``deal_nodes``: write the deal as ``M`` nodes too (as the
    lab's client does for its own tiles); otherwise the wall alone gives it."""
    if record.variant != VARIANT:
        raise RecordError(f"nycu sgf: only Taiwan 16-tile games can be written, this is "
                          f"{record.variant}")
    hands = record.hands()
    if not hands:
        raise RecordError("nycu sgf: no hand to write")
    tiles = tiles or T.NtpuTiles()
    return "".join(_HandWriter(hand, tiles, n).tree(deal_nodes)
                   for n, hand in enumerate(hands, 1))


class _HandWriter:
    def __init__(self, events: list[Any], tiles: T.NtpuTiles, number: int) -> None:
        self.events, self.tiles, self.number = events, tiles, number
        start = events[0]
        if len(start.hands) != 4 or any(len(h) != HAND_SIZE for h in start.hands):
            self.fail("needs all four starting hands of 16 (a full-information record)")
        self.start: ev.RoundStarted = start
        self.held: list[list[int]] = [[] for _ in range(4)]

    def fail(self, message: str) -> NoReturn:
        raise RecordError(f"nycu sgf: hand {self.number}: {message}")

    def _wall(self) -> tuple[list[int], list[int], list[int]]:
        """(wall ids; the dealt ids, 16 a seat from the dealer on, then the front draws in
        order; the replacement ids in order). The wall is laid out as the lab referee deals:
        the dealer's 17 (its 16 and its first draw) in a row, then 16 to each other seat."""
        dealer = self.start.dealer
        front = [T.kind(t) for i in range(4) for t in self.start.hands[(dealer + i) % 4]]
        rear: list[int] = []
        for e in self.events:
            if isinstance(e, ev.TileDrawn):
                if e.tile is None:
                    self.fail(f"seat {e.seat} draws a tile the record does not show")
                (rear if e.replacement else front).append(T.kind(e.tile))
        counts = Counter(front + rear)
        if any(c > 4 for c in counts.values()):
            self.fail("more than four of a kind")
        middle = [k for k in range(34) for _ in range(4 - counts[k])]
        n = 4 * HAND_SIZE
        if len(front) == n:
            self.fail("the dealer never draws its 17th tile")
        kinds = [*front[:HAND_SIZE], front[n], *front[HAND_SIZE:n], *front[n + 1:], *middle,
                 *rear[::-1]]
        copies = [0] * 34
        wall = []
        for k in kinds:
            wall.append(self.tiles.to_id(k, copies[k]))
            copies[k] += 1
        dealt = [*wall[:HAND_SIZE], *wall[HAND_SIZE + 1:n + 1], wall[HAND_SIZE],
                 *wall[n + 1:len(front)]]
        return wall, dealt, wall[len(wall) - len(rear):][::-1]

    def tree(self, deal_nodes: bool) -> str:
        wall, front, rear = self._wall()
        dealer = self.start.dealer
        nodes: list[str] = []
        for i in range(4):
            seat = (dealer + i) % 4
            self.held[seat] = front[HAND_SIZE * i:HAND_SIZE * (i + 1)]
            if deal_nodes:
                nodes += [f";{SEATS[seat]}[M{t}]" for t in self.held[seat]]
        draws, replacements = iter(front[4 * HAND_SIZE:]), iter(rear)
        last_draw: list[int | None] = [None] * 4
        discard: int | None = None
        added: tuple[int, int] | None = None
        first = True
        for e in self.events[1:]:
            if isinstance(e, ev.TileDrawn):
                tile_id = next(replacements if e.replacement else draws)
                self.held[e.seat].append(tile_id)
                last_draw[e.seat] = tile_id
                if not first or deal_nodes:
                    nodes.append(f";{SEATS[e.seat]}[M{tile_id}]")
                first = False
                continue
            first = False
            node, discard, added = self._move(e, last_draw, discard, added)
            if node:
                nodes.append(f";{node}")
        head = f"(;GM[{GAME_NUMBER}]DEALER[{SEATS[dealer]}]SQRWALL" + "".join(
            f"[{t}]" for t in wall)
        return head + "\n" + "\n".join(nodes) + ")\n"

    def _move(self, e: Any, last_draw: list[int | None], discard: int | None,
              added: tuple[int, int] | None) -> tuple[str, int | None, tuple[int, int] | None]:
        """The node for one event, and the claimable discard / robbable kong after it."""
        if isinstance(e, ev.TileDiscarded):
            drawn = last_draw[e.seat]
            last_draw[e.seat] = None
            tsumogiri = drawn is not None and T.kind(self.tiles.to_tile(drawn)) == T.kind(e.tile)
            tile_id = drawn if drawn is not None and tsumogiri and e.tsumogiri is not False \
                else self._pick(
                e.seat, T.kind(e.tile), avoid=drawn)
            self.held[e.seat].remove(tile_id)
            return f"{SEATS[e.seat]}[D{tile_id}]", tile_id, None
        if isinstance(e, ev.MeldCalled):
            last_draw[e.seat] = None
            return self._meld(e, discard)
        if isinstance(e, ev.RoundWon):
            if e.from_seat is None:
                won_on = last_draw[e.winner]
                code = "SM"
            else:
                won_on = added[1] if added is not None and added[0] == e.from_seat else discard
                code = "H"
            if won_on is None:
                self.fail(f"seat {e.winner} wins with no tile to win on")
            return f"{SEATS[e.winner]}[{code}{won_on}]", None, None
        return "", discard, added

    def _pick(self, seat: int, kind: int, avoid: int | None = None) -> int:
        ids = [i for i in self.held[seat] if self.tiles.to_tile(i) == kind]
        if not ids:
            self.fail(f"seat {seat} plays {T.tile_name(kind)} it does not hold")
        return next((i for i in ids if i != avoid), ids[0])

    def _meld(self, e: ev.MeldCalled, discard: int | None) \
            -> tuple[str, int | None, tuple[int, int] | None]:
        letter = SEATS[e.seat]
        if e.kind in ("chi", "pon", "open_kan"):
            if discard is None or e.called is None:
                self.fail(f"seat {e.seat} calls with no discard to call")
            called = T.kind(e.called)
            own = [T.kind(t) for t in e.tiles]
            own.remove(called)
            for k in own:
                self.held[e.seat].remove(self._pick(e.seat, k))
            if e.kind == "chi":
                code = ("EL", "EM", "ER")[sorted(T.kind(t) for t in e.tiles).index(called)]
            else:
                code = "P" if e.kind == "pon" else "G"
            return f"{letter}[{code}{discard}]", None, None
        shown = e.tiles[0] if e.tiles else e.called
        if shown is None:
            self.fail(f"seat {e.seat}'s {e.kind.replace('_', ' ')} shows no tile")
        kind = T.kind(shown)
        tile_id = self._pick(e.seat, kind)
        self.held[e.seat].remove(tile_id)
        if e.kind == "closed_kan":
            for _ in range(3):
                self.held[e.seat].remove(self._pick(e.seat, kind))
            return f"{letter}[HG{tile_id}]", None, None
        if e.kind == "added_kan":
            return f"{letter}[UG{tile_id}]", None, (e.seat, tile_id)
        self.fail(f"seat {e.seat}: a {e.kind} has no SGF move")
