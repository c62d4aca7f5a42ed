"""mjai events <-> internal events and actions (sans-IO), for a bot sitting at seat ``id``.

mjai (../shared/protocols/mjai.md) sends the table's events as JSON objects and the bot answers
each message with one object: ``{"type": "none"}`` or its move. The events carry no offers, so
the codec says where a move may be due: our ``tsumo`` (our turn), another seat's ``dahai`` (a
claim) or ``kakan`` (robbing it), our own ``chi`` / ``pon`` (the discard after it). A riichi is
two answers: ``reach``, then, when the server echoes it, the ``dahai`` chosen with it (the codec
keeps that tile and answers the echo itself).

Two transports use it: the mjai.app form (a JSON array of the events since our last answer per
line, one answer object) and the original TCP server (``hello`` -> ``join``, one event per line).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocols import events as ev
from protocols import tiles as T
from protocols.codec import (
    Codec,
    EncodeError,
    MalformedMessage,
    ProtocolError,
    UnsupportedMessage,
    load_json,
)

WINDS = ("E", "S", "W", "N")
NONE: dict[str, Any] = {"type": "none"}
VALUE_NOT_SENT = "value not sent by mjai"  # a hora's detail when it carries no fan
# Told at the end of a hand whose hora or ryukyoku never came (an end_kyoku, or the next
# start_kyoku): mjai.app's harness sends neither to the bots. The hand is over, its result
# unknown; replay says so rather than "unfinished".
RESULT_NOT_SENT = "hand over; its result was not sent (mjai.app sends no hora or ryukyoku)"



# mjai's ryukyoku reasons -> ours (protocols/events.RoundDrawn); no reason is an exhaustive draw
DRAW_REASONS = {"kyushukyuhai": "nine_terminals", "suufonrenda": "four_winds",
                "suukaikan": "four_kans", "suuchariichi": "four_riichi", "sanchaho": "triple_ron",
                "fanpai": "exhaustive", "nagashimangan": "nagashi"}


def draw_reason(m: dict[str, Any]) -> str:
    """A ``ryukyoku``'s reason in our words (a word we do not know is kept as it came)."""
    word = str(m.get("reason", "fanpai"))
    return DRAW_REASONS.get(word, word)


def declared_tenpai(m: dict[str, Any]) -> tuple[int, ...] | None:
    """The tenpai seats an exhaustive ``ryukyoku`` names, as the original server writes
    them: ``tenpais`` (a flag per seat), else the seats whose ``tehais`` it shows (the others
    ``?``); None where it names neither (Mortal's logs, mjai.app). A field not of that shape
    (not one entry per seat of four, a flag that is no true/false) names nothing: it would
    name seats no table has (a fifth flag was 'seat 4 tenpai')."""
    flags = m.get("tenpais")
    if isinstance(flags, list) and len(flags) == 4 \
            and all(isinstance(f, bool) or f in (0, 1) for f in flags):
        return tuple(s for s, flag in enumerate(flags) if flag)
    hands = m.get("tehais")
    if isinstance(hands, list) and len(hands) == 4 and all(
            isinstance(h, list) and all(isinstance(t, str) for t in h) for h in hands):
        return tuple(s for s, h in enumerate(hands) if h and "?" not in h)
    return None


@dataclass(frozen=True)
class Hello:
    """The TCP server's greeting: answer with ``join``."""

    protocol: str
    version: int


@dataclass(frozen=True)
class Answer:
    """An answer the codec gives by itself (the discard of a riichi it was told to make)."""

    message: dict[str, Any]


def _tile(text: Any) -> int | None:
    if not isinstance(text, str):
        raise ValueError(f"a tile must be a string, got {text!r}")
    return T.from_mjai(text)


def _known(text: Any) -> int:
    tile = _tile(text)
    if tile is None:
        raise ValueError("an unknown tile '?' where the tile must be known")
    return tile


def _seat(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 3:
        raise ValueError(f"seat must be 0..3, got {value!r}")
    return value


class MjaiCodec(Codec):
    platform = "mjai"
    variant = "riichi"

    def __init__(self, seat: int = 0) -> None:
        self.seat = _seat(seat)  # until a start_game says it (mjai.app also passes it as argv)
        self.names: tuple[str, ...] = ("", "", "", "")
        self.last_draw: int | None = None
        self.after_kan: int | None = None
        self.riichi_tile: int | None = None  # chosen with our reach, sent after its echo
        self.last: tuple[str, int, int | None] | None = None  # (type, actor, tile)
        self.pons: dict[int, tuple[int, ...]] = {}  # our pons by tile kind (for a kakan)
        self.in_hand = False  # a start_kyoku came, and no hora or ryukyoku since

    # ------------------------------------------------------------------ events in

    def feed(self, message: str | dict[str, Any]) -> list[object]:
        """One event: its JSON text (one object), or the object already parsed (the
        mjai.app form sends an array of them per line: the transport takes it apart)."""
        if isinstance(message, str):
            try:
                message = load_json(message)
            except json.JSONDecodeError as exc:
                raise MalformedMessage(f"not JSON ({exc.msg})", message) from None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise MalformedMessage("not an mjai message object", message)
        kind = message["type"]
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise UnsupportedMessage(f"unknown type {kind!r}", message)
        try:
            return handler(self, message)
        except T.TileError as exc:
            raise MalformedMessage(f"bad tile ({exc})", message) from None
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, ProtocolError):
                raise
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise MalformedMessage(f"malformed {kind} ({what})", message) from None

    def _on_hello(self, m: dict[str, Any]) -> list[object]:
        return [Hello(str(m.get("protocol", "")), int(m.get("protocol_version", 0)))]

    def _on_start_game(self, m: dict[str, Any]) -> list[object]:
        self.seat = _seat(m.get("id", self.seat))
        names = m.get("names", ["", "", "", ""])
        self.names = tuple(str(n) for n in names)
        self.riichi_tile = None
        return [ev.GameStarted("riichi", self.seat, self.names, {"platform": "mjai"})]

    def _on_start_kyoku(self, m: dict[str, Any]) -> list[object]:
        hand = tuple(_known(t) for t in m["tehais"][self.seat])
        if len(hand) != 13:
            raise ValueError(f"our tehai has {len(hand)} tiles")
        if m["bakaze"] not in WINDS:
            raise ValueError(f"bakaze {m['bakaze']!r}")
        self.last_draw = self.after_kan = self.riichi_tile = None
        self.last = None
        self.pons = {}
        before = self._result_not_sent()
        self.in_hand = True
        return [*before, ev.RoundStarted(
            round_wind=WINDS.index(m["bakaze"]), dealer=_seat(m["oya"]),
            honba=int(m.get("honba", 0)), sticks=int(m.get("kyotaku", 0)),
            scores=tuple(int(s) for s in m["scores"]),
            dora_indicators=(_known(m["dora_marker"]),), hand=hand,
            round_number=int(m["kyoku"]) - 1, wall_remaining=70)]

    def _on_tsumo(self, m: dict[str, Any]) -> list[object]:
        actor = _seat(m["actor"])
        tile = _tile(m["pai"])
        if actor == self.seat and tile is None:
            raise ValueError("our own draw with an unknown tile")
        replacement, self.after_kan = self.after_kan == actor, None
        self.last = ("tsumo", actor, tile)
        if actor != self.seat:
            return [ev.TileDrawn(actor, None, replacement)]
        self.last_draw = tile
        return [ev.TileDrawn(actor, tile, replacement), ev.DecisionRequest("turn")]

    def _on_dahai(self, m: dict[str, Any]) -> list[object]:
        actor, tile = _seat(m["actor"]), _known(m["pai"])
        self.last = ("dahai", actor, tile)
        out: list[object] = [ev.TileDiscarded(actor, tile, bool(m.get("tsumogiri", False)))]
        if actor == self.seat:
            self.last_draw = None
            self.riichi_tile = None
        else:
            out.append(ev.DecisionRequest("claim", tile=tile, from_seat=actor))
        return out

    def _call(self, m: dict[str, Any], kind: str, size: int) -> list[object]:
        actor, target = _seat(m["actor"]), _seat(m["target"])
        called = _known(m["pai"])
        consumed = [_known(t) for t in m["consumed"]]
        if len(consumed) != size or actor == target:
            raise ValueError(f"{kind} needs {size} consumed tiles from another seat")
        tiles = tuple(sorted([*consumed, called], key=T.sort_key))
        out: list[object] = [ev.MeldCalled(actor, kind, tiles, called, target)]
        self.last = (m["type"], actor, called)
        if kind == "open_kan":
            self.after_kan = actor
        elif actor == self.seat:
            if kind == "pon":
                self.pons[T.kind(called)] = tiles
            out.append(ev.DecisionRequest("turn"))
        return out

    def _on_chi(self, m: dict[str, Any]) -> list[object]:
        return self._call(m, "chi", 2)

    def _on_pon(self, m: dict[str, Any]) -> list[object]:
        return self._call(m, "pon", 2)

    def _on_daiminkan(self, m: dict[str, Any]) -> list[object]:
        return self._call(m, "open_kan", 3)

    def _on_kakan(self, m: dict[str, Any]) -> list[object]:
        actor, added = _seat(m["actor"]), _known(m["pai"])
        consumed = [_known(t) for t in m["consumed"]]
        tiles = tuple(sorted([*consumed, added], key=T.sort_key))
        self.after_kan = actor
        self.last = ("kakan", actor, added)
        out: list[object] = [ev.MeldCalled(actor, "added_kan", tiles, added)]
        if actor != self.seat:
            out.append(ev.DecisionRequest("rob_kan", tile=added, from_seat=actor))
        return out

    def _on_ankan(self, m: dict[str, Any]) -> list[object]:
        actor = _seat(m["actor"])
        consumed = tuple(sorted((_known(t) for t in m["consumed"]), key=T.sort_key))
        if len(consumed) != 4:
            raise ValueError("ankan needs four consumed tiles")
        self.after_kan = actor
        self.last = ("ankan", actor, None)
        return [ev.MeldCalled(actor, "closed_kan", consumed)]

    def _on_dora(self, m: dict[str, Any]) -> list[object]:
        return [ev.DoraRevealed(_known(m["dora_marker"]))]

    def _on_reach(self, m: dict[str, Any]) -> list[object]:
        actor = _seat(m["actor"])
        out: list[object] = [ev.RiichiDeclared(actor)]
        if actor == self.seat:
            tile = self.riichi_tile
            if tile is None:  # a riichi we did not ask for: still, a discard is owed
                out.append(ev.DecisionRequest("turn", offered=frozenset({"discard"})))
            else:
                out.append(Answer(self.discard(tile)))
        return out

    def _on_reach_accepted(self, m: dict[str, Any]) -> list[object]:
        scores = m.get("scores")
        return [ev.RiichiAccepted(_seat(m["actor"]),
                                  tuple(int(s) for s in scores) if scores else None)]

    def _on_hora(self, m: dict[str, Any]) -> list[object]:
        """A win. mjai.app and Mortal send ``deltas`` and ``ura_markers`` only (the value
        stays 0: mjbot values its own wins from its table, adapter/platforms/mjai.py); the
        original mjai server adds ``fan``, ``fu`` and ``yakus`` ([name, fan] pairs), and
        ``uradora_markers``: its value is taken as sent."""
        actor = _seat(m["actor"])
        target = _seat(m.get("target", actor))
        self.in_hand = False  # its result came
        tile = _tile(m["pai"]) if "pai" in m else (self.last[2] if self.last else None)
        deltas = tuple(int(d) for d in m.get("deltas", (0, 0, 0, 0)))
        ura = tuple(_known(t) for t in m.get("ura_markers", m.get("uradora_markers", ())))
        if "fan" in m:
            yaku = tuple(f"{name}({int(fan)})" for name, fan in m.get("yakus", ()))
            fu = int(m.get("fu", 0))
            return [ev.RoundWon(actor, None if target == actor else target, (),
                                tile if tile is not None else 0, int(m["fan"]), deltas, yaku,
                                ura, detail=f"{fu}符" if fu else "")]
        return [ev.RoundWon(actor, None if target == actor else target, (),
                            tile if tile is not None else 0, 0, deltas,
                            ura_dora_indicators=ura, detail=VALUE_NOT_SENT)]

    def _on_ryukyoku(self, m: dict[str, Any]) -> list[object]:
        self.in_hand = False  # its result came
        return [round_drawn(m)]

    def _on_end_kyoku(self, m: dict[str, Any]) -> list[object]:
        return self._result_not_sent()

    def _result_not_sent(self) -> list[object]:
        """The hand in play is over with no result sent: said once, as :data:`RESULT_NOT_SENT`."""
        if not self.in_hand:
            return []
        self.in_hand = False
        return [ev.PlatformNotice(RESULT_NOT_SENT)]

    def _on_end_game(self, m: dict[str, Any]) -> list[object]:
        scores = m.get("scores")
        return [ev.GameEnded(tuple(int(s) for s in scores) if scores else ())]

    def _on_none(self, m: dict[str, Any]) -> list[object]:
        return []

    def _on_error(self, m: dict[str, Any]) -> list[object]:
        return [ev.PlatformNotice(f"mjai error: {json.dumps(m, ensure_ascii=False)[:300]}")]

    # ------------------------------------------------------------------ answers out

    def discard(self, tile: int) -> dict[str, Any]:
        return {"type": "dahai", "actor": self.seat, "pai": T.to_mjai(tile),
                "tsumogiri": tile == self.last_draw}

    def encode(self, action: object, request: ev.DecisionRequest | None = None) -> str:
        """The answer line (JSON, no newline) for ``action`` on ``request``."""
        return json.dumps(self.answer_object(action, request), ensure_ascii=False)

    def answer_object(self, action: object, request: ev.DecisionRequest | None = None) \
            -> dict[str, Any]:
        """The answer object for ``action`` on ``request``; EncodeError where mjai has none
        (or the request lacks what the answer must name)."""
        try:
            return self._answer(action, request)
        except (AssertionError, TypeError, T.TileError) as exc:
            raise EncodeError(f"cannot answer {request!r} so ({exc})", repr(action)) from None

    def _answer(self, action: object, request: ev.DecisionRequest | None) -> dict[str, Any]:
        me = self.seat
        if isinstance(action, ev.Pass):
            return dict(NONE)
        if isinstance(action, ev.Discard):
            if action.riichi:
                self.riichi_tile = action.tile
                return {"type": "reach", "actor": me}
            return self.discard(action.tile)
        if isinstance(action, ev.Win):
            if request is not None and request.kind != "turn":
                assert request.from_seat is not None and request.tile is not None
                return {"type": "hora", "actor": me, "target": request.from_seat,
                        "pai": T.to_mjai(request.tile)}
            return {"type": "hora", "actor": me, "target": me,
                    "pai": T.to_mjai(self.last_draw)}
        if isinstance(action, ev.Chi | ev.Pon):
            assert request is not None and request.tile is not None
            return {"type": "chi" if isinstance(action, ev.Chi) else "pon", "actor": me,
                    "target": request.from_seat, "pai": T.to_mjai(request.tile),
                    "consumed": [T.to_mjai(t) for t in action.tiles]}
        if isinstance(action, ev.Kan):
            if action.kind == "open_kan":
                assert request is not None and request.tile is not None
                return {"type": "daiminkan", "actor": me, "target": request.from_seat,
                        "pai": T.to_mjai(request.tile),
                        "consumed": [T.to_mjai(t) for t in action.tiles]}
            if action.kind == "closed_kan":
                return {"type": "ankan", "actor": me,
                        "consumed": [T.to_mjai(t) for t in action.tiles]}
            pon = self.pons.get(T.kind(action.tiles[0]))
            if pon is None:
                raise EncodeError("an added kan with no pon of ours to add to", repr(action))
            return self.encode_kakan(action.tiles[0], pon)
        if isinstance(action, ev.AbortiveDraw):
            return {"type": "ryukyoku", "actor": me}
        raise EncodeError("mjai has no answer for this action", repr(action))

    def encode_kakan(self, added: int, pon_tiles: tuple[int, ...]) -> dict[str, Any]:
        return {"type": "kakan", "actor": self.seat, "pai": T.to_mjai(added),
                "consumed": [T.to_mjai(t) for t in pon_tiles]}


_Handler = Callable[[MjaiCodec, dict[str, Any]], list[object]]
_HANDLERS: dict[str, _Handler] = {
    name[4:]: fn for name, fn in vars(MjaiCodec).items() if name.startswith("_on_")}

ANSWER_TYPES = {"none", "dahai", "reach", "hora", "chi", "pon", "daiminkan", "kakan", "ankan",
                "ryukyoku", "join"}


def check_answer(answer: Any) -> str | None:
    """What is wrong with an answer object, or None if it is valid mjai."""
    kind = answer.get("type") if isinstance(answer, dict) else None
    if not isinstance(kind, str) or kind not in ANSWER_TYPES:  # a list or an object is no
        return "not an answer object with a known type"  # type (nor hashable: a TypeError)
    need = {"dahai": ("actor", "pai", "tsumogiri"), "reach": ("actor",),
            "hora": ("actor", "target", "pai"), "chi": ("actor", "target", "pai", "consumed"),
            "pon": ("actor", "target", "pai", "consumed"),
            "daiminkan": ("actor", "target", "pai", "consumed"),
            "kakan": ("actor", "pai", "consumed"), "ankan": ("actor", "consumed"),
            "ryukyoku": ("actor",), "join": ("name",), "none": ()}[kind]
    missing = [k for k in need if k not in answer]
    if missing:
        return f"{kind} without {', '.join(missing)}"
    consumed = answer.get("consumed", [])
    if not isinstance(consumed, list):
        return f"{kind} whose consumed is not a list of tiles"
    tiles = [answer["pai"]] if "pai" in answer else []
    tiles += consumed
    for t in tiles:
        try:
            if T.from_mjai(t) is None:
                return f"{kind} names an unknown tile"
        except (T.TileError, TypeError):
            return f"{kind} names a bad tile {t!r}"
    return None


def round_drawn(m: dict[str, Any]) -> ev.RoundDrawn:
    """An mjai ``ryukyoku`` message as the codec reads it: its reason, the payments, and the
    seats ready where the draw is exhaustive (the one reading replay's re-read of older
    logs shares)."""
    deltas = tuple(int(d) for d in m.get("deltas", ()) or ())
    reason = draw_reason(m)
    tenpai = (declared_tenpai(m) or ()) if reason == "exhaustive" else ()
    return ev.RoundDrawn(reason, deltas, tenpai)
