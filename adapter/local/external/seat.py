"""What every outside program seated at the local table shares: the referee drives it like our
own seats, and whatever the program does, the table goes on.

The referee hands the seat its legal set; the platform-specific subclass turns the seat's view
into the platform's messages and the program's answer into an action. An answer that is late,
unreadable (garbage), not in the legal set (illegal), or missing because the program died
(crashed) is replaced by the safest legal action, counted in the seat's fallback tally (the
same figure our policies are judged by) and in its fault report, and logged with what the
program sent. A late or crashed program is out of step with the table: it is killed, the seat
plays safe for the rest of the hand, and a fresh run starts with the next hand (at most
:data:`MAX_RESTARTS` per game; an MCR match is one hand, so there the rest of the match is
safe play).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from adapter.local.external.keeper import KEPT_HEAD, KEPT_TAIL
from adapter.local.external.process import UNASKED_LIMIT, LineProcess, SeatFault
from adapter.local.timing import DecisionTimes
from brain.brain import Answer, safest_action
from brain.state import TableState
from brain.tally import FallbackKind, FallbackTally, one_line
from protocols import events as ev
from protocols import tiles as T

log = structlog.get_logger("mjbot.external")
# seconds a first answer is waited for after start-up noise (a banner) before the noise is
# taken for the answer: a banner's program answers once loaded; a garbage one never does
BANNER_GRACE = 2.0

MAX_RESTARTS = 3
HEARD = 2  # lines of what a program said, logged with a refused move (a riichi is two)
STALE_LOGGED = 3  # lines answering no ask logged one by one before a line; the rest counted
REASONS = ("late", "crashed", "garbage", "illegal")
# a fault's kind on the answer (brain/tally.py): what counts answers reads it, not the text
FAULT_KINDS = {"late": FallbackKind.LATE, "illegal": FallbackKind.ILLEGAL}


@dataclass
class SeatReport:
    """Per outside program: faults by reason, fresh runs after a crash, the first fault."""

    late: int = 0
    crashed: int = 0
    garbage: int = 0
    illegal: int = 0
    restarts: int = 0
    stderr_left_out: int = 0  # bytes of its stderr not kept (only its head and tail are)
    first: str = ""

    def count(self, fault: SeatFault) -> None:
        setattr(self, fault.reason, getattr(self, fault.reason) + 1)
        self.first = self.first or one_line(str(fault))

    def add(self, other: SeatReport) -> None:
        for key in (*REASONS, "restarts", "stderr_left_out"):
            setattr(self, key, getattr(self, key) + getattr(other, key))
        self.first = self.first or other.first

    def as_dict(self) -> dict[str, Any]:
        return {**{key: getattr(self, key) for key in (*REASONS, "restarts", "stderr_left_out")},
                "first_fault": self.first or None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatReport:
        """A report back from :meth:`as_dict` (an arena's JSON, a league's kept arena)."""
        return cls(**{key: int(data.get(key) or 0)
                      for key in (*REASONS, "restarts", "stderr_left_out")},
                   first=data.get("first_fault") or "")


@dataclass(frozen=True)
class SeatLimits:
    """Seconds an outside program gets. ``answer`` overrides the platform's limits (None: the
    platform's); ``first`` is the start-up allowance for a program's first answer where the
    platform gives one apart from the turn (mjai, NTPU); ``connect``, how long a listening
    seat waits for its bot to connect (a client run in a loop needs time to start again)."""

    answer: float | None = None
    first: float = 30.0
    connect: float = 60.0

    @property
    def start(self) -> float:
        """The first answer's allowance: a given ``answer`` limit replaces it too, as it
        replaces Botzone's first-turn limit, so a program that never answers costs the
        user's limit, not 30 s, each time it is started."""
        return self.answer if self.answer is not None else self.first


class ExternalSeat:
    """A seat played by an outside program (see the module docstring). Subclasses implement
    ``_start`` (a new run of the program), ``_seen`` (one event of the seat's view) and
    ``_ask`` (the program's action on a request)."""

    shares_state = True
    takes_legal = True
    platform = ""
    seat_argument = False  # the seat number goes after the command (as mjai.app runs bots)
    starts_with_the_game = False  # one run a game, started at GameStarted (launch_ahead)

    def __init__(self, variant: str, seat: int, name: str, argv: list[str],
                 limits: SeatLimits | None = None) -> None:
        self.name = name
        self.variant, self.seat, self.argv = variant, seat, argv
        self.limits = limits or SeatLimits()
        self.state = TableState(variant, seat)
        self.tally = FallbackTally()
        self.times = DecisionTimes()  # its answers' seconds, as the arena times a policy's
        self.report = SeatReport()
        self.proc: LineProcess | None = None
        self.down = ""  # why the seat plays safe until the next hand ("" while it plays)
        # seconds the program took for the answer kept for the next decision, where a seat
        # reads each line's answer as it sends the line (mjai TCP, Botzone): that decision's
        # time, which its own call only spends taking the kept answer
        self.answered_in = 0.0
        # an answer a seat that reads each line's answer as the line goes (mjai TCP, Botzone)
        # could not read (garbage), until a decision reads it: that decision's fault, counted
        # once, not also as a missing answer
        self.unread: SeatFault | None = None
        self.runs = 0  # runs of the program this game
        self.pids: list[int] = []  # every run's process id (tests check none outlives us)
        self.heard: deque[str] = deque(maxlen=HEARD)  # the program's last lines
        self.ahead: LineProcess | None = None  # a run started before its game (launch_ahead)

    # ------------------------------------------------------------------ the referee's side

    def launch_ahead(self) -> None:
        """Start the game's run of the program now, before the game's first event, which
        waits for its answer: the table's programs then load side by side, not each after
        the one before (an arena of three outside programs started them in turn, each game).
        A program that cannot be started is left to its start at the game's first event,
        which counts that fault."""
        if not self.starts_with_the_game or self.proc is not None or self.ahead is not None:
            return
        try:
            self.ahead = self._new_process()
        except SeatFault:
            return

    def observe(self, event: Any) -> None:
        self.state.apply(event)
        if isinstance(event, ev.GameStarted):
            self.runs = 0
            self._restart(event)
        elif isinstance(event, ev.RoundStarted) and self.down:
            self._restart(event)
        if not self.down:
            try:
                self._seen(event)
            except SeatFault as fault:
                self._fault(fault)
        if isinstance(event, ev.GameEnded):
            self._stop()

    def decide(self, request: ev.DecisionRequest, legal: list[Any]) -> Answer:
        counted = len(legal) > 1  # a forced move is no decision (as for our policies)
        started = time.perf_counter()
        kept, self.answered_in = self.answered_in, 0.0
        asked = not self.down  # a safe play while it is down asks the program nothing
        kind = FallbackKind.NONE
        if self.down:  # its run was stopped (late, crashed, failed its start): not asked
            action, fallback = safest_action(self.state, legal), f"{self.down} (safe play)"
            kind = FallbackKind.FAILED
        else:
            try:
                action = self._legal(self._ask(request, legal), legal, request)
                fallback = ""
            except SeatFault as fault:
                self._fault(fault)
                action, fallback = safest_action(self.state, legal), one_line(str(fault))
                kind = FAULT_KINDS.get(fault.reason, FallbackKind.FAILED)
        if counted:
            self.tally.record(fallback)
        # the time the program took to answer (the log's decision frame, `mjbot replay`'s
        # times): it was 0.0, Answer's default; an answer read before the decision counts
        # the time it took then
        elapsed = kept + time.perf_counter() - started
        if counted and asked:
            self.times.record(elapsed)
        return Answer(action, tuple(legal), self.name, fallback=fallback, elapsed=elapsed,
                      kind=kind)

    def close(self) -> None:
        self._stop()

    # ------------------------------------------------------------------ for subclasses

    def _start(self, event: Any) -> None:
        raise NotImplementedError

    def _seen(self, event: Any) -> None:
        raise NotImplementedError

    def _ask(self, request: ev.DecisionRequest, legal: list[Any]) -> Any:
        raise NotImplementedError

    def _new_process(self) -> LineProcess:
        proc = LineProcess([*self.argv, str(self.seat)] if self.seat_argument else self.argv)
        self.pids.append(proc.pid)
        return proc

    def _launch(self) -> LineProcess:
        """The program's run: the one started ahead for this game, else a new one."""
        proc, self.ahead = self.ahead, None
        if proc is None:
            proc = self._new_process()
        proc.heard = self.heard
        self.proc = proc
        return proc

    def _limit(self, platform_limit: float) -> float:
        return self.limits.answer if self.limits.answer is not None else platform_limit

    def _unasked(self, fault: SeatFault) -> None:
        """A fault on a message that asked for no decision (an answer where only a pass
        goes): counted in the program's report like any other, so a program cannot hide its
        faults between turns, but not in its tally, which counts decisions as the game log
        holds them (a fatal fault still puts every later decision of the hand on safe play,
        and those count)."""
        self._fault(fault)

    def _more_unasked(self, reason: str, count: int, what: str) -> None:
        """``count`` more faults like the ones just logged, counted in the report (never
        fatal, never in the tally, as :meth:`_unasked`) and said in one warning: a program
        sending thousands of stray lines must not write thousands of warnings."""
        if count <= 0:
            return
        setattr(self.report, reason, getattr(self.report, reason) + count)
        log.warning("outside program faults not logged one by one", seat=self.seat,
                    program=self.name, reason=reason, count=count, detail=what)

    def _count_unread(self) -> bool:
        """Count a kept unreadable answer (:attr:`unread`) that no decision read (its line
        asked for no move) as that line's fault; whether there was one."""
        fault, self.unread = self.unread, None
        if fault is not None:
            self._unasked(fault)
        return fault is not None

    def _raise_unread(self) -> None:
        """The decision reading a kept unreadable answer: its fault, counted once."""
        fault, self.unread = self.unread, None
        if fault is not None:
            raise fault

    def _skip_stale(self) -> None:
        """Before a line that wants one answer: lines the program sent that no line asked
        for (after its answer, or a second answer) are garbage, counted and dropped, so the
        next line read answers the line about to be sent and the program is in step again,
        not one answer behind for the rest of its run. A line that can be no answer (a debug
        print before its answer) is skipped where it comes (:meth:`_answer`)."""
        assert self.proc is not None
        stale, count = self.proc.waiting_lines(STALE_LOGGED)
        noise = self.proc.answers_noise
        if noise is not None and any(not noise(line) for line in stale):
            # an answer came after the noise taken for it: its noise is skipped again
            self.proc.answers_noise = None
        for line in stale:
            self._unasked(SeatFault("garbage", "a line answering no ask", line))
        self._more_unasked("garbage", count - len(stale), "lines answering no ask")

    def _answer(self, limit: float, noise: Callable[[str], bool], first: bool = False) -> str:
        """The answer to the line just sent, read within ``limit``. Lines before it that no
        answer can be (``noise``: no mjai answer object, not ``/...`` for NTPU) are skipped: at a
        run's ``first`` line, uncounted (a start-up banner, printed before or after that line
        is sent); later, each is garbage answering no ask (a debug print), counted as
        :meth:`_skip_stale` counts one. Taken for the answer, such a line left the real
        answer to be read as the next line's: a decision lost each run, and where the answer
        came after the next line was sent (a bot that flushes its debug line and then
        thinks, or a loaded machine) the seat stayed one answer behind for as long as that
        lasted. Every other line answers the line it follows, so the program stays in step.
        After start-up noise, the answer is waited for :data:`BANNER_GRACE` seconds more at
        most (not the start-up allowance); after later noise, for the rest of the answer's
        limit, which a debug print must not shorten (NTPU's 5 s, a ``--seat-limit``): a
        program that writes noise where its answer goes (garbage on every line) sends
        nothing more until asked again. Then the first noise line is the answer, which the
        caller counts as garbage, and the run is one that answers so: its later noise is
        the answer at once, as before the skip (not a grace a line), until a line that can
        be an answer is left over, answering no ask (:meth:`_skip_stale`: one came late,
        after the noise taken for it, so the program answers after its noise, which is
        skipped again, not each later answer lost). More than
        :data:`UNASKED_LIMIT` bytes of noise are a flood, fatal."""
        proc = self.proc
        assert proc is not None
        if proc.answers_noise is not None:
            return proc.expect_line(limit)
        deadline = time.monotonic() + limit
        kept: list[str] = []  # the first noise lines (logged), and how many there were
        count = 0
        taken = False  # the first noise line is the answer after all
        try:
            while True:
                try:
                    line = proc.expect_line(max(0.0, deadline - time.monotonic()))
                except SeatFault as fault:
                    if fault.reason != "late":
                        raise
                    if count:  # noise where the answer goes: the caller's garbage
                        proc.answers_noise, taken = noise, True
                        proc.unasked -= len(kept[0].encode()) + 1
                        return kept[0]
                    raise SeatFault("late", f"no answer within {limit:g} s",
                                    fault.raw) from None
                if not noise(line):
                    return line
                if not count and first:
                    deadline = min(deadline, time.monotonic() + BANNER_GRACE)
                count += 1
                if len(kept) <= STALE_LOGGED:
                    kept.append(line)
                proc.unasked += len(line.encode()) + 1
                if proc.unasked > UNASKED_LIMIT:
                    what = "before its first answer" if first else "answering no ask"
                    raise SeatFault("garbage", f"more than {UNASKED_LIMIT} bytes of lines "
                                    f"{what} (a flood)", kept[0], fatal=True)
        finally:
            self._skipped(kept, count, taken, first)

    def _skipped(self, kept: list[str], count: int, taken: bool, first: bool) -> None:
        """The noise :meth:`_answer` skipped (``count`` lines, ``kept`` the first of them;
        ``taken``: the first was the answer after all): start-up output is logged once,
        uncounted; later noise is garbage, the first :data:`STALE_LOGGED` lines logged."""
        if first:
            if count and not taken:
                log.info("outside program start-up output skipped", seat=self.seat,
                         program=self.name, lines=count, first=kept[0][:200])
            return
        skip = int(taken)  # the answer: the caller's fault
        noise, count = kept[skip:STALE_LOGGED + skip], count - skip
        for line in noise:
            self._unasked(SeatFault("garbage", "a line before its answer that is no answer",
                                    line))
        self._more_unasked("garbage", count - len(noise), "lines before an answer that are "
                           "no answer")

    # ------------------------------------------------------------------ faults

    def _fault(self, fault: SeatFault) -> None:
        self.report.count(fault)
        log.warning("outside program fault", seat=self.seat, program=self.name,
                    reason=fault.reason, detail=fault.detail, raw=fault.raw[:500])
        if fault.fatal:
            self.down = one_line(str(fault))
            self._stop(grace=0.0)  # out of step with the table: no time to say goodbye

    def _restart(self, event: Any) -> None:
        """A run for a new game, or a fresh one for a new hand after a crash."""
        if self.runs > MAX_RESTARTS:
            return
        if self.runs:
            self.report.restarts += 1
        self.runs += 1
        self.down = ""
        try:
            self._start(event)
        except SeatFault as fault:
            self._fault(fault)
        if self.down:  # it failed its start: a fresh run would only wait (or fail) again
            self.runs = MAX_RESTARTS + 1
            unflushed = ("; a program that does not flush its output after each answer "
                         "looks the same" if self.down.startswith("late:") else "")
            self.down = f"{self.down} at its start (no run again this game{unflushed})"

    def _stop(self, grace: float | None = None) -> None:
        if self.ahead is not None:  # started for a game it never got to play
            ahead, self.ahead = self.ahead, None
            ahead.close(0.0)
        if self.proc is not None:
            proc, self.proc = self.proc, None
            proc.close() if grace is None else proc.close(grace)
            self._trimmed(proc.left_out)

    def _trimmed(self, left_out: int) -> None:
        """Count the stderr a run printed past what is kept; said in the log at the first
        such run of the seat (a one-shot bot is run every turn: the report has the sum)."""
        if not left_out:
            return
        if not self.report.stderr_left_out:
            log.warning("outside program stderr trimmed", seat=self.seat, program=self.name,
                        left_out=left_out, kept_head=KEPT_HEAD, kept_tail=KEPT_TAIL)
        self.report.stderr_left_out += left_out

    def _legal(self, action: Any, legal: list[Any], request: ev.DecisionRequest) -> Any:
        """The legal action ``action`` stands for (a meld's tiles in any order), or an
        illegal fault naming it."""
        found = find_legal(action, legal)
        if found is None:
            raise SeatFault("illegal", f"{describe(action, self._tile_text)} is not legal on a "
                            f"{request.kind} request", " | ".join(self.heard) or repr(action))
        return found

    def _tile_text(self, tile: T.Tile) -> str:
        """A tile as the program's protocol writes it, so a refused move reads as it was sent
        (subclasses; ours, ``7z``, where the protocol has no name of its own here)."""
        return T.tile_name(tile)


def find_legal(action: Any, legal: list[Any]) -> Any:
    """The member of ``legal`` equal to ``action``, the tiles of a meld compared as a set."""
    if action in legal:
        return action
    tiles = getattr(action, "tiles", None)
    if tiles is None:
        return None
    key = sorted(tiles, key=T.sort_key)
    for candidate in legal:
        if type(candidate) is type(action) and getattr(candidate, "kind", None) == \
                getattr(action, "kind", None) and sorted(candidate.tiles, key=T.sort_key) == key:
            return candidate
    return None


def describe(action: Any, name: Callable[[T.Tile], str] = T.tile_name) -> str:
    if isinstance(action, ev.Discard):
        return f"discard {name(action.tile)}" + (" with riichi" if action.riichi else "")
    return type(action).__name__.lower() if not getattr(action, "tiles", None) else \
        f"{getattr(action, 'kind', type(action).__name__.lower())} " \
        f"{' '.join(name(t) for t in action.tiles)}"
