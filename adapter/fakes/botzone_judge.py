"""A local Botzone judge: the local table's MCR referee speaking Botzone's protocol to four bot
processes, exactly as Botzone runs them.

Every request line goes to every bot and every bot answers it (``PASS`` where nothing else is
allowed); a one-shot bot is started anew for each line with the whole history on stdin (simple
or JSON interaction, ``data`` carried between turns), a keep-running bot gets the full first
input and then one request per turn (a bare line in simple interaction, a JSON-encoded string in
JSON interaction). The referee deals the duplicate walls, resolves claims and scores (same
walls, priorities and verdicts as the judge: a false ``HU`` where one may win (one's own draw,
another seat's discard or added kong) is WH, any other answer the rules do not allow (a ``HU``
where only ``PASS`` goes included) is WA, -30 for the offender and +10 for the others); a bot
that crashes, prints nothing or runs past the limit gets RE / TLE. Answers are read as
strictly as Botzone reads them: in JSON interaction every answer, keep-running turns included,
must be one line holding one JSON object with a string ``response`` (NJ otherwise). The match
is written as a Botzone-style judge log that ``mjbot replay`` reads.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter.local.external.keeper import pipe_size
from adapter.local.external.process import EXIT_POLL, ready_fds
from adapter.local.referee import MCR_PENALTY, MCR_PENALTY_GAIN, HandReferee, HandSetup
from adapter.local.walls import shuffled_wall
from adapter.own_python import outside_env, own_python
from adapter.platforms.botzone import FALLBACK_NOTE, KEEP_RUNNING
from brain.rules.mcr import JUDGE_FAN_NAMES
from brain.state import TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.botzone_server import RequestLines, read_response
from protocols.codec import ProtocolError, load_json

# one-shot simple / JSON interaction; keep running in simple ("keep") or JSON ("keep-json") form
MODES = ("simple", "json", "keep", "keep-json")
# bytes a bot may print in one turn (OLE past it): a response, 1 KB of debug and 100 KB each of
# data and globaldata are all Botzone lets through
OUTPUT_LIMIT = 1 << 20
CHUNK = 65536
NOTES_KEPT = 100  # fallback notes kept word for word per bot; every one is counted
NOTE_LINE = 4096  # bytes of a stderr line read for a note; the rest of a longer one skipped
STDERR_TAIL = 300  # bytes of a bot's last stderr kept for an RE's message
UNASKED_SHOWN = 300  # bytes of a stray turn's text shown in the summary (the rest counted)
DEFAULT_COMMAND = own_python("-m", "adapter.cli", "--log-level", "error", "botzone")


class Verdict(Exception):  # a judge's verdict, raised to end the match
    """A bot broke the protocol: ``code`` is Botzone's (WA, WH, RE, TLE)."""

    def __init__(self, seat: int, code: str, detail: str) -> None:
        super().__init__(f"seat {seat}: {code} ({detail})")
        self.seat, self.code, self.detail = seat, code, detail

    def __reduce__(self) -> tuple[Any, ...]:  # pickle would call __init__(the message) alone
        return type(self), (self.seat, self.code, self.detail), self.__dict__


def unasked_turns(lines: Iterable[bytes], keep: int) -> tuple[int, list[str], int]:
    """Whole turns among a kept run's complete lines that were already there before its next
    request was sent: each ends in the keep-running marker, so it answers no request (an
    answer and its marker printed twice). Read as the next request's, it put the reader one
    answer behind the bot for the rest of the match; the judge and the outside seat both drop
    them, through this one reading. Returns how many turns, the text of the first ``keep``
    of them as shown (:func:`_turn_shown`: its first bytes), and how many lines they fill
    (what follows the last marker is no whole turn: the next turn's first lines, its
    response, as Botzone reads them)."""
    marker = KEEP_RUNNING.encode()
    count, used = 0, 0
    texts: list[str] = []
    turn: list[bytes] = []
    for i, raw in enumerate(lines, 1):
        if raw.strip() != marker:
            turn.append(raw)
            continue
        count, used = count + 1, i
        if len(texts) < keep:
            texts.append(_turn_shown(turn))
        turn = []
    return count, texts, used


def _turn_shown(turn: list[bytes]) -> str:
    """A stray turn's text as the summary and the faults show it: its first
    :data:`UNASKED_SHOWN` bytes, and how many more there were (a bot may print up to
    :data:`OUTPUT_LIMIT` bytes in a turn, all of which the summary printed)."""
    raw = b"\n".join(r.rstrip(b"\r") for r in turn)
    text = raw[:UNASKED_SHOWN].decode("utf-8", errors="replace")
    if len(raw) > UNASKED_SHOWN:
        text += f" ... ({len(raw) - UNASKED_SHOWN} bytes left out)"
    return text


# ---------------------------------------------------------------------- bot processes


class StderrNotes:
    """What the judge keeps of a bot's stderr, fed a pipeful at a time as it is read: every
    fallback note counted (the first :data:`NOTES_KEPT` kept word for word), the last
    :data:`STDERR_TAIL` bytes, and at most :data:`NOTE_LINE` bytes of the line under way.
    Nothing else is held, so a bot printing debug output without end costs no memory or
    disk, and no note is dropped however much it prints around them."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: list[str] = []
        self.tail = b""
        self.line = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.tail = (self.tail + chunk)[-STDERR_TAIL:]
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self.line += piece[:NOTE_LINE - len(self.line)]
            if end < 0:
                return
            self._line_done()
            start = end + 1

    def begin(self) -> None:
        """A new process's stderr: no line under way, no tail (an RE's message is its own)."""
        self.tail, self.line = b"", bytearray()

    def end(self) -> None:
        """The stream ended: its last line, if unfinished, read too."""
        if self.line:
            self._line_done()

    def _line_done(self) -> None:
        text, self.line = self.line.decode("utf-8", errors="replace"), bytearray()
        for line in text.splitlines():
            if line.startswith(FALLBACK_NOTE):
                self.count += 1
                if len(self.kept) < NOTES_KEPT:
                    self.kept.append(line.removeprefix(FALLBACK_NOTE).removesuffix(")"))


class BotProcess:
    """One seat's bot, in one of Botzone's three ways of running it."""

    def __init__(self, seat: int, mode: str, command: tuple[str, ...], limit: float,
                 later_limit: float, env: dict[str, str] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown bot mode {mode!r}: {', '.join(MODES)}")
        self.seat, self.mode = seat, mode
        self.keep = mode in ("keep", "keep-json")
        self.json_io = mode in ("json", "keep-json")
        # said outright: the upload zip keeps running unless told not to
        self.command = [*command, "--keep-running" if self.keep else "--no-keep-running"]
        self.limit, self.later_limit = limit, later_limit
        self.env = env
        self.requests: list[str] = []
        self.responses: list[str] = []
        self.data, self.globaldata = "", ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: int | None = None  # a keep-running bot's stderr (a pipe), read for notes
        self.buffer = b""
        self.seconds: list[float] = []
        self.failed = False
        # why, for each answer the brain gave for the policy (as the bot said on stderr)
        self.notes = StderrNotes()
        self.unasked = 0  # whole turns a kept run printed answering no request, dropped
        self.unasked_first: str | None = None  # the first of them

    def request(self, line: str) -> str:
        """The bot's answer to ``line``, or its verdict, always within the turn's limit: a
        bot that stops reading its input, prints without end or never answers cannot hold
        the judge."""
        self.requests.append(line)
        start = time.monotonic()
        try:
            if self.keep and self.proc is not None:
                response = self._keep_running_turn(line)
            elif self.keep:
                response = self._start_keep_running()
            else:
                response = self._one_shot()
        except Verdict:
            self.failed = True  # stopped at once at close, as Botzone stops it
            raise
        self.seconds.append(time.monotonic() - start)
        self.responses.append(response)
        return response

    def _input(self) -> str:
        if self.json_io:
            return json.dumps({"requests": self.requests, "responses": self.responses,
                               "data": self.data, "globaldata": self.globaldata}) + "\n"
        lines = [str(len(self.requests))]
        for i, request in enumerate(self.requests):
            lines.append(request)
            if i < len(self.responses):
                lines.append(self.responses[i])
        return "\n".join([*lines, self.data, self.globaldata]) + "\n"

    def _one_shot(self) -> str:
        deadline = time.monotonic() + self.limit
        # a bot, ours or a user's, reads no secret of ours
        proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=outside_env(self.env),
                                start_new_session=True)
        try:
            self.notes.begin()
            stdout = self._exchange(proc, self._input().encode(), deadline)
            try:
                code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise Verdict(self.seat, "TLE", f"did not exit in {self.limit} s") from None
        finally:
            _end(proc)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
        self.notes.end()
        out = stdout.decode("utf-8", errors="replace")
        lines = out.split("\n")
        if lines[-1] == "":
            lines.pop()  # the newline that ends the last line
        if not out.strip():
            raise Verdict(self.seat, "RE", f"no response (exit {code}): "
                          f"{self.notes.tail.decode(errors='replace')!r}")
        return self._answer(lines)

    def _exchange(self, proc: subprocess.Popen[bytes], data: bytes,
                  deadline: float) -> bytes:
        """A one-shot turn: ``data`` written and the input closed, stdout and stderr read to
        their end or the bot's exit, never waiting past ``deadline`` (TLE) on a bot that
        does not read or does not end; stdout past :data:`OUTPUT_LIMIT` is OLE, stderr read
        into the bot's notes as it comes (a limit on it would drop the notes past it). Once
        the bot has exited, all it printed is in the pipes: what is there is read and the
        turn ends, though a helper it started holds them open (that was a TLE)."""
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdin, stdout, stderr = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        for fd in (stdin, stdout, stderr):
            os.set_blocking(fd, False)
        left_to_send = memoryview(data)
        got = bytearray()
        reading = [stdout, stderr]
        writing = [stdin]
        while reading or writing:
            if proc.poll() is not None:
                for fd in reading:
                    self._drain(fd, stdout, got)
                break
            left = deadline - time.monotonic()
            if left <= 0:
                what = "read its input" if writing else "answer and exit"
                raise Verdict(self.seat, "TLE", f"did not {what} in {self.limit} s")
            readable, writable = ready_fds(reading, writing, min(left, EXIT_POLL))
            if writable:
                try:
                    left_to_send = left_to_send[os.write(stdin, left_to_send[:CHUNK]):]
                except BlockingIOError:
                    pass
                except OSError:  # it closed its input: what it printed still counts
                    left_to_send = left_to_send[:0]
                if not left_to_send:
                    writing = []
                    with contextlib.suppress(OSError):
                        proc.stdin.close()
            for fd in readable:
                chunk = os.read(fd, CHUNK)
                if chunk:
                    self._printed(fd, stdout, chunk, got)
                else:
                    reading.remove(fd)
        return bytes(got)

    def _printed(self, fd: int, stdout: int, chunk: bytes, got: bytearray) -> None:
        """``chunk`` read from a one-shot bot's ``fd``: its output (OLE past the limit) or
        its stderr (its notes)."""
        if fd != stdout:
            self.notes.feed(chunk)
            return
        got += chunk
        if len(got) > OUTPUT_LIMIT:
            raise Verdict(self.seat, "OLE", f"more than {OUTPUT_LIMIT} bytes of output in "
                          "one turn")

    def _drain(self, fd: int, stdout: int, got: bytearray) -> None:
        """What an exited one-shot bot left in ``fd``, read without waiting: as many bytes
        as the pipe can hold (keeper.pipe_size) take all of it, and a helper writing on
        cannot hold the judge."""
        for chunk in _read_now(fd, pipe_size(fd)):
            if chunk:
                self._printed(fd, stdout, chunk, got)

    def _answer(self, lines: list[str]) -> str:
        """The response in what the bot printed for one turn (a keep-running turn: what came
        before the marker), read as Botzone reads it; ``data`` / ``globaldata`` kept."""
        if self.json_io:
            return self._json_answer(lines)
        if not lines or not lines[0].strip():
            raise Verdict(self.seat, "RE", f"no response: {lines[:3]!r}")
        self.data = lines[2] if len(lines) > 2 else ""
        self.globaldata = "\n".join(lines[3:])
        return lines[0].strip()

    def _json_answer(self, lines: list[str]) -> str:
        """JSON interaction: one line, one JSON object, its ``response`` a string. Blank
        lines around it count for nothing, as on Botzone, where bots following its own C++
        sample (FastWriter's line, which ends in a newline, then ``endl``) print one after
        every answer and play; they were NJ here on every turn. An object over several lines
        stays NJ: nothing shows Botzone reads one, and a bot this judge passes must not lose
        there."""
        filled = [line for line in lines if line.strip()]
        if len(filled) != 1:
            raise Verdict(self.seat, "NJ", f"{len(filled)} lines where one JSON object line "
                          f"goes: {filled[:3]!r}")
        text = filled[0]
        try:
            obj = load_json(text)  # nested past the parser's depth: not JSON either
        except json.JSONDecodeError:
            raise Verdict(self.seat, "NJ", f"not JSON: {text[:200]!r}") from None
        if not isinstance(obj, dict) or not isinstance(response := obj.get("response"), str):
            raise Verdict(self.seat, "NJ", f"not an object with a string response: "
                          f"{text[:200]!r}")
        for key in ("data", "globaldata"):
            value = obj.get(key, "")
            setattr(self, key, value if isinstance(value, str) else json.dumps(value))
        return response.strip()

    @property
    def fallbacks(self) -> list[str]:
        """The bot says each answer the brain gave in its policy's place on stderr (and
        nowhere else in a later keep-running turn): a match whose bot fell back is not that
        policy's match. The first :data:`NOTES_KEPT` of its notes (all: :attr:`fallback_count`)."""
        return self.notes.kept

    @property
    def fallback_count(self) -> int:
        return self.notes.count

    def _errs(self) -> list[int]:
        """The keep-running bot's stderr while it can still say something."""
        return [] if self.stderr is None else [self.stderr]

    def _read_stderr(self, ready: list[int], whole: bool = False) -> None:
        """Read the bot's stderr (if in ``ready``) into its notes without waiting, one read
        (``whole``: all the pipe can hold, keeper.pipe_size): a bot must never wait on a
        full stderr pipe, nor hold the judge."""
        if self.stderr is None or self.stderr not in ready:
            return
        for chunk in _read_now(self.stderr, pipe_size(self.stderr) if whole else CHUNK):
            if not chunk:
                self.notes.end()
                os.close(self.stderr)
                self.stderr = None
                return
            self.notes.feed(chunk)

    def _start_keep_running(self) -> str:
        # a pipe, read (into its notes) whenever the judge waits on the bot and at close: a
        # file took all it printed, read whole at close
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=outside_env(self.env), start_new_session=True)
        assert self.proc.stdin is not None and self.proc.stderr is not None
        os.set_blocking(self.proc.stdin.fileno(), False)  # written by _send only
        self.stderr = os.dup(self.proc.stderr.fileno())  # ours to close when it ends
        self.proc.stderr.close()
        os.set_blocking(self.stderr, False)
        deadline = time.monotonic() + self.limit
        self._send(self._input(), deadline, self.limit)
        return self._answer(self._read_until_keep_running(deadline, self.limit))

    def _keep_running_turn(self, line: str) -> str:
        """A later turn: only this turn's request, a bare line or (JSON interaction) the
        request as a JSON string."""
        deadline = time.monotonic() + self.later_limit
        self._skip_unasked_turns()
        self._send((json.dumps(line) if self.json_io else line) + "\n", deadline,
                   self.later_limit)
        return self._answer(self._read_until_keep_running(deadline, self.later_limit))

    def _skip_unasked_turns(self) -> None:
        """Before a later request: whole turns the kept run has printed since its last turn
        ended answer no request (:func:`unasked_turns`, as the outside seat reads them): they
        are dropped and counted (the summary's ``unasked``: the run fails), and the next turn
        read answers this request. At most :data:`OUTPUT_LIMIT` bytes are read here, without
        waiting; past that much a turn's reading is OLE as before."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        read = 0
        while read < OUTPUT_LIMIT and fd in ready_fds([fd], timeout=0)[0]:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            read += len(chunk)
            self.buffer += chunk
        complete = self.buffer.split(b"\n")[:-1]
        count, texts, used = unasked_turns(complete, 1)
        if not count:
            return
        self.buffer = b"".join(raw + b"\n" for raw in complete[used:]) + \
            self.buffer.rsplit(b"\n", 1)[-1]
        self.unasked += count
        if self.unasked_first is None:
            self.unasked_first = texts[0]

    def _send(self, text: str, deadline: float, limit: float) -> None:
        """Write ``text`` within the turn: a bot that stops reading fills the pipe, and its
        turn ends in TLE at the deadline, as on Botzone, not in a write that never returns."""
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        data = memoryview(text.encode())
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Verdict(self.seat, "TLE", f"did not read its input in {limit} s")
            try:
                readable, writable = ready_fds(self._errs(), [fd], left)
                self._read_stderr(readable)
                if writable:
                    data = data[os.write(fd, data[:CHUNK]):]
            except BlockingIOError:
                continue
            except OSError:
                raise Verdict(self.seat, "RE", "the bot closed its input") from None

    def _read_until_keep_running(self, deadline: float, limit: float) -> list[str]:
        """The lines of one keep-running turn, up to the marker; more than
        :data:`OUTPUT_LIMIT` bytes of them (a line without end included) is OLE."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        lines: list[str] = []
        printed = 0  # bytes of this turn's lines
        while True:
            # each line sliced off where it lies: taking one at a time off the front copied
            # all the rest each time (2 s of CPU for a bot's 1 MB of empty lines)
            start = 0
            while (end := self.buffer.find(b"\n", start)) >= 0:
                raw, start = self.buffer[start:end], end + 1
                printed += len(raw) + 1
                text = raw.decode("utf-8", errors="replace")
                if text.strip() == KEEP_RUNNING:
                    self.buffer = self.buffer[start:]
                    if not lines:
                        code = "NJ" if self.json_io else "RE"
                        raise Verdict(self.seat, code, "keep-running marker without a response")
                    return lines
                lines.append(text)
            self.buffer = self.buffer[start:]
            if printed + len(self.buffer) > OUTPUT_LIMIT:
                raise Verdict(self.seat, "OLE", f"more than {OUTPUT_LIMIT} bytes of output "
                              "in one turn")
            left = deadline - time.monotonic()
            if left <= 0:
                raise Verdict(self.seat, "TLE", f"no answer in {limit} s")
            ready, _ = ready_fds([fd, *self._errs()], timeout=min(left, EXIT_POLL))
            self._read_stderr(ready)
            if fd not in ready:
                if self.proc.poll() is None:
                    continue
                # it exited: all it printed is in the pipe now, though it was not when the
                # judge looked (woken by its stderr, say); only an empty pipe is the end (a
                # helper it started may hold its output open, but no answer can come)
                if fd not in ready_fds([fd], timeout=0)[0]:
                    raise Verdict(self.seat, "RE", f"the bot exited ({self.proc.poll()})")
            chunk = os.read(fd, CHUNK)
            if not chunk:
                raise Verdict(self.seat, "RE", f"the bot exited ({self.proc.poll()})")
            self.buffer += chunk

    def close(self) -> None:
        """End a keep-running bot: its input closed, 5 s to exit (none after a verdict),
        its stderr read meanwhile (it may be saying its last notes) and after."""
        if self.proc is not None:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            deadline = time.monotonic() + (0 if self.failed else 5)
            while self.proc.poll() is None and (left := deadline - time.monotonic()) > 0:
                if self.stderr is None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(timeout=left)
                    break
                self._read_stderr(ready_fds(self._errs(), timeout=min(left, 0.1))[0])
            _end(self.proc)
            for stream in (self.proc.stdout, self.proc.stdin):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
            self.proc = None
        if self.stderr is not None:  # what it said last (a helper that left its group may
            # still hold the pipe: no end)
            self._read_stderr(self._errs(), whole=True)
        if self.stderr is not None:
            self.notes.end()
            os.close(self.stderr)
            self.stderr = None


def _read_now(fd: int, limit: int) -> Iterator[bytes]:
    """Up to ``limit`` bytes of the non-blocking ``fd``, as much as it holds now, never
    waiting; an empty chunk, last, where it has ended."""
    while limit > 0:
        try:
            chunk = os.read(fd, min(limit, CHUNK))
        except BlockingIOError:
            return
        yield chunk
        if not chunk:
            return
        limit -= len(chunk)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End a bot with all it started: it leads its own session, and its group is killed
    with it, as Botzone ends a turn (a one-shot bot) or a match (a kept one). A helper it
    started outlived the judge, one more each turn of a one-shot bot, and held its pipes.
    The group is killed before the bot is reaped where it still runs; a group id is not
    reused while it has a member, so this reaches only what is left of the bot's group."""
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# ---------------------------------------------------------------------- the judge


class _JudgeSeat:
    """The referee's player for one seat: turns what the seat sees into Botzone request lines,
    sends each to the bot at once, and hands the referee the bot's answers as actions."""

    def __init__(self, judge: BotzoneJudge, seat: int) -> None:
        self.judge, self.seat = judge, seat
        self.name = judge.bots[seat].mode
        self.state = TableState("mcr", seat)
        # the answer to the last line (still coming, or not yet asked for)
        self.pending: concurrent.futures.Future[str] | str | None = None
        self.line = ""  # the request line that answer answers
        self.requests = RequestLines(seat)
        self.planned_discard: int | None = None  # the discard named in our PENG / CHI answer

    def observe(self, event: Any) -> None:
        if self.seat == 0:
            self.judge.next_event(event)
        if not (isinstance(event, ev.MeldCalled) and event.seat == self.seat
                and event.kind in ("chi", "pon")):
            # the discard named with a PENG / CHI belongs to that call only: a call that lost
            # to another seat's must not leak into this seat's next turn
            self.planned_discard = None
        self.state.apply(event)
        self.judge.queue(self.seat, self.requests.lines(event))

    def decide(self, request: ev.DecisionRequest) -> Any:
        if request.kind == "turn" and self.planned_discard is not None:
            tile, self.planned_discard = self.planned_discard, None
            return ev.Discard(tile)
        response = self.answer()
        self.pending = None
        if response is None:
            raise Verdict(self.seat, "WA", f"asked for a {request.kind} without a request line")
        return self._action(response, request)

    def answer(self) -> str | None:
        """The bot's answer to the last line (waiting for it if need be)."""
        if isinstance(self.pending, concurrent.futures.Future):
            self.pending = self.pending.result()
        return self.pending

    def _action(self, response: str, request: ev.DecisionRequest) -> Any:
        try:
            reading = read_response(response, request)
        except ProtocolError as exc:
            raise Verdict(self.seat, "WA", str(exc)) from None
        self.planned_discard = reading.planned_discard
        return reading.action


@dataclass
class MatchResult:
    scores: list[int]
    verdicts: dict[int, str] = field(default_factory=dict)
    reason: str = ""
    fan: int | None = None
    log: dict[str, Any] = field(default_factory=dict)
    turn_seconds: list[list[float]] = field(default_factory=list)
    fallbacks: list[list[str]] = field(default_factory=list)  # per seat, the first its bot said
    fallback_counts: list[int] = field(default_factory=list)  # per seat, all its bot said
    # per seat, whole turns its kept run printed answering no request, and the first
    unasked: list[int] = field(default_factory=list)
    unasked_first: list[str | None] = field(default_factory=list)


class BotzoneJudge:
    """One match (one hand) between four bot processes."""

    def __init__(self, modes: list[str], seed: int, command: tuple[str, ...] = DEFAULT_COMMAND,
                 limit: float = 6.0, later_limit: float = 4.0,
                 env: dict[str, str] | None = None,
                 commands: Sequence[tuple[str, ...]] | None = None) -> None:
        """``commands``: each seat's own (a policy per seat), else ``command`` in all four."""
        per_seat = list(commands) if commands is not None else [command] * 4
        self.bots = [BotProcess(s, modes[s], per_seat[s], limit, later_limit, env)
                     for s in range(4)]
        self.seats = [_JudgeSeat(self, s) for s in range(4)]
        self.seed = seed
        self.quan = random.Random(seed).randrange(4)
        self.turns: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any]]] = {}
        self.event_no = 0
        self.queued: list[list[str]] = [[] for _ in range(4)]  # the event's lines by seat
        self.won: ev.RoundWon | None = None
        self.pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="bot")

    def next_event(self, event: Any) -> None:
        """Seat 0 sees each event first: a new event starts new judge turns."""
        self.event_no += 1
        if isinstance(event, ev.RoundWon) and self.won is None:
            self.won = event

    def queue(self, seat: int, lines: list[str]) -> None:
        """The seat's request lines for the event all seats are seeing; once the last seat
        has seen it, sent as the judge sends them (:meth:`_send_turns`)."""
        self.queued[seat] = lines
        if seat == len(self.seats) - 1:
            queued, self.queued = self.queued, [[] for _ in self.seats]
            self._send_turns(queued)

    def _send_turns(self, queued: list[list[str]]) -> None:
        """The event's lines a judge turn at a time, as Botzone's judge plays a turn: every
        seat's answer to the turn before is in and checked, then every seat is sent its
        line. Sent seat by seat, a seat's bad answer to the setup was found only after the
        seats before it had been sent the deal: the log held part of a turn Botzone never
        played (the deal to seat 0 alone)."""
        for slot in range(max(map(len, queued), default=0)):
            self._check_answers()
            for seat, lines in enumerate(queued):
                if slot < len(lines):
                    self.send(seat, lines[slot], slot)

    def _check_answers(self) -> None:
        """Every answer nobody asked for (no decision read it) must have been PASS: anything
        else is WA, a HU on a discard or added kong WH; the first such seat in seat order
        gets the verdict."""
        for seat, judge_seat in enumerate(self.seats):
            previous, answered = judge_seat.answer(), judge_seat.line
            if previous not in (None, "PASS"):
                code = "WH" if previous == "HU" and offers_a_win(answered, seat) else "WA"
                raise Verdict(seat, code, f"answered {previous!r} to {answered!r}, where "
                              "only PASS goes")

    def send(self, seat: int, line: str, slot: int = 0) -> None:
        """One request line to one bot, answered in the background (the four bots of a turn
        work at once, as on Botzone)."""
        judge_seat = self.seats[seat]
        judge_seat.line = line
        request, answers = self.turns.setdefault((self.event_no, slot), (
            {"output": {"command": "request", "content": {},
                        "display": {"action": _action_of(line)}}}, {}))
        request["output"]["content"][str(seat)] = line
        if line.startswith("2 "):  # the judge's display names the drawer and the tile
            request["output"]["display"].update(player=seat, tile=line.split()[1])
        bot = self.bots[seat]

        def ask() -> str:
            response = bot.request(line)
            answers[str(seat)] = {"verdict": "OK", "response": response}
            return response

        judge_seat.pending = self.pool.submit(ask)

    def play(self) -> MatchResult:
        referee = HandReferee("mcr", self.seats)
        wall = shuffled_wall("mcr", self.seed)
        result = MatchResult([0, 0, 0, 0])
        try:
            referee.emit(ev.GameStarted("mcr", 0))
            outcome = referee.play(HandSetup(self.seed, dealer=0, round_wind=self.quan,
                                             wall=tuple(wall)))
            result.scores = list(outcome.deltas)
            result.reason = outcome.reason
            if outcome.penalty_seat is not None:
                code = "WH" if outcome.reason == "false_win" else "WA"
                result.verdicts[outcome.penalty_seat] = code
            if outcome.wins:
                result.fan = outcome.wins[0][2]
        except Verdict as verdict:
            result.verdicts[verdict.seat] = verdict.code
            result.scores = [MCR_PENALTY_GAIN] * 4
            result.scores[verdict.seat] = MCR_PENALTY
            result.reason = f"{verdict.code}: {verdict.detail}"
        finally:
            for judge_seat in self.seats:  # answers still running: wait, then stop the bots
                with contextlib.suppress(Verdict):
                    judge_seat.answer()
            for bot in self.bots:
                bot.close()
            self.pool.shutdown()
        result.turn_seconds = [bot.seconds for bot in self.bots]
        result.fallbacks = [bot.fallbacks for bot in self.bots]
        result.fallback_counts = [bot.fallback_count for bot in self.bots]
        result.unasked = [bot.unasked for bot in self.bots]
        result.unasked_first = [bot.unasked_first for bot in self.bots]
        result.log = self._judge_log(wall, result)
        return result

    def _judge_log(self, wall: list[int], result: MatchResult) -> dict[str, Any]:
        """The match in the platform's log format (judge turns with their request lines and
        display, bot turns with the responses)."""
        hands = [[T.to_botzone(t) for t in reversed(wall[34 * s + 21:34 * s + 34])]
                 for s in range(4)]
        init = {"quan": self.quan, "srand": self.seed,
                "walltiles": " ".join(T.to_botzone(t) for t in wall)}
        entries: list[dict[str, Any]] = []
        for request, answers in self.turns.values():
            action = request["output"]["display"]["action"]
            if action == "INIT":
                request["output"]["display"].update(quan=self.quan)
            elif action == "DEAL":
                request["output"]["display"].update(hand=hands)
            entries.extend((request, answers))
        display: dict[str, Any] = {"score": result.scores}
        if result.verdicts:
            seat, code = next(iter(result.verdicts.items()))
            display.update(action=code, player=seat)
        elif self.won is not None:
            display.update(action="HU", player=self.won.winner, fanCnt=self.won.value,
                           fan=[_fan_entry(y) for y in self.won.yaku])
        else:
            display.update(action="HUANG")
        finish = {"output": {"command": "finish",
                             "content": {str(s): v for s, v in enumerate(result.scores)},
                             "display": display}}
        return {"initdata": init, "log": [*entries, finish], "scores": result.scores}


def _fan_entry(item: str) -> dict[str, Any]:
    """The referee's "name(value)" as the judge's {name, cnt, value}, named as the judge names
    it: a local judge log reads as a Botzone one, for replay and for whatever compares it."""
    name, _, value = item.rpartition("(")
    return {"name": JUDGE_FAN_NAMES.get(name, name), "cnt": 1,
            "value": int(value.rstrip(")") or 0)}


def offers_a_win(line: str, seat: int) -> bool:
    """Whether a ``HU`` answer to ``line`` is a claim the judge scores (WH when short of 8
    fan): another seat's discard (``PLAY``, ``PENG``, ``CHI``) or added kong (``BUGANG``).
    Anywhere else (the setup, the deal, a draw, one's own discard, a ``GANG``) the judge
    takes only ``PASS``, and a ``HU`` there is WA like any other answer."""
    parts = line.split()
    return len(parts) >= 3 and parts[0] == "3" and parts[1] != str(seat) \
        and parts[2] in ("PLAY", "PENG", "CHI", "BUGANG")


def _action_of(line: str) -> str:
    parts = line.split()
    if parts[0] == "0":
        return "INIT"
    if parts[0] == "1":
        return "DEAL"
    if parts[0] == "2":
        return "DRAW"
    return parts[2] if len(parts) > 2 else "?"


def write_log(path: str | Path, log: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(log, ensure_ascii=False))


def run_matches(games: int, modes: list[str], seed: int = 0, log_dir: str | None = None,
                command: tuple[str, ...] = DEFAULT_COMMAND, limit: float = 6.0,
                later_limit: float = 4.0, progress: Any = None,
                commands: Sequence[tuple[str, ...]] | None = None,
                names: Sequence[str] | None = None) -> dict[str, Any]:
    """``games`` matches, the bot modes rotating through the seats, each seat's bot its
    ``commands`` entry (else ``command`` in all four) under its ``names`` entry; verdicts,
    outcomes and answer times (per mode: median and worst) summed up, and per seat its
    points, verdicts and fallbacks."""
    names = list(names) if names is not None else [" ".join(command)] * 4
    points = [0] * 4
    seat_verdicts: list[dict[str, int]] = [{} for _ in range(4)]
    seat_fallbacks = [0] * 4
    verdicts: dict[str, int] = {}
    reasons: dict[str, int] = {}
    times: dict[str, list[float]] = {m: [] for m in MODES}
    first: dict[str, str] = {}  # why, as a bot of each mode first said it fell back
    fell_back = dict.fromkeys(MODES, 0)  # how often the bots of each mode said so
    unasked = dict.fromkeys(MODES, 0)  # whole turns printed answering no request, per mode
    unasked_first: dict[str, str] = {}
    for game in range(games):
        seated = [modes[(s + game) % len(modes)] for s in range(4)]
        result = BotzoneJudge(seated, seed * 100_003 + game, command, limit,
                              later_limit, commands=commands).play()
        for seat_of, code in result.verdicts.items():
            verdicts[code] = verdicts.get(code, 0) + 1
            seat_verdicts[seat_of][code] = seat_verdicts[seat_of].get(code, 0) + 1
        for s in range(4):
            points[s] += result.scores[s]
            seat_fallbacks[s] += result.fallback_counts[s]
        key = result.reason.split(":")[0]
        reasons[key] = reasons.get(key, 0) + 1
        for s, seconds in enumerate(result.turn_seconds):
            times[seated[s]].extend(seconds)
        for s, said in enumerate(result.fallbacks):
            fell_back[seated[s]] += result.fallback_counts[s]
            if said:
                first.setdefault(seated[s], said[0])
        for s, count in enumerate(result.unasked):
            unasked[seated[s]] += count
            if result.unasked_first[s] is not None:
                unasked_first.setdefault(seated[s], str(result.unasked_first[s]))
        if log_dir is not None:
            write_log(Path(log_dir) / f"botzone-judge-s{seed}-g{game}.json", result.log)
        if progress is not None:
            progress(game + 1, games, verdicts)
    return {
        "games": games, "modes": modes, "seed": seed, "verdicts": verdicts,
        "outcomes": reasons,
        "answer_seconds": {m: {"answers": len(t), "median": _median(t),
                               "max": max(t) if t else None} for m, t in times.items() if t},
        # the answers the brain gave in the policy's place (it raised, was late, illegal)
        "fallbacks": {m: {"answers": len(t), "fallbacks": fell_back[m], "first": first.get(m)}
                      for m, t in times.items() if t},
        # whole turns a kept-running bot printed answering no request (dropped, as the
        # outside seat drops them); any fails the run
        "unasked": {m: {"turns": n, "first": unasked_first.get(m)}
                    for m, n in unasked.items() if n},
        # per seat (a policy each where the seats' differ): the points its bot won over the
        # matches, its verdicts and the answers the brain gave in its policy's place
        "seats": [{"seat": s, "policy": names[s], "points": points[s],
                   "verdicts": seat_verdicts[s], "fallbacks": seat_fallbacks[s]}
                  for s in range(4)],
    }


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
