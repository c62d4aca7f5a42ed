"""tenhou.net/6 JSON (Tenhou's own replay viewer format) to events and back.

A file holds ``{title, name[4], rule, log[]}``, or one such object per line with one hand each
(mjx's form). Each hand lists per seat only the starting hand, the tiles taken (draws and calls)
and the tiles given (discards, added/closed kans, riichi); the order of play is not written
down, so the importer replays it: the seat to move takes its next tile, then plays its next
discard, and after each discard the seat whose next take is a call on that very tile (pon and
kan before chi) calls it. The export writes the same structure back from the events.

A game's final scores are the top level's ``sc`` (score, game points, per seat) where the file
has it, else what the hands add up to: only ``sc`` holds the deposits left on the table at the
end, which the top takes. A game from elsewhere (our table, mjai) is written in Tenhou's words:
its yaku and score line as Tenhou's viewer shows them, and ``sc``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Final

from brain.rules.game_end import game_over
from brain.shanten import shanten
from protocols import events as ev
from protocols import tiles as T
from protocols.tenhou import ints, score_text, yaku_items
from protocols.tenhou_values import (
    fu_of,
    game_points,
    hand_points,
    limit_class,
    placement,
    yaku_attrs,
)
from replay import progress
from replay.record import CutShort, GameRecord, RecordError, canonical, own_tiles, ran_out

VARIANT: Final = "riichi"  # the one variant this format holds: where the name enters
TSUMOGIRI = 60
_DRAW_WORDS = {
    "exhaustive": "流局", "nine_terminals": "九種九牌", "four_riichi": "四家立直",
    "triple_ron": "三家和了", "four_kans": "四槓散了", "four_winds": "四風連打",
    "nagashi": "流し満貫",
}
# Tenhou writes an exhaustive draw where no point changes hands (every seat ready, or none)
# as 全員聴牌 / 全員不聴, with no deltas: an exhaustive draw all the same
_ALL_READY, _NONE_READY = "全員聴牌", "全員不聴"
_RESULT_DRAWS = {**{v: k for k, v in _DRAW_WORDS.items()},
                 _ALL_READY: "exhaustive", _NONE_READY: "exhaustive"}
_CALL_RE = re.compile(r"([cpmkar]?)(\d\d)")
# position of the called tile in a call string by where it came from (relative to the caller)
_POS_PON = {3: 0, 2: 1, 1: 2}  # kamicha (left), toimen (opposite), shimocha (right)
_POS_KAN = {3: 0, 2: 1, 1: 3}
_SOURCE_PON = {v: k for k, v in _POS_PON.items()}  # position -> source relative to the caller
_SOURCE_KAN = {v: k for k, v in _POS_KAN.items()}
_HAN_RE = re.compile(r"\((\d+)飜\)$")


def _tile(code: Any, where: str) -> int:
    try:
        return T.from_tenhou6(int(code))
    except (T.TileError, TypeError, ValueError):
        raise RecordError(f"tenhou6: bad tile code {code!r} in {where}") from None


def _parse_call(text: str, where: str) -> tuple[str, int, list[int]]:
    """("c"|"p"|"m"|"k"|"a"|"r", index of the lettered token, tiles in written order)."""
    tokens = _CALL_RE.findall(text)
    if "".join(a + b for a, b in tokens) != text:
        raise RecordError(f"tenhou6: unreadable call {text!r} in {where}")
    letters = [(i, a) for i, (a, _) in enumerate(tokens) if a]
    if len(letters) != 1:
        raise RecordError(f"tenhou6: call {text!r} in {where} needs exactly one letter")
    pos, letter = letters[0]
    return letter, pos, [_tile(b, where) for _, b in tokens]


# --------------------------------------------------------------------------- import


def loads(text: str) -> GameRecord:
    """A tenhou.net/6 game from JSON text (one object, or one object per line)."""
    text = text.strip()
    cut = ""
    try:
        objs = [json.loads(text)]
    except json.JSONDecodeError:
        objs = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                objs.append(json.loads(line))
            except json.JSONDecodeError as exc:
                if text.startswith("{") and text.endswith(line) and ran_out(exc, line):
                    if objs:  # one object per line (mjx's form): the whole lines are read
                        cut = (f"line {n} ends early ({exc.msg}): the {len(objs)} whole "
                               "lines before it are read")
                        break
                    raise CutShort(f"tenhou6: the JSON ends at char {len(text)} before its "
                                   "object closes (one document: nothing before the cut can "
                                   "be read)") from None
                raise RecordError(f"tenhou6: not JSON ({exc})") from None
    if not objs or not all(isinstance(o, dict) and isinstance(o.get("log"), list)
                           for o in objs):
        raise RecordError("tenhou6: expected an object with a 'log' list")
    first = objs[0]
    names = tuple(str(n) for n in (first.get("name") or ["", "", "", ""]))
    if len(names) != 4:
        raise RecordError(f"tenhou6: expected 4 names, got {len(names)} (only 4-player games)")
    rule = first.get("rule") or {}
    aka = bool(rule.get("aka", 1)) if isinstance(rule, dict) else True
    meta = {k: v for k, v in first.items() if k not in ("log", "name")}
    meta["lines"] = len(objs) > 1 or "\n" in text
    meta["hands_per_line"] = [len(o["log"]) for o in objs]
    events: list[Any] = [ev.GameStarted(VARIANT, 0, names, {"red_fives": aka})]
    scores: list[int] | None = [25000] * 4
    last = (len(objs) - 1, len(objs[-1]["log"]) - 1)
    damaged: dict[int, str] = {}
    for i, o in enumerate(objs):
        for n, hand in enumerate(o["log"]):
            where = f"log[{n}]" if len(objs) == 1 else f"line {i + 1} log[{n}]"
            scores = _import_hand(hand, events, where, (i, n) == last, damaged)
    if damaged and len(damaged) == sum(len(o["log"]) for o in objs):
        # no hand reads: the file is refused whole, as it was (nothing of a game to show)
        raise RecordError(f"tenhou6: {damaged[min(damaged)]}")
    sc = objs[-1].get("sc")
    if scores is None:  # the last hand damaged: what the hands add up to is not known
        if cut:
            meta["cut"] = cut
        elif sc is not None and _final_scores(sc) is not None:
            events.append(ev.GameEnded(_final_scores(sc) or ()))
        return GameRecord(VARIANT, "tenhou6", events, meta, damaged=damaged)
    if not cut and sc is None and len(objs) > 1:
        # a file in lines (mjx's form, a hand a line) without final scores: one cut at a
        # line's end reads whole (a one-line excerpt of a hand is taken as it always was)
        cut = _goes_on(rule, events, scores)
    if cut:  # the game goes on past the cut: no game end
        meta["cut"] = cut
    elif not _unfinished(objs[-1]["log"]) or sc is not None:
        events.append(ev.GameEnded(_final_scores(sc) or tuple(scores)))
    return GameRecord(VARIANT, "tenhou6", events, meta, damaged=damaged)


ABORTIVE = ("nine_terminals", "four_riichi", "triple_ron", "four_kans", "four_winds")


def _goes_on(rule: Any, events: list[Any], scores: list[int]) -> str:
    """Why a file without ``sc`` stops before its game is over, by Tenhou's rules (those the
    local table plays: :func:`brain.rules.game_end.game_over`, which this asks with the
    last hand's dealer, its end and the scores). '' where the game is
    over there or that cannot be told (a length ``rule.disp`` does not name, a nagashi
    mangan). A file in lines (mjx's form, a hand a line) cut at a line's end read as a
    finished game, its hands' sum as final scores."""
    disp = rule.get("disp") if isinstance(rule, dict) else None
    if not isinstance(disp, str) or ("東" in disp) == ("南" in disp):
        return ""
    last_wind = 1 if "南" in disp else 0
    starts = [i for i, e in enumerate(events) if isinstance(e, ev.RoundStarted)]
    if not starts:
        return ""
    start: ev.RoundStarted = events[starts[-1]]
    ends = [e for e in events[starts[-1]:] if isinstance(e, ev.RoundWon | ev.RoundDrawn)]
    if not ends:
        return ""  # the last hand unfinished: _unfinished says so
    dealer, wind, number = start.dealer, start.round_wind, start.round_number
    if isinstance(ends[0], ev.RoundWon):
        keeps = any(e.winner == dealer for e in ends if isinstance(e, ev.RoundWon))
    elif ends[0].reason == "exhaustive":
        keeps = dealer in ends[0].tenpai
    elif ends[0].reason in ABORTIVE:
        keeps = True
    else:
        return ""
    if game_over(wind, number, dealer, last_wind, keeps, scores):
        return ""
    return (f"the file ends after hand {'ESWN'[wind % 4]}{number + 1}-{start.honba} with the "
            f"game not over (scores {'/'.join(map(str, scores))}, "
            f"{'an east' if last_wind == 0 else 'a south'} game): no final scores")


def _unfinished(log: list[Any]) -> bool:
    """The last hand has an empty result: the game was cut inside it (our export of a record
    cut short writes it so), and no game end follows."""
    return bool(log) and isinstance(log[-1], list) and len(log[-1]) >= 17 and log[-1][16] == []


def _final_scores(sc: Any) -> tuple[int, ...] | None:
    """``sc`` = [score, game points] per seat: the scores, or None where there is no such list."""
    if not isinstance(sc, list) or len(sc) != 8:
        return None
    try:
        return tuple(int(x) for x in sc[0::2])
    except (TypeError, ValueError):
        raise RecordError(f"tenhou6: bad 'sc' {sc!r}") from None


class _Hand:
    """The replay of one hand's per-seat lists into the order of play."""

    def __init__(self, data: list[Any], where: str, out: list[Any],
                 last: bool = False) -> None:
        if not isinstance(data, list) or len(data) < 17:
            raise RecordError(f"tenhou6: {where} must be a list of 17 entries")
        self.where = where
        self.last_hand = last  # the log's last hand: an empty result is a game cut inside it
        self.out = out
        head, scores = data[0], data[1]
        if not (isinstance(head, list) and len(head) == 3
                and all(type(x) is int for x in head)):
            raise RecordError(f"tenhou6: {where}: its first entry {str(head)[:60]} is not "
                              "[round, repeats, deposits] (three whole numbers)")
        if not (isinstance(scores, list) and len(scores) == 4
                and all(type(x) is int for x in scores)):
            raise RecordError(f"tenhou6: {where}: its scores {str(scores)[:60]} are not four "
                              "whole numbers")
        kyoku, honba, sticks = head
        self.dealer = int(kyoku) % 4
        self.scores = [int(s) for s in scores]
        self.dora = [_tile(t, where) for t in data[2]]
        self.ura = [_tile(t, where) for t in data[3]]
        self.hands = [[_tile(t, where) for t in data[4 + 3 * s]] for s in range(4)]
        self.takes = [list(data[5 + 3 * s]) for s in range(4)]
        self.gives = [list(data[6 + 3 * s]) for s in range(4)]
        self.result = data[16]
        res = self.result
        # ["和了"] (or a win's deltas without its entry) was read as a hand cut short; checked
        # here, before the moves, whose tries of a call would take it for a misfit call
        if isinstance(res, list) and res[:1] == ["和了"] and (len(res) < 3 or len(res) % 2 == 0):
            raise RecordError(f"tenhou6: {where}: a win result with no win entry: "
                              f"{str(res)[:80]}")
        self.ti = [0, 0, 0, 0]
        self.gi = [0, 0, 0, 0]
        self.dora_shown = 1
        self.dora_pending = 0  # kan dora due after the replacement draw (open / added kan)
        self.last_draw: list[int | None] = [None] * 4
        self.riichi_waiting: int | None = None
        self.sticks = int(sticks)
        out.append(ev.RoundStarted(
            round_wind=int(kyoku) // 4, dealer=self.dealer, honba=int(honba),
            sticks=int(sticks), scores=tuple(self.scores), dora_indicators=tuple(self.dora[:1]),
            round_number=int(kyoku) % 4, hands=tuple(canonical(h) for h in self.hands)))

    # the moves ---------------------------------------------------------------------

    def play(self) -> None:
        self.seat = self.dealer
        self.replacement = False
        self.must_take = True
        self.last: tuple[int, int, str] | None = None  # (seat, tile, "discard"|"added_kan")
        self._run()

    def _run(self) -> None:
        """Play on from the current position. Where a discard could be the one a later call
        took, the call is tried first and, if the rest of the hand then fails to fit, undone
        (the same tile may be discarded twice before the call that takes the second one)."""
        while True:
            if self.must_take:
                seat = self.seat
                take = self._next_take(seat)
                if take is None:
                    break
                if isinstance(take, str):
                    raise RecordError(f"tenhou6: {self.where}: seat {seat} calls {take!r} "
                                      "where it should draw")
                tile = _tile(take, self.where)
                self.ti[seat] += 1
                self.hands[seat].append(tile)
                self.last_draw[seat] = tile
                self.out.append(ev.TileDrawn(seat, tile, self.replacement))
                self.last = None
            if not self._give():
                break
            if self.last is None or self.last[2] != "discard" or not self.must_take:
                continue
            discarder, tile = self.last[0], self.last[1]
            self._accept_riichi()
            caller = self._caller(discarder, tile)
            if caller is None:
                self.seat = (discarder + 1) % 4
                continue
            before = copy.deepcopy(self.__dict__)
            try:
                self.seat, self.must_take, self.replacement = self._call(caller, discarder, tile)
                self.last = None
                self._run()
                return
            except RecordError:
                self.__dict__.update(before)
                self.seat = (discarder + 1) % 4
        self._finish(self.seat, self.last)

    def _give(self) -> bool:
        """Play the moving seat's next entry of its discard list; False when it has none."""
        seat = self.seat
        give = self._next_give(seat)
        if give is None:
            return False
        self.gi[seat] += 1
        self.replacement = False
        self.must_take = True
        if isinstance(give, str) and give.startswith("r") and give[1:].isdigit():
            self._flush_dora()
            self.out.append(ev.RiichiDeclared(seat))
            self.last = (seat, self._discard(seat, int(give[1:])), "discard")
            self.riichi_waiting = seat
            return True
        if not isinstance(give, str):
            if int(give) == 0:
                raise RecordError(f"tenhou6: {self.where}: unexpected 0 in discards")
            self._flush_dora()
            self.last = (seat, self._discard(seat, int(give)), "discard")
            return True
        letter, pos, tiles = _parse_call(give, self.where)
        self._flush_dora()
        if letter == "a":
            for t in tiles:
                self._remove(seat, t)
            self.out.append(ev.MeldCalled(seat, "closed_kan", canonical(tiles)))
            self._reveal_dora()
        elif letter == "k":
            added = tiles[pos]
            self._remove(seat, added)
            self.out.append(ev.MeldCalled(seat, "added_kan", canonical(tiles), added))
            self.dora_pending += 1
            self.last = (seat, added, "added_kan")
        else:
            raise RecordError(f"tenhou6: {self.where}: {give!r} is not a discard")
        self.replacement = True
        return True

    def _next_take(self, seat: int) -> Any:
        return self.takes[seat][self.ti[seat]] if self.ti[seat] < len(self.takes[seat]) else None

    def _next_give(self, seat: int) -> Any:
        return self.gives[seat][self.gi[seat]] if self.gi[seat] < len(self.gives[seat]) else None

    def _remove(self, seat: int, tile: int) -> None:
        try:
            self.hands[seat].remove(tile)
        except ValueError:
            raise RecordError(f"tenhou6: {self.where}: seat {seat} does not hold "
                              f"{T.tile_name(tile)}") from None

    def _discard(self, seat: int, code: int) -> int:
        tsumogiri = code == TSUMOGIRI
        if tsumogiri:
            tile = self.last_draw[seat]
            if tile is None:
                raise RecordError(f"tenhou6: {self.where}: seat {seat} tsumogiri without a draw")
        else:
            tile = _tile(code, self.where)
        self._remove(seat, tile)
        self.last_draw[seat] = None
        self.out.append(ev.TileDiscarded(seat, tile, tsumogiri))
        return tile

    def _accept_riichi(self) -> None:
        """The declaring discard passed (nobody won on it): the stick is paid."""
        seat = self.riichi_waiting
        if seat is None:
            return
        self.riichi_waiting = None
        if self._hand_over_after_discard():
            return
        self.scores[seat] -= 1000
        self.sticks += 1
        self.out.append(ev.RiichiAccepted(seat, tuple(self.scores)))

    def _hand_over_after_discard(self) -> bool:
        """True when nobody takes anything more: the discard was won on (or ended the hand)."""
        return all(self._next_take(s) is None for s in range(4)) and self._ron_result()

    def _ron_result(self) -> bool:
        return bool(self.result) and self.result[0] == "和了" and any(
            isinstance(r, list) and len(r) >= 2 and r[0] != r[1] for r in self.result[2::2])

    def _caller(self, discarder: int, tile: int) -> int | None:
        for step in (1, 2, 3):  # pon / kan by anyone first, then chi by the next seat
            s = (discarder + step) % 4
            take = self._next_take(s)
            if isinstance(take, str):
                letter, pos, tiles = _parse_call(take, self.where)
                if letter in "pm" and self._source(letter, pos, s) == discarder \
                        and tiles[pos] == tile:
                    return s
        s = (discarder + 1) % 4
        take = self._next_take(s)
        if isinstance(take, str) and take.startswith("c"):
            _, _, tiles = _parse_call(take, self.where)
            if tiles[0] == tile:
                return s
        return None

    @staticmethod
    def _source(letter: str, pos: int, seat: int) -> int:
        rel = (_SOURCE_KAN if letter == "m" else _SOURCE_PON).get(pos)
        return (seat + rel) % 4 if rel is not None else -1

    def _call(self, seat: int, discarder: int, tile: int) -> tuple[int, bool, bool]:
        take = self.takes[seat][self.ti[seat]]
        self.ti[seat] += 1
        letter, pos, tiles = _parse_call(take, self.where)
        own = [t for i, t in enumerate(tiles) if i != pos]
        for t in own:
            self._remove(seat, t)
        kind = {"c": "chi", "p": "pon", "m": "open_kan"}[letter]
        self.out.append(ev.MeldCalled(seat, kind, canonical(tiles), tile, discarder))
        if kind == "open_kan":
            give = self._next_give(seat)
            if give not in (0, "0"):
                raise RecordError(f"tenhou6: {self.where}: open kan not followed by 0")
            self.gi[seat] += 1
            self.dora_pending += 1
            return seat, True, True
        return seat, False, False

    def _reveal_dora(self) -> None:
        if self.dora_shown < len(self.dora):
            self.out.append(ev.DoraRevealed(self.dora[self.dora_shown]))
            self.dora_shown += 1

    def _flush_dora(self) -> None:
        while self.dora_pending:
            self.dora_pending -= 1
            self._reveal_dora()

    # the result --------------------------------------------------------------------

    def _finish(self, seat: int, last: tuple[int, int, str] | None) -> None:
        for s in range(4):
            if self._next_take(s) is not None or self._next_give(s) is not None:
                raise RecordError(f"tenhou6: {self.where}: seat {s}'s tiles do not fit "
                                  "one order of play")
        res = self.result
        if res == [] and self.last_hand:
            return  # unfinished: the moves up to the cut, no result
        if not isinstance(res, list) or not res or not isinstance(res[0], str):
            raise RecordError(f"tenhou6: {self.where}: bad result {res!r}")
        word = res[0]
        if word == "和了":
            while self.dora_shown < len(self.dora):
                self._reveal_dora()
            for i in range(1, len(res) - 1, 2):
                self._win(res[i], res[i + 1], last)
            return
        reason = _RESULT_DRAWS.get(word, word)
        deltas = tuple(int(d) for d in res[1]) if len(res) > 1 else ()
        self._flush_dora()
        tenpai: tuple[int, ...] = ()
        if reason == "exhaustive":
            tenpai = tuple(s for s in range(4) if len(self.hands[s]) % 3 == 1
                           and shanten(T.counts34(self.hands[s])) == 0)
        self.out.append(ev.RoundDrawn(reason, deltas, tenpai))
        self.scores = [a + b for a, b in zip(self.scores, deltas or (0,) * 4, strict=True)]

    def _win(self, deltas: Any, info: Any, last: tuple[int, int, str] | None) -> None:
        if not isinstance(info, list) or len(info) < 4:
            raise RecordError(f"tenhou6: {self.where}: bad win entry {info!r}")
        who, frm, pao = int(info[0]), int(info[1]), int(info[2])
        yaku = tuple(str(y) for y in info[4:])
        if who == frm:
            win_tile = self.last_draw[who]
            if win_tile is None:
                raise RecordError(f"tenhou6: {self.where}: tsumo by {who} without a draw")
            hand = list(self.hands[who])
            from_seat = None
        else:
            if last is None or last[0] != frm:
                raise RecordError(f"tenhou6: {self.where}: ron by {who} but seat {frm} "
                                  "played nothing to win on")
            win_tile = last[1]
            hand = [*self.hands[who], win_tile]
            from_seat = frm
        deltas_t = tuple(int(d) for d in deltas)
        self.out.append(ev.RoundWon(
            winner=who, from_seat=from_seat, hand=canonical(hand), win_tile=win_tile,
            value=yaku_value(yaku), deltas=deltas_t, yaku=yaku,
            ura_dora_indicators=tuple(self.ura), pao_seat=None if pao == who else pao,
            detail=str(info[3])))
        self.scores = [a + b for a, b in zip(self.scores, deltas_t, strict=True)]


def yaku_value(yaku: tuple[str, ...]) -> int:
    """Total han of Tenhou's yaku strings; a yakuman counts 13."""
    total = 0
    for y in yaku:
        m = _HAN_RE.search(y)
        if m:
            total += int(m.group(1))
        elif y.endswith("(役満)"):
            total += 13
    return total


def _import_hand(data: list[Any], out: list[Any], where: str, last: bool,
                 damaged: dict[int, str]) -> list[int] | None:
    """The hand's events added to ``out``, and the scores it leaves. A hand that cannot be
    read (a bad tile code, a field of the wrong type or out of range, tiles that fit no
    order of play) is left out alone: a start that stands for it (:func:`_damaged_start`)
    is added, ``damaged`` says why at its index, and None is returned (its end's scores are
    not known). One bad tile code refused the whole file, every other hand lost."""
    try:
        hand = _Hand(data, where, [], last)
        hand.play()
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        why = str(exc).removeprefix("tenhou6: ") if isinstance(exc, RecordError) \
            else f"{where}: malformed ({type(exc).__name__}: {exc})"
        damaged[len(out)] = why[:300]
        out.append(_damaged_start(data))
        return None
    out.extend(hand.out)
    return hand.scores


def _damaged_start(data: Any) -> ev.RoundStarted:
    """The start of a hand that cannot be read: its round, repeats, deposits and scores
    where the entry holds them as numbers in range (its round is named by them), else
    unknown (None, no scores); no tiles."""
    head = data[0] if isinstance(data, list) and data else None
    kyoku, honba, sticks = (head + [None] * 3)[:3] if isinstance(head, list) else (None,) * 3
    if not all(type(x) is int and 0 <= x <= top
               for x, top in ((kyoku, 15), (honba, 999), (sticks, 999))):
        kyoku = honba = sticks = None
    scores = data[1] if isinstance(data, list) and len(data) > 1 else None
    if not (isinstance(scores, list) and len(scores) == 4
            and all(type(x) is int and -2**31 < x < 2**31 for x in scores)):
        scores = []
    unknown: Any = None
    return ev.RoundStarted(
        round_wind=unknown if kyoku is None else kyoku // 4,
        dealer=unknown if kyoku is None else kyoku % 4,
        honba=unknown if honba is None else honba, sticks=unknown if sticks is None else sticks,
        scores=tuple(scores), round_number=unknown if kyoku is None else kyoku % 4)


# --------------------------------------------------------------------------- export


def dumps(record: GameRecord) -> str:
    """The record as tenhou.net/6 JSON, in the layout it came in (one object, or one per line)."""
    if record.variant != VARIANT:
        raise RecordError(f"tenhou6 export is for riichi games, not {record.variant}")
    if record.meta.get("players", 4) != 4:
        raise RecordError("tenhou6 export: three-player (sanma) games are not supported")
    meta = dict(record.meta) if record.source == "tenhou6" else {}
    lines = bool(meta.pop("lines", False))
    per_line = meta.pop("hands_per_line", None)
    meta.pop("cut", None)  # the reader's note, not one of the file's fields
    head = {k: v for k, v in meta.items()}
    if record.source != "tenhou6":
        head["title"] = ["", ""]
        head["rule"] = {"disp": "", "aka": 1}
        end = record.events[-1] if record.events else None
        if isinstance(end, ev.GameEnded) and len(end.scores) == 4 and not end.abandoned:
            head["sc"] = _sc(list(end.scores))
    head["name"] = list(record.names)
    logs = []
    for h in record.hands():  # a hand at a time, a long export given up between two
        progress.check()
        logs.append(_export_hand(h))
    if not lines:
        return json.dumps({**_ordered(head), "log": logs}, ensure_ascii=False,
                          separators=(",", ":"))
    chunks: list[list[Any]] = []
    sizes = per_line if per_line and sum(per_line) == len(logs) else [1] * len(logs)
    i = 0
    for n in sizes:
        chunks.append(logs[i:i + n])
        i += n
    return "\n".join(json.dumps({**_ordered(head), "log": c}, ensure_ascii=False,
                                separators=(",", ":")) for c in chunks)


def _sc(scores: list[int]) -> list[float]:
    """Tenhou's ``sc``: each seat's score and game points (ties ranked by seat order)."""
    points = game_points(scores, placement(scores))
    return [x for s in range(4) for x in (scores[s], points[s])]


def _tenhou_words(e: ev.RoundWon, start: ev.RoundStarted,
                  honba: int) -> tuple[list[str], str]:
    """A win's yaku and score line as Tenhou writes them (``honba``: those it was paid). Our
    table and the mjai importer hold the ``mahjong`` library's ("Riichi(1)", "40符 mangan"),
    which Tenhou's viewer cannot show and our importer reads as 0 han; Tenhou's own are kept
    as they are."""
    if not e.yaku or any(y.endswith(("飜)", "(役満)")) for y in e.yaku):
        return list(e.yaku), e.detail
    riichi = any(y.startswith(("Riichi(", "Double Riichi(")) for y in e.yaku)
    attrs = yaku_attrs(e.yaku, riichi)
    yakuman = ints(attrs.get("yakuman"))
    yaku, han = yaku_items(ints(attrs.get("yaku")), yakuman)
    text = score_text(fu_of(e.detail), han, hand_points(e, honba), limit_class(e.detail),
                      e.from_seat is None, e.winner == start.dealer, len(yakuman))
    return list(yaku), text


def _ordered(head: dict[str, Any]) -> dict[str, Any]:
    order = ["title", "name", "rule"]
    return {**{k: head[k] for k in order if k in head},
            **{k: v for k, v in head.items() if k not in order}}


def _code(tile: int) -> int:
    return T.to_tenhou6(tile)


def _export_hand(events: list[Any]) -> list[Any]:
    """One hand's entry. Starting hands are written sorted as Tenhou writes them (by kind, a
    red five after the plain ones)."""
    start: ev.RoundStarted = events[0]
    if len(start.hands) != 4:
        raise RecordError("tenhou6 export needs all four starting hands (a full record)")
    kyoku = start.round_wind * 4 + start.round_number
    dora = [_code(t) for t in start.dora_indicators]
    takes: list[list[Any]] = [[], [], [], []]
    gives: list[list[Any]] = [[], [], [], []]
    last_draw: list[int | None] = [None] * 4
    pons: dict[tuple[int, int], str] = {}
    riichi_next = [False] * 4
    result: list[Any] = []
    ura: list[int] = []
    for e in events[1:]:
        if isinstance(e, ev.TileDrawn):
            if e.tile is None:
                raise RecordError("tenhou6 export needs every draw's tile (a full record)")
            takes[e.seat].append(_code(e.tile))
            last_draw[e.seat] = e.tile
        elif isinstance(e, ev.RiichiDeclared):
            riichi_next[e.seat] = True
        elif isinstance(e, ev.TileDiscarded):
            code = TSUMOGIRI if e.tsumogiri else _code(e.tile)
            if riichi_next[e.seat]:
                gives[e.seat].append(f"r{code}")
                riichi_next[e.seat] = False
            else:
                gives[e.seat].append(code)
        elif isinstance(e, ev.MeldCalled):
            _export_call(e, takes, gives, pons)
        elif isinstance(e, ev.DoraRevealed):
            dora.append(_code(e.indicator))
        elif isinstance(e, ev.RoundWon):
            if not result:
                result = ["和了"]
            if e.ura_dora_indicators and not ura:
                ura = [_code(t) for t in e.ura_dora_indicators]
            frm = e.winner if e.from_seat is None else e.from_seat
            pao = e.winner if e.pao_seat is None else e.pao_seat
            # a double ron's second winner was paid no honba (上家取り, as the referee pays)
            yaku, detail = _tenhou_words(e, start, start.honba if len(result) == 1 else 0)
            result += [list(e.deltas), [e.winner, frm, pao, detail, *yaku]]
        elif isinstance(e, ev.RoundDrawn):
            result = [_DRAW_WORDS.get(e.reason, e.reason)]
            if e.reason == "exhaustive" and not e.deltas:  # read from Tenhou's 全員 words
                result = [_ALL_READY if len(e.tenpai) == 4 else _NONE_READY]
            if e.deltas:
                result.append(list(e.deltas))
    out: list[Any] = [[kyoku, start.honba, start.sticks], list(start.scores), dora, ura]
    for s in range(4):
        haipai = sorted(start.hands[s], key=lambda t: (T.kind(t), T.is_red(t)))
        out += [[_code(t) for t in haipai], takes[s], gives[s]]
    out.append(result)
    return out


def _export_call(e: ev.MeldCalled, takes: list[list[Any]], gives: list[list[Any]],
                 pons: dict[tuple[int, int], str]) -> None:
    tiles = list(canonical(e.tiles))
    if e.kind == "closed_kan":
        gives[e.seat].append("".join(str(_code(t)) for t in tiles[:3]) + f"a{_code(tiles[3])}")
        return
    if e.kind == "added_kan":
        added = e.called if e.called is not None else tiles[-1]
        pon = pons.get((e.seat, T.kind(added)))
        if pon is None:
            raise RecordError("tenhou6 export: an added kan without its pon")
        gives[e.seat].append(re.sub(r"p(\d\d)", lambda m: f"k{_code(added)}{m.group(1)}", pon))
        return
    if e.called is None or e.from_seat is None:
        raise RecordError(f"tenhou6 export: a {e.kind} without its called tile")
    own = list(canonical(own_tiles(e)))
    called = f"{_code(e.called)}"
    rel = (e.from_seat - e.seat) % 4
    if e.kind == "chi":
        text = "c" + called + "".join(str(_code(t)) for t in own)
    else:
        letter, positions = ("p", _POS_PON) if e.kind == "pon" else ("m", _POS_KAN)
        codes = [str(_code(t)) for t in own]
        codes.insert(positions[rel], letter + called)
        text = "".join(codes)
        if e.kind == "pon":
            pons[(e.seat, T.kind(e.called))] = text
    takes[e.seat].append(text)
    if e.kind == "open_kan":
        gives[e.seat].append(0)
