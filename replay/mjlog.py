"""Tenhou mjlog XML (``<mjloggm ver="2.3">``) to events.

Seats in mjlog are absolute and every tile is shown, so this is a direct reading. Tsumogiri is
not written (discards are always upper case): a discard equal to that seat's last draw, made
right after it, is one. Yaku ids become Tenhou's own strings ("立直(1飜)") and the score line
(`ten`) the viewer's text ("30符2飜2000点", "満貫8000点"), so a game reads the same whether it
came as mjlog or as tenhou.net/6 JSON.
"""

from __future__ import annotations

import math
import re
import urllib.parse
import xml.etree.ElementTree as ET
from typing import Any

from brain.shanten import shanten
from protocols import events as ev
from protocols import tiles as T
from replay.record import GameRecord, RecordError, canonical, own_tiles

YAKU = (
    "門前清自摸和", "立直", "一発", "槍槓", "嶺上開花", "海底摸月", "河底撈魚", "平和", "断幺九",
    "一盃口", "自風 東", "自風 南", "自風 西", "自風 北",
    "場風 東", "場風 南", "場風 西", "場風 北",
    "役牌 白", "役牌 發", "役牌 中", "両立直", "七対子", "混全帯幺九", "一気通貫", "三色同順",
    "三色同刻", "三槓子", "対々和", "三暗刻", "小三元", "混老頭", "二盃口", "純全帯幺九", "混一色",
    "清一色", "人和", "天和", "地和", "大三元", "四暗刻", "四暗刻単騎", "字一色", "緑一色",
    "清老頭", "九蓮宝燈", "純正九蓮宝燈", "国士無双", "国士無双１３面", "大四喜", "小四喜",
    "四槓子", "ドラ", "裏ドラ", "赤ドラ",
)
LIMITS = ("", "満貫", "跳満", "倍満", "三倍満", "役満")
_DRAW_TYPES = {
    "yao9": "nine_terminals", "reach4": "four_riichi", "ron3": "triple_ron",
    "kan4": "four_kans", "kaze4": "four_winds", "nm": "nagashi",
}
_TAG_RE = re.compile(r"^([TUVWDEFG])(\d+)$")


def _ints(text: str | None) -> list[int]:
    if not text:
        return []
    return [int(x) for x in text.split(",") if x.strip()]


def decode_meld(who: int, m: int, red: bool = True) -> ev.MeldCalled:
    """The 16-bit Tenhou meld code as a MeldCalled (absolute seats)."""
    offset = m & 3
    from_seat = (who + offset) % 4
    tile = lambda i: T.from_tenhou_id(i, red)  # noqa: E731
    if m & 0x4:  # chi
        x = m >> 10
        called_index = x % 3
        start = x // 3
        base = (start // 7) * 9 + start % 7
        ids = [4 * (base + k) + ((m >> (3 + 2 * k)) & 3) for k in range(3)]
        return ev.MeldCalled(who, "chi", canonical(tile(i) for i in ids), tile(ids[called_index]),
                             from_seat)
    if m & 0x18:  # pon (bit 3) or added kan (bit 4)
        unused = (m >> 5) & 3
        x = m >> 9
        kind, called_index = x // 3, x % 3
        copies = [c for c in range(4) if c != unused]
        ids = [4 * kind + c for c in copies]
        called = tile(ids[called_index])
        if m & 0x8:
            return ev.MeldCalled(who, "pon", canonical(tile(i) for i in ids), called, from_seat)
        added = tile(4 * kind + unused)
        all_ids = [4 * kind + c for c in range(4)]
        return ev.MeldCalled(who, "added_kan", canonical(tile(i) for i in all_ids), added)
    if m & 0x20:
        return ev.MeldCalled(who, "nuki", (tile(m >> 8),), tile(m >> 8))
    x = m >> 8
    kind, called_copy = x // 4, x % 4
    tiles = canonical(tile(4 * kind + c) for c in range(4))
    if offset == 0:
        return ev.MeldCalled(who, "closed_kan", tiles)
    return ev.MeldCalled(who, "open_kan", tiles, tile(4 * kind + called_copy), from_seat)


def score_text(fu: int, han: int, points: int, limit: int, tsumo: bool, dealer: bool,
               yakuman: int) -> str:
    """Tenhou's score line for a win, as its viewer and tenhou.net/6 write it."""
    if tsumo:
        if dealer:
            pay = f"{points // 3}点∀"
        else:
            base = _base_points(fu, han, limit, yakuman)
            child, parent = _ceil100(base), _ceil100(2 * base)
            pay = f"{child}-{parent}点"
    else:
        pay = f"{points}点"
    if limit >= 5 and yakuman:
        return f"役満{pay}"
    if limit:
        return f"{LIMITS[limit]}{pay}"
    return f"{fu}符{han}飜{pay}"


def _ceil100(x: float) -> int:
    return int(math.ceil(x / 100.0) * 100)


def _base_points(fu: int, han: int, limit: int, yakuman: int) -> int:
    if yakuman:
        return 8000 * yakuman
    limit_base = {1: 2000, 2: 3000, 3: 4000, 4: 6000, 5: 8000}
    if limit in limit_base:
        return limit_base[limit]
    return fu * 2 ** (han + 2)


def loads(text: str) -> GameRecord:
    """A game from mjlog XML text."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise RecordError(f"mjlog: not XML ({exc})") from None
    if root.tag != "mjloggm":
        raise RecordError(f"mjlog: root element is <{root.tag}>, expected <mjloggm>")
    reader = _Reader()
    for el in root:
        try:
            reader.tag(el)
        except (KeyError, ValueError, IndexError, T.TileError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"mjlog: bad <{el.tag}> ({exc})") from None
    reader.end()
    meta = {"type": reader.game_type, "ver": root.get("ver", ""),
            "players": 3 if reader.game_type & 0x10 else 4}
    return GameRecord("riichi", "mjlog", reader.out, meta)


class _Reader:
    def __init__(self) -> None:
        self.out: list[Any] = []
        self.names = ("", "", "", "")
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
            self.hands[who].remove(meld.called)
        elif meld.kind in ("chi", "pon", "open_kan"):
            for t in own_tiles(meld):
                self.hands[who].remove(t)
        elif meld.kind == "closed_kan":
            for t in meld.tiles:
                self.hands[who].remove(t)
        elif meld.kind == "nuki":
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
        who, frm = int(a["who"]), int(a["fromWho"])
        hand = [self._t(i) for i in _ints(a["hai"])]
        win_tile = self._t(int(a["machi"]))
        fu, points, limit = [*_ints(a["ten"]), 0, 0, 0][:3]
        pairs = _ints(a.get("yaku"))
        yakuman = _ints(a.get("yakuman"))
        yaku: list[str] = []
        han = 0
        for i in range(0, len(pairs) - 1, 2):
            if pairs[i + 1] > 0:
                yaku.append(f"{YAKU[pairs[i]]}({pairs[i + 1]}飜)")
                han += pairs[i + 1]
        for y in yakuman:
            yaku.append(f"{YAKU[y]}(役満)")
        value = 13 * len(yakuman) if yakuman else han
        sc = _ints(a["sc"])
        deltas = tuple(sc[i] * 100 for i in range(1, 8, 2))
        pao = int(a["paoWho"]) if "paoWho" in a else None
        text = score_text(fu, han, points, limit, who == frm, who == self.dealer, len(yakuman))
        ura = tuple(self._t(i) for i in _ints(a.get("doraHaiUra")))
        self.out.append(ev.RoundWon(
            winner=who, from_seat=None if who == frm else frm, hand=canonical(hand),
            win_tile=win_tile, value=value, deltas=deltas, yaku=tuple(yaku),
            ura_dora_indicators=ura, pao_seat=pao, detail=text))
        self._owari(a)

    def _on_RYUUKYOKU(self, a: dict[str, str]) -> None:
        sc = _ints(a.get("sc"))
        deltas = tuple(sc[i] * 100 for i in range(1, 8, 2)) if len(sc) >= 8 else ()
        reason = _DRAW_TYPES.get(a.get("type", ""), a.get("type") or "exhaustive")
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
