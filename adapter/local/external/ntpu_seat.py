"""An NTPU / Cycgame program at the local table (taiwan16), on stdin/stdout (the protocol's
wrapper form; ../shared/protocols/ntpu.md).

The lines come from the fake NTPU server's own encoder (adapter/fakes/ntpu_lines.py): the
seat gives the hand's tiles their physical ids from the full-information events (the referee
shows it each one before the seats are told), and sends the program only its own view:
``/ready`` when it starts, ``/start MJ <seat> <name>``, ``/initGame``, ``/initCard`` and the
play of each hand, ``/exit`` after it, ``/close`` at the end. A decision is asked as the
server asks it, one ``/ask`` at a time: on a turn ``hu`` (if it may win), ``gong`` (if it may
kong), then ``throw`` (not on the last draw, which the drawer may only win by); on a discard
``hu``, ``gong``, ``pong``, ``eat`` for each that is possible, the first accepted being the
move. Replies are read by the server's code (``reply_action``): ids the seat does not hold,
or a reply to another ask, are illegal.

Time limit: not published; 5 s per reply (the fake server's). A line the program sends that
answers no ask is garbage.
"""

from __future__ import annotations

from typing import Any

from adapter.fakes.ntpu_lines import NtpuLines, reply_action
from adapter.local.external.process import SeatFault
from adapter.local.external.seat import ExternalSeat
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError

ANSWER_LIMIT = 5.0
TURN_ASKS = (("hu", ev.Win), ("gong", ev.Kan))
CLAIM_ASKS = (("hu", ev.Win), ("gong", ev.Kan), ("pong", ev.Pon), ("eat", ev.Chi))


class NtpuSeat(ExternalSeat):
    platform = "ntpu"
    sees_full_events = True
    starts_with_the_game = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tiles = T.NtpuTiles()
        self.lines = NtpuLines(self.tiles)
        self.label = "".join(c for c in self.argv[0].rsplit("/", 1)[-1] if c.isprintable()
                             and not c.isspace()) or "program"

    def full_event(self, event: Any) -> None:
        if isinstance(event, ev.RoundStarted):
            self.lines = NtpuLines(self.tiles)
        self.lines.before_event(event)

    def _start(self, event: Any) -> None:
        self._launch().send("/ready\n")
        try:
            # what it prints as it starts (a banner: no line of the protocol, which all
            # begin with "/") is skipped, uncounted, not taken for the reply (seat.py)
            reply = self._answer(self.limits.start, _not_protocol, first=True).strip()
            if reply.split() != ["/ready"]:
                raise SeatFault("garbage", "no /ready in answer to /ready", reply)
        except SeatFault as fault:
            self._unasked(fault)

    def _seen(self, event: Any) -> None:
        lines = self.lines.lines_for(self.seat, event)
        if isinstance(event, ev.RoundStarted):
            lines = [f"/start MJ {self.seat + 1} {self.label}", *lines]
        elif isinstance(event, ev.RoundWon | ev.RoundDrawn):
            lines = [*lines, "/exit"]
        elif isinstance(event, ev.GameEnded):
            lines = ["/close"]
        for line in lines:
            self._send(line)

    def _ask(self, request: ev.DecisionRequest, legal: list[Any]) -> Any:
        for word, wanted in TURN_ASKS if request.kind == "turn" else CLAIM_ASKS:
            options = [a for a in legal if isinstance(a, wanted)]
            if options:
                action = self._ask_word(word)
                if action is not None:
                    return action
        # a claim passed, or the last draw's win passed (the lab referee then asks nothing
        # more: the drawer may not discard, so no Discard is legal)
        if request.kind != "turn" or not any(isinstance(a, ev.Discard) for a in legal):
            return ev.Pass()
        action = self._ask_word("throw")
        if action is None:
            raise SeatFault("illegal", "/pass to /ask throw", "/pass")
        return action

    # ------------------------------------------------------------------ the wire

    def _send(self, line: str) -> None:
        if self.proc is None:
            raise SeatFault("crashed", "the program is not running")
        self.proc.send(line + "\n")

    def _ask_word(self, word: str) -> Any:
        self._skip_stale()
        self._send(f"/ask {word}")
        reply = self._reply(self._limit(ANSWER_LIMIT))
        try:
            return reply_action(word, reply, self.lines.ids, self.seat)
        except ProtocolError as exc:
            unknown = "unknown reply" in str(exc) or "malformed" in str(exc)
            raise SeatFault("garbage" if unknown else "illegal", str(exc), reply) from None

    def _reply(self, limit: float) -> str:
        """The reply to an ask: lines before it that are no line of the protocol (a debug
        print) are garbage, skipped (ExternalSeat._answer), not taken for it."""
        return self._answer(limit, _not_protocol).strip()


def _not_protocol(line: str) -> bool:
    """Whether ``line`` is no line of the protocol (start-up output, never a reply)."""
    return not line.lstrip().startswith("/")
