"""A practice session's worker process: games at the local table, one after another, each
written to a game log, with what happened reported as JSON lines on stdout.

It runs in its own process so that playing (pure Python, CPU-bound) never holds the serve
process's event loop or its GIL. The supervisor starts it with the session's settings as one
JSON argument and reads the reports (see :data:`REPORTS`). SIGTERM, SIGINT or the end of stdin
(the serve process went away) ask it to stop: the hand in play is finished, the game's log is
closed with a footer that says it was stopped, and the process exits 0. Games are numbered from
``first_game`` (the supervisor's count of games its workers began, so a restarted worker goes on
with the seed's sequence rather than dealing game 0 again); our policy's seat moves round the
table with the game's number; the opponents fill the other seats in order. What is reported
counts our seat only (its decisions, its illegal answers), as a platform session would.

``python -m adapter.serve.practice '{"session": "p", "variant": "riichi", ...}'``
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapter.local.game import GameConfig, play_game
from adapter.local.referee import HandOutcome, HandReferee, HandSetup
from adapter.local.seat import BrainSeat
from brain.anytime import FORCED
from brain.rules.variant import variant_of
from protocols import events as ev
from protocols import tiles as T
from replay.log import SUFFIX, Footer, GameLogWriter, Header, plain_name

# every line is {"t": <one of these>, ...}
REPORTS = ("game_start", "live", "hand", "game_end", "stopped", "exit", "error")
LIVE_EVERY = 0.5  # seconds between two live snapshots, unless the session sets live_every


@dataclass
class PracticeSettings:
    session: str
    variant: str = "riichi"
    policy: str = "rulebased"
    opponents: tuple[str, str, str] = ("greedy", "greedy", "greedy")
    length: str = "east"
    hands: int = 4
    seed: int = 0
    first_game: int = 0  # the number of the first game this worker deals
    games: int | None = None  # None: until stopped
    log_dir: str | None = None
    pause: float = 1.0
    budget: float | None = None
    live_every: float = LIVE_EVERY  # seconds between two snapshots of the live table

    @classmethod
    def from_json(cls, text: str) -> PracticeSettings:
        data = json.loads(text)
        data["opponents"] = tuple(data.get("opponents", cls.opponents))
        return cls(**data)


class GameStopped(Exception):
    """Raised between two hands once a stop was asked for."""


class _StoppableReferee(HandReferee):
    """The local referee, which refuses to start a hand once a stop was asked for."""

    def __init__(self, variant: str, players: list[Any], log: GameLogWriter | None,
                 stop: threading.Event, on_hand: Callable[[HandOutcome], None]) -> None:
        super().__init__(variant, players, log)
        self._stop = stop
        self._on_hand = on_hand

    def play(self, setup: HandSetup) -> HandOutcome:
        if self._stop.is_set():
            raise GameStopped
        outcome = super().play(setup)
        self._on_hand(outcome)
        return outcome


@dataclass
class _Reporter:
    """Collects what the seats see and decide, and writes the report lines."""

    emit: Callable[[dict[str, Any]], None]
    our_seat: int = 0
    decisions: list[list[Any]] = field(default_factory=list)
    last_live: float = 0.0
    live_every: float = LIVE_EVERY

    def decision(self, seat: int, policy: str, elapsed: float, fallback: str,
                 kind: str = "") -> None:
        if seat == self.our_seat:  # the opponents' decisions are not our session's
            self.decisions.append([seat, policy, round(elapsed, 6), fallback, kind])

    def live(self, state: Any) -> None:
        """A snapshot at the first event ``live_every`` seconds after the last, whatever the
        event: hands played faster than that are caught at whatever turn they are at (one
        sent at each hand's start as well showed every fast hand at turn 0). Only while a
        hand is in play: a game's first events come before its deal (no hand, every score
        0), and after a pause between games the snapshot was always taken there."""
        now = time.monotonic()
        if now - self.last_live < self.live_every or not state.round_active:
            return
        self.last_live = now
        self.emit({"t": "live", **snapshot(state)})


def snapshot(state: Any) -> dict[str, Any]:
    """What the dashboard shows of a game in play, from one seat's table state."""
    return {"variant": state.variant, "seat": state.seat,
            "round": f"{'ESWN'[state.round_wind % 4]}{state.round_number + 1}-{state.honba}",
            "scores": list(state.scores), "hand": T.to_mpsz(state.hand) if state.hand else "",
            "turn": state.turn, "wall": state.wall_remaining, "in_hand": state.round_active}


class _ReportingSeat(BrainSeat):
    def __init__(self, variant: str, seat: int, policy: str, limit: float | None,
                 reporter: _Reporter) -> None:
        super().__init__(variant, seat, policy, limit)
        self.seat = seat
        self.reporter = reporter

    def observe(self, event: Any) -> None:
        super().observe(event)
        if self.seat == self.reporter.our_seat:
            self.reporter.live(self.state)

    def decide(self, request: ev.DecisionRequest, legal: list[Any] | None = None) -> Any:
        answer = super().decide(request, legal)
        if answer.source != FORCED:  # an only legal action: the policy was not asked
            self.reporter.decision(self.seat, answer.policy, answer.elapsed, answer.fallback,
                                   answer.kind.value)
        return answer


def play_one(settings: PracticeSettings, game: int, stop: threading.Event,
             emit: Callable[[dict[str, Any]], None], reporter: _Reporter | None = None) -> bool:
    """One game; False when it was stopped between two hands. ``reporter``: the one the
    games before used, whose snapshot period runs on across games shorter than it."""
    seat = game % 4
    names = list(settings.opponents)
    names.insert(seat, settings.policy)
    reporter = reporter or _Reporter(emit, live_every=settings.live_every)
    reporter.our_seat, reporter.decisions = seat, []
    players = [_ReportingSeat(settings.variant, s, names[s], settings.budget, reporter)
               for s in range(4)]
    header = Header(platform="local", variant=settings.variant, seat=None,
                    policy=",".join(names),
                    policy_config={"seed": settings.seed, "game": game},
                    game_id=game_id(settings.session, settings.seed, game),
                    extra={"players": names, "full_information": True,
                           "session": settings.session, "our_seat": seat})
    log = GameLogWriter.create(settings.log_dir, header) if settings.log_dir else None
    hands = [0]

    def on_hand(outcome: HandOutcome) -> None:
        hands[0] += 1
        illegal = sum(1 for i in outcome.illegal if i.seat == seat)
        emit({"t": "hand", "hands": 1, "illegal": illegal,
              "decisions": reporter.decisions, "scores": list(referee.scores)})
        reporter.decisions = []

    referee = _StoppableReferee(settings.variant, players, log, stop, on_hand)
    emit({"t": "game_start", "game": game, "seat": seat, "players": names,
          "log": str(log.path) if log else None})
    config = GameConfig(settings.variant, settings.length, settings.hands)
    try:
        result = play_game(config, players, settings.seed, game, log, referee)
    except GameStopped:
        scores = list(referee.scores)
        if log is not None:
            log.close(Footer({"stopped": True, "hands": hands[0]}, tuple(scores)))
        emit({"t": "stopped", "game": game, "hands": hands[0], "scores": scores,
              "log": str(log.path) if log else None})
        return False
    finally:
        for p in players:
            p.close()
    start = variant_of(settings.variant).start_score
    emit({"t": "game_end", "game": game, "seat": seat, "scores": result.scores,
          "ranks": result.ranks, "points": result.scores[seat] - start, "hands": hands[0],
          "log": str(log.path) if log else None})
    return True


def game_id(session: str, seed: int, game: int) -> str:
    return f"{session}-s{seed}-g{game}"


def next_game_in(log_dir: str | None, session: str, seed: int) -> int:
    """The number after the highest game of ``session`` and ``seed`` logged under ``log_dir``
    (0: none), read off the log files' names: a serve process started again goes on with the
    sequence instead of dealing game 0 again. A name cut short (ids over 80 characters) is not
    read."""
    if not log_dir or not Path(log_dir).is_dir():
        return 0
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", game_id(session, seed, 0)[:-1])  # as log_path does
    pattern = re.compile(r"\d{6}-" + re.escape(stem) + r"(\d+)(?:-\d+)?" + re.escape(SUFFIX))
    last = -1
    for path in Path(log_dir).rglob(f"*{SUFFIX}*"):
        found = pattern.fullmatch(plain_name(path.name))  # compressed ones too
        if found and len(stem) + len(found.group(1)) < 80:
            last = max(last, int(found.group(1)))
    return last + 1


def run(settings: PracticeSettings, stop: threading.Event,
        emit: Callable[[dict[str, Any]], None]) -> int:
    """Games until stopped or ``settings.games`` are played; the number played."""
    played = 0
    reporter = _Reporter(emit, live_every=settings.live_every)
    while not stop.is_set() and (settings.games is None or played < settings.games):
        if not play_one(settings, settings.first_game + played, stop, emit, reporter):
            break
        played += 1
        stop.wait(settings.pause)
    emit({"t": "exit", "games": played})
    return played


def _writer(stop: threading.Event) -> Callable[[dict[str, Any]], None]:
    """The reports onto stdout. A serve process that went away (killed, crashed) left no one
    to read them: the next write fails (a broken pipe), which asks for the stop the end of
    stdin asks for, and the reports go nowhere from then on. Raised instead, it ended the
    worker in the middle of a hand, its game's log without a footer."""
    lock = threading.Lock()

    def emit(report: dict[str, Any]) -> None:
        line = json.dumps(report, separators=(",", ":")) + "\n"
        with lock:
            try:
                sys.stdout.write(line)
                sys.stdout.flush()
            except BrokenPipeError:
                stop.set()
                # what is left in the buffer, and every later report, to /dev/null (as
                # Python's documentation has it for SIGPIPE): the exit's flush fails no more
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                os.close(devnull)
    return emit


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def stop_on_signals(stop: threading.Event) -> None:
    """SIGTERM and SIGINT ask for the stop, set by a thread and not by the handler: a handler
    runs in the main thread between two of its steps, which may be inside ``stop.wait``, with
    the Event's lock held, and ``stop.set`` takes that lock (the worker deadlocked, and serve
    killed it at its stop deadline). The handler does nothing; the interpreter's own handler
    writes the signal's number to the wakeup pipe, which a daemon thread reads. Main thread
    only (``signal.set_wakeup_fd``)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # a full pipe drops a number: one is enough
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    for sig in STOP_SIGNALS:
        signal.signal(sig, _no_op)

    def watch() -> None:
        wanted = {int(sig) for sig in STOP_SIGNALS}
        while data := os.read(read_end, 64):
            if wanted.intersection(data):
                stop.set()

    threading.Thread(target=watch, name="stop-signals", daemon=True).start()


def _no_op(_signum: int, _frame: Any) -> None:
    """A Python-level handler, so that the signal is caught (and its number written to the
    wakeup pipe) rather than ending the process; it must take no lock."""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m adapter.serve.practice SETTINGS_JSON", file=sys.stderr)
        return 2
    settings = PracticeSettings.from_json(argv[0])
    stop = threading.Event()
    stop_on_signals(stop)

    def watch_stdin() -> None:  # the serve process closed our stdin, or died
        # the raw descriptor, not sys.stdin: a daemon thread blocked in the buffered reader
        # holds its lock, which aborts the interpreter at exit
        while os.read(0, 4096):
            pass
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    emit = _writer(stop)
    try:
        run(settings, stop, emit)
    except OSError as exc:
        # the worker's only files are its game logs (a full disk, a folder made read-only or
        # removed): one line for serve, which shows it as the run's failure; it was a
        # traceback a run on serve's stderr and 'exit status 1' on the dashboard
        where = f" ({exc.filename})" if exc.filename else ""
        emit({"t": "error", "error": f"cannot write its game logs under {settings.log_dir}: "
                                     f"{exc.strerror or exc}{where}"})
        return 1
    except Exception as exc:  # a fault of ours: its traceback stays on stderr
        emit({"t": "error", "error": f"{type(exc).__name__}: {exc}"})
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
