"""An mjai bot over TCP (riichi), the original mjai server's way: the seat listens on
``HOST:PORT``, a bot connects (``mjbot mjai --server HOST:PORT``, or any mjai client), is
greeted with ``hello`` and answers ``join``; then every event of the seat's view goes as one
line and every line is answered (``none`` where the bot has nothing to do), as mjai does.

One connection per game (the original server ends it after ``end_game``): the seat listens
again for the next game, so a client that plays one game per connection is run in a loop.
A client that closes the connection at ``end_game`` without answering it, as the original
mjai client does (gimite/mjai tcp_client_game.rb), is no fault: that server reads it as none.
The answer to the last event is the bot's move where the referee asks for one; a move where
only a pass goes is counted as illegal. Every answer, ``join`` included, gets the original
server's 60 s (../shared/protocols/mjai.md), or ``--seat-limit``: not mjai.app's 2 s, which
marked late a TCP bot that thought 2.5 s, as that server lets it.

The seat waits ``SeatLimits.connect`` (60 s) for each connection, saying on stderr after a
second what it waits for; no bot by then ends the run in one line (:class:`NoClient`): every
later game would wait as long again. So does an address it cannot listen on (a port another
program holds: :class:`CannotListen`), where every game was played with the seat crashed.
A stop (SIGTERM, Ctrl-C) ends the wait at once.
"""

from __future__ import annotations

import json
import time
from typing import Any

from adapter.hostport import parse_host_port
from adapter.local.external.mjai_seat import MjaiSeat, no_answer
from adapter.local.external.process import LineProcess, LineSocket, SeatFault
from protocols import events as ev
from protocols.codec import load_json
from protocols.mjai import check_answer

HELLO = {"type": "hello", "protocol": "mjsonp", "protocol_version": 3}
ANSWER_LIMIT = 60.0  # the original mjai server's, per answer


def parse_address(text: str) -> tuple[str, int]:
    """The seat's ``HOST:PORT`` -> (host, port); ValueError naming what is wrong. Port 0 is
    refused: the bot could not know where to connect."""
    return parse_host_port(text, "mjai-tcp")


class MjaiTcpSeat(MjaiSeat):
    platform = "mjai-tcp"
    starts_with_the_game = False  # it listens for its bot: nothing to start ahead
    start_output = False  # a bot's banner is never on its connection

    def _launch(self) -> LineProcess:
        host, port = parse_address(" ".join(self.argv))
        proc = LineSocket.listen(host, port, self.limits.connect)
        proc.heard = self.heard
        self.proc = proc
        return proc

    def _start(self, event: Any) -> None:
        self._count_unread()
        self.last: dict[str, Any] | None = None
        self.sent = ""  # the type of the last event sent
        super()._start(event)

    def _message(self, events: list[dict[str, Any]], limit: float,
                 last: bool = False) -> None:
        if events and events[0].get("type") == "start_game":  # greet first: hello -> join
            assert self.proc is not None
            self.proc.send(json.dumps(HELLO) + "\n")
            try:
                join = self._read(self._first_limit())
                if join.get("type") != "join":
                    raise SeatFault("garbage", f"{join.get('type')!r} where join goes",
                                    json.dumps(join))
            except SeatFault as fault:
                self._unasked(fault)
                return
            limit = self._first_limit()
        for event in events:
            self._out(event, limit)

    def _out(self, message: dict[str, Any], limit: float | None = None,
             game_over: bool = False) -> None:
        """One event, one line, one answer; kept for a decision on it, if one comes.

        The table reveals an open or added kan's dora between the replacement's discard and
        the claims on it (Tenhou's order; the original mjai server sends it before the
        dahai): the answer to that dahai, a claim, still stands, and the dora's is ``none``."""
        if message.get("type") == "dora" and self.sent == "dahai":
            claim, self.last, self.sent = self.last, None, "dora"
            unread, self.unread = self.unread, None
            answered_in = self.answered_in
            self._out(message, limit)
            self._count_unread()
            if self.last is not None and self.last["type"] != "none":
                self._unasked(SeatFault("illegal", f"{self.last['type']} where nothing goes",
                                        json.dumps(self.last)))
            self.last, self.unread, self.answered_in = claim, unread, answered_in
            return
        self.answered_in = 0.0
        if self._count_unread() and self.down:
            return
        last, self.last = self.last, None
        if last is not None and last["type"] != "none":
            self._unasked(SeatFault("illegal", f"{last['type']} where nothing goes",
                                    json.dumps(last)))
            if self.down:
                return
        self.sent = str(message.get("type"))
        started = time.perf_counter()
        try:
            self.last = self._exchange([message], limit or self._answer_limit())
        except SeatFault as fault:
            if game_over and self._quit(fault, 0.0):
                pass  # the original client leaves at end_game unanswered; its server reads none
            elif fault.fatal:  # the seat is down: the decision says so, as safe play
                self._unasked(fault)
            else:
                self.unread = fault
        finally:  # the answer a decision on this event takes: the time it took
            self.answered_in = time.perf_counter() - started

    def _edge(self, message: dict[str, Any]) -> None:
        self._out(message, game_over=message["type"] == "end_game")

    def _answer_limit(self) -> float:
        return self._limit(ANSWER_LIMIT)

    def _first_limit(self) -> float:
        """``join``'s: the server's limit, where it is longer than the start-up allowance."""
        return self.limits.start if self.limits.answer is not None else \
            max(self.limits.first, ANSWER_LIMIT)

    def _due(self) -> dict[str, Any]:
        self._raise_unread()
        answer, self.last = self.last, None
        if answer is None:
            raise SeatFault("garbage", "no answer to the event that asks for a move")
        return answer

    def _exchange(self, events: list[dict[str, Any]], limit: float,
                  echo: bool = False) -> dict[str, Any]:
        if self.proc is None:
            raise SeatFault("crashed", "the bot is not connected")
        if not echo:  # a dahai sent with its reach, unasked, is the answer to the echo
            self._skip_stale()
        for event in events:  # a reach echo: one event, its answer the dahai
            self.proc.send(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        answer = self._read(limit)
        problem = check_answer(answer)
        if problem is not None:
            raise SeatFault("garbage", problem, json.dumps(answer))
        return answer

    def _read(self, limit: float) -> dict[str, Any]:
        line = self._answer(limit, no_answer)  # a debug line before it: skipped, garbage
        try:
            answer = load_json(line)  # nested past the parser's depth: not JSON either
        except json.JSONDecodeError:
            raise SeatFault("garbage", "an answer that is not JSON", line) from None
        if not isinstance(answer, dict) or not isinstance(answer.get("type"), str):
            raise SeatFault("garbage", "an answer that is not an mjai object", line)
        return answer

    def _seen(self, event: Any) -> None:
        super()._seen(event)
        if isinstance(event, ev.GameEnded):
            self._count_unread()  # the answer to end_game: no decision reads it
            self._stop()  # the original server ends the connection with the game
