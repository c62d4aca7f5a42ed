"""A Botzone MCR bot at the local table, run as Botzone runs it.

Every request line the seat is sent goes to the bot and is answered (``PASS`` where nothing
else is allowed), from the same encoder as our local Botzone judge
(protocols/botzone_server.py). The four ways our local judge runs a bot (the PKU runner's,
adapter/fakes/botzone_judge.py), named by the seat's kind:

* ``botzone:`` / ``botzone-json:`` — started anew for every line with the whole history on
  stdin, then the end of input (simple / JSON interaction), ``data`` and ``globaldata``
  passed back as it left them;
* ``botzone-keep:`` / ``botzone-keep-json:`` — the first line as a full input, stdin left
  open; a run that prints ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` after its answer is kept and
  gets only the next request line (bare, or JSON-encoded in JSON interaction); one that exits
  is started anew with the whole history.

Input and answers are written and read by the judge's own code (``BotProcess``), as strictly
as Botzone reads them.

Time limits (../shared/protocols/botzone.md): 6 s for a turn of a fresh run, 4 s for a later
turn of a kept one. One match is one hand: a late or crashed bot plays safe to its end.
"""

from __future__ import annotations

import json
import time
from itertools import islice
from typing import Any

from adapter.fakes.botzone_judge import (
    OUTPUT_LIMIT,
    BotProcess,
    Verdict,
    offers_a_win,
    unasked_turns,
)
from adapter.local.external.process import UNASKED_LIMIT, SeatFault
from adapter.local.external.seat import STALE_LOGGED, ExternalSeat
from adapter.platforms.botzone import KEEP_RUNNING
from protocols import events as ev
from protocols import tiles as T
from protocols.botzone import parse_response
from protocols.botzone_server import RequestLines, read_response
from protocols.codec import ProtocolError

FIRST_LIMIT = 6.0
LATER_LIMIT = 4.0


class BotzoneSeat(ExternalSeat):
    platform = "botzone"
    json_io = False
    keep = False

    def _start(self, event: Any) -> None:
        mode = ("keep-json" if self.keep else "json") if self.json_io else \
            ("keep" if self.keep else "simple")
        self.bot = BotProcess(self.seat, mode, tuple(self.argv), FIRST_LIMIT, LATER_LIMIT)
        self.encoder = RequestLines(self.seat)
        self.planned: int | None = None  # the discard named with our PENG / CHI
        self.last: str | None = None  # the answer to the last line, until a decision reads it
        self.answered = ""  # that line

    def _seen(self, event: Any) -> None:
        if isinstance(event, ev.GameEnded):
            # the match's last line: no decision and no later line will read its answer
            self._count_unread()
        if not (isinstance(event, ev.MeldCalled) and event.seat == self.seat
                and event.kind in ("chi", "pon")):
            self.planned = None  # it belongs to that call only (a call can lose to another)
        for line in self.encoder.lines(event):
            self._line(line)

    def _ask(self, request: ev.DecisionRequest, legal: list[Any]) -> Any:
        if request.kind == "turn" and self.planned is not None:
            tile, self.planned = self.planned, None
            return ev.Discard(tile)
        response, self.last = self.last, None
        self._raise_unread()
        if response is None:
            raise SeatFault("illegal", f"no answer to read for a {request.kind} request")
        try:
            reading = read_response(response, request)
        except ProtocolError as exc:
            raise SeatFault("garbage", str(exc), response) from None
        self.planned = reading.planned_discard
        return reading.action

    def _tile_text(self, tile: T.Tile) -> str:
        return T.to_botzone(tile)

    def _legal(self, action: Any, legal: list[Any], request: ev.DecisionRequest) -> Any:
        """As every seat's, the refusal naming Botzone's verdict: a ``HU`` the rules do not
        allow where one may win (the seat is asked) is a false win, WH; anything else WA."""
        try:
            return super()._legal(action, legal, request)
        except SeatFault as fault:
            verdict = "WH" if isinstance(action, ev.Win) else "WA"
            raise SeatFault(fault.reason, f"{fault.detail} ({verdict} on Botzone)",
                            fault.raw) from None

    # ------------------------------------------------------------------ the wire

    def _line(self, line: str) -> None:
        """One request line to the bot and its answer read (kept for the decision, if any)."""
        self.answered_in = 0.0
        if self._count_unread() and self.down:  # no decision read it: only PASS went
            return
        if self.last not in (None, "PASS"):
            last, self.last = self.last or "", None
            try:
                parse_response(last)
                fault = SeatFault("illegal", _unasked_verdict(last, self.answered, self.seat),
                                  last)
            except ProtocolError as exc:
                fault = SeatFault("garbage", str(exc), last)
            self._unasked(fault)
            if self.down:
                return
        bot = self.bot
        bot.requests.append(line)
        self.answered = line
        started = time.perf_counter()
        try:
            self._exchange_line(line)
        finally:  # the answer a decision on this line takes: the time it took
            self.answered_in = time.perf_counter() - started

    def _exchange_line(self, line: str) -> None:
        """Send ``line`` (starting the program where none runs) and read its answer."""
        bot = self.bot
        fresh = self.proc is None  # this turn starts a run
        if self.proc is not None:
            limit = self._limit(LATER_LIMIT)
            self._skip_unasked_turns()
            self.proc.send((json.dumps(line) if self.json_io else line) + "\n", limit)
        else:
            limit = self._limit(FIRST_LIMIT)
            proc = self._launch()
            proc.send(bot._input(), limit)  # a long history: the turn's limit bounds it too
            if not self.keep:
                proc.end_input()
        lines = self._turn_output(limit, fresh)
        try:
            response = bot._answer(lines)
        except Verdict as verdict:
            response = lines[0].strip() if lines else ""
            bot.responses.append(response)
            self.unread = SeatFault("garbage", verdict.detail, "\n".join(lines))
            return
        bot.responses.append(response)
        self.last = response

    def _skip_unasked_turns(self) -> None:
        """Before a kept run's next request: whole turns it has printed since its last turn
        ended (an answer and its marker printed twice) answer no request. Read as this
        request's, the first put the seat one answer behind the bot for the rest of the match
        (one answer printed twice: 3 of 4 decisions lost, 6 illegal); each is counted as
        garbage and dropped, so the next turn read answers the next request. A part of a
        turn (lines after the last marker, no marker yet) stays: the next turn's first lines,
        its response, as Botzone reads them. At most :data:`OUTPUT_LIMIT` bytes are read
        here a request: a program printing without end cannot hold the table. The turns
        dropped count towards the run's :data:`UNASKED_LIMIT` bytes of what answered no ask,
        past which it floods (a fatal garbage fault), as an mjai or NTPU program's stray lines
        do: a bot printing turns in a loop was read 1 MB a request for the rest of the match,
        millions of faults, its every later answer one of its loop's."""
        proc = self.proc
        assert proc is not None
        proc.read_ready(OUTPUT_LIMIT)
        count, turns, used = unasked_turns(proc.lines, STALE_LOGGED)
        if not count:
            return
        proc.unasked += sum(len(raw) + 1 for raw in islice(proc.lines, used))
        if proc.unasked > UNASKED_LIMIT:
            first = "\n".join(turns[0].split("\n")[:STALE_LOGGED])  # its first lines
            raise SeatFault("garbage", f"more than {UNASKED_LIMIT} bytes of turns answering "
                            "no request (a flood)", first, fatal=True)
        for _ in range(used):
            proc.lines.popleft()
        for turn in turns:
            self._unasked(SeatFault("garbage", "a turn printed answering no request", turn))
        self._more_unasked("garbage", count - len(turns), "turns printed answering no request")

    def _turn_output(self, limit: float, fresh: bool = False) -> list[str]:
        """What the bot printed for this turn: up to the keep-running marker (the run is
        kept) or the end of its output (the run is over). ``fresh``: a run's first turn."""
        assert self.proc is not None
        deadline = time.monotonic() + limit
        lines: list[str] = []
        printed = 0  # bytes of this turn's lines
        while True:
            try:
                line = self.proc.read_line(max(0.0, deadline - time.monotonic()))
            except SeatFault as fault:
                if fault.reason != "late":
                    raise
                raise SeatFault("late", self._late(lines, limit, fresh), fault.raw) from None
            if line is None:
                note = "" if lines else self.proc.exit_note("exited without an answer")
                self._stop()
                if note:
                    raise SeatFault("crashed", note)
                return lines
            if line.strip() == KEEP_RUNNING:
                if not self.keep:  # its input is closed: it cannot be sent another line
                    self._stop()
                return lines
            lines.append(line)
            printed += len(line) + 1
            if printed > OUTPUT_LIMIT:  # lines without end: gathered till the limit before
                raise SeatFault("garbage", f"more than {OUTPUT_LIMIT} bytes of output in one "
                                "turn (OLE on Botzone)", "\n".join(lines[:3]), fatal=True)

    def _late(self, lines: list[str], limit: float, fresh: bool = False) -> str:
        """Why a turn was late, in the turn's limit: a bot that answered but did not end its
        turn (Botzone waits for the marker, or a one-shot run's exit, and then it is a TLE)
        is told so, not that it gave no answer. A kept run silent at its first turn may have
        its answer in its output buffer, as an mjai or NTPU run late at its start (seat.py);
        a one-shot run's output is flushed as it exits."""
        if not lines:
            unflushed = ("; a program that does not flush its output after each answer "
                         "looks the same" if fresh and self.keep else "")
            return f"no answer within {limit:g} s{unflushed}"
        ending = f"print {KEEP_RUNNING} or exit" if self.keep else "exit"
        return f"answered {lines[0][:80]!r} but did not {ending} within {limit:g} s"


class BotzoneJsonSeat(BotzoneSeat):
    json_io = True


class BotzoneKeepSeat(BotzoneSeat):
    keep = True


class BotzoneKeepJsonSeat(BotzoneSeat):
    json_io = keep = True


def _unasked_verdict(answer: str, line: str, seat: int) -> str:
    """What an answer other than ``PASS`` to a line that asked the seat nothing is, as the
    judge rules it: a ``HU`` on another seat's discard or added kong is a false win there
    (WH), anything else, a ``HU`` after the deal, a draw, one's own discard or a ``GANG``
    included, an answer where only ``PASS`` goes (WA). All were said to be the latter."""
    if answer == "HU" and offers_a_win(line, seat):
        return f"a false HU to {line!r}: no win there (WH on Botzone)"
    return f"answered {answer!r} to {line!r}, where only PASS goes (WA on Botzone)"
