"""Tenhou mjlog XML (``<mjloggm ver="2.3">``) to events.

Seats in mjlog are absolute and every tile is shown, so this is a direct reading. Tsumogiri is
not written (discards are always upper case): a discard equal to that seat's last draw, made
right after it, is one. Yaku ids become Tenhou's own strings ("立直(1飜)") and the score line
(`ten`) the viewer's text ("30符2飜2000点", "満貫8000点"), so a game reads the same whether it
came as mjlog or as tenhou.net/6 JSON.
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
import xml.etree.ElementTree as ET
from typing import Any, cast

from brain.shanten import shanten
from protocols import events as ev
from protocols import tiles as T
from protocols.tenhou import DRAW_TYPES, agari_event, decode_meld
from replay.record import GameRecord, RecordError, canonical, own_tiles, unknown_start

_TAG_RE = re.compile(r"^([TUVWDEFG])(\d+)$")


def _ints(text: str | None) -> list[int]:
    if not text:
        return []
    return [int(x) for x in text.split(",") if x.strip()]


def loads(text: str) -> GameRecord:
    """A game from mjlog XML text. A file cut short (a capture that stopped, a download
    broken off) gives the tags before the cut, marked ``cut`` in the meta: the replayer
    shows those hands and the unfinished one as such, as it does for our own cut logs."""
    cut: str | None = None
    try:
        root = ET.fromstring(text)
        tags = list(root)
    except ET.ParseError as exc:
        found, tags = _complete_tags(text)
        if found is None or not tags:
            raise RecordError(f"mjlog: not XML ({exc})") from None
        root, cut = found, str(exc)
    if root.tag != "mjloggm":
        raise RecordError(f"mjlog: root element is <{root.tag}>, expected <mjloggm>")
    reader = _Reader()
    damaged: dict[int, str] = {}
    skipping = False  # the rest of a hand with a tag that could not be read
    first = ""  # the first such tag, and why
    for n, el in enumerate(tags, 1):
        if skipping and el.tag != "INIT":
            with contextlib.suppress(ValueError, IndexError):  # its end may end the game
                reader._owari(el.attrib)
            continue
        skipping = False
        try:
            reader.tag(el)
        except (KeyError, ValueError, IndexError, T.TileError) as exc:
            if isinstance(exc, RecordError):
                raise
            why = f"bad <{el.tag}> ({exc})"
            if el.tag != "INIT" and not reader.dealt:
                raise RecordError(f"mjlog: {why}") from None  # the game's own tags
            # one hand's tag: that hand alone is left out (the whole file was refused)
            first = first or f"{why}, tag {n} of the log"
            damaged[len(reader.out)] = f"tag {n} of the log: {why}"
            reader.out.append(ev.PlatformNotice(f"tag {n} of the log could not be read: {why}")
                              if el.tag != "INIT" else unknown_start())
            skipping = True
    reader.end()
    if damaged and len(damaged) == sum(isinstance(e, ev.RoundStarted) for e in reader.out):
        # every hand damaged: nothing of a game to show, refused as it was
        raise RecordError(f"mjlog: {first}")
    meta: dict[str, Any] = {"type": reader.game_type, "ver": root.get("ver", ""),
                            "players": 3 if reader.game_type & 0x10 else 4}
    if cut is not None:
        meta["cut"] = f"the XML ends early ({cut}): {len(tags)} whole tags read"
    return GameRecord("riichi", "mjlog", reader.out, meta, damaged=damaged)


def _complete_tags(text: str) -> tuple[ET.Element | None, list[ET.Element]]:
    """The root and its children that were read whole before the text broke off (a pull
    parser reports each element as it closes; what follows the break is never reached)."""
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    with contextlib.suppress(ET.ParseError):
        parser.feed(text)
    root: ET.Element | None = None
    tags: list[ET.Element] = []
    depth = 0
    with contextlib.suppress(ET.ParseError):
        for item in parser.read_events():
            event, el = cast(tuple[str, Any], item)
            assert isinstance(el, ET.Element)  # start and end events carry the element
            if event == "start":
                root = el if root is None else root
                depth += 1
            else:
                depth -= 1
                if depth == 1:
                    tags.append(el)
    return root, tags


class _Reader:
    def __init__(self) -> None:
        self.out: list[Any] = []
        self.names: tuple[str, ...] = ("", "", "", "")
        self.game_type = 0
        self.red = True
        self.started = False
        self.dealer = 0
        self.scores = [0, 0, 0, 0]
        self.hands: list[list[int]] = [[], [], [], []]
        self.last_draw: list[int | None] = [None] * 4
        self.last_id: int | None = None
        self.final_scores: tuple[int, ...] | None = None
        self.dora: list[int] = []
        self.drawn_after_kan = False
        self.dealt = False  # a hand was dealt: a tag after it that cannot be read is its own

    def _start(self) -> None:
        if not self.started:
            self.out.append(ev.GameStarted("riichi", 0, self.names, {"red_fives": self.red}))
            self.started = True

    def tag(self, el: ET.Element) -> None:
        name, a = el.tag, el.attrib
        m = _TAG_RE.match(name)
        if m:
            self._tile_tag(m.group(1), int(m.group(2)))
            return
        handler = getattr(self, f"_on_{name}", None)
        if handler is not None:
            handler(a)

    def _on_GO(self, a: dict[str, str]) -> None:
        self.game_type = int(a.get("type", "0"))
        self.red = not (self.game_type & 0x02)

    def _on_UN(self, a: dict[str, str]) -> None:
        if not self.started and "n0" in a:
            self.names = tuple(urllib.parse.unquote(a.get(f"n{i}", "")) for i in range(4))

    def _on_INIT(self, a: dict[str, str]) -> None:
        self._start()
        seed = _ints(a["seed"])
        kyoku, honba, sticks = seed[0], seed[1], seed[2]
        self.dealer = int(a["oya"])
        self.scores = [v * 100 for v in _ints(a["ten"])]
        self.hands = [[self._t(i) for i in _ints(a[f"hai{s}"])] for s in range(4)]
        self.dora = [self._t(seed[5])]
        self.last_draw = [None] * 4
        self.dealt = True
        self.out.append(ev.RoundStarted(
            round_wind=kyoku // 4, dealer=self.dealer, honba=honba, sticks=sticks,
            scores=tuple(self.scores), dora_indicators=(self._t(seed[5]),),
            round_number=kyoku % 4, hands=tuple(canonical(h) for h in self.hands)))
        self.drawn_after_kan = False

    def _t(self, tile_id: int) -> int:
        return T.from_tenhou_id(tile_id, self.red)

    def _tile_tag(self, letter: str, tile_id: int) -> None:
        tile = self._t(tile_id)
        if letter in "TUVW":
            seat = "TUVW".index(letter)
            self.hands[seat].append(tile)
            self.last_draw[seat] = tile_id
            self.out.append(ev.TileDrawn(seat, tile, self.drawn_after_kan))
            self.drawn_after_kan = False
        else:
            seat = "DEFG".index(letter)
            self.hands[seat].remove(tile)
            self.out.append(ev.TileDiscarded(seat, tile, self.last_draw[seat] == tile_id))
            self.last_draw[seat] = None
            self.last_id = tile_id

    def _on_N(self, a: dict[str, str]) -> None:
        who = int(a["who"])
        meld = decode_meld(who, int(a["m"]), self.red)
        self.last_draw[who] = None
        if meld.kind == "added_kan":
            assert meld.called is not None  # decode_meld names the added tile
            self.hands[who].remove(meld.called)
        elif meld.kind in ("chi", "pon", "open_kan"):
            for t in own_tiles(meld):
                self.hands[who].remove(t)
        elif meld.kind == "closed_kan":
            for t in meld.tiles:
                self.hands[who].remove(t)
        elif meld.kind == "nuki":
            assert meld.called is not None  # decode_meld names the north
            self.hands[who].remove(meld.called)
        self.out.append(meld)
        self.drawn_after_kan = meld.kind in ("open_kan", "added_kan", "closed_kan", "nuki")

    def _on_REACH(self, a: dict[str, str]) -> None:
        who = int(a["who"])
        if a.get("step") == "1":
            self.out.append(ev.RiichiDeclared(who))
        else:
            ten = _ints(a.get("ten"))  # older logs leave it out: the stick is 1000
            if ten:
                self.scores = [v * 100 for v in ten]
            else:
                self.scores[who] -= 1000
            self.out.append(ev.RiichiAccepted(who, tuple(self.scores)))

    def _on_DORA(self, a: dict[str, str]) -> None:
        self.out.append(ev.DoraRevealed(self._t(int(a["hai"]))))

    def _on_AGARI(self, a: dict[str, str]) -> None:
        self.out.append(agari_event(a, lambda seat: seat, self.dealer, self.red))
        self._owari(a)

    def _on_RYUUKYOKU(self, a: dict[str, str]) -> None:
        sc = _ints(a.get("sc"))
        deltas = tuple(sc[i] * 100 for i in range(1, 8, 2)) if len(sc) >= 8 else ()
        reason = DRAW_TYPES.get(a.get("type", ""), a.get("type") or "exhaustive")
        tenpai: tuple[int, ...] = ()
        if reason == "exhaustive":
            tenpai = tuple(s for s in range(4) if f"hai{s}" in a)
        elif reason in ("nine_terminals", "four_riichi", "four_winds", "four_kans", "triple_ron"):
            deltas = () if not any(deltas) else deltas
        if reason == "exhaustive" and not tenpai:
            tenpai = tuple(s for s in range(4) if len(self.hands[s]) % 3 == 1
                           and shanten(T.counts34(self.hands[s])) == 0)
        self.out.append(ev.RoundDrawn(reason, deltas, tenpai))
        self._owari(a)

    def _owari(self, a: dict[str, str]) -> None:
        if "owari" in a:
            vals = a["owari"].split(",")
            self.final_scores = tuple(int(float(vals[i])) * 100 for i in range(0, 8, 2))

    def end(self) -> None:
        if not self.started:
            raise RecordError("mjlog: no hand in the log (no INIT)")
        if self.final_scores is not None:
            self.out.append(ev.GameEnded(self.final_scores))
