"""An mjai bot at the local table (riichi), in mjai.app's form: one JSON array of the events
since its last answer per input line, one answer object per output line.

The seat's view goes out through the one mjai encoder we have (replay/formats/mjai_log.py's
``export_event``): its own tiles only, the others' draws as ``?``. A line is sent where the
bot may act (a draw of its own, a call of its own, a discard or an added kan it may claim)
and at the game's edges (``start_game``, ``end_kyoku``, ``end_game``, each its own line and
answered ``none``), as mjai.app does. A riichi is two answers, as in mjai: ``reach``, then,
after the seat echoes it, the ``dahai``.

The program is run as mjai.app runs a bot: the command, then the seat number (0..3) as its
last argument (``start_game``'s ``id`` says it too).

Time limit: mjai.app allows 2 s per answer (../shared/protocols/mjai.md); the first line
(``start_game``) gets the start-up allowance, since a program has to load before it answers.
"""

from __future__ import annotations

import json
from typing import Any

from adapter.local.external.process import SeatFault
from adapter.local.external.seat import ExternalSeat
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import load_json
from protocols.mjai import ANSWER_TYPES, check_answer
from replay.formats.mjai_log import export_event

ANSWER_LIMIT = 2.0
END_KYOKU = {"type": "end_kyoku"}


class MjaiSeat(ExternalSeat):
    platform = "mjai"
    seat_argument = True
    starts_with_the_game = True
    start_output = True  # its stdout carries what it prints as it starts (the TCP seat's not)
    first_line = False  # the next line sent is its run's first (see _exchange)

    def _start(self, event: Any) -> None:
        self.pending: list[dict[str, Any]] = []
        self.in_hand = False
        self.echoed_reach = False
        if isinstance(event, ev.GameStarted):
            self.names = list(event.names)
        self._launch()
        self.first_line = self.start_output  # start_game's answer may follow a banner
        self._message([{"type": "start_game", "names": self.names, "id": self.seat}],
                      self.limits.start)

    def _seen(self, event: Any) -> None:
        if isinstance(event, ev.GameStarted):
            return  # its start_game went out when the run started
        if isinstance(event, ev.RiichiDeclared) and event.seat == self.seat \
                and self.echoed_reach:
            self.echoed_reach = False  # the bot saw its reach when the seat echoed it
            return
        if isinstance(event, ev.TileDiscarded) and event.seat == self.seat:
            self.echoed_reach = False  # a reach the table did not play (its dahai was not)
        if isinstance(event, ev.RoundStarted | ev.GameEnded) and self.in_hand:
            self.in_hand = False
            self._edge(END_KYOKU)
        if isinstance(event, ev.GameEnded):
            self._edge({"type": "end_game", "scores": list(event.scores)})
            return
        if isinstance(event, ev.RoundStarted):
            self.in_hand = True
        message = export_event(event, seat=self.seat)
        if message is not None:
            self._out(message)

    def _ask(self, request: ev.DecisionRequest, legal: list[Any]) -> Any:
        answer = self._due()
        if answer["type"] != "reach":
            return self._action(answer, request)
        if request.kind != "turn" or answer.get("actor") != self.seat:
            raise SeatFault("illegal", f"reach on a {request.kind} request or for another "
                            "seat", json.dumps(answer))
        self.echoed_reach = True
        second = self._exchange([{"type": "reach", "actor": self.seat}],
                                self._answer_limit(), echo=True)
        if second["type"] != "dahai":
            raise SeatFault("illegal", f"{second['type']} after its own reach, where its "
                            "dahai goes", json.dumps(second))
        return ev.Discard(self._action(second, request).tile, riichi=True)

    # ------------------------------------------------------------------ the wire

    def _out(self, message: dict[str, Any]) -> None:
        """An event for the bot: mjai.app sends it with the next line."""
        self.pending.append(message)

    def _tile_text(self, tile: T.Tile) -> str:
        return T.to_mjai(tile)

    def _answer_limit(self) -> float:
        """Seconds for an answer after the first: mjai.app's 2 s, or ``--seat-limit``."""
        return self._limit(ANSWER_LIMIT)

    def _edge(self, message: dict[str, Any]) -> None:
        """``end_kyoku`` / ``end_game``: sent at once (with what is pending), ``none`` due."""
        events, self.pending = [*self.pending, message], []
        self._message(events, self._answer_limit(), last=message["type"] == "end_game")

    def _due(self) -> dict[str, Any]:
        """The bot's answer where a move may be due: the pending events sent, one read."""
        events, self.pending = self.pending, []
        return self._exchange(events, self._answer_limit())

    def _message(self, events: list[dict[str, Any]], limit: float,
                 last: bool = False) -> None:
        """A line that asks for no move: ``none`` is due; another move is counted as the TCP
        seat counts it (the program's fault, not a decision). A program that ends at the
        game's ``end_game`` (``last``) instead of answering it is no fault: mjai.app's
        harness reads the empty answer and goes on, the game being over."""
        try:
            answer = self._exchange(events, limit)
            if answer["type"] != "none":
                raise SeatFault("illegal", f"{answer['type']} where nothing goes",
                                json.dumps(answer, ensure_ascii=False))
        except SeatFault as fault:
            if last and self._quit(fault, limit):
                return
            self._unasked(fault)

    def _quit(self, fault: SeatFault, limit: float) -> bool:
        """Whether ``fault`` is the program ending as it should, with exit status 0 within
        ``limit``. One that ends with another status (a traceback in its ``end_game``
        handler, a signal) or keeps running crashed there, and is counted so."""
        return fault.reason == "crashed" and self.proc is not None \
            and self.proc.exit_status(limit) == 0

    def _exchange(self, events: list[dict[str, Any]], limit: float,
                  echo: bool = False) -> dict[str, Any]:
        """The answer to one line: lines that can be no answer before it (:func:`no_answer`:
        a debug print; at the run's first line, :attr:`first_line`, what the program printed
        as it started) are skipped (ExternalSeat._answer), not taken for it."""
        if self.proc is None:
            raise SeatFault("crashed", "the program is not running")
        first, self.first_line = self.first_line, False
        if not echo and not first:  # a dahai sent with its reach, unasked, is the answer
            self._skip_stale()  # to the echo; before the first line, only start-up output
        self.proc.send(json.dumps(events, ensure_ascii=False, separators=(",", ":")) + "\n")
        line = self._answer(limit, no_answer, first)
        try:
            answer = load_json(line)  # nested past the parser's depth: not JSON either
        except json.JSONDecodeError:
            raise SeatFault("garbage", "an answer that is not JSON", line) from None
        problem = check_answer(answer)
        if problem is not None:
            raise SeatFault("garbage", problem, line)
        return answer  # type: ignore[no-any-return]

    def _action(self, answer: dict[str, Any], request: ev.DecisionRequest) -> Any:
        kind = answer["type"]
        raw = json.dumps(answer, ensure_ascii=False)
        if kind == "none":
            return ev.Pass()
        if answer.get("actor") != self.seat:
            raise SeatFault("illegal", f"{kind} for actor {answer.get('actor')!r}, not its "
                            f"seat {self.seat}", raw)
        consumed = tuple(_known(t) for t in answer.get("consumed", ()))
        if (kind == "dahai" and request.kind != "turn") or \
                (kind in ("chi", "pon", "daiminkan") and request.kind != "claim"):
            raise SeatFault("illegal", f"{kind} does not answer a {request.kind} request", raw)
        if kind == "dahai":
            return ev.Discard(_known(answer["pai"]))
        if kind == "hora":
            return ev.Win()
        if kind == "chi":
            return ev.Chi(consumed)
        if kind == "pon":
            return ev.Pon(consumed)
        if kind == "daiminkan":
            return ev.Kan("open_kan", consumed)
        if kind == "ankan":
            return ev.Kan("closed_kan", consumed)
        if kind == "kakan":
            return ev.Kan("added_kan", (_known(answer["pai"]),))
        if kind == "ryukyoku":
            return ev.AbortiveDraw()
        raise SeatFault("garbage", f"{kind} is no answer to a {request.kind} request", raw)


def no_answer(line: str) -> bool:
    """Whether ``line`` can be no mjai answer: not JSON, or JSON that is no object naming an
    answer's type (``{"debug": 1}``, ``[1, 2]``, ``42``, ``"text"``, ``{"type": "log"}``).
    mjai.app's harness reads one line a request (smly/mjai.app python/mjai/player.py
    ``react``: its ``json_data["type"]``) and fails the bot on such a line as on one that is
    not JSON, so the seat treats both alike: skipped where it comes, counted as garbage
    (ExternalSeat._answer). Taken for the answer, it left the real answer to be read as the
    next line's. An object of an answer's type with a field wrong or missing is an answer, a
    malformed one (garbage)."""
    try:
        message = load_json(line)
    except json.JSONDecodeError:
        return True
    return not (isinstance(message, dict) and isinstance(message.get("type"), str)
                and message["type"] in ANSWER_TYPES)


def _known(text: Any) -> int:
    tile = T.from_mjai(text)
    if tile is None:
        raise SeatFault("garbage", "an answer naming the unknown tile '?'", str(text))
    return tile
