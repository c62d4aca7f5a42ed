"""mjai JSONL game logs (Mortal, mjai.app, akochan tools) to events and back.

One JSON event per line. mjai does not write a win's value or hand: the importer keeps every
seat's tiles, so a ``hora`` becomes a RoundWon with the winner's hand, the winning tile, and the
han that our riichi rules score it at (from that seat's own table state). A meld's tiles are
put in one order (``canonical``), as every other reader and the live mjai codec put them: our
rules read a chi from its sorted tiles, and a ``chi`` of ``2m`` with ``consumed`` ``3m 4m`` kept
in the file's order was no sequence to them (an open hand's only yaku lost, the win valued 0).
An export writes ``consumed`` in that order.

Scores, as the logs of Mortal and mjai.app keep them: ``start_kyoku`` carries every seat's
score; ``reach_accepted`` takes the 1000-point deposit (the original server also writes that
event's ``deltas`` and ``scores``, which win where present); ``hora`` and ``ryukyoku`` deltas
leave the deposit out, the winner's share of the deposits on the table in. An exhaustive
``ryukyoku`` names its tenpai seats as the original server wrote them: ``tenpais`` (a flag per
seat) and ``tehais`` (those seats' hands, the others ``?``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from brain.rules import rules_for
from brain.shanten import shanten
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import load_json
from protocols.mjai import (
    DRAW_REASONS,
    RESULT_NOT_SENT,
    declared_tenpai,
    draw_reason,
    round_drawn,
)
from replay import progress
from replay.log import EventFrame, RxFrame
from replay.record import GameRecord, RecordError, canonical, own_tiles, view_event

if TYPE_CHECKING:
    from brain.rules.base import Rules, WinScore

VARIANT: Final = "riichi"  # the one variant this format holds: where the name enters
WINDS = ("E", "S", "W", "N")
_REASON_WORDS = {v: k for k, v in DRAW_REASONS.items()}
_CALL_KINDS = {"chi": "chi", "pon": "pon", "daiminkan": "open_kan"}


def _tile(text: Any, where: str) -> Any:
    """The tile ``text`` names (None: ``?``, hidden). A name that is no tile (``0x``, a
    number) is kept as its text, never a tile: the replayer's ``check_event`` refuses the
    event, so its hand alone is left out, named with its line. The reader refused the whole
    file there, every other hand of the game lost for one character."""
    try:
        return T.from_mjai(str(text))
    except T.TileError:
        return str(text)


def _known(text: Any, where: str) -> Any:
    """A tile the event must show: a hidden ``?`` is kept as its text too (no tile)."""
    tile = _tile(text, where)
    return "?" if tile is None else tile


def _meld(tiles: Any) -> tuple[Any, ...]:
    """A meld's tiles in :func:`canonical` order; as read where one is no tile (no order
    sorts it: its hand is left out as damaged)."""
    tiles = tuple(tiles)
    return canonical(tiles) if all(T.is_valid(t) for t in tiles) else tiles


OWN_DETAIL = "valued by mjbot's rules (mjai sends no value)"


def value_own_win(rules: Rules, state: TableState, won: ev.RoundWon, before: Any) \
        -> tuple[WinScore | None, tuple[int, ...], str]:
    """Our riichi rules' value of the seat's own win ``won`` (a ``hora`` that carried no
    ``fan``) on ``state``, its table before the win (``before``: the table event before it;
    an added kan there is a robbed kan): the score (with the ``hora``'s ura dora), the
    winner's hand, and why there is no score where there is none. As the mjai client logs
    it and replay shows it, never an exception."""
    from_seat = won.from_seat
    hand = tuple(state.hand) if from_seat is None else (*state.hand, won.win_tile)
    robbing = isinstance(before, ev.MeldCalled) and before.kind == "added_kan" \
        and from_seat is not None
    try:
        counts = T.counts34(hand)
        if sum(counts) % 3 != 2 or not rules.is_complete(counts):
            return None, hand, "not a complete hand by our table"
        ctx = rules.context(state, won.win_tile, from_seat, robbing_kan=robbing)
        score = rules.score(dataclasses.replace(
            ctx, ura_dora_indicators=tuple(won.ura_dora_indicators)))
    except (ValueError, KeyError, IndexError, StateError) as exc:
        return None, hand, str(exc)
    return (score, hand, "") if score is not None else (None, hand, "no yaku by our rules")


def score_detail(score: WinScore) -> str:
    """``30符 mangan``: as our own table writes a riichi win's detail."""
    return " ".join(p for p in (f"{score.fu}符" if score.fu else "", score.limit or "") if p)


def value_own_wins(events: list[Any]) -> list[Any]:
    """The events of an mjai client's own game log, each of its own wins that mjai sent no
    value for valued by our rules (marked so in ``detail``); a log written before the client
    noted its values reads the same way."""
    rules = rules_for(VARIANT)
    state: TableState | None = None
    before: Any = None
    out: list[Any] = []
    for e in events:
        if isinstance(e, ev.GameStarted):
            state = TableState(VARIANT, e.seat)
        if isinstance(e, ev.RoundWon) and state is not None and e.winner == state.seat \
                and e.value == 0:
            score, hand, _ = value_own_win(rules, state, e, before)
            if score is not None:
                detail = " ".join(p for p in (score_detail(score), OWN_DETAIL) if p)
                e = dataclasses.replace(
                    e, hand=hand, value=score.value,
                    yaku=tuple(f"{name}({han})" for name, han in score.items), detail=detail)
        if state is not None:
            try:
                state.apply(e)
            except (StateError, ValueError):
                state = None  # the view no longer adds up: later wins keep value 0
        if not isinstance(e, ev.PlatformNotice):
            before = e
        out.append(e)
    return out


def draws_read_again(frames: Sequence[Any]) -> list[Any]:
    """The frames of an mjai client's own game log, each draw as the ``ryukyoku`` it came
    from reads today. A log written before 7117cba (mjbot of 28 Nov 2026 and older) holds its
    draws as that codec made them, the server's word for the reason (``fanpai``,
    ``kyushukyuhai``) and no tenpai seat: replay showed 'DRAW exhaustive tenpai []' while the
    deltas paid the ready seats. The message is in the log's raw frame before the draw (the
    k-th draw after it from the k-th ``ryukyoku`` in it: mjai.app sends a batch); a draw the
    codec did read as today, or one with no ``ryukyoku`` to read, is kept as logged."""
    out: list[Any] = []
    pending: list[dict[str, Any]] = []
    for f in frames:
        if isinstance(f, RxFrame):
            pending = _messages(f.raw, "ryukyoku")
        elif isinstance(f, EventFrame) and isinstance(f.event, ev.RoundDrawn) and pending:
            f = EventFrame(f.t, _draw_as_read_now(f.event, pending.pop(0)))
        out.append(f)
    return out


def results_not_sent(frames: Sequence[Any]) -> list[Any]:
    """The frames of an mjai client's own game log with the end of each hand whose result
    never came told, as today's codec tells it (:data:`RESULT_NOT_SENT`, after the
    ``end_kyoku`` or, where none came, before the next hand's start). mjai.app's harness sends
    no ``hora`` or ``ryukyoku``: a log written before 4ece972 (mjbot of 28 Nov 2026 and
    older) holds no such notice, and every hand read as 'unfinished (the log ends inside
    this hand)'. A log that tells any is as today's codec wrote it, and is kept."""
    if any(isinstance(f, EventFrame) and f.event == ev.PlatformNotice(RESULT_NOT_SENT)
           for f in frames):
        return list(frames)
    out: list[Any] = []
    in_hand = told = False  # a hand started and got no result; its end_kyoku came

    def tell(t: float) -> None:
        nonlocal in_hand, told
        out.append(EventFrame(t, ev.PlatformNotice(RESULT_NOT_SENT)))
        in_hand = told = False

    for f in frames:
        event = f.event if isinstance(f, EventFrame) else None
        if told and not (event is not None and not isinstance(event, ev.RoundStarted)):
            if in_hand:  # no hora or ryukyoku came in the end_kyoku's batch either
                tell(f.t)  # after the events of the end_kyoku's frame
            told = False
        if isinstance(event, ev.RoundStarted):
            if in_hand:
                tell(f.t)
            in_hand = True
        elif isinstance(event, ev.RoundWon | ev.RoundDrawn):
            in_hand = False
        elif isinstance(f, RxFrame) and in_hand:
            # the codec ends the hand at the batch's first hora, ryukyoku or end_kyoku: a
            # log cut before the events of a hora's batch holds no result, yet it was sent
            ends = [m["type"] for m in _messages(f.raw, "hora", "ryukyoku", "end_kyoku")]
            told = ends[:1] == ["end_kyoku"]
        out.append(f)
    if told and in_hand:
        tell(out[-1].t)
    return out


def _messages(raw: str | bytes, *kinds: str) -> list[dict[str, Any]]:
    """The messages of a type in ``kinds`` in one raw inbound frame (an object, or
    mjai.app's list), in order."""
    try:
        data = load_json(raw)  # JSON nested too deeply is a decode error, as in the game
    except (ValueError, TypeError):
        return []
    items = data if isinstance(data, list) else [data]
    return [m for m in items if isinstance(m, dict) and m.get("type") in kinds]


def _draw_as_read_now(e: ev.RoundDrawn, m: dict[str, Any]) -> ev.RoundDrawn:
    """``e`` as today's codec reads ``m``, where ``e`` is what the older codec made of it
    (the raw reason, or "exhaustive" for none, and no tenpai); any other ``e`` as it is."""
    if e.tenpai or e.reason != str(m.get("reason", "exhaustive")):
        return e
    now = round_drawn(m)
    return dataclasses.replace(e, reason=now.reason, tenpai=now.tenpai)


def loads(text: str) -> GameRecord:
    """A game from mjai JSONL text (blank lines skipped). A file cut inside its last line (a
    log whose writer stopped mid-line) reads up to its last whole line, noted as cut, as
    our msgpack logs read up to their last whole frame; a game's log (a start_game) cut
    between two lines is noted as cut too, since no end_game closes it."""
    importer = _Importer()
    lines = text.splitlines()
    at: list[int] = []  # the line of each event
    cut = ""
    ask = progress.hook()  # a long file's read given up between hands (replay/progress.py)
    for n, line in enumerate(lines, 1):
        if ask is not None and not n % progress.EVERY:
            ask()
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines) and n > 1 and not text.endswith("\n") \
                    and line.lstrip().startswith("{"):  # the start of an event, no garbage
                cut = f"line {n} ends early ({exc}): the {n - 1} lines before it are read"
                break
            raise RecordError(f"mjai: line {n} is not JSON ({exc})") from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise RecordError(f"mjai: line {n} is not an event object")
        try:
            importer.feed(msg, f"line {n}")
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"mjai: line {n} ({msg.get('type')}): {exc!r}") from None
        at += [n] * (len(importer.out) - len(at))
    record = importer.finish()
    record.lines = at
    if cut:
        record.meta["cut"] = cut
    elif importer.opened and not importer.ended:  # cut at a line's end: no end_game follows
        last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
        record.meta["cut"] = (f"no end_game: the log ends at line {last}, the game not over "
                              "(the lines up to it are read)")
    return record


class _Importer:
    def __init__(self) -> None:
        self.out: list[Any] = []
        self.meta: dict[str, Any] = {}
        self.states: list[TableState] = []
        self.rules = rules_for(VARIANT)
        self.scores = [25000] * 4
        self.last: ev.TileDrawn | ev.TileDiscarded | ev.MeldCalled | None = None
        self.kan_by: int | None = None
        self.ended = False
        self.opened = False  # a start_game line: a whole game's log, which end_game closes
        self.lost: set[int] = set()  # seats whose table dropped out: each hand starts anew
        self.started: ev.GameStarted | None = None  # the game's start, once read

    def emit(self, event: Any) -> None:
        """Record an event and show it to each seat's table state (a seat whose tiles the log
        hides drops out: its wins then carry no computed value)."""
        self.out.append(event)
        for s in list(self.states):
            try:
                if (isinstance(event, ev.RoundStarted) and not event.hands
                        and s.seat != int(self.meta.get("id", 0))):
                    raise StateError("hand not in the log")
                s.apply(view_event(event, s.seat, VARIANT))
            except (StateError, LookupError, TypeError, ValueError):  # or a name that is no tile
                self.states.remove(s)
                self.lost.add(s.seat)

    def feed(self, msg: dict[str, Any], where: str) -> None:
        kind = msg["type"]
        self.opened = self.opened or kind == "start_game"
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            if kind == "none":
                return
            raise RecordError(f"mjai: unknown event type {kind!r} in {where}")
        handler(msg, where)

    def _on_start_game(self, m: dict[str, Any], where: str) -> None:
        names = tuple(str(n) for n in m.get("names", ["", "", "", ""]))
        seat = int(m.get("id", 0))
        self.meta = {k: v for k, v in m.items() if k not in ("type", "names")}
        self.states = [TableState(VARIANT, s) for s in range(4)]
        self.started = ev.GameStarted(VARIANT, seat, names, {"red_fives": True})
        self.lost.clear()
        self.emit(self.started)

    def _on_start_kyoku(self, m: dict[str, Any], where: str) -> None:
        if self.started is None:  # a log of hands alone (no start_game): a game of them
            self._on_start_game({"type": "start_game"}, where)
        tehais = m["tehais"]
        hidden = any(t == "?" for h in tehais for t in h)
        hands = () if hidden else tuple(tuple(_known(t, where) for t in h) for h in tehais)
        self.scores = [int(x) for x in m["scores"]]
        own = int(self.meta.get("id", 0))
        if hidden:  # one seat's view (a bot's log, a client's export): shown from that seat
            self.meta["view_seat"] = own
        self._new_tables()
        self.emit(ev.RoundStarted(
            round_wind=WINDS.index(m["bakaze"]), dealer=int(m["oya"]), honba=int(m["honba"]),
            sticks=int(m["kyotaku"]), scores=tuple(self.scores),
            dora_indicators=(_known(m["dora_marker"], where),),
            hand=() if hands else tuple(_known(t, where) for t in tehais[own]),
            round_number=int(m["kyoku"]) - 1, hands=hands))
        self.kan_by = None

    def _new_tables(self) -> None:
        """A new table for each seat that dropped out in the hands before (a damaged hand: a
        name that is no tile, a discard the hand does not hold): that hand is left out, and
        the wins of the hands after it were left unvalued (value 0) for the rest of the
        game. A seat whose tiles the log hides drops out again at this start."""
        assert self.started is not None  # a start_kyoku reads a start_game first
        for seat in sorted(self.lost):
            state = TableState(VARIANT, seat)
            state.apply(view_event(self.started, seat, VARIANT))
            self.states.append(state)
        self.states.sort(key=lambda s: s.seat)
        self.lost.clear()

    def _on_tsumo(self, m: dict[str, Any], where: str) -> None:
        actor = int(m["actor"])
        e = ev.TileDrawn(actor, _tile(m["pai"], where), self.kan_by == actor)
        self.kan_by = None
        self.last = e
        self.emit(e)

    def _on_dahai(self, m: dict[str, Any], where: str) -> None:
        e = ev.TileDiscarded(int(m["actor"]), _known(m["pai"], where), bool(m.get("tsumogiri")))
        self.last = e
        self.emit(e)

    def _call(self, m: dict[str, Any], where: str) -> None:
        consumed = tuple(_known(t, where) for t in m["consumed"])
        pai = _known(m["pai"], where)
        e = ev.MeldCalled(int(m["actor"]), _CALL_KINDS[m["type"]], _meld((*consumed, pai)),
                          pai, int(m["target"]))
        if e.kind == "open_kan":
            self.kan_by = e.seat
        self.emit(e)

    _on_chi = _on_pon = _on_daiminkan = _call

    def _on_kakan(self, m: dict[str, Any], where: str) -> None:
        consumed = tuple(_known(t, where) for t in m["consumed"])
        pai = _known(m["pai"], where)
        e = ev.MeldCalled(int(m["actor"]), "added_kan", _meld((*consumed, pai)), pai)
        self.kan_by = e.seat
        self.last = e
        self.emit(e)

    def _on_ankan(self, m: dict[str, Any], where: str) -> None:
        e = ev.MeldCalled(int(m["actor"]), "closed_kan",
                          _meld(_known(t, where) for t in m["consumed"]))
        self.kan_by = e.seat
        self.emit(e)

    def _on_dora(self, m: dict[str, Any], where: str) -> None:
        self.emit(ev.DoraRevealed(_known(m["dora_marker"], where)))

    def _on_reach(self, m: dict[str, Any], where: str) -> None:
        self.emit(ev.RiichiDeclared(int(m["actor"])))

    def _on_reach_accepted(self, m: dict[str, Any], where: str) -> None:
        actor = int(m["actor"])
        if "deltas" in m:
            self._add(m["deltas"])
        else:
            self.scores[actor] -= 1000  # the deposit: no hora or ryukyoku delta holds it
        self._logged_scores(m)
        self.emit(ev.RiichiAccepted(actor, tuple(self.scores)))

    def _add(self, deltas: Any) -> None:
        if deltas:
            self.scores = [a + int(b) for a, b in zip(self.scores, deltas, strict=True)]

    def _logged_scores(self, m: dict[str, Any]) -> None:
        """An event's own ``scores`` (the original server's) over what the deltas add up to."""
        if "scores" in m:
            self.scores = [int(x) for x in m["scores"]]

    def _on_hora(self, m: dict[str, Any], where: str) -> None:
        actor, target = int(m["actor"]), int(m.get("target", m["actor"]))
        state = next((s for s in self.states if s.seat == actor), None)
        if state is None:
            deltas = tuple(int(d) for d in m.get("deltas", (0, 0, 0, 0)))
            tile = _known(m["pai"], where) if "pai" in m else self._last_played_by(target)
            self.emit(ev.RoundWon(actor, None if target == actor else target, (),
                                  tile if tile is not None else 0, 0, deltas))
            self._add(deltas)
            self._logged_scores(m)
            return
        from_seat = None if target == actor else target
        win_tile = state.last_draw if from_seat is None else self._last_played_by(target)
        if win_tile is None:
            raise RecordError(f"mjai: hora in {where} with no tile to win on")
        hand = list(state.hand) if from_seat is None else [*state.hand, win_tile]
        if "pai" in m:
            win_tile = _known(m["pai"], where)
        deltas = tuple(int(d) for d in m.get("deltas", (0, 0, 0, 0)))
        ura = tuple(_known(t, where) for t in m.get("ura_markers", ()))
        score = None
        counts = T.counts34(hand) if all(T.is_valid(t) for t in (*hand, win_tile, *ura)) \
            else []  # a name that is no tile: its hand is left out as damaged
        if sum(counts) % 3 == 2 and self.rules.is_complete(counts):
            ctx = self.rules.context(state, win_tile, from_seat,
                                     robbing_kan=isinstance(self.last, ev.MeldCalled))
            score = self.rules.score(dataclasses.replace(ctx, ura_dora_indicators=ura))
        value = score.value if score is not None else 0
        # as our own table writes a win: "Riichi(1)" per item, "40符 mangan"
        yaku = tuple(f"{name}({han})" for name, han in score.items) if score is not None else ()
        parts = [f"{score.fu}符" if score.fu else "", score.limit or ""] if score else []
        detail = " ".join(p for p in parts if p)
        self.emit(ev.RoundWon(actor, from_seat, tuple(hand), win_tile, value, deltas,
                              yaku, ura, detail=detail))
        self._add(deltas)
        self._logged_scores(m)

    def _last_played_by(self, seat: int) -> int | None:
        last = self.last
        if isinstance(last, ev.TileDiscarded) and last.seat == seat:
            return last.tile
        if isinstance(last, ev.MeldCalled) and last.seat == seat and last.kind == "added_kan":
            return last.called
        return None

    def _on_ryukyoku(self, m: dict[str, Any], where: str) -> None:
        deltas = tuple(int(d) for d in m["deltas"]) if "deltas" in m else ()
        reason = draw_reason(m)
        tenpai = self._tenpai(m) if reason == "exhaustive" else ()
        self.emit(ev.RoundDrawn(reason, deltas, tenpai))
        self._add(deltas)
        self._logged_scores(m)

    def _tenpai(self, m: dict[str, Any]) -> tuple[int, ...]:
        """The tenpai seats: the log's ``tenpais``, else the seats whose ``tehais`` it shows,
        else (Mortal's logs write neither) those whose hands we hold and find ready."""
        declared = declared_tenpai(m)
        if declared is not None:
            return declared
        if len(self.states) < 4:
            return ()
        return tuple(s.seat for s in self.states
                     if len(s.hand) % 3 == 1 and shanten(T.counts34(s.hand)) == 0)

    def _on_end_kyoku(self, m: dict[str, Any], where: str) -> None:
        return

    def _on_end_game(self, m: dict[str, Any], where: str) -> None:
        scores = tuple(int(x) for x in m["scores"]) if "scores" in m else tuple(self.scores)
        self.emit(ev.GameEnded(scores))
        self.ended = True

    def finish(self) -> GameRecord:
        if self.started is None:
            raise RecordError("mjai: no start_game or start_kyoku in the log")
        return GameRecord(VARIANT, "mjai", self.out, self.meta)



# --------------------------------------------------------------------------- export


def _m(tile: int | None) -> str:
    return T.to_mjai(tile)


def dumps(record: GameRecord) -> str:
    """The record as mjai JSONL."""
    if record.variant != VARIANT:
        raise RecordError(f"mjai export is for riichi games, not {record.variant}")
    if record.meta.get("players", 4) != 4:
        raise RecordError("mjai export: three-player (sanma) games are not supported")
    lines: list[dict[str, Any]] = []
    in_hand = False
    table = _Table()
    # the file's own start_game fields; a cut note is the reader's, not the game's
    start = {k: v for k, v in record.meta.items() if k not in ("cut", "view_seat")}
    seat = 0
    for e in record.events:
        if isinstance(e, ev.GameStarted):
            seat = e.seat
        msg = export_event(e, start if record.source == "mjai" else {}, seat)
        if msg is not None and isinstance(e, ev.GameStarted) and "id" not in msg \
                and _one_seat_view(record):
            msg["id"] = seat  # whose hand the starts show, as an mjai server tells its bot
        if isinstance(e, ev.RoundStarted | ev.GameEnded) and in_hand:
            lines.append({"type": "end_kyoku"})
            in_hand = False
        if isinstance(e, ev.RoundStarted):
            in_hand = True
            progress.check()  # a long export given up between two hands
        if msg is not None and isinstance(e, ev.RoundDrawn) and "tenpais" in msg \
                and table.hands is not None:
            msg["tehais"] = [[_m(t) for t in sorted(h, key=T.sort_key)] if s in e.tenpai
                             else ["?"] * len(h) for s, h in enumerate(table.hands)]
        if msg is not None and isinstance(e, ev.GameEnded) and list(e.scores) != table.scores:
            msg["scores"] = list(e.scores)  # deposits left at the end, given to the top
        table.see(e)
        if msg is not None:
            lines.append(msg)
    if in_hand:
        lines.append({"type": "end_kyoku"})
    return "\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in lines)


def _one_seat_view(record: GameRecord) -> bool:
    """A record of one seat's view (a client's log or transcript): its starts show that
    seat's hand alone."""
    return any(isinstance(e, ev.RoundStarted) and len(e.hands) != 4 for e in record.events)


class _Table:
    """What an export needs beyond one event: the concealed hands (for a draw's ``tehais``;
    None where the record lacks a starting hand) and the scores the events add up to (an
    ``end_game`` states its own only where they differ)."""

    def __init__(self) -> None:
        self.hands: list[list[int]] | None = None
        self.scores: list[int] = [25000] * 4

    def see(self, e: Any) -> None:
        if isinstance(e, ev.RoundStarted):
            self.hands = [list(h) for h in e.hands] if len(e.hands) == 4 else None
            self.scores = list(e.scores)
        elif isinstance(e, ev.RiichiAccepted):
            self.scores[e.seat] -= 1000
        elif isinstance(e, ev.RoundWon | ev.RoundDrawn):
            self.scores = [a + b for a, b in zip(self.scores, e.deltas or (0,) * 4,
                                                 strict=False)]
        if self.hands is None:
            return
        if isinstance(e, ev.TileDrawn):
            if e.tile is None:
                self.hands = None
            else:
                self.hands[e.seat].append(e.tile)
        elif isinstance(e, ev.TileDiscarded):
            self._take(e.seat, [e.tile])
        elif isinstance(e, ev.MeldCalled):
            gone = own_tiles(e) if e.kind in ("chi", "pon", "open_kan", "closed_kan") \
                else [e.called if e.called is not None else e.tiles[-1]]
            self._take(e.seat, gone)

    def _take(self, seat: int, tiles: list[int]) -> None:
        """Tiles leave a hand: the exact tile, else one of its kind (a record that does not
        tell red fives apart)."""
        assert self.hands is not None
        hand = self.hands[seat]
        for t in tiles:
            same = t if t in hand else next((x for x in hand if T.kind(x) == T.kind(t)), None)
            if same is None:
                self.hands = None
                return
            hand.remove(same)


def export_event(e: Any, extra: dict[str, Any] | None = None,
                 seat: int = 0) -> dict[str, Any] | None:
    """One event as mjai writes it (None: mjai has no such event). ``extra``: fields for
    ``start_game``; ``seat``: whose tehai a start without every hand shows (the server side
    of mjai sends each bot its own, the others as ``?``)."""
    if isinstance(e, ev.GameStarted):
        return {"type": "start_game", "names": list(e.names), **(extra or {})}
    if isinstance(e, ev.RoundStarted):
        if len(e.hands) == 4:
            tehais = [[_m(t) for t in h] for h in e.hands]
        else:
            tehais = [[_m(t) for t in e.hand] if s == seat else ["?"] * 13 for s in range(4)]
        return {"type": "start_kyoku", "bakaze": WINDS[e.round_wind % 4],
                "dora_marker": _m(e.dora_indicators[0]) if e.dora_indicators else "?",
                "kyoku": e.round_number + 1, "honba": e.honba, "kyotaku": e.sticks,
                "oya": e.dealer, "scores": list(e.scores), "tehais": tehais}
    if isinstance(e, ev.TileDrawn):
        return {"type": "tsumo", "actor": e.seat, "pai": _m(e.tile)}
    if isinstance(e, ev.TileDiscarded):
        return {"type": "dahai", "actor": e.seat, "pai": _m(e.tile),
                "tsumogiri": bool(e.tsumogiri)}
    if isinstance(e, ev.MeldCalled):
        return _export_meld(e)
    if isinstance(e, ev.DoraRevealed):
        return {"type": "dora", "dora_marker": _m(e.indicator)}
    if isinstance(e, ev.RiichiDeclared):
        return {"type": "reach", "actor": e.seat}
    if isinstance(e, ev.RiichiAccepted):
        return {"type": "reach_accepted", "actor": e.seat}
    if isinstance(e, ev.RoundWon):
        target = e.winner if e.from_seat is None else e.from_seat
        msg: dict[str, Any] = {"type": "hora", "actor": e.winner, "target": target,
                               "deltas": list(e.deltas)}
        if e.ura_dora_indicators:
            msg["ura_markers"] = [_m(t) for t in e.ura_dora_indicators]
        return msg
    if isinstance(e, ev.RoundDrawn):
        msg = {"type": "ryukyoku"}
        if e.reason != "exhaustive":
            msg["reason"] = _REASON_WORDS.get(e.reason, e.reason)
        else:
            msg["tenpais"] = [s in e.tenpai for s in range(4)]
        if e.deltas:
            msg["deltas"] = list(e.deltas)
        return msg
    if isinstance(e, ev.GameEnded):
        return {"type": "end_game"}
    return None


def _export_meld(e: ev.MeldCalled) -> dict[str, Any]:
    tiles = list(e.tiles)
    if e.kind == "closed_kan":
        return {"type": "ankan", "actor": e.seat, "consumed": [_m(t) for t in tiles]}
    called = e.called if e.called is not None else tiles[-1]
    consumed = [_m(t) for t in own_tiles(e)]
    if e.kind == "added_kan":
        return {"type": "kakan", "actor": e.seat, "pai": _m(called), "consumed": consumed}
    if e.kind == "nuki":
        return {"type": "nukidora", "actor": e.seat, "pai": _m(called)}
    kind = {"chi": "chi", "pon": "pon", "open_kan": "daiminkan"}[e.kind]
    return {"type": kind, "actor": e.seat, "target": e.from_seat, "pai": _m(called),
            "consumed": consumed}
