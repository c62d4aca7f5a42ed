"""Botzone bot process: simple or JSON interaction, one-shot or keep-running, on stdin/stdout.

Botzone starts the bot for every turn (one-shot) with the whole history on stdin, or keeps it
running and sends one request line per later turn (../shared/protocols/botzone.md). Either way
the bot rebuilds the table from the request lines (its own past responses complete them),
answers the last request through the brain within the turn's budget and prints the response.

This module must run where only the standard library, numpy and MahjongGB exist (the upload
bundle): the game log (msgpack) and structured logging are optional imports.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib.util
import json
import os
import re
import select
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from adapter.platforms.botzone_options import (
    FIRST_TURN_LIMIT,
    LATER_TURN_LIMIT,
    add_turn_options,
    turn_defaults,
)
from brain.brain import Brain, safest_action
from brain.state import StateError, TableState
from protocols import events as ev
from protocols import tiles as T
from protocols.botzone import BotzoneCodec
from protocols.codec import ProtocolError, load_json

KEEP_RUNNING = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
DATA_VERSION = 1
SAFETY_MARGIN = 0.5
NOTE_PREFIX = "mjbot botzone: "  # each note on stderr, and in the turn's debug line without it
# how the bot says, on stderr, that the brain answered in its policy's place (read by the
# local judge and `mjbot bench botzone`)
FALLBACK_NOTE = f"{NOTE_PREFIX}fallback ("
DEBUG_LIMIT = 1000  # bytes: Botzone keeps at most 1 KB of a turn's debug


@dataclass
class TurnInput:
    """One process start's input: the requests so far, our earlier responses, and the data /
    globaldata strings Botzone keeps for us."""

    requests: list[str]
    responses: list[str]
    data: str = ""
    globaldata: str = ""
    json_mode: bool = False


class InputError(ValueError):
    """stdin does not hold a Botzone turn input."""


def parse_input(text: str) -> TurnInput:
    """Simple interaction (turn count, alternating request/response lines, data, globaldata)
    or JSON interaction (one object), told apart by the first character."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            obj = load_json(stripped)
        except json.JSONDecodeError as exc:
            raise InputError(f"JSON input does not parse ({exc})") from None
        requests, responses = obj.get("requests"), obj.get("responses", [])
        if not isinstance(requests, list) or not requests or not isinstance(responses, list):
            raise InputError("JSON input needs a non-empty 'requests' list")
        if len(responses) != len(requests) - 1:
            # each earlier request goes with our response to it: paired short, the requests
            # past the last response were dropped and the turn answered from a table without them
            raise InputError(f"JSON input has {len(requests)} requests but {len(responses)} "
                             f"responses (one per earlier turn: {len(requests) - 1})")
        return TurnInput([str(r) for r in requests], [str(r) for r in responses],
                         _text(obj.get("data")), _text(obj.get("globaldata")), json_mode=True)
    lines = text.split("\n")
    try:
        turns = int(lines[0].strip())
    except (ValueError, IndexError):
        raise InputError(f"first line must be the turn count, got {lines[0][:40]!r}") from None
    if turns < 1:
        raise InputError(f"turn count must be at least 1, got {turns}")
    body = lines[1:]
    if len(body) < 2 * turns - 1:
        raise InputError(f"{turns} turns need {2 * turns - 1} request/response lines, "
                         f"got {len(body)}")
    history = [line.rstrip("\r") for line in body[:2 * turns - 1]]
    rest = body[2 * turns - 1:]
    return TurnInput(history[0::2], history[1::2], rest[0].rstrip("\r") if rest else "",
                     "\n".join(rest[1:]).rstrip("\n"))


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


@dataclass
class BotzoneBot:
    """The table as seen from our seat, rebuilt from request lines, and the brain answering."""

    policy: str = "rulebased"
    log_dir: str | None = None
    codec: BotzoneCodec = field(default_factory=BotzoneCodec)
    state: TableState = field(default_factory=lambda: TableState("mcr"))
    errors: list[str] = field(default_factory=list)
    log: Any = None  # a replay.log.GameLogWriter where msgpack is available

    def __post_init__(self) -> None:
        self.brain = Brain("mcr", self.policy)

    # ------------------------------------------------------------------ history

    def replay(self, request: str, response: str) -> None:
        """An earlier turn: apply what the judge said, and note what we answered (into the
        log too when it is set: a log begun after the match's first turn gets them all)."""
        if self.log is not None:
            self.log.rx(request)
        try:
            for item in self.codec.feed(request):
                if not isinstance(item, ev.DecisionRequest):
                    self._apply(item)
        except ProtocolError as exc:
            self._error(f"history: {exc}")
        self.codec.sent(response)
        if self.log is not None:
            self.log.tx(response)

    def _apply(self, event: Any) -> None:
        try:
            self.state.apply(event)
        except StateError as exc:
            self._error(f"state: {exc}")
        if self.log is not None:
            self.log.event(event)

    def _error(self, message: str) -> None:
        self.errors.append(message)
        print(f"{NOTE_PREFIX}{message}", file=sys.stderr)

    # ------------------------------------------------------------------ the answer

    def answer(self, request: str, deadline: float) -> str:
        """The response line to the request, never an illegal one while our state is right."""
        if self.log is not None:
            self.log.rx(request)
        try:
            items = self.codec.feed(request)
        except ProtocolError as exc:
            self._error(str(exc))
            return self._safe_response(request)
        decision = items[-1]
        for item in items[:-1]:
            self._apply(item)
        response = self._decide(dataclasses.replace(decision, deadline=deadline))
        if self.log is not None:
            self.log.tx(response)
        return response

    def _decide(self, request: ev.DecisionRequest) -> str:
        if request.kind == "ack":
            return "PASS"
        answer = self.brain.decide(self.state, request)
        self._log_decision(request, answer)
        action = answer.action
        discard = None
        if isinstance(action, ev.Pon | ev.Chi):
            discard = self._discard_after_call(action, request)
            if discard is None:
                action = ev.Pass()
        return self.codec.encode(action, discard=discard)

    def _discard_after_call(self, action: ev.Pon | ev.Chi, request: ev.DecisionRequest) \
            -> int | None:
        """PENG and CHI carry the discard that follows: decide it on the table as it will be
        after the call."""
        after = copy.deepcopy(self.state)
        kind = "pon" if isinstance(action, ev.Pon) else "chi"
        assert request.tile is not None and request.from_seat is not None
        tiles = tuple(sorted((*action.tiles, request.tile)))
        try:
            after.apply(ev.MeldCalled(after.seat, kind, tiles, request.tile, request.from_seat))
        except StateError as exc:
            self._error(f"call: {exc}")
            return None
        turn = ev.DecisionRequest("turn", deadline=request.deadline)
        answer = self.brain.decide(after, turn)
        self._log_decision(turn, answer)
        if isinstance(answer.action, ev.Discard):
            return answer.action.tile
        return None

    def _log_decision(self, request: ev.DecisionRequest, answer: Any) -> None:
        if answer.fallback:  # in the debug line too: Botzone keeps no stderr
            self._error(f"{FALLBACK_NOTE.removeprefix(NOTE_PREFIX)}{answer.fallback})")
        if self.log is not None:
            self.log.decision(request, answer.legal, answer.action, answer.policy,
                              answer.candidates, answer.elapsed, answer.fallback,
                              fallback_kind=answer.kind.value)

    def _safe_response(self, request: str) -> str:
        """An answer to a request we could not read: on our own draw, a discard of a tile we
        hold (the drawn one when it can be read); otherwise PASS."""
        parts = request.split()
        if parts[:1] != ["2"]:
            return "PASS"
        try:
            drawn = T.from_botzone(parts[1])
            self._apply(ev.TileDrawn(self.state.seat, drawn))
        except (T.TileError, IndexError):
            pass
        legal = [ev.Discard(t) for t in dict.fromkeys(self.state.hand)]
        if not legal:
            return "PASS"
        return self.codec.encode(safest_action(self.state, legal))


# ---------------------------------------------------------------------- game log (optional)


def open_log(bot: BotzoneBot, data: dict[str, Any], log_dir: str | None,
             requests: list[str]) -> tuple[dict[str, Any], bool]:
    """Open (or continue) this match's game log (``requests``: the match's so far); returns
    the data to keep for the next turn, and whether the log is new (it has none of the
    earlier turns yet). Without msgpack (the Botzone runtime) there is no log, nor in the
    upload zip, which carries no ``replay``: said once where ``log_dir`` asked for one (a
    local run of the zip with --log-dir wrote nothing, without a word)."""
    try:
        import msgpack  # noqa: F401 (replay.log imports it only when a log is written or read)

        from replay.log import GameLogWriter, Header, default_log_dir, log_path
    except ImportError as exc:
        if log_dir is not None:
            bot._error(f"no game log in {log_dir}: {exc} (the upload zip carries no "
                       "game-log writer; `mjbot botzone --log-dir DIR` writes one)")
        return data, False
    path = data.get("log")
    root = log_dir if log_dir is not None else str(default_log_dir())
    if isinstance(path, str) and os.path.exists(path) and not _log_of_match(path, requests):
        # the data names another game's log (Botzone's data of an earlier match, or one
        # copied): it is left as it is, and this match gets a log of its own
        note = (f"game log {path} is another game's (its requests are not this match's); "
                "this match goes on in a new one")
        bot._error(note)
        data = {k: v for k, v in data.items() if k not in ("match", "log")}
        path = None
    else:
        note = None
    fresh = not isinstance(path, str) or not os.path.exists(path)
    if not isinstance(path, str) or fresh:
        match = data.get("match") or f"{int(time.time())}-{os.getpid()}"
        path = str(log_path(root, "botzone", f"match-{match}"))
        data = {**data, "match": match, "log": path}
    header = Header(platform="botzone", variant="mcr", seat=_seat_of(requests),
                    policy=bot.policy, game_id=str(data.get("match", "")))

    def failed(exc: OSError) -> None:  # a write in the turn (a full disk): play on without
        bot._error(f"game log {path} cannot be written ({exc}); play goes on without it")
    try:
        bot.log = GameLogWriter(path, header, append=True, on_failure=failed)
        if note is not None:  # said in the new log too, where its reader looks
            bot.log.event(ev.PlatformNotice(note))
        return data, fresh
    except (OSError, ValueError) as exc:  # ValueError: LogError, a file that is no game log
        if fresh:  # no log of ours there to leave alone: the folder takes none (a file,
            # unwritable, full), and another name in it would fare no better
            bot._error(f"game log {path} cannot be written ({exc}); play goes on without it")
            return data, False
        note = f"game log {path} cannot be continued ({exc}); the match goes on in a new one"
        bot._error(note)
    # the data named a file we must not write to (not a log of ours, a folder): leave it as
    # it is and keep the rest of the match in a log of its own
    path = str(log_path(root, "botzone", f"match-{data.get('match', '')}-{os.getpid()}"))
    try:
        bot.log = GameLogWriter(path, header, append=True, on_failure=failed)
    except (OSError, ValueError) as exc:
        bot._error(f"game log unavailable: {exc}")
        return data, False
    bot.log.event(ev.PlatformNotice(note))
    return {**data, "log": path}, True


def _log_of_match(path: str, requests: list[str]) -> bool:
    """Whether the game log at ``path`` is this match's: the requests it holds begin this
    match's. One that cannot be read is taken as ours here (continuing it says what is
    wrong with it)."""
    from replay.log import RxFrame, read_log

    try:
        held = [f.raw for f in read_log(path).frames if isinstance(f, RxFrame)]
    except (OSError, ValueError):
        return True
    return held == requests[:len(held)]


def _seat_of(requests: list[str]) -> int | None:
    """Our seat, as the match's first request says it (None: it cannot be read)."""
    codec = BotzoneCodec()
    try:
        codec.feed(requests[0])
    except (ProtocolError, IndexError):
        return None
    return codec.seat


def load_data(text: str) -> dict[str, Any]:
    """Our own ``data`` from the previous turn, or {} when absent, foreign or another version."""
    try:
        data = load_json(text) if text else {}
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict) or data.get("v") != DATA_VERSION:
        return {}
    return data


# ---------------------------------------------------------------------- process modes


def run_once(stdin: TextIO, stdout: TextIO, policy: str = "rulebased",
             keep_running: bool = False, limit: float = FIRST_TURN_LIMIT,
             later_limit: float = LATER_TURN_LIMIT, log_dir: str | None = None,
             write_log: bool = True, clock: Callable[[], float] = time.monotonic,
             json_mode: bool = False, started: float | None = None) -> int:
    """One Botzone process: answer the turn on stdin; with ``keep_running``, go on answering
    one request per turn until stdin closes. The first input's form (or ``json_mode``, JSON
    interaction required) decides how every answer is printed, later turns included: Botzone
    reads each answer of a JSON-interaction bot as one JSON object line. ``started``: when
    the first turn's time began, on ``clock`` (None: now; a bot process passes its own start,
    :func:`process_started`)."""
    start = clock() if started is None else started
    lines = _Lines(stdin)
    text = _first_turn(lines) if keep_running else _read_all(stdin)
    try:
        turn = parse_input(text)
        if json_mode and not turn.json_mode:
            raise InputError("--json given but the input is not a JSON object")
    except InputError as exc:
        print(f"mjbot botzone: {exc}; input {text[:200]!r}", file=sys.stderr)
        json_out = json_mode or text.lstrip().startswith("{")
        _print_turn(stdout, TurnInput([], [], json_mode=json_out), "PASS", "", "",
                    f"bad input: {exc}")
        # exit 0: the safe answer is given and the fault named above; Botzone's sandbox
        # gives each run a verdict beside its output, and a run that is not OK (a non-zero
        # exit is RE on most judges) has its answer dropped and loses the match
        return 0
    data = {**load_data(turn.data), "v": DATA_VERSION}
    bot = BotzoneBot(policy=policy)
    fresh = False
    if write_log:
        data, fresh = open_log(bot, data, log_dir, turn.requests)
    kept_log, bot.log = bot.log, bot.log if fresh else None  # a log continued has them
    for request, response in zip(turn.requests[:-1], turn.responses, strict=False):
        bot.replay(request, response)
    bot.log = kept_log
    response = bot.answer(turn.requests[-1], start + limit - SAFETY_MARGIN)
    kept = json.dumps(data)
    _print_turn(stdout, turn, response, kept, turn.globaldata, "; ".join(bot.errors))
    if not keep_running:
        _close(bot)
        return 0
    print(KEEP_RUNNING, file=stdout, flush=True)
    while (raw := lines.readline()) is not None:
        line = _unwrap_json(raw.strip())
        if not line:
            continue
        turn_start = clock()
        errors = len(bot.errors)
        response = bot.answer(line, turn_start + later_limit - SAFETY_MARGIN)
        # data and globaldata again as they were: what Botzone keeps stays the same
        _print_turn(stdout, turn, response, kept, turn.globaldata,
                    "; ".join(bot.errors[errors:]), later=True)
        print(KEEP_RUNNING, file=stdout, flush=True)
    _close(bot)
    return 0


def _read_all(stream: TextIO) -> str:
    """All of the input as text, bytes that are not UTF-8 as U+FFFD: under a strict locale
    (en_US.UTF-8) the text stream's own decoder raised on them, a traceback and no answer."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        return stream.read()
    data: bytes = buffer.read()
    return data.decode("utf-8", errors="replace")


class _Lines:
    """Lines from stdin's file descriptor, with a way to take what has already arrived without
    blocking (a keep-running first turn ends with data / globaldata lines that Botzone may or
    may not send, and no end of file follows)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.buffer = bytearray()  # grows in place: a long line costs its length, not its square
        self.returned: list[str] = []  # lines given back (unread), read again first

    def unread(self, line: str) -> None:
        """Give a line back: the next ``readline`` returns it."""
        self.returned.append(line)

    def readline(self, timeout: float | None = None,
                 rest_timeout: float | None = None) -> str | None:
        """The next line (without waiting longer than ``timeout``), or None at end of input
        or when nothing came in time. With ``rest_timeout``: a line begun whose newline does
        not follow within that long is taken as it is (its writer keeps stdin open)."""
        if self.returned:
            return self.returned.pop()
        if self.fd is None:
            text = self.stream.readline()
            return text or None
        searched = 0  # the bytes before this hold no newline (each chunk is searched once)
        while (end := self.buffer.find(b"\n", searched)) < 0:
            searched = len(self.buffer)
            begun = rest_timeout is not None and bool(self.buffer)
            wait = rest_timeout if begun else timeout
            if wait is not None:
                ready, _, _ = select.select([self.fd], [], [], wait)
                if not ready and begun:
                    line = self.buffer.decode("utf-8", errors="replace")
                    self.buffer.clear()
                    return line
                if not ready:
                    return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if not self.buffer:
                    return None
                line = self.buffer.decode("utf-8", errors="replace")
                self.buffer.clear()
                return line
            self.buffer += chunk
        line = self.buffer[:end].decode("utf-8", errors="replace")
        del self.buffer[:end + 1]
        return line + "\n"


DRAIN_SECONDS = 0.05  # data / globaldata lines arrive with the first turn, or not at all
TURN_LINES_SECONDS = 1.0  # a first turn's announced lines arrive with its first line
# a request line, which no data of ours (a JSON object) nor our globaldata (none) ever is
REQUEST_LINE = re.compile(r"[0-3](?: +[0-9A-Z]+)+\s*")


def _first_turn(lines: _Lines) -> str:
    """A keep-running first turn: one JSON line, or a full simple input whose trailing data /
    globaldata lines are taken only if they have arrived. A request line among them is the
    next turn's, already sent (input piped in whole, as in a test by hand): it is left for
    the turns after this one, not taken for data."""
    first = lines.readline(rest_timeout=TURN_LINES_SECONDS) or ""
    if first.lstrip().startswith("{"):
        return _json_first_turn(lines, first)
    if not first.strip().isdigit():
        return first
    text = [first]
    for _ in range(2 * int(first.strip()) - 1):
        # Botzone writes a turn whole: lines that lag this long are not coming (a writer
        # that announced more than it sent and keeps stdin open), and the turn is read as it
        # is, its fault named, rather than waited on for ever
        line = lines.readline(timeout=TURN_LINES_SECONDS, rest_timeout=TURN_LINES_SECONDS)
        if line is None:
            break
        text.append(line)
    while (extra := lines.readline(timeout=DRAIN_SECONDS)) is not None:
        if REQUEST_LINE.fullmatch(extra.strip()):
            lines.unread(extra)
            break
        text.append(extra)
    return "".join(text)


def _json_first_turn(lines: _Lines, first: str) -> str:
    """A keep-running first turn in JSON interaction: Botzone sends the object on one line,
    taken as it is. One written over several lines (a test file pretty-printed by hand) is
    read on, over the lines already arrived, until it parses: its first line alone, ``{``,
    was answered as JSON that does not parse, where the one-shot bot read the same file."""
    text = first
    while not _parses(text):
        more = lines.readline(timeout=DRAIN_SECONDS, rest_timeout=DRAIN_SECONDS)
        if more is None:
            break
        if REQUEST_LINE.fullmatch(more.strip()):  # the next turn's, piped in behind it
            lines.unread(more)
            break
        text += more
    return text


def _parses(text: str) -> bool:
    if not text.rstrip().endswith("}"):  # an object's last line: no parse before it closes
        return False
    try:
        load_json(text)
    except json.JSONDecodeError:
        return False
    return True


def _unwrap_json(line: str) -> str:
    """A later keep-running request may come JSON-encoded: a string, or an object whose last
    request is the one to answer."""
    try:
        value = load_json(line)
    except json.JSONDecodeError:
        return line
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("requests"), list) and value["requests"]:
        return str(value["requests"][-1])
    return line


def _print_turn(stdout: TextIO, turn: TurnInput, response: str, data: str, globaldata: str,
                debug: str, later: bool = False) -> None:
    """One answer as Botzone reads it: in JSON interaction one JSON object on one line, in
    simple interaction the response line, then (first turn or one-shot) debug, data and
    globaldata lines. Debug is cut to Botzone's 1 KB."""
    debug = debug.encode()[:DEBUG_LIMIT].decode(errors="ignore")
    if turn.json_mode:
        out = {"response": response, "debug": debug, "data": data, "globaldata": globaldata}
        print(json.dumps(out, ensure_ascii=False), file=stdout, flush=True)
        return
    print(response, file=stdout)
    if not later:
        print(debug.replace("\n", " "), file=stdout)
        print(data, file=stdout)
        if globaldata:
            print(globaldata, file=stdout)
    stdout.flush()


def _close(bot: BotzoneBot) -> None:
    if bot.log is not None:
        bot.log.close()
    bot.brain.close()


def process_started() -> float:
    """When this process started, on ``time.monotonic``: Botzone's clock for a turn starts
    when it starts the bot, and loading Python, numpy and the bot takes a good part of a
    second before any of our code runs. Linux (Botzone's) reads it from /proc; elsewhere,
    or where it reads as nonsense, it is now."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        began = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime, in ticks
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - began
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age < 60.0 else now


def end_process(code: int) -> int:
    """The exit status of a bot process, or the process ended at once where a policy call
    abandoned at its deadline still runs: nothing can stop that thread, and the interpreter
    waits for it at exit, while Botzone times a one-shot turn until the process ends (the
    answer printed in time would still be a TLE). What was printed is flushed first."""
    main_thread = threading.main_thread()
    if not any(t.is_alive() and not t.daemon for t in threading.enumerate()
               if t is not main_thread):
        return code
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def cannot_play(policy: str) -> str:
    """Why this process (an upload zip, or mjbot itself) cannot play ``policy`` given as
    ``--policy`` ("" where it can): a name no policy has, mc options mc refuses, a network
    the zip does not carry (only ``mjbot bundle botzone --policy nn`` carries the network
    code and weights), or mc's MCR opponent models missing (only an mc zip carries them).
    Each was a traceback at the first turn, or the brain's fallback at every decision with
    a note on stderr each turn. Read as the policy reads them (cached: its first decision
    reads them no more). Asked only of a ``--policy`` given: Botzone gives none, and there a
    policy that falls back still answers each turn where a bot that exits loses the game."""
    from brain.policies import MC_OPTIONS_PREFIX, NN_FILE_PREFIX, POLICIES

    if policy == "nn" or policy.startswith(NN_FILE_PREFIX):
        return _missing_network(policy.removeprefix(NN_FILE_PREFIX) if policy != "nn" else "")
    if policy == "mc" or policy.startswith(MC_OPTIONS_PREFIX):
        return _missing_opponent_models(policy.removeprefix(MC_OPTIONS_PREFIX)
                                        if policy != "mc" else "")
    if policy not in POLICIES:
        return f"no policy of that name (known: {', '.join(sorted(POLICIES))})"
    return ""


def _missing_network(path: str) -> str:
    """Why ``nn`` (``path``: nn@FILE's file) has no MCR network to play here ("" where it
    has one)."""
    build = "`mjbot bundle botzone --policy nn [--nn-weights FILE]` builds a zip that carries it"
    if importlib.util.find_spec("brain.policies.nn") is None:  # a zip for another policy
        return f"this zip carries no network ({build})"
    from brain.policies.nn import unreadable

    why = unreadable("mcr", path)
    return f"{why} ({build})" if why else ""


def _missing_opponent_models(options: str) -> str:
    """Why ``mc`` with ``options`` (mc@OPTIONS's) cannot play here: options mc refuses, or
    no MCR opponent models (the default zip told ``--policy mc`` fell back at every decision
    since only an mc zip carries them)."""
    from brain.policies.mc.config import from_env, parse
    from brain.policies.mc.models import MissingModels, load_models

    try:
        config = parse(options, from_env())
    except ValueError as exc:
        return (f"{str(exc).removeprefix('mc: ')} (mc@ takes KEY=VALUE pairs split by ';'; "
                "`mjbot bundle botzone --policy mc --mc-options OPTIONS` builds a zip that "
                "plays them)")
    try:
        load_models("mcr", config.models)
    except (MissingModels, ValueError, OSError) as exc:
        return (f"{str(exc).removeprefix('mc: ')} (an upload zip carries them where built "
                "with `mjbot bundle botzone --policy mc`)")
    return ""


def main(argv: list[str] | None = None, keep_running_default: bool = False,
         policy_default: str = "rulebased") -> int:
    """The Botzone entry point without the rest of mjbot's CLI (the upload bundle's
    ``__main__``): standard library only, options as in ``mjbot botzone``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        from adapter.argtypes import OneLineParser

        p = OneLineParser(prog="mjbot-botzone")
        add_turn_options(p, keep_running_default, policy_default)
        args = p.parse_args(argv)
    else:  # as Botzone starts it, every one-shot turn: no parser to build
        args = types.SimpleNamespace(**turn_defaults(keep_running_default, policy_default))
    # a --policy given (a local run; Botzone gives none): the zip built for another policy
    missing = cannot_play(args.policy) if args.policy != policy_default else ""
    if missing:  # one line, before a turn is read, as a value the options refuse
        print(f"mjbot-botzone: argument --policy: {args.policy}: {missing}", file=sys.stderr)
        return 2
    if args.policy == policy_default == "nn":
        from brain.policies.nn import lost_by_upload  # only an nn zip carries it

        if lost := lost_by_upload("mcr"):
            # one line a process (a match where it keeps running), not a fallback line a
            # decision advising to train a network: the zip lost the one it was built with
            print(f"mjbot-botzone: this nn zip cannot read its network ({lost}): playing "
                  "rulebased; build it again with mjbot bundle botzone --policy nn",
                  file=sys.stderr)
            args.policy = "rulebased"
    return end_process(run_once(sys.stdin, sys.stdout, policy=args.policy,
                                keep_running=args.keep_running, limit=args.time_limit,
                                later_limit=args.later_time_limit, log_dir=args.log_dir,
                                write_log=not args.no_log, json_mode=args.json,
                                started=process_started()))
