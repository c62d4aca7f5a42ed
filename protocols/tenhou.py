"""Tenhou client protocol <-> internal events and actions (sans-IO).

Facts: ../shared/protocols/tenhou.md. Over TCP every message is one XML-like tag followed by a
NUL byte, both ways; a read may hold several messages or half of one (:class:`TagStream`). The
WebSocket client sends the same tags as JSON objects (:func:`tag_from_json`, :func:`tag_to_json`).
:func:`parse_tag` / :func:`format_tag` read and write one tag.

The server speaks in seats relative to us (0 us, 1 next, 2 opposite, 3 previous); the events
use absolute seats counted from the game's first dealer (seat 0 is East in the first hand), so
that our logs read like every other platform's. The first dealer follows from any INIT: it is
``oya`` less the hand number.

:meth:`TenhouCodec.feed` turns one tag into events, then (last) what it asks of us: a
:class:`~protocols.events.DecisionRequest` (``offered`` from the ``t`` flags; a kan on our own
draw is never flagged, so it is always offered), or a session item (:class:`Helo`,
:class:`Rejoin`, :class:`GameFound`, ...) for the adapter to act on. :meth:`TenhouCodec.encode`
writes the reply tags for an action, naming the physical ids we hold (red fives included).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from protocols import events as ev
from protocols import tiles as T
from protocols.codec import (
    Codec,
    EncodeError,
    MalformedMessage,
    ProtocolError,
    UnexpectedMessage,
    UnsupportedMessage,
    load_json,
)

LIVE_DRAWS = 136 - 4 * 13 - 14  # 70 draws in a four-player hand

#: game-type bits (JOIN / GO ``type``)
VS_HUMANS, NO_RED, NO_KUITAN, HANCHAN, SANMA, FAST = 0x01, 0x02, 0x04, 0x08, 0x10, 0x40
JOUKYUU, TOKUJOU = 0x80, 0x20  # lobby level bits; both together = Phoenix (鳳凰)
TEST_GAME = 64  # JOIN t="0,64": a game against computer players

AUTH_TABLE = (
    63006, 9570, 49216, 45888, 9822, 23121, 59830, 51114, 54831, 4189, 580, 5203, 42174, 59972,
    55457, 59009, 59347, 64456, 8673, 52710, 49975, 2006, 62677, 3463, 17754, 5357,
)

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
DRAW_TYPES = {
    "yao9": "nine_terminals", "reach4": "four_riichi", "ron3": "triple_ron",
    "kan4": "four_kans", "kaze4": "four_winds", "nm": "nagashi",
}


# ---------------------------------------------------------------------- tags


@dataclass(frozen=True)
class Tag:
    name: str
    attrs: dict[str, str] = field(default_factory=dict, hash=False)

    def __str__(self) -> str:
        return format_tag(self)


# A tag is read a piece at a time, each piece anchored where the last ended: one pattern
# for the whole tag (its attributes' run, then ``\s*/?\s*>$``) backtracked through every way
# to share a run of spaces between its parts, and a tag of 64 KB of spaces from the server
# took 8 s to refuse (a NUL-framed 1 MB one, the most TagStream holds, half an hour), the
# event loop (and in `mjbot serve` every session and the status page) held meanwhile
_TAG_NAME = re.compile(r"<\s*([A-Za-z][A-Za-z0-9]*)")
_TAG_ATTR = re.compile(r'\s+([A-Za-z_][\w-]*)\s*=\s*"([^"<>]*)"')
_TAGS_IN_TEXT = re.compile(r"<[^<>]*>")


def parse_tag(text: str) -> Tag:
    """``<NAME a="1" b="2"/>`` (the slash optional, spaces around the parts); MalformedMessage
    for anything else. Linear in the text's length (see _TAG_NAME)."""
    raw = text.strip()
    inside = raw[:-1].rstrip()  # the closing ``>`` off, then the spaces before it
    if inside.endswith("/"):
        inside = inside[:-1]
    m = _TAG_NAME.match(inside) if raw.endswith(">") else None
    if m is None:
        raise MalformedMessage("not a tag", raw)
    attrs: dict[str, str] = {}
    at = m.end()
    while (a := _TAG_ATTR.match(inside, at)) is not None:
        attrs[a.group(1)] = a.group(2)
        at = a.end()
    if inside[at:].strip():  # neither an attribute nor the spaces before the end
        raise MalformedMessage("not a tag", raw)
    return Tag(m.group(1), attrs)


def format_tag(tag: Tag) -> str:
    attrs = "".join(f' {k}="{v}"' for k, v in tag.attrs.items())
    return f"<{tag.name}{attrs}/>"


def split_tags(text: str) -> list[Tag]:
    """Wire text holding one or more tags (what :meth:`TenhouCodec.encode` returns) as tags."""
    return [parse_tag(t) for t in _TAGS_IN_TEXT.findall(text)]


def tag_from_json(obj: Any) -> Tag:
    """The WebSocket form: ``{"tag": "T68"}``, ``{"tag": "INIT", "seed": "..."}``."""
    if isinstance(obj, str | bytes):
        try:
            obj = load_json(obj)
        except json.JSONDecodeError as exc:
            raise MalformedMessage(f"not JSON ({exc.msg})", str(obj)) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("tag"), str) or not obj["tag"]:
        raise MalformedMessage("a JSON message needs a 'tag'", str(obj))
    name = obj["tag"]
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
        raise MalformedMessage("bad tag name", name)
    return Tag(name, {str(k): str(v) for k, v in obj.items() if k != "tag"})


def tag_to_json(tag: Tag) -> dict[str, Any]:
    """Our tag as the WebSocket client sends it (numbers as numbers)."""
    out: dict[str, Any] = {"tag": tag.name}
    for k, v in tag.attrs.items():
        out[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return out


class TagStream:
    """TCP bytes in, tag texts out: NUL-framed (several tags, or half of one, per read); tags
    run together without a NUL are split too."""

    def __init__(self, max_pending: int = 1 << 20) -> None:
        self._pending = b""
        self.max_pending = max_pending

    def feed(self, data: bytes) -> list[str]:
        self._pending += data
        *chunks, self._pending = self._pending.split(b"\0")
        if len(self._pending) > self.max_pending:
            chunks.append(self._pending)
            self._pending = b""
        out: list[str] = []
        for chunk in chunks:
            text = chunk.decode("utf-8", errors="replace").strip()
            out.extend(_TAGS_IN_TEXT.findall(text))
            rest = _TAGS_IN_TEXT.sub(" ", text).strip()
            if rest:  # text outside any tag: passed on, for the codec to report
                out.append(rest)
        return out


def auth_reply(auth: str) -> str:
    """The legacy AUTH answer to ``HELO auth="YYYYMMDD-hhhhhhhh"``."""
    date, sep, key = auth.partition("-")
    if not sep or len(date) != 8 or not date.isdigit() or not re.fullmatch(r"[0-9a-fA-F]{8}",
                                                                            key):
        raise MalformedMessage("auth must be YYYYMMDD-hhhhhhhh", auth)
    idx = int("2" + date[2:8]) % (12 - int(date[7])) * 2
    a = AUTH_TABLE[idx] ^ int(key[0:4], 16)
    b = AUTH_TABLE[idx + 1] ^ int(key[4:8], 16)
    return f"{date}-{a:04x}{b:04x}"


# ---------------------------------------------------------------------- melds


@dataclass(frozen=True)
class MeldIds:
    """A meld code read as physical ids: ``ids`` all of the meld's tiles, ``called`` the one
    taken from another seat (an added kan: the added one), ``offset`` the giver's relative
    seat (0: a closed kan)."""

    kind: str
    ids: tuple[int, ...]
    called: int | None
    offset: int
    index: int = 0  # chi / pon / added kan: the called tile's place; kans: the called copy


def meld_ids(m: int) -> MeldIds:
    """The 16-bit meld code (tenhou.md, verified on ~15,000 real calls)."""
    if not 0 <= m < 1 << 16:
        raise ValueError(f"meld code {m} out of range")
    offset = m & 3
    if m & 0x4:  # chi
        x = m >> 10
        called_index, start = x % 3, x // 3
        if start > 20:
            raise ValueError(f"chi code {m}: start index {start}")
        base = (start // 7) * 9 + start % 7
        ids = tuple(4 * (base + k) + ((m >> (3 + 2 * k)) & 3) for k in range(3))
        return MeldIds("chi", ids, ids[called_index], offset, called_index)
    if m & 0x18:  # pon (bit 3) or added kan (bit 4)
        unused = (m >> 5) & 3
        x = m >> 9
        kind, called_index = x // 3, x % 3
        if kind > 33:
            raise ValueError(f"pon code {m}: kind {kind}")
        ids = tuple(4 * kind + c for c in range(4) if c != unused)
        if m & 0x8:
            return MeldIds("pon", ids, ids[called_index], offset, called_index)
        return MeldIds("added_kan", tuple(4 * kind + c for c in range(4)), 4 * kind + unused,
                       offset, called_index)
    if m & 0x20:
        return MeldIds("nuki", (m >> 8,), m >> 8, 0)
    x = m >> 8
    kind, called_copy = x // 4, x % 4
    if kind > 33:
        raise ValueError(f"kan code {m}: kind {kind}")
    ids = tuple(4 * kind + c for c in range(4))
    if offset == 0:
        return MeldIds("closed_kan", ids, None, 0, called_copy)
    return MeldIds("open_kan", ids, 4 * kind + called_copy, offset, called_copy)


def meld_code(meld: MeldIds) -> int:
    """The 16-bit code of a meld (the inverse of :func:`meld_ids`)."""
    if meld.kind == "chi":
        base = meld.ids[0] // 4
        start = (base // 9) * 7 + base % 9
        code = (start * 3 + meld.index) << 10 | 0x4 | meld.offset
        for k, tile_id in enumerate(meld.ids):
            code |= (tile_id % 4) << (3 + 2 * k)
        return code
    kind = meld.ids[0] // 4
    if meld.kind in ("pon", "added_kan"):
        if meld.kind == "pon":
            unused = next(c for c in range(4) if 4 * kind + c not in meld.ids)
        else:
            assert meld.called is not None
            unused = meld.called % 4
        flag = 0x8 if meld.kind == "pon" else 0x10
        return (kind * 3 + meld.index) << 9 | flag | unused << 5 | meld.offset
    if meld.kind == "nuki":
        return meld.ids[0] << 8 | 0x20
    return (kind * 4 + meld.index) << 8 | (meld.offset if meld.kind == "open_kan" else 0)


def _own_ids(meld: MeldIds) -> list[int]:
    """The ids a meld took from its caller's hand (what the table state removes)."""
    if meld.kind == "closed_kan":
        return list(meld.ids)
    if meld.kind in ("added_kan", "nuki"):
        return [meld.called] if meld.called is not None else []
    return [i for i in meld.ids if i != meld.called]


def _given_id(meld: MeldIds) -> int | None:
    """The id a meld took from another seat's discard (an added kan: its pon's); None for a
    closed kan or a nuki."""
    if meld.kind in ("chi", "pon", "open_kan"):
        return meld.called
    if meld.kind == "added_kan":
        return _pon_ids(meld)[meld.index]
    return None


def _pon_ids(added_kan: MeldIds) -> tuple[int, ...]:
    """The pon an added kan grew from: its ids but the added one."""
    return tuple(i for i in added_kan.ids if i != added_kan.called)


def decode_meld(who: int, m: int, red: bool = True) -> ev.MeldCalled:
    """The meld code as a MeldCalled; ``who`` and the giver in the same seat numbering."""
    meld = meld_ids(m)

    def tile(i: int) -> int:
        return T.from_tenhou_id(i, red)

    tiles = tuple(sorted((tile(i) for i in meld.ids), key=T.sort_key))
    called = tile(meld.called) if meld.called is not None else None
    if meld.kind in ("closed_kan", "nuki"):
        return ev.MeldCalled(who, meld.kind, tiles, called if meld.kind == "nuki" else None)
    if meld.kind == "added_kan":
        return ev.MeldCalled(who, "added_kan", tiles, called)
    return ev.MeldCalled(who, meld.kind, tiles, called, (who + meld.offset) % 4)


# ---------------------------------------------------------------------- wins and draws


def ints(text: str | None) -> list[int]:
    if not text:
        return []
    return [int(float(x)) for x in text.split(",") if x.strip()]


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
    return fu << (han + 2)  # fu * 2^(han+2)


def yaku_items(pairs: list[int], yakuman: list[int]) -> tuple[tuple[str, ...], int]:
    """AGARI's ``yaku`` (id, han pairs) and ``yakuman`` (ids) as Tenhou's own strings
    ("立直(1飜)", "国士無双(役満)"; a 0-han entry is left out), and the han they add up to."""
    yaku: list[str] = []
    han = 0
    for i in range(0, len(pairs) - 1, 2):
        if pairs[i + 1] > 0:
            yaku.append(f"{YAKU[pairs[i]]}({pairs[i + 1]}飜)")
            han += pairs[i + 1]
    yaku.extend(f"{YAKU[y]}(役満)" for y in yakuman)
    return tuple(yaku), han


def agari_event(a: dict[str, str], seat_of: Any, dealer: int, red: bool) -> ev.RoundWon:
    """An AGARI tag as a RoundWon. ``seat_of`` maps the tag's seats to ours (identity for
    mjlog's absolute seats); ``sc`` lists the seats in the tag's order."""
    who, frm = seat_of(int(a["who"])), seat_of(int(a["fromWho"]))
    hand = sorted((T.from_tenhou_id(i, red) for i in ints(a["hai"])), key=T.sort_key)
    win_tile = T.from_tenhou_id(int(a["machi"]), red)
    fu, points, limit = [*ints(a.get("ten")), 0, 0, 0][:3]
    yakuman = ints(a.get("yakuman"))
    yaku, han = yaku_items(ints(a.get("yaku")), yakuman)
    deltas = _score_pairs(a.get("sc"), seat_of)[1]
    pao = seat_of(int(a["paoWho"])) if "paoWho" in a else None
    text = score_text(fu, han, points, limit, who == frm, who == dealer, len(yakuman))
    ura = tuple(T.from_tenhou_id(i, red) for i in ints(a.get("doraHaiUra")))
    return ev.RoundWon(winner=who, from_seat=None if who == frm else frm, hand=tuple(hand),
                       win_tile=win_tile, value=13 * len(yakuman) if yakuman else han,
                       deltas=deltas, yaku=yaku, ura_dora_indicators=ura,
                       pao_seat=pao, detail=text)


def _score_pairs(text: str | None, seat_of: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``sc="s0,d0,s1,d1,..."`` (hundreds) -> (scores, deltas) in our seats."""
    sc = ints(text)
    if len(sc) < 8:
        return (), ()
    scores, deltas = [0] * 4, [0] * 4
    for r in range(4):
        scores[seat_of(r)] = sc[2 * r] * 100
        deltas[seat_of(r)] = sc[2 * r + 1] * 100
    return tuple(scores), tuple(deltas)


def ready_from_payments(deltas: Sequence[int]) -> tuple[int, ...]:
    """The ready seats of an exhaustive draw that shows no hand: the seats its noten payments
    pay, exact whenever one to three seats were ready (none or all: no payment, so none).
    The codec reads a RYUUKYOKU so, and replay an older mjbot's log whose codec did not."""
    return tuple(s for s, d in enumerate(deltas) if d > 0)


def final_scores(a: dict[str, str], seat_of: Any) -> tuple[int, ...] | None:
    """``owari="s0,p0,s1,p1,..."`` -> the final scores in our seats, or None."""
    if "owari" not in a:
        return None
    values = a["owari"].split(",")
    scores = [0] * 4
    for r in range(4):
        scores[seat_of(r)] = int(float(values[2 * r])) * 100
    return tuple(scores)


# ---------------------------------------------------------------------- session items


@dataclass(frozen=True)
class Helo:
    """The server's greeting: ``auth`` needs an AUTH answer (legacy servers)."""

    name: str
    auth: str | None


@dataclass(frozen=True)
class LoggedIn:
    """``LN``: logged in; the client may JOIN."""


@dataclass(frozen=True)
class Rejoin:
    """``REJOIN t=``: still queueing; send ``JOIN`` with the same ``t``."""

    t: str


@dataclass(frozen=True)
class GameFound:
    """``GO``: a table was found; answer GOK (and NEXTREADY)."""

    game_type: int
    lobby: str


@dataclass(frozen=True)
class Resumed:
    """``SAIKAI``: a dropped connection took us back to our table; answer GOK."""


@dataclass(frozen=True)
class PlayerLeft:
    """``BYE``: a player's connection dropped (the server's clock plays for it meanwhile)."""

    seat: int

    def __str__(self) -> str:  # as the client's notice says it: a sentence, not a repr
        return f"seat {self.seat} left the table (BYE)"


@dataclass(frozen=True)
class PlayerBack:
    """``UN`` naming one player during a game: that player reconnected."""

    seat: int

    def __str__(self) -> str:
        return f"seat {self.seat} is back at the table (UN)"


@dataclass(frozen=True)
class GameOver:
    """``PROF``: the game is over (the last AGARI / RYUUKYOKU follows)."""

    game_type: int

    def __str__(self) -> str:
        return f"the server says the game is over (PROF, game type {self.game_type})"


# ---------------------------------------------------------------------- the codec


_TILE_TAG = re.compile(r"^([TDEFGdefg])(\d+)$")


class TenhouCodec(Codec):
    """One connection's protocol state, from our seat's side."""

    platform = "tenhou"
    variant = "riichi"

    def __init__(self, name: str = "NoName", websocket: bool = False) -> None:
        self.login_name = name  # "NoName" or a Tenhou ID: a credential, never logged
        self.websocket = websocket
        self.names: tuple[str, ...] = ("", "", "", "")
        self.game_type = 0
        self.red = True
        self.first_dealer = 0  # relative seat of the game's first dealer
        self.started = False
        self.dealer = 0
        self.held: list[int] = []
        self.last_drawn_id: int | None = None
        # a draw of ours we could not read, its id unknown: the next echo of our discard names
        # it (in riichi Tenhou's clock discards it for us)
        self.unread_draw = False
        self.after_kan = [False] * 4
        self.last_discard: tuple[int, int] | None = None  # (absolute seat, id)
        # the calls a REINIT put back on the table, (absolute seat, meld code): a server that
        # repeats one of them after the reconnect repeats what is known (a code names its tile
        # ids, so no later call of the same hand can carry it)
        self.restored_calls: set[tuple[int, int]] = set()
        self.in_hand = False
        # Tenhou's last word on our furiten in the hand it names ((round, honba) of its
        # INIT): False from the INIT on (a hand starts with nothing shown), None when unknown
        self.furiten_word: tuple[tuple[int, int], bool | None] | None = None
        self.log_id = ""
        self.gpid = ""  # GO's game id: a game resumed without a TAIKYOKU has no log id
        self.scores: tuple[int, ...] = (0, 0, 0, 0)  # the last known, in absolute seats

    def greeting(self) -> list[str]:
        """The client speaks first: the HELO login."""
        return [format_tag(helo(self.login_name, websocket=self.websocket))]

    # seats ------------------------------------------------------------------

    @property
    def seat(self) -> int:
        """Our absolute seat."""
        return (-self.first_dealer) % 4

    def absolute(self, relative: int) -> int:
        if not 0 <= relative <= 3:
            raise ValueError(f"seat {relative} out of range")
        return (relative - self.first_dealer) % 4

    def tile(self, tile_id: int) -> int:
        return T.from_tenhou_id(tile_id, self.red)

    # server tags --------------------------------------------------------------

    def feed(self, tag: Tag | str) -> list[object]:
        if isinstance(tag, str):
            tag = parse_tag(tag)
        try:
            m = _TILE_TAG.match(tag.name)
            if m:
                return self._tile_tag(m.group(1), int(m.group(2)), tag)
            handler = _HANDLERS.get(tag.name)
            if handler is None:
                raise UnsupportedMessage("unknown tag", format_tag(tag))
            return handler(self, tag.attrs, tag)
        except T.TileError as exc:
            raise MalformedMessage(f"bad tile id ({exc})", format_tag(tag)) from None
        except (KeyError, IndexError, ValueError) as exc:
            if isinstance(exc, ProtocolError):
                raise
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise MalformedMessage(f"malformed <{tag.name}> ({what})", format_tag(tag)) from None

    def _game_started(self) -> list[object]:
        if self.started:
            return []
        self.started = True
        names = [""] * 4
        for r in range(4):
            names[self.absolute(r)] = self.names[r]
        rules = {"platform": "tenhou", "game_type": self.game_type, "red_fives": self.red,
                 "players": 3 if self.game_type & SANMA else 4}
        return [ev.GameStarted("riichi", self.seat, tuple(names), rules)]

    def _on_helo(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [Helo(urllib.parse.unquote(a.get("uname", "")), a.get("auth"))]

    def _on_ln(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [LoggedIn()]

    def _on_rejoin(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [Rejoin(a["t"])]

    def _on_go(self, a: dict[str, str], tag: Tag) -> list[object]:
        # a GO during a game is the reconnect's (SAIKAI follows): the same game goes on
        self.game_type = int(a.get("type", "0"))
        self.red = not self.game_type & NO_RED
        self.gpid = a.get("gpid", "")
        return [GameFound(self.game_type, a.get("lobby", "0"))]

    def _on_un(self, a: dict[str, str], tag: Tag) -> list[object]:
        present = [r for r in range(4) if f"n{r}" in a]
        if len(present) == 1 and any(self.names):  # one name: that player is back
            return [PlayerBack(self.absolute(present[0]))]
        self.names = tuple(urllib.parse.unquote(a.get(f"n{r}", "")) for r in range(4))
        return []

    def _on_taikyoku(self, a: dict[str, str], tag: Tag) -> list[object]:
        """Always a new game. One still open (a game resumed by REINIT that the server then
        left unfinished for us) is closed first: otherwise our seat would change under a
        table that still plays the old game."""
        first_dealer = int(a["oya"])
        if not 0 <= first_dealer <= 3:
            raise ValueError(f"oya {first_dealer}")
        out = self._abandon_game()
        self.first_dealer = first_dealer
        self.log_id = a.get("log", "")
        return [*out, *self._game_started()]

    def _abandon_game(self) -> list[object]:
        """The end of a game that had no end of its own (its last known scores), and a fresh
        per-game state."""
        if not self.started:
            return []
        out: list[object] = [
            ev.PlatformNotice("the server began a new game: the game in progress is abandoned"),
            ev.GameEnded(self.scores, abandoned=True)]
        self.started = False
        self.dealer = 0
        self.held = []
        self.unread_draw = False
        self.last_drawn_id = None
        self.after_kan = [False] * 4
        self.last_discard = None
        self.in_hand = False
        self.scores = (0, 0, 0, 0)
        return out

    def forget_game(self) -> None:
        """The server has no game for us any more (a reconnect answered with a lobby login):
        the game's state is dropped, so that the next game starts afresh."""
        self._abandon_game()

    def _on_saikai(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [Resumed()]

    def _on_bye(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [PlayerLeft(self.absolute(int(a["who"])))]

    def _on_prof(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [GameOver(int(a.get("type", "0")))]

    def _on_quiet(self, a: dict[str, str], tag: Tag) -> list[object]:
        return []  # RANKING, CHAT, KANSEN, Z: nothing for the table (the raw log has it)

    def _on_furiten(self, a: dict[str, str], tag: Tag) -> list[object]:
        """``<FURITEN show="1"/>`` / ``show="0"``: our furiten as Tenhou shows it (in
        kokushi.log just before the echo of the discard that made the hand furiten)."""
        show = a["show"]
        if show not in ("0", "1"):
            raise ValueError(f"show {show!r}, not 0 or 1")
        if not self.in_hand or self.furiten_word is None:
            return []  # no hand to say it of
        self.furiten_word = (self.furiten_word[0], show == "1")
        return [ev.FuritenShown(self.seat, show == "1")]

    def _init_seats(self, a: dict[str, str]) -> tuple[list[int], int]:
        seed = ints(a["seed"])
        if len(seed) < 6:
            raise ValueError("seed needs round,honba,sticks,dice,dice,dora")
        oya = int(a["oya"])
        if not 0 <= oya <= 3:
            raise ValueError(f"oya {oya}")
        self.first_dealer = (oya - seed[0] % 4) % 4
        self.dealer = self.absolute(oya)
        return seed, oya

    def _round_started(self, a: dict[str, str], seed: list[int], hand: list[int]) \
            -> ev.RoundStarted:
        ten = ints(a["ten"])
        scores = [0] * 4
        for r in range(min(4, len(ten))):
            scores[self.absolute(r)] = ten[r] * 100
        self.after_kan = [False] * 4
        self.last_discard = None
        self.restored_calls = set()
        self.last_drawn_id = None
        self.in_hand = True
        self.scores = tuple(scores)
        return ev.RoundStarted(
            round_wind=seed[0] // 4, dealer=self.dealer, honba=seed[1], sticks=seed[2],
            scores=tuple(scores), dora_indicators=(self.tile(seed[5]),),
            hand=tuple(self.tile(i) for i in hand), round_number=seed[0] % 4,
            wall_remaining=LIVE_DRAWS)

    def _on_init(self, a: dict[str, str], tag: Tag) -> list[object]:
        seed, _ = self._init_seats(a)
        hai = ints(a["hai"])
        if len(hai) != 13 or len(set(hai)) != 13:
            raise ValueError(f"hai needs 13 distinct ids, got {len(hai)}")
        for i in hai:
            self.tile(i)
        self.held = list(hai)
        self.unread_draw = False
        self.furiten_word = ((seed[0], seed[1]), False)
        return [*self._game_started(), self._round_started(a, seed, hai)]

    def _on_reinit(self, a: dict[str, str], tag: Tag) -> list[object]:
        """Back at the table after a reconnect: the hand so far (our hand, every seat's melds
        and river) replayed as events that rebuild the table.

        Tenhou leaves a tile that was called away out of its river (``kawa``): it is in the
        caller's meld only. Each such tile is put back as a discard of its giver just before
        its call (a server that lists it in the river anyway has it taken out first, so it
        counts once either way). The draws so far are not sent: every discard followed a draw
        or a chi / pon, and every kan (and nuki) used a draw with no discard of its own."""
        seed, _ = self._init_seats(a)
        hai = ints(a["hai"])
        codes = {r: ints(a.get(f"m{r}")) for r in range(4)}
        melds = {r: [meld_ids(m) for m in codes[r]] for r in range(4)}
        rivers = {r: ints(a.get(f"kawa{r}")) for r in range(4)}
        for r in range(4):
            for mi in melds[r]:
                given = _given_id(mi)
                giver = (r + mi.offset) % 4
                if given is not None and given in rivers[giver]:
                    rivers[giver].remove(given)
        own_meld_ids = [i for mi in melds[0] for i in mi.ids if i != _given_id(mi)]
        start = self._round_started(a, seed, [*hai, *own_meld_ids])
        listed = sum(len([i for i in v if i != 255]) for v in rivers.values())
        draws = listed + sum(mi.kind in ("open_kan", "closed_kan", "added_kan", "nuki")
                             for v in melds.values() for mi in v)
        events: list[object] = [*self._game_started(), start]
        # REINIT gives each river on its own: replay them in turn order from the dealer (calls
        # aside, the order of play), so that what passed after a riichi is known again
        order = [(self.absolute(r), r) for r in range(4)]
        order.sort(key=lambda pair: (pair[0] - self.dealer) % 4)
        queues = {r: list(rivers[r]) for r in range(4)}
        while any(queues.values()):
            for seat, r in order:
                riichi = False
                while queues[r] and queues[r][0] == 255:
                    queues[r].pop(0)
                    riichi = True
                if riichi:
                    events.append(ev.RiichiDeclared(seat))
                if queues[r]:
                    events += self._replayed_discard(seat, queues[r].pop(0))
                if riichi:  # its stick is already out of the scores REINIT gives
                    events.append(ev.RiichiAccepted(seat, start.scores))
        for seat, r in order:
            for code, mi in zip(codes[r], melds[r], strict=True):
                given = _given_id(mi)
                if given is not None:
                    events += self._replayed_discard(self.absolute((r + mi.offset) % 4),
                                                     given)
                if mi.kind == "added_kan":  # the pon it grew from, then the added tile
                    pon = _pon_ids(mi)
                    events.append(decode_meld(seat, meld_code(
                        MeldIds("pon", pon, given, mi.offset, mi.index)), self.red))
                events.append(decode_meld(seat, code, self.red))
        # the replayed draws (ours) count the wall down and each replayed riichi puts a stick
        # out: the wall and the sticks REINIT gives are what is left after them
        own_draws = sum(isinstance(e, ev.TileDrawn) for e in events)
        riichis = sum(isinstance(e, ev.RiichiAccepted) for e in events)
        events[events.index(start)] = dataclasses.replace(
            start, wall_remaining=max(0, LIVE_DRAWS - draws + own_draws),
            sticks=max(0, start.sticks - riichis))
        self.held = list(hai)
        self.unread_draw = False
        self.restored_calls = {(self.absolute(r), code) for r in range(4) for code in codes[r]}
        events.append(ev.PlatformNotice(f"{REINIT_NOTICE}{listed} discards in the rivers and "
                                        f"{sum(map(len, melds.values()))} calls restored"))
        return [*events, *self._furiten_again((seed[0], seed[1]))]

    def _furiten_again(self, hand: tuple[int, int]) -> list[object]:
        """After a REINIT: the server's last word on our furiten in this hand, said again.
        The table rebuilt from it replays each river in a guessed order, and its furiten
        reading (a wait passed up, in riichi for good) can be wrong either way; a FURITEN
        the server sends after the REINIT says it anew. A hand first seen in the REINIT
        (the line dropped across the hand's start) has no word."""
        if self.furiten_word is None or self.furiten_word[0] != hand:
            self.furiten_word = (hand, None)
            return []
        word = self.furiten_word[1]
        return [] if word is None else [ev.FuritenShown(self.seat, word)]

    def _replayed_discard(self, seat: int, tile_id: int) -> list[object]:
        """A discard of the hand so far; ours is drawn first (it is in no hand REINIT gives)."""
        tile = self.tile(tile_id)
        drawn = [ev.TileDrawn(seat, tile)] if seat == self.seat else []
        return [*drawn, ev.TileDiscarded(seat, tile)]

    def _tile_tag(self, letter: str, tile_id: int, tag: Tag) -> list[object]:
        tile = self.tile(tile_id)
        if letter == "T":
            if tile_id in self.held:
                raise UnexpectedMessage(f"drew id {tile_id}, which we already hold",
                                        format_tag(tag))
            flags = int(tag.attrs.get("t", "0"))  # read before the hand changes: a bad
            # flag leaves the draw to unread_draw_reply, which must find the hand as it was
            self.held.append(tile_id)
            self.last_drawn_id = tile_id
            self.unread_draw = False
            replacement = self._took_own_draw()
            offered = {"discard", "kan"}
            for bit, kind in ((16, "win"), (32, "riichi"), (64, "abortive_draw"), (128, "nuki")):
                if flags & bit:
                    offered.add(kind)
            return [ev.TileDrawn(self.seat, tile, replacement),
                    ev.DecisionRequest("turn", offered=frozenset(offered))]
        tsumogiri = letter.islower()
        if letter in "Dd":
            drawn: list[object] = []
            if tile_id not in self.held:
                if not self.unread_draw:
                    raise UnexpectedMessage(f"our discard of id {tile_id}, which we do not "
                                            "hold", format_tag(tag))
                # the draw we could not read, named by the echo of its discard (a kan's
                # replacement if it came after our kan, see :meth:`_took_own_draw`)
                drawn = [ev.TileDrawn(self.seat, tile, self._took_own_draw())]
                self.held.append(tile_id)
                self.last_drawn_id = tile_id
            self.unread_draw = False
            self.held.remove(tile_id)
            tsumogiri = tsumogiri or tile_id == self.last_drawn_id
            self.last_drawn_id = None
            self.last_discard = (self.seat, tile_id)
            return [*drawn, ev.TileDiscarded(self.seat, tile, tsumogiri)]
        seat = self.absolute("EFG".index(letter.upper()) + 1)
        if tile_id in self.held:
            raise UnexpectedMessage(f"seat {seat} discarded id {tile_id}, which we hold",
                              format_tag(tag))
        self.last_discard = (seat, tile_id)
        out: list[object] = [ev.TileDiscarded(seat, tile, tsumogiri)]
        flags = int(tag.attrs.get("t", "0"))
        if flags:
            offered = {kind for bit, kind in ((1, "pon"), (2, "kan"), (4, "chi"), (8, "win"))
                       if flags & bit}
            out.append(ev.DecisionRequest("claim", offered=frozenset(offered), tile=tile,
                                          from_seat=seat))
        return out

    def _took_own_draw(self) -> bool:
        """Our draw is taken (read, or named by the echo of an unread one's discard): whether
        it is a kan's replacement. The flag is spent here, so that it marks that draw and not
        the next (an unread replacement left it set: our next draw read as a rinshan one)."""
        replacement, self.after_kan[self.seat] = self.after_kan[self.seat], False
        self.last_discard = None
        return replacement

    def _on_draw(self, a: dict[str, str], tag: Tag) -> list[object]:
        seat = self.absolute("UVW".index(tag.name) + 1)
        replacement, self.after_kan[seat] = self.after_kan[seat], False
        self.last_discard = None
        return [ev.TileDrawn(seat, None, replacement)]

    def _on_n(self, a: dict[str, str], tag: Tag) -> list[object]:
        who = self.absolute(int(a["who"]))
        code = int(a["m"])
        ids = meld_ids(code)
        meld = decode_meld(who, code, self.red)
        if (who, code) in self.restored_calls:  # a call the REINIT already put on the table
            self.restored_calls.discard((who, code))
            if who == self.seat and ids.kind in ("chi", "pon"):  # our discard is still owed
                return [ev.DecisionRequest("turn", offered=frozenset({"discard"}))]
            return [ev.PlatformNotice(f"the call {code} repeated after the reconnect")]
        if ids.kind in ("chi", "pon", "open_kan") and (
                self.last_discard is None or self.last_discard[1] != ids.called):
            raise UnexpectedMessage(f"the call takes id {ids.called}, the last discard was "
                                  f"{self.last_discard[1] if self.last_discard else 'none'}",
                                  format_tag(tag))
        if who == self.seat:
            own = _own_ids(ids)
            missing = [i for i in own if i not in self.held]
            if missing:
                raise UnexpectedMessage(f"our call uses ids {missing}, which we do not hold",
                                  format_tag(tag))
            for i in own:
                self.held.remove(i)
            self.last_drawn_id = None
        if ids.kind in ("open_kan", "added_kan", "closed_kan", "nuki"):
            self.after_kan[who] = True
        self.last_discard = None
        out: list[object] = [meld]
        if who == self.seat and ids.kind in ("chi", "pon"):
            out.append(ev.DecisionRequest("turn", offered=frozenset({"discard"})))
        if who != self.seat and int(a.get("t", "0")) & 8:
            out.append(ev.DecisionRequest("rob_kan", offered=frozenset({"win"}),
                                          tile=meld.called, from_seat=who))
        return out

    def _on_reach(self, a: dict[str, str], tag: Tag) -> list[object]:
        who = self.absolute(int(a["who"]))
        if a.get("step") == "1":
            return [ev.RiichiDeclared(who)]
        ten = ints(a.get("ten"))
        scores = None
        if len(ten) >= 4:
            values = [0] * 4
            for r in range(4):
                values[self.absolute(r)] = ten[r] * 100
            scores = tuple(values)
            self.scores = scores
        return [ev.RiichiAccepted(who, scores)]

    def _on_dora(self, a: dict[str, str], tag: Tag) -> list[object]:
        return [ev.DoraRevealed(self.tile(int(a["hai"])))]

    def _on_agari(self, a: dict[str, str], tag: Tag) -> list[object]:
        won = agari_event(a, self.absolute, self.dealer, self.red)
        self.in_hand = False
        out: list[object] = [won]
        return self._maybe_over(a, out)

    def _maybe_over(self, a: dict[str, str], out: list[object]) -> list[object]:
        scores, deltas = _score_pairs(a.get("sc"), self.absolute)
        if scores:
            self.scores = tuple(s + d for s, d in zip(scores, deltas, strict=True))
        final = final_scores(a, self.absolute)
        if final is not None:
            out.append(ev.GameEnded(final))
            self.started = False
        return out

    def _on_ryuukyoku(self, a: dict[str, str], tag: Tag) -> list[object]:
        reason = DRAW_TYPES.get(a.get("type", ""), a.get("type") or "exhaustive")
        deltas = _score_pairs(a.get("sc"), self.absolute)[1]
        tenpai = tuple(sorted(self.absolute(r) for r in range(4) if f"hai{r}" in a))
        if not tenpai:
            # the live server shows no hand at an exhaustive draw (every RYUUKYOKU of the
            # dnovikoff captures; the game records' do)
            tenpai = ready_from_payments(deltas)
        self.in_hand = False
        out: list[object] = [ev.RoundDrawn(reason, deltas, tenpai if reason == "exhaustive"
                                           else ())]
        return self._maybe_over(a, out)

    # our replies ----------------------------------------------------------------

    def _ids_for(self, tiles: list[int], prefer: int | None = None) -> list[int]:
        """Held ids carrying exactly these tiles (a red five is its own id)."""
        try:
            return T.choose_ids(self.held, tiles, self.tile, [prefer])
        except T.TileError as exc:
            raise EncodeError(str(exc), " ".join(map(str, sorted(self.held)))) from None

    def encode(self, action: object, request: ev.DecisionRequest | None = None) -> str:
        """The reply as wire text: its tags, each as the TCP client writes it (a riichi is
        two, ``<REACH .../><D .../>``; :func:`split_tags` takes them apart again)."""
        return "".join(format_tag(tag) for tag in self.reply_tags(action, request))

    def reply_tags(self, action: object, request: ev.DecisionRequest | None = None) \
            -> list[Tag]:
        """The tags answering ``request`` with ``action`` (the transports write each one:
        NUL-terminated over TCP, as JSON over the WebSocket)."""
        kind = request.kind if request is not None else "turn"
        if isinstance(action, ev.Pass):
            return [Tag("N")]
        if isinstance(action, ev.Win):
            return [Tag("N", {"type": "7" if kind == "turn" else "6"})]
        if isinstance(action, ev.Discard):
            (tile_id,) = self._ids_for([action.tile], prefer=self.last_drawn_id)
            discard = Tag("D", {"p": str(tile_id)})
            return [Tag("REACH", {"hai": str(tile_id)}), discard] if action.riichi \
                else [discard]
        if isinstance(action, ev.Pon | ev.Chi):
            a, b = self._ids_for(list(action.tiles))
            return [Tag("N", {"type": "1" if isinstance(action, ev.Pon) else "3",
                              "hai0": str(a), "hai1": str(b)})]
        if isinstance(action, ev.Kan):
            if action.kind == "open_kan":
                return [Tag("N", {"type": "2"})]
            (tile_id,) = self._ids_for([action.tiles[0]])
            return [Tag("N", {"type": "4" if action.kind == "closed_kan" else "5",
                              "hai": str(tile_id)})]
        if isinstance(action, ev.AbortiveDraw):
            return [Tag("N", {"type": "9"})]
        if isinstance(action, ev.Nuki):
            return [Tag("N", {"type": "10"})]
        raise EncodeError("Tenhou has no reply for this action", repr(action))

    def unread_draw_reply(self, tile_id: int | None) -> tuple[list[object], list[Tag]]:
        """Our draw came in a tag we could not read; ``tile_id`` is the id its text still
        names (None: none in 0..135). The events it tells all the same (the draw, where its id
        is new to us) and the reply: a discard of that id, which the server holds for our
        draw (in riichi the only tile Tenhou takes). With no id, no reply: Tenhou's clock
        then discards the drawn tile (in riichi the only legal move), and its echo names it
        (:meth:`_tile_tag`), so our hand stays the server's. A held tile discarded instead
        (refused in riichi) left our hand a tile short of the server's for the rest of the
        hand, the drawn one never known."""
        if tile_id is None or not 0 <= tile_id < 136:
            self.unread_draw = True
            self.last_drawn_id = None
            return [], []
        events: list[object] = []
        replacement = self._took_own_draw()
        if tile_id not in self.held:
            self.held.append(tile_id)
            events.append(ev.TileDrawn(self.seat, self.tile(tile_id), replacement))
        self.last_drawn_id = tile_id
        self.unread_draw = False
        return events, [Tag("D", {"p": str(tile_id)})]

    def unreadable(self, raw: str) -> tuple[list[object], list[Tag]]:
        """A message that is no tag, or a tag we could not read, by the name it begins with
        and its offer flags (:func:`name_and_offer`): ``T...``, our draw, owed a discard
        (:meth:`unread_draw_reply`); a discard or a call with ``t``, owed a pass; else
        nothing. The same for the session and for a re-read of its log (replay --reparse),
        which came to fewer events where a draw was read this way."""
        name, offered = name_and_offer(raw)
        if re.match(r"T(?![A-Za-z])", name):
            named = re.fullmatch(r"T(\d{1,3})", name)
            return self.unread_draw_reply(int(named.group(1)) if named else None)
        if offered and re.match(r"[EFGefgN](?![A-Za-z])", name):
            return [], [Tag("N")]
        return [], []

    def safe_reply(self, request: ev.DecisionRequest | None) -> list[Tag]:
        """Where our answer cannot be built: a pass on an offer, on our turn a discard of the
        drawn id (or any held id)."""
        if request is not None and request.kind == "turn" and self.held:
            tile_id = self.last_drawn_id if self.last_drawn_id in self.held else self.held[-1]
            return [Tag("D", {"p": str(tile_id)})]
        return [Tag("N")]


def name_and_offer(raw: str) -> tuple[str, bool]:
    """What text we could not read seems to be: the name it begins with (``<T-1/>``: "T-1";
    ``{"tag": "T-1"`` over the WebSocket) and whether it carries offer flags (a ``t``)."""
    text = raw.strip()
    if text.startswith("{"):
        found = re.search(r'"tag"\s*:\s*"([^"]*)"', text)
        name = found.group(1) if found else ""
        return name, re.search(r'"t"\s*:', text) is not None
    found = re.match(r"<\s*([^\s/>]*)", text)
    name = found.group(1) if found else ""
    return name, re.search(r"\st\s*=", text) is not None


def offer_flags(raw: str) -> int:
    """The offer flags (``t``) that text we could not read still carries (``<T100 t="16"``,
    ``{"tag": "T100", "t": "16"``); 0 where none can be read."""
    found = re.search(r'"t"\s*:\s*"?(\d+)' if raw.lstrip().startswith("{")
                      else r'\st\s*=\s*"(\d+)"', raw)
    return int(found.group(1)) if found else 0


_HANDLERS = {
    "HELO": TenhouCodec._on_helo, "LN": TenhouCodec._on_ln, "REJOIN": TenhouCodec._on_rejoin,
    "GO": TenhouCodec._on_go, "UN": TenhouCodec._on_un, "TAIKYOKU": TenhouCodec._on_taikyoku,
    "SAIKAI": TenhouCodec._on_saikai, "REINIT": TenhouCodec._on_reinit,
    "BYE": TenhouCodec._on_bye, "PROF": TenhouCodec._on_prof, "INIT": TenhouCodec._on_init,
    "U": TenhouCodec._on_draw, "V": TenhouCodec._on_draw, "W": TenhouCodec._on_draw,
    "N": TenhouCodec._on_n, "REACH": TenhouCodec._on_reach, "DORA": TenhouCodec._on_dora,
    "AGARI": TenhouCodec._on_agari, "RYUUKYOKU": TenhouCodec._on_ryuukyoku,
    "RANKING": TenhouCodec._on_quiet, "CHAT": TenhouCodec._on_quiet,
    "FURITEN": TenhouCodec._on_furiten, "KANSEN": TenhouCodec._on_quiet,
    "Z": TenhouCodec._on_quiet,
}


# ---------------------------------------------------------------------- client messages


def helo(name: str = "NoName", websocket: bool = False) -> Tag:
    """The login: ``name`` is "NoName" (anonymous) or an ID "IDxxxxxxxx-xxxxxxxx"."""
    attrs = {"name": urllib.parse.quote(name, safe="-")}
    if not websocket:
        attrs["tid"] = "f0"
    attrs["sx"] = "M"
    return Tag("HELO", attrs)


def join(lobby: int, game_type: int, rejoin: str | None = None) -> Tag:
    return Tag("JOIN", {"t": rejoin if rejoin is not None else f"{lobby},{game_type}"})


# the notice a hand told anew on a reconnect (REINIT) begins with: replay reads a hand with no
# result followed by such a hand of the same round as cut by the drop, not as unfinished
REINIT_NOTICE = "reconnected: "


def enter_lobby(lobby: int) -> Tag:
    """``<CHAT text="/lobby%20N"/>``: how a client moves to lobby N (not 0) before its JOIN
    there, as Tenhou's own client does (the capture f5182_2018-01-22: this, then
    ``<JOIN t="7994,9"/>``); chat text is URL-encoded."""
    return Tag("CHAT", {"text": urllib.parse.quote(f"/lobby {lobby}")})


def simple(name: str) -> Tag:
    """GOK, NEXTREADY, Z, BYE, LN-less tags with no attributes."""
    return Tag(name)


def read_reply(tag: Tag) -> dict[str, Any]:
    """A client tag as a plain description (for the fake server and for tests):
    ``{"verb": "discard", "id": 68}``, ``{"verb": "riichi", "id": 84}``, ``{"verb": "pass"}``,
    ``{"verb": "pon", "ids": [a, b]}`` ... ProtocolError when it is no client reply."""
    raw = format_tag(tag)
    try:
        if tag.name == "D":
            return {"verb": "discard", "id": int(tag.attrs["p"])}
        if tag.name == "REACH":
            return {"verb": "riichi", "id": int(tag.attrs["hai"])}
        if tag.name == "N":
            kind = tag.attrs.get("type")
            if kind is None:
                return {"verb": "pass"}
            verb = {"1": "pon", "2": "open_kan", "3": "chi", "4": "closed_kan",
                    "5": "added_kan", "6": "ron", "7": "tsumo", "9": "nine_terminals",
                    "10": "nuki"}[kind]
            out: dict[str, Any] = {"verb": verb}
            if verb in ("pon", "chi"):
                out["ids"] = [int(tag.attrs["hai0"]), int(tag.attrs["hai1"])]
            elif verb in ("closed_kan", "added_kan"):
                out["id"] = int(tag.attrs["hai"])
            return out
    except (KeyError, ValueError) as exc:
        raise MalformedMessage(f"malformed reply ({exc})", raw) from None
    raise UnsupportedMessage("not a game reply", raw)
