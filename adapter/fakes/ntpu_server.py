"""A fake NTPU tournament server: the local table's Taiwan 16-tile referee speaking the NTPU
protocol (../shared/protocols/ntpu.md) to four clients, over TCP on loopback or over the pipes
of four client processes (the stdin/stdout wrapper form).

It is the peer we cannot reach, built to the published facts: seats 1..4; the dealer gets 17
ids and no ``/mo``; others' draws are not announced; a concealed kong is shown to the others as
``/gong <seat> 0``; a seat's own turn is asked as ``/ask hu`` (if it can win), ``/ask gong`` (if
it can kong) then ``/ask throw``; a discard is offered in the lab referee's order: ``/ask hu``
to every seat that can win, in turn order from the discarder (the first to accept wins and
nobody else is asked), then ``/ask gong`` / ``/ask pong`` in turn order, then ``/ask eat`` to
the next seat only if nobody took the tile; no open kong on the previous seat's discard; the
hand is drawn right after the draw that leaves 16 tiles (that drawer may only win: no throw);
``/exit`` after every hand, ``/close`` at the end.

A match: ``hands`` hands; each wall is played four times with the clients rotated through the
seats (duplicate), the dealer moving every wall. Scores are the tournament's 1000 + 500 per tai
(the dealer's extra tai included). A reply the rules do not allow or naming ids the seat does
not hold, a reply later than the time limit, and a dropped client (one that left, or left
what it was sent unread for the time limit) are counted and played safely for the seat, never
fatal; the first ``/ready`` is answered as a client starts up, so
it gets :data:`STARTUP_LIMIT` instead. Each reply is matched to the ask it answers
(protocols/ntpu_asks.py): an answer that comes after its ask expired, or a repeated one, is
counted, logged and dropped, never read as the answer to the next ask. Everything sent and
received is written to the match log with the full-information events.

``ready_every``: a probe of a client's liveness while it thinks: every that many seconds that
an ``/ask`` waits for its answer, the server sends the readiness check ``/ready`` again; the
delay of each ``/ready`` that answers one is recorded per client (the published servers send
``/ready`` only before the match; this is a measuring instrument).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from adapter.fakes.ntpu_lines import HandIds, NtpuLines, reply_action
from adapter.local.external.process import EXIT_POLL, ready_fds
from adapter.local.referee import HandOutcome, HandReferee, HandSetup
from adapter.own_python import own_env, own_python
from adapter.session import Stopped
from brain.brain import safest_action
from protocols import events as ev
from protocols import tiles as T
from protocols.codec import ProtocolError
from protocols.ntpu import LineBuffer
from protocols.ntpu_asks import Answer, AskTracker, Late, Unasked
from replay.log import Footer, GameLogWriter, Header

CLIENT_COMMAND = own_python("-m", "adapter.cli", "--log-level", "warning", "ntpu")
STARTUP_LIMIT = 30.0  # seconds for the first /ready: a client program's start-up (as the arena's
# outside seats allow their first answer), never less than the per-reply limit


ACCEPT_TIMEOUT = 30.0  # seconds the server waits for each client to connect
CLIENT_EXIT_LIMIT = 30.0  # seconds all started clients together get to exit after a match
FAILED_EXIT_LIMIT = 5.0  # the same after a match that failed: their connections are closed,
# so a client that is still there is not going to leave by itself


class MatchNotStarted(ConnectionError):
    """The match could not begin: the address cannot be listened on (``listening``: a port
    in use, a host that is not ours), or not all four clients connected in time."""

    def __init__(self, message: str, listening: bool = False) -> None:
        super().__init__(message)
        self.listening = listening


class ChannelClosed(Exception):
    """The client went away."""


def _would_block(write: Callable[[memoryview], int]) -> Callable[[memoryview], int]:
    """``write`` that answers 0 where the pipe or socket is full (it never blocks)."""
    def attempt(data: memoryview) -> int:
        try:
            return write(data)
        except BlockingIOError:
            return 0
    return attempt


class Channel:
    """One client's line stream: a socket or a process's pipes. Written without blocking:
    a client that leaves what it was sent unread (a full pipe or socket) past the write limit
    is dropped, as a server drops a dead connection, never waited on for ever."""

    def __init__(self, label: str, fileno: int, recv: Callable[[], bytes],
                 write_fd: int, write: Callable[[memoryview], int],
                 close: Callable[[], None]) -> None:
        self.label = label
        self._fileno, self._recv, self._close = fileno, recv, close
        self._write_fd, self._write = write_fd, _would_block(write)
        self._lines: list[str] = []
        self._buffer = LineBuffer()
        self.dead = False
        self.stalled = False  # dropped for leaving its input unread (see :meth:`send`)

    @classmethod
    def for_socket(cls, label: str, sock: socket.socket) -> Channel:
        def close() -> None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        return cls(label, sock.fileno(), lambda: sock.recv(65536), sock.fileno(),
                   lambda data: sock.send(data, socket.MSG_DONTWAIT), close)

    @classmethod
    def for_process(cls, label: str, proc: subprocess.Popen[bytes]) -> Channel:
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout
        fd, write_fd = stdout.fileno(), stdin.fileno()
        os.set_blocking(write_fd, False)  # written with os.write, never through the buffer

        def close() -> None:  # both pipes: the client sees its input end and its output
            # break, as a dropped connection's client does
            for stream in (stdin, stdout):
                with contextlib.suppress(OSError):
                    stream.close()
        return cls(label, fd, lambda: os.read(fd, 65536), write_fd,
                   lambda data: os.write(write_fd, data), close)

    def send(self, line: str, limit: float) -> None:
        """Write ``line`` whole within ``limit`` seconds, else drop the client (closed,
        ``stalled``): one that stops reading fills its pipe (64 KB) or socket, and a
        blocking write then held the whole match for ever."""
        if self.dead:
            return
        data = memoryview((line + "\n").encode())
        deadline = time.monotonic() + limit
        try:
            while data:
                data = data[self._write(data):]
                if not data:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stalled = self.dead = True
                    self.close()
                    return
                ready_fds([], [self._write_fd], left)
        except OSError:  # the client closed its end
            self.dead = True

    def receive(self, timeout: float) -> str | None:
        """The next line, or None when none came within ``timeout``; ChannelClosed at the
        end of the stream."""
        deadline = time.monotonic() + timeout
        while not self._lines:
            if self.dead:
                raise ChannelClosed(self.label)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._wait_and_read(left)
        return self._lines.pop(0)

    def _wait_and_read(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for bytes and buffer the complete lines; False when none came.
        The end of the stream marks the channel dead and flushes a last unterminated line."""
        ready, _ = ready_fds([self._fileno], timeout=timeout)
        if not ready:
            return False
        try:
            data = self._recv()
        except OSError:
            data = b""
        if not data:
            self.dead = True
            self._lines.extend(self._buffer.close())
        else:
            self._lines.extend(line for line in self._buffer.feed(data) if line.strip())
        return True

    def readable(self) -> list[str]:
        """The lines that are here now, without waiting (what a client sent before we ask)."""
        while not self.dead and self._wait_and_read(0):
            pass
        lines, self._lines = self._lines, []
        return lines

    def close(self) -> None:
        self._close()


@dataclass
class ClientStats:
    """One client's tournament line."""

    name: str
    points: int = 0
    hands: int = 0
    wins: int = 0
    self_draws: int = 0
    deal_ins: int = 0
    tai: int = 0
    illegal: int = 0
    timeouts: int = 0
    late: int = 0  # replies to asks that had expired, dropped
    unasked: int = 0  # lines no ask was waiting for (repeats), dropped
    dropped: bool = False
    problems: list[str] = field(default_factory=list)
    probes: int = 0  # /ready sent while an ask waited (``ready_every``)
    ready_delays: list[float] = field(default_factory=list)  # seconds to each answer


class _NtpuReferee(HandReferee):
    """The referee, with the hand's ids assigned from each full-information event before the
    seats see it."""

    def __init__(self, server: NtpuServer, players: list[Any]) -> None:
        super().__init__("taiwan16", players, server.log)
        self.server = server

    def emit(self, event: Any) -> None:
        self.server.before_event(event)
        super().emit(event)

    def _claims(self, discarder: int, tile: int, kind: str) -> tuple[int, Any] | None:
        """The lab referee's order, which the clients see: every seat that can win is asked
        ``hu`` first, in turn order from the discarder, and the first to accept wins; then
        kong/pong in turn order; then chow, to the next seat only, if nobody took the tile.
        A seat never answers an offer the tile then goes past (the shared referee asks
        each seat everything and resolves afterwards, which no NTPU client can follow)."""
        request = ev.DecisionRequest(kind, tile=tile, from_seat=discarder)
        seats = [(discarder + offset) % 4 for offset in (1, 2, 3)]
        legal = {seat: self.rules.legal_actions(self.views[seat], request) for seat in seats}
        for wanted, asked in (((ev.Win,), seats), ((ev.Kan, ev.Pon), seats),
                              ((ev.Chi,), seats[:1])):
            for seat in asked:
                options = [a for a in legal[seat] if isinstance(a, wanted)]
                if not options:
                    continue
                action = self.ask(seat, request, [*options, ev.Pass()])
                if isinstance(action, ev.Win):
                    self._win_on_discard([seat], discarder, tile, robbing=kind == "rob_kan")
                if not isinstance(action, ev.Pass):
                    return seat, action
        return None


@dataclass(frozen=True)
class _Answered:
    """A client's answer as the referee logs it: the action, the seconds the client took,
    and the client's name as the decision's policy."""

    action: Any
    elapsed: float
    policy: str


class _ServerSeat:
    """A seat at the referee's table, played by one remote client."""

    def __init__(self, server: NtpuServer, seat: int, client: int) -> None:
        self.server, self.seat, self.client = server, seat, client
        self.name = server.stats[client].name

    # ------------------------------------------------------------------ what the seat sees

    def observe(self, event: Any) -> None:
        for line in self.server.lines_for(self.seat, event):
            self.server.send(self.client, line)

    # ------------------------------------------------------------------ what it is asked

    def decide(self, request: ev.DecisionRequest) -> _Answered:
        """The client's answer, with how long it took (its asks, one to three, together):
        the match log's decision times, which read as no time at all before."""
        started = time.monotonic()
        action = self._decide(request)
        return _Answered(action, time.monotonic() - started, self.name)

    def _decide(self, request: ev.DecisionRequest) -> Any:
        referee = self.server.referee
        assert referee is not None
        legal = referee.asked_legal
        if request.kind == "turn":
            for word, wanted in (("hu", ev.Win), ("gong", ev.Kan)):
                options = [a for a in legal if isinstance(a, wanted)]
                if options:
                    action = self._ask(word, options)
                    if action is not None:
                        return action
            throws = [a for a in legal if isinstance(a, ev.Discard)]
            if not throws:  # the last tile: a win or nothing (the hand is drawn)
                return ev.Pass()
            action = self._ask("throw", throws)
            # no acceptable discard: a pass is never legal on a turn, so the referee counts
            # nothing more and plays the safest discard for the seat
            return action if action is not None else ev.Pass()
        for word, call in (("hu", ev.Win), ("gong", ev.Kan), ("pong", ev.Pon), ("eat", ev.Chi)):
            calls = [a for a in legal if isinstance(a, call)]
            if calls:
                action = self._ask(word, calls)
                if action is not None:
                    return action
        return ev.Pass()

    def _ask(self, word: str, options: list[Any]) -> Any | None:
        """Send ``/ask word``; the action of an acceptable reply, or None for a pass (a bad,
        late or missing reply counts against the client and is a pass, or on ``throw`` the
        safest discard)."""
        stats = self.server.stats[self.client]
        reply = self.server.request(self.client, word)
        if reply is None:
            return self._unanswered(word, options)
        try:
            action = self._read_reply(word, reply)
        except ProtocolError as exc:
            stats.illegal += 1
            self.server.problem(self.client, f"/ask {word}: {exc}")
            return self._unanswered(word, options)
        if action is None:
            if word == "throw":
                stats.illegal += 1
                self.server.problem(self.client, "/pass to /ask throw")
                return self._unanswered(word, options)
            return None
        if action not in options:
            stats.illegal += 1
            self.server.problem(self.client, f"/ask {word}: {reply!r} is not allowed here")
            return self._unanswered(word, options)
        return action

    def _unanswered(self, word: str, options: list[Any]) -> Any | None:
        if word != "throw":
            return None
        referee = self.server.referee
        assert referee is not None
        return safest_action(referee.views[self.seat], options)

    def _read_reply(self, word: str, reply: str) -> Any | None:
        ids = self.server.ids
        assert ids is not None
        return reply_action(word, reply, ids, self.seat)


class NtpuServer:
    """Plays a match between four connected clients (channels), hand by hand."""

    def __init__(self, channels: list[Channel], names: list[str], seed: int = 0,
                 time_limit: float = 5.0, tiles: T.NtpuTiles | None = None,
                 log: GameLogWriter | None = None, walls: Sequence[Sequence[int]] = (),
                 ready_every: float | None = None, wording: str = "spec") -> None:
        self.channels = channels
        self.wording = wording  # "spec" or "lab" (adapter/fakes/ntpu_lines.py)
        self.ready_every = ready_every
        self.probes: list[list[float]] = [[] for _ in channels]  # unanswered /ready, sent at
        self.walls = [tuple(w) for w in walls]  # fixed walls by wall set, then seeded ones
        self.stats = [ClientStats(name) for name in names]
        self.hands_played = 0
        self.seed = seed
        self.time_limit = time_limit
        self.tiles = tiles or T.NtpuTiles()
        self.log = log
        self.referee: _NtpuReferee | None = None
        self.encoder: NtpuLines | None = None  # the hand's ids and lines
        self.client_of_seat = [0, 1, 2, 3]
        self.asks = [AskTracker() for _ in channels]  # each connection's requests

    @property
    def ids(self) -> HandIds | None:
        return None if self.encoder is None else self.encoder.ids

    # ------------------------------------------------------------------ the wire

    def send(self, client: int, line: str) -> None:
        """Send ``line``; a client that leaves its input unread for the time limit is
        dropped (its seat played safely from then on)."""
        if self.log is not None:
            self.log.tx(f"{client + 1}> {line}")
        channel = self.channels[client]
        if channel.dead:
            return
        channel.send(line, self.time_limit)
        if channel.stalled:
            self.stats[client].dropped = True
            self.problem(client, f"left its input unread for {self.time_limit} s: dropped")

    def problem(self, client: int, text: str) -> None:
        """Count ``text`` among the client's problems and say it in the match log where it
        happened (a notice of its hand), so that a replay of the match shows why the seat
        played as it did: its safe moves read as the client's own."""
        self.stats[client].problems.append(text)
        if self.log is not None:
            self.log.event(ev.PlatformNotice(f"client {client + 1}: {text}"))

    def received(self, client: int, line: str) -> None:
        if self.log is not None:
            self.log.rx(f"{client + 1}< {line}")

    def broadcast(self, line: str) -> None:
        for client in range(4):
            self.send(client, line)

    # ------------------------------------------------------------------ the match

    def play(self, hands: int, progress: Callable[[int, int], None] | None = None) \
            -> list[ClientStats]:
        for client in range(4):  # a client's start-up is no reply time: the stdio clients
            # were started a moment ago, four at once, and still import the brain
            self._expect_ready(client, max(self.time_limit, STARTUP_LIMIT))
        for index in range(hands):
            self.play_hand(index)
            self.hands_played += 1
            if progress is not None:
                progress(index + 1, hands)
        for client in range(4):
            self.drop_stale(client)  # the last answers' repeats are counted too
        self.broadcast("/close")
        return self.stats

    def _expect_ready(self, client: int, limit: float) -> None:
        reply = self.request(client, "ready", limit)
        if reply is not None and reply.strip() != "/ready":
            self.stats[client].illegal += 1
            self.problem(client, f"{reply!r} to /ready")

    def request(self, client: int, word: str, limit: float | None = None) -> str | None:
        """Send ``/ask word`` (``/ready`` for "ready") and return the client's answer to it:
        None when none came within ``limit`` (default: the time limit; the ask expires, its
        answer, if it comes, is dropped as late) or the client left. Lines already waiting
        are matched first, so none is read as the answer to an ask sent after it arrived."""
        channel, asks, stats = self.channels[client], self.asks[client], self.stats[client]
        self.drop_stale(client)
        self.send(client, _request_line(word))
        asks.asked(word)
        limit = self.time_limit if limit is None else limit
        deadline = time.monotonic() + limit
        probe_at = (time.monotonic() + self.ready_every
                    if self.ready_every is not None and word != "ready" else None)
        while True:
            now = time.monotonic()
            if probe_at is not None and now >= probe_at:
                self._probe(client)
                probe_at = now + (self.ready_every or 0.0)
            wait_until = deadline if probe_at is None else min(deadline, probe_at)
            try:
                line = channel.receive(max(0.0, wait_until - time.monotonic()))
            except ChannelClosed:
                if not stats.dropped:
                    self.problem(client, "its connection closed: dropped, its seat played "
                                 "safely")
                stats.dropped = True
                asks.expire()
                return None
            if line is None:
                if time.monotonic() < deadline:
                    continue  # time to probe
                asks.expire()
                stats.timeouts += 1
                self.problem(client, f"no reply to {_request_line(word)} in {limit} s")
                return None
            self.received(client, line)
            if self._probe_answered(client, line):
                continue
            match = asks.match(line)
            if isinstance(match, Answer):
                return line
            self._stale(client, line, match)

    def _probe(self, client: int) -> None:
        self.probes[client].append(time.monotonic())
        self.stats[client].probes += 1
        self.send(client, "/ready")

    def _probe_answered(self, client: int, line: str) -> bool:
        """A ``/ready`` answering the oldest probe not yet answered: its delay recorded."""
        if line.split() != ["/ready"] or not self.probes[client]:
            return False
        sent = self.probes[client].pop(0)
        self.stats[client].ready_delays.append(time.monotonic() - sent)
        return True

    def drop_stale(self, client: int) -> None:
        """Log and drop the lines waiting from the client: no ask is outstanding, so they
        answer an expired ask or nothing."""
        for line in self.channels[client].readable():
            self.received(client, line)
            if self._probe_answered(client, line):
                continue
            match = self.asks[client].match(line)
            assert not isinstance(match, Answer), "a line matched with no ask outstanding"
            self._stale(client, line, match)

    def _stale(self, client: int, line: str, match: Late | Unasked) -> None:
        stats = self.stats[client]
        if isinstance(match, Late):
            stats.late += 1
            what = f"late reply to {_request_line(match.word)}"
        else:
            stats.unasked += 1
            what = "line answering no ask"
        text = f"client {client + 1}: {what}, dropped: {line}"
        stats.problems.append(text)
        if self.log is not None:
            self.log.event(ev.PlatformNotice(text))

    def play_hand(self, index: int) -> HandOutcome:
        """Hand ``index``: wall ``index // 4``, clients rotated by ``index % 4``."""
        wall_set, rotation = divmod(index, 4)
        dealer = wall_set % 4
        self.client_of_seat = [(seat + rotation) % 4 for seat in range(4)]
        players = [_ServerSeat(self, seat, self.client_of_seat[seat]) for seat in range(4)]
        self.encoder = NtpuLines(self.tiles, self.seed, self.wording)
        self.referee = _NtpuReferee(self, players)
        for seat, client in enumerate(self.client_of_seat):
            self.send(client, self.encoder.start_line(seat, self.stats[client].name))
        game = ev.GameStarted("taiwan16", 0, tuple(self.stats[c].name
                                                    for c in self.client_of_seat),
                              rules={"platform": "ntpu", "hand": index})
        if self.log is not None:
            self.log.event(game)
        setup = HandSetup(seed=self.seed * 1_000_003 + wall_set, dealer=dealer,
                          round_wind=(wall_set // 4) % 4, round_number=dealer,
                          wall=self.walls[wall_set] if wall_set < len(self.walls) else ())
        outcome = self.referee.play(setup)
        self.broadcast("/exit")
        self._count(outcome)
        return outcome

    def _count(self, outcome: HandOutcome) -> None:
        for seat, client in enumerate(self.client_of_seat):
            stats = self.stats[client]
            stats.hands += 1
            stats.points += outcome.deltas[seat]
        for winner, from_seat, value in outcome.wins:
            stats = self.stats[self.client_of_seat[winner]]
            stats.wins += 1
            stats.tai += value
            if from_seat is None:
                stats.self_draws += 1
            else:
                self.stats[self.client_of_seat[from_seat]].deal_ins += 1
        for illegal in outcome.illegal:  # the seats pass on only checked actions: a server bug
            stats = self.stats[self.client_of_seat[illegal.seat]]
            stats.illegal += 1
            stats.problems.append(f"referee: {illegal.action!r} on {illegal.request.kind}")

    # ------------------------------------------------------------------ events -> lines

    def before_event(self, event: Any) -> None:
        assert self.encoder is not None
        self.encoder.before_event(event)

    def lines_for(self, seat: int, event: Any) -> list[str]:
        assert self.encoder is not None
        return self.encoder.lines_for(seat, event)


def _request_line(word: str) -> str:
    return "/ready" if word == "ready" else f"/ask {word}"


# ---------------------------------------------------------------------- running a match


@dataclass
class MatchResult:
    stats: list[ClientStats]
    hands: int
    log_path: str | None
    seconds: float
    exit_codes: list[int | None] = field(default_factory=list)

    def table(self) -> str:
        """The tournament score table (the first column as wide as its longest name)."""
        names = {id(s): s.name + (" (dropped)" if s.dropped else "") for s in self.stats}
        width = max([14, *(len(n) + 1 for n in names.values())])
        lines = [f"{'client':<{width}}{'points':>10}{'hands':>7}{'wins':>6}{'tsumo':>6}"
                 f"{'deal-in':>8}{'avg tai':>8}{'illegal':>8}{'timeout':>8}{'late':>6}"
                 f"{'unasked':>8}"]
        for s in sorted(self.stats, key=lambda s: -s.points):
            avg = f"{s.tai / s.wins:.2f}" if s.wins else "-"
            name = names[id(s)]
            lines.append(f"{name:<{width}}{s.points:>10}{s.hands:>7}{s.wins:>6}{s.self_draws:>6}"
                         f"{s.deal_ins:>8}{avg:>8}{s.illegal:>8}{s.timeouts:>8}{s.late:>6}"
                         f"{s.unasked:>8}")
        for s in self.stats:
            if s.probes:
                slowest = (f", slowest {1000 * max(s.ready_delays):.1f} ms"
                           if s.ready_delays else "")
                lines.append(f"{s.name}: /ready probes {s.probes}, answered "
                             f"{len(s.ready_delays)}{slowest}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {"hands": self.hands, "seconds": round(self.seconds, 2), "log": self.log_path,
                "exit_codes": self.exit_codes,
                "clients": [{"name": s.name, "points": s.points, "hands": s.hands,
                             "wins": s.wins, "self_draws": s.self_draws,
                             "deal_ins": s.deal_ins, "tai": s.tai, "illegal": s.illegal,
                             "timeouts": s.timeouts, "late": s.late,
                             "unasked": s.unasked, "dropped": s.dropped,
                             "ready_probes": s.probes, "ready_answered": len(s.ready_delays),
                             "ready_max_ms": round(1000 * max(s.ready_delays, default=0.0), 3),
                             "problems": s.problems[:20]} for s in self.stats]}


def _match_log(log_dir: str | None, names: list[str], seed: int, hands: int) -> GameLogWriter:
    header = Header(platform="ntpu-server", variant="taiwan16", seat=None,
                    policy=",".join(names), policy_config={"seed": seed, "hands": hands},
                    game_id=f"ntpu-s{seed}",
                    extra={"players": names, "full_information": True})
    return GameLogWriter.create(log_dir, header, flush_per_hand=True)


def _not_connected(connected: int, host: str, port: int, waited: float,
                   procs: list[subprocess.Popen[bytes]], gave_up: bool = False) -> str:
    """Why the match did not start: how many clients came, and for a client we started,
    whether its process is still there. ``gave_up``: its process exited before connecting,
    so the wait ended then, not after ``waited`` seconds."""
    text = f"only {connected} of the four clients connected to {host}:{port}"
    code = procs[-1].poll() if procs else None
    if gave_up and code is not None:
        return (text + f" (client {connected + 1}'s process exited with status {code} "
                "before connecting)")
    text += f" (waited {waited:g} s for client {connected + 1})"
    if procs:
        text += (f"; its process exited with status {code}" if code is not None
                 else "; its process is running but did not connect")
    return text


def _accept(listener: socket.socket, timeout: float,
            proc: subprocess.Popen[bytes] | None) -> socket.socket | None:
    """The next connection within ``timeout`` seconds, or None. ``proc``: the client we
    started for it; once it has exited with no connection waiting, None at once (it will
    never connect), instead of the whole ``timeout`` later."""
    deadline = time.monotonic() + timeout
    while True:
        exited = proc is not None and proc.poll() is not None
        left = deadline - time.monotonic()
        wait = 0.0 if exited else (left if proc is None else min(left, EXIT_POLL))
        ready, _ = ready_fds([listener.fileno()], timeout=max(0.0, wait))
        if ready:
            with contextlib.suppress(BlockingIOError):  # gone again before the accept
                return listener.accept()[0]
        if exited or left <= 0:
            return None


def _end_clients(procs: list[subprocess.Popen[bytes]], connected: int,
                 failed: bool) -> list[int | None]:
    """The exit status of each client we started (None: killed), none left running. One
    limit for all together (it was 30 s each, one after the other); after a failed match a
    client that never connected is killed at once (nothing will ever tell it to stop) and
    the others, whose connections are closed, get :data:`FAILED_EXIT_LIMIT`."""
    if failed:
        for proc in procs[connected:]:
            proc.kill()
    deadline = time.monotonic() + (FAILED_EXIT_LIMIT if failed else CLIENT_EXIT_LIMIT)
    codes: list[int | None] = []
    try:
        for index, proc in enumerate(procs):
            try:
                code: int | None = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = None
            codes.append(None if failed and index >= connected else code)
    except BaseException:  # a stop (Ctrl-C, SIGTERM) met in the wait: the clients still
        for proc in procs:  # running are told to stop as well, none left behind
            if proc.poll() is None:
                proc.terminate()
        raise
    return codes


def run_match(hands: int, policies: list[str], seed: int = 0, transport: str = "tcp",
              host: str = "127.0.0.1", port: int = 0, time_limit: float = 5.0,
              client_args: list[str] | None = None, log_dir: str | None = None,
              write_log: bool = True, command: tuple[str, ...] = CLIENT_COMMAND,
              progress: Callable[[int, int], None] | None = None,
              on_listening: Callable[[int], None] | None = None,
              walls: Sequence[Sequence[int]] = (),
              ready_every: float | None = None, wording: str = "spec",
              accept_timeout: float = ACCEPT_TIMEOUT) -> MatchResult:
    """Serve a match of ``hands`` hands. ``transport``: "tcp" starts four ``mjbot ntpu``
    processes that connect to us, "stdio" talks to four over their pipes, "external" waits for
    four clients to connect (``on_listening`` is told the port). ``walls``: the tiles of the
    first wall sets, in dealing order (a tournament's published walls); seeded after them.
    ``ready_every``: the liveness probe (see the module's docstring). ``wording``: "spec"
    (the published protocol) or "lab" (the NYCU lab referee's lines, ntpu_lines.py).
    :class:`MatchNotStarted` where the address cannot be listened on, or a client has not
    connected ``accept_timeout`` seconds after the one before (both raised a traceback: an
    OSError from the bind, a TimeoutError from accept)."""
    started = time.monotonic()
    names = ([f"{p}-{i + 1}" for i, p in enumerate(policies)] if transport != "external"
             else [f"client-{i + 1}" for i in range(4)])
    extra = list(client_args or [])
    procs: list[subprocess.Popen[bytes]] = []
    channels: list[Channel] = []
    listener: socket.socket | None = None
    # an IPv6 address (``::1``, or ``[::1]`` as a --server writes it): an IPv6 listener,
    # and the clients told it in brackets (an IPv4 one refused it: "Address family ...")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    family, address = ((socket.AF_INET6, f"[{bare}]") if ":" in bare
                       else (socket.AF_INET, bare))
    if transport != "stdio":  # before the match log: a match that cannot listen has none
        try:
            listener = socket.create_server((bare, port), family=family)
        except OSError as exc:
            raise MatchNotStarted(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                                  listening=True) from None
    try:
        log = _match_log(log_dir, names, seed, hands) if write_log else None
    except BaseException:
        if listener is not None:
            listener.close()
        raise
    server: NtpuServer | None = None
    try:
        if transport == "stdio":
            for name, policy in zip(names, policies, strict=True):
                proc = subprocess.Popen([*command, "--stdio", "--policy", policy, *extra],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=own_env())  # our clients read no secret
                procs.append(proc)
                channels.append(Channel.for_process(name, proc))
        else:
            assert listener is not None
            listener.setblocking(False)  # accepted when ready (_accept)
            bound = listener.getsockname()[1]
            if on_listening is not None:
                on_listening(bound)
            for i, name in enumerate(names):
                if transport == "tcp":
                    procs.append(subprocess.Popen(
                        [*command, "--server", f"{address}:{bound}", "--policy", policies[i],
                         *extra], stdin=subprocess.DEVNULL, env=own_env()))
                # one at a time: client i is the i-th started
                sock = _accept(listener, accept_timeout,
                               procs[i] if transport == "tcp" else None)
                if sock is None:
                    raise MatchNotStarted(_not_connected(
                        i, host, bound, accept_timeout, procs,
                        gave_up=transport == "tcp" and procs[i].poll() is not None))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                channels.append(Channel.for_socket(name, sock))
            # the four are in: a later client (a fifth, or one back after its line dropped)
            # is refused as it connects, where the system let it in to hear nothing until
            # the match ended (a dropped client's seat is played safely to the end)
            listener.close()
        server = NtpuServer(channels, names, seed, time_limit, log=log, walls=walls,
                            ready_every=ready_every, wording=wording)
        stats = server.play(hands, progress)
    finally:
        try:
            for channel in channels:
                channel.close()
            if listener is not None:
                listener.close()
            codes = _end_clients(procs, len(channels), sys.exc_info()[1] is not None)
        finally:  # a stop (Ctrl-C, SIGTERM) met while the clients exit: the footer still
            if log is not None:  # the hands played: a match cut short says so
                played = server.hands_played if server is not None else 0
                result: dict[str, Any] = {"hands": played}
                if played < hands:
                    result["unfinished"] = True
                    if isinstance(sys.exc_info()[1], KeyboardInterrupt | Stopped):
                        result["stopped"] = True
                log.close(Footer(result))
    return MatchResult(stats, hands, str(log.path) if log is not None else None,
                       time.monotonic() - started, codes)
