"""`mjbot mjai` (stdin form) fed what mjai.app's harness really sends, as a real subprocess
started as the harness starts ``bot.py``: the seat as the only argument, one line per request.

What the harness does (smly/mjai.app, read for these tests, none of its code copied):
- python/mjai/http_server/server.py starts ``python -u bot.py PLAYER_ID`` in /workspace
  (where the zip is unpacked), writes each request's body plus a newline to its stdin and
  reads exactly one stdout line back per request; stderr goes to the container's log.
- the engine (DockerMjaiLogEngine in the ``mjai`` package) sends ``start_game`` alone
  (``names`` "0".."3", ``id`` the seat), then per hand the hand's events from
  ``start_kyoku`` up to each moment the seat may act (others' draws and hands as ``?``),
  each array with compact separators on one line, then ``end_kyoku`` alone. It never sends
  ``end_game``: the container is removed after the game.
- the referee (libriichi's arena, src/arena/board.rs) logs ``hora`` and ``ryukyoku`` without
  broadcasting them ("No need to broadcast"): a hand's result never reaches the bots, only
  its ``end_kyoku``. After an error the game resumes from the next hand with fresh bots, so
  a bot's first hand need not be East 1, and ``start_game`` may be followed by an
  ``end_kyoku`` whose hand it never saw (README, "The first kyoku is not necessarily East 1").
- an answer is checked as libriichi's ``validate_reaction`` checks it (state/action.rs): a
  ``dahai`` names a tile held (a red five only if the red one is held), and ``tsumogiri``
  true only when that very tile (red or not) is the last one drawn; ``none`` on the bot's
  own draw is an error (python/mjai/player.py); mjai.app's own copy (src/state/action.rs)
  adds that in riichi every ``dahai`` is ``tsumogiri``. A bad answer costs a mangan (chombo).

The game is the recorded one of tests/data/shared/mjai (the ``mjai`` package's own arena, seed
10000/2000), as each seat would have been sent it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocols import tiles as T
from tests.in_process import mjbot_captured, mjbot_here
from tests.shared_data import MJAI_GAME


def _hands() -> list[list[dict[str, Any]]]:
    """The recorded game's hands: each hand's events, ``start_kyoku`` to ``end_kyoku``."""
    hands: list[list[dict[str, Any]]] = []
    for line in MJAI_GAME.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        m = json.loads(line)
        if m["type"] == "start_kyoku":
            hands.append([])
        if hands and m["type"] not in ("start_game", "end_game"):
            hands[-1].append(m)
    return hands


def _masked(m: dict[str, Any], seat: int) -> dict[str, Any]:
    if m["type"] == "start_kyoku":
        return {**m, "tehais": [h if s == seat else ["?"] * 13
                                for s, h in enumerate(m["tehais"])]}
    if m["type"] == "tsumo" and m["actor"] != seat:
        return {**m, "pai": "?"}
    return m


def _may_act(m: dict[str, Any], seat: int) -> bool:
    """A moment at which libriichi may let ``seat`` act (our bot may claim any discard)."""
    kind, actor = m["type"], m.get("actor")
    return (kind in ("tsumo", "reach") and actor == seat) or (
        kind in ("dahai", "kakan") and actor != seat)


def _requests(seat: int, first_hand: int = 0) -> list[list[dict[str, Any]]]:
    """The lines the harness sends ``seat``: ``start_game``, then per hand the batches up to
    each moment it may act and ``end_kyoku`` alone; the hands before ``first_hand`` (a game
    resumed there) are each one bare ``end_kyoku``, as for a hand the seat never acted in."""
    out: list[list[dict[str, Any]]] = [
        [{"type": "start_game", "names": ["0", "1", "2", "3"], "id": seat}]]
    for number, hand in enumerate(_hands()):
        if number >= first_hand:
            batch: list[dict[str, Any]] = []
            for m in hand:
                if m["type"] in ("hora", "ryukyoku", "end_kyoku"):
                    break  # never broadcast; the rest of the hand is not sent
                batch.append(_masked(m, seat))
                if _may_act(m, seat):
                    out.append(batch)
                    batch = []
        out.append([{"type": "end_kyoku"}])
    return out


def _mjai_here(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``mjbot mjai ARGS`` in this process on the input ``text``."""
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()))
    try:
        return mjbot_captured("mjai", *args)
    finally:
        sys.stdin = saved


def _play(seat: int, requests: list[list[dict[str, Any]]], log_dir: Path) \
        -> tuple[list[str], str]:
    """The requests through ``mjbot mjai SEAT``, one line each, as the harness writes them;
    the stdout lines and stderr. Run in this process (what bot.py's process does with its
    lines is the bot's, and _Container keeps a process of its own for the harness's
    line-by-line exchange): stdin a TextIOWrapper over the bytes, so that the bot reads its
    ``.buffer`` as it reads a pipe's, and the input ends."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
    done = _mjai_here(text, str(seat), "--log-dir", str(log_dir))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines(), done.stderr


def _own(text: str) -> int:
    """A tile of our own seat's, which the harness never hides (``"?"``)."""
    tile = T.from_mjai(text)
    assert tile is not None, f"our own tile sent hidden: {text!r}"
    return tile


def _check(seat: int, requests: list[list[dict[str, Any]]], lines: list[str]) -> dict[str, int]:
    """Each answer as libriichi's validate_reaction and the harness take it."""
    assert len(lines) == len(requests), "one answer line per request line"
    hand: list[int] = []
    drawn: int | None = None  # libriichi's last_self_tsumo
    riichi = declared = False  # in riichi: its declaring discard made
    kinds: dict[str, int] = {}
    for request, line in zip(requests, lines, strict=True):
        answer = json.loads(line)  # every stdout line is the answer, nothing else
        for m in request:
            if m["type"] == "start_kyoku":
                hand, drawn = [_own(t) for t in m["tehais"][seat]], None
                riichi = declared = False
            elif m["type"] == "reach" and m["actor"] == seat:
                declared = True
            elif m["type"] == "tsumo" and m["actor"] == seat:
                drawn = _own(m["pai"])
                hand.append(drawn)
            elif m["type"] in ("chi", "pon", "daiminkan", "ankan") and m["actor"] == seat:
                for t in m["consumed"]:  # no longer in the hand to discard
                    hand.remove(_own(t))
                if m["type"] in ("chi", "pon"):  # libriichi clears last_self_tsumo: a
                    drawn = None  # discard after a call is never tsumogiri
            elif m["type"] == "kakan" and m["actor"] == seat:
                hand.remove(_own(m["pai"]))
            elif m["type"] == "dahai" and m["actor"] == seat:
                hand.remove(_own(m["pai"]))
                riichi = riichi or declared
        kinds[answer["type"]] = kinds.get(answer["type"], 0) + 1
        last = request[-1]
        if last["type"] == "tsumo" and last.get("actor") == seat:
            assert answer["type"] != "none", f"none on our own draw: {request}"
        if last["type"] in ("start_game", "end_kyoku"):
            assert answer == {"type": "none"}, answer
        if answer["type"] == "dahai":
            tile = T.from_mjai(answer["pai"])
            assert answer["actor"] == seat and tile in hand, (answer, [T.to_mjai(t) for t in hand])
            if answer["tsumogiri"]:
                assert tile == drawn, f"tsumogiri of {answer['pai']} after drawing " \
                                      f"{T.to_mjai(drawn) if drawn is not None else None}"
            assert answer["tsumogiri"] or not riichi, f"from the hand in riichi: {answer}"
            kinds["in riichi"] = kinds.get("in riichi", 0) + riichi
    return kinds


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_a_game_as_mjai_app_sends_it_is_answered_line_for_line_and_legally(
        tmp_path: Path, seat: int) -> None:
    """No hand result, no end_game, end_kyoku alone: every request is answered by one JSON
    line that libriichi accepts, on every seat."""
    requests = _requests(seat)
    lines, stderr = _play(seat, requests, tmp_path)
    kinds = _check(seat, requests, lines)
    assert kinds.get("dahai", 0) > 20, kinds
    assert "Traceback" not in stderr and '"mjai: bad input"' not in stderr, stderr[-2000:]


def test_a_game_resumed_after_an_error_starts_wherever_the_harness_says(tmp_path: Path) -> None:
    """A resumed game: ``start_game``, a bare ``end_kyoku`` for each hand before, then a later
    hand (not East 1, scores and sticks not the starting ones) played as any other."""
    seat = 1
    requests = _requests(seat, first_hand=2)
    assert requests[1] == [{"type": "end_kyoku"}]
    lines, stderr = _play(seat, requests, tmp_path)
    kinds = _check(seat, requests, lines)
    assert kinds.get("dahai", 0) > 5, kinds
    assert "Traceback" not in stderr and '"mjai: bad input"' not in stderr, stderr[-2000:]


def test_the_game_log_shows_each_hand_ended_with_its_result_unknown(tmp_path: Path) -> None:
    """The harness sends no hora or ryukyoku, only end_kyoku: the log showed every hand as
    unfinished ("the log ends inside this hand"). Each hand the bot played now reads as over,
    its result not sent, with no score changes shown; the bare end_kyoku of a hand before the
    resumed one (never started for us) adds nothing."""
    from replay import replayer

    seat, first = 2, 2
    requests = _requests(seat, first_hand=first)
    _play(seat, requests, tmp_path)
    (path,) = tmp_path.rglob("*.mjlog.msgpack")
    summary = replayer.summarize(replayer.load(str(path)))
    hands = summary["hands"]
    assert len(hands) == len(_hands()) - first
    assert all(h["result_unknown"] and not h["unfinished"] and h["deltas"] is None
               for h in hands), [(h["round"], h["notices"]) for h in hands]
    text = replayer.format_summary(summary)
    assert text.count("ended   result not sent (mjai.app sends no hora or ryukyoku)") == \
        len(hands) and "the log ends inside this hand" not in text, text


def test_a_start_game_of_another_seat_than_the_argument_wins_and_is_said_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Started as ``bot.py 0``, a stream whose start_game says ``id`` 2 (its hands and draws
    masked for seat 2) was played as seat 2 in silence: nothing told the user that the
    argument was overridden. start_game's id wins (the protocol's "my seat", in the stream
    masked for it; mjai.app's own Bot base class takes it over its argument), each of its
    draws answered legally, and one warning on stderr says so, once for the process (two
    games here); without an argument, or with the same seat, nothing is said."""
    first_hand = _requests(2)
    first_hand = first_hand[:first_hand.index([{"type": "end_kyoku"}]) + 1]
    requests = first_hand + first_hand  # two games in one process
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests)
    said = ("mjai: start_game says our seat is 2, but we were started as seat 0: playing "
            "seat 2, as start_game says (mjai.app sends the two equal)")
    for argument, told in ((["0"], 1), ([], 0), (["2"], 0)):  # each a bot.py process's bot
        # in this process: a stdin with its byte buffer, as a pipe's (the input ends)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
        done = mjbot_here(capsys, "mjai", *argument, "--no-log")
        assert done.returncode == 0, done.stderr[-2000:]
        kinds = _check(2, requests, done.stdout.splitlines())
        assert kinds.get("dahai", 0) >= 2, kinds
        assert done.stderr.count(said) == told, (argument, done.stderr[-2000:])
        assert "Traceback" not in done.stderr and "bad input" not in done.stderr


def test_a_hand_is_told_over_once_and_only_where_its_result_never_came() -> None:
    """The codec's side: a hand with no hora or ryukyoku is told over at its end_kyoku, or at
    the next start_kyoku where no end_kyoku came; a hand whose result came (the original
    server, Mortal) is not, nor is an end_kyoku outside a hand."""
    from protocols import events as ev
    from protocols.mjai import RESULT_NOT_SENT, MjaiCodec

    start = {"type": "start_kyoku", "bakaze": "E", "dora_marker": "1p", "kyoku": 1,
             "honba": 0, "kyotaku": 0, "oya": 0, "scores": [25000] * 4,
             "tehais": [["1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "E", "E", "S",
                         "S"]] + [["?"] * 13] * 3}
    draw = {"type": "ryukyoku", "reason": "fanpai", "deltas": [0, 0, 0, 0]}

    def told(messages: list[dict[str, Any]]) -> list[int]:
        codec = MjaiCodec(0)
        out = [codec.feed(m) for m in messages]
        return [i for i, items in enumerate(out)
                if ev.PlatformNotice(RESULT_NOT_SENT) in items]

    end = {"type": "end_kyoku"}
    assert told([end, start, end, end]) == [2]
    assert told([start, start, end]) == [1, 2]  # a start_kyoku ends the hand before it
    assert told([start, draw, end, start, draw]) == []
    codec = MjaiCodec(0)
    codec.feed(start)
    items = codec.feed(start)  # the notice first: it belongs to the hand that ended
    assert isinstance(items[0], ev.PlatformNotice) and isinstance(items[1], ev.RoundStarted)


def test_a_discard_after_our_pon_is_never_tsumogiri(tmp_path: Path) -> None:
    """The recorded game has no call by any seat, so the checks above never saw a discard
    after one. A hand where seat 0 draws N, discards W (the referee's event, whatever it
    answered), pons a P and then holds N beside a ready hand: it discards N, which it drew
    but not just now; libriichi cleared last_self_tsumo at the pon, so tsumogiri true
    there is refused (a mangan)."""
    seat = 0
    start = {"type": "start_kyoku", "bakaze": "E", "dora_marker": "1p", "kyoku": 1,
             "honba": 0, "kyotaku": 0, "oya": 0, "scores": [25000] * 4,
             "tehais": [["P", "P", "W", "1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "5s",
                         "5s"]] + [["?"] * 13] * 3}
    requests: list[list[dict[str, Any]]] = [
        [{"type": "start_game", "names": ["0", "1", "2", "3"], "id": seat}],
        [start, {"type": "tsumo", "actor": 0, "pai": "N"}],
        [{"type": "dahai", "actor": 0, "pai": "W", "tsumogiri": False},
         {"type": "tsumo", "actor": 1, "pai": "?"},
         {"type": "dahai", "actor": 1, "pai": "P", "tsumogiri": True}],
        [{"type": "pon", "actor": 0, "target": 1, "pai": "P", "consumed": ["P", "P"]}],
        [{"type": "end_kyoku"}]]
    lines, stderr = _play(seat, requests, tmp_path)
    kinds = _check(seat, requests, lines)
    after_pon = json.loads(lines[3])
    assert after_pon["type"] == "dahai" and not after_pon["tsumogiri"], after_pon
    assert kinds["dahai"] == 2, kinds
    assert "Traceback" not in stderr and '"mjai: bad input"' not in stderr, stderr[-2000:]


class _Container:
    """One ``mjbot mjai SEAT`` subprocess, as mjai.app's player client reaches ``bot.py``: a
    request's body and a newline in, one stdout line back (http_server/server.py), ``none``
    on the bot's own draw an error (player.py). No clock: this is no timing test."""

    def __init__(self, seat: int, log_dir: Path) -> None:
        self.seat = seat
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "adapter.cli", "--log-level", "warning", "mjai",
             str(seat), "--log-dir", str(log_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def react(self, events: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(events + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline().strip()
        last = json.loads(events)[-1]
        if last["type"] == "tsumo" and last["actor"] == self.seat:
            assert json.loads(out)["type"] != "none", f"none on our own draw: {events}"
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def test_four_bots_play_a_game_in_mjai_apps_own_engine_and_referee(tmp_path: Path) -> None:
    """The harness itself, less Docker and HTTP: the ``mjai`` package's DockerMjaiLogEngine
    (what mjai.app sends, when) and libriichi's arena (its referee, which ends a game on an
    answer it refuses with a ``ryukyoku`` of reason ``error``), four ``mjbot mjai`` processes
    at the table. Opt-in: the package is not a dependency (see adapter/bench/mjai.py)."""
    try:
        from loguru import logger
        from mjai.engine import DockerMjaiLogEngine
        from mjai.mlibriichi.arena import Match
    except ImportError as exc:
        pytest.skip(f"needs the opt-in mjai package (missing {exc.name}): "
                    "pip install -e '.[mjai]' && pip install --no-deps mjai==0.2.1")
    import gzip

    logger.disable("mjai")
    bots = [_Container(seat, tmp_path / "bots") for seat in range(4)]
    arena_logs = tmp_path / "arena"
    try:
        engines = [DockerMjaiLogEngine(name=str(seat), player=bot)
                   for seat, bot in enumerate(bots)]
        Match(log_dir=str(arena_logs)).py_match(*engines, seed_start=(10000, 2000))
    finally:
        for bot in bots:
            bot.close()
    (game,) = list(arena_logs.glob("*.gz"))
    text = gzip.decompress(game.read_bytes()).decode()
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    errors = [e for e in events if e["type"] == "ryukyoku" and e.get("reason") == "error"]
    assert not errors, errors
    assert sum(e["type"] == "start_kyoku" for e in events) >= 4
    assert all(bot.proc.returncode == 0 for bot in bots)


OLD_LOG = (Path(__file__).resolve().parent / "data" / "upgrade"
           / "mjai_app_client_63b119a.mjlog.msgpack")


def test_an_older_mjbots_log_of_such_a_game_shows_its_hand_ended(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A log `mjbot mjai` wrote under the harness before its codec told a hand over with its
    result not sent (tests/data/upgrade/SOURCES.md: 63b119a, the first hand): after an
    upgrade it read as 'unfinished (the log ends inside this hand)'. The end_kyoku it keeps
    tells the hand over, in replay and the viewer alike, as a log written today reads."""
    from protocols.mjai import RESULT_NOT_SENT
    from replay import formats
    from replay.timeline import build

    out = mjbot_here(capsys, "replay", str(OLD_LOG))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "    ended   result not sent (mjai.app sends no hora or ryukyoku)" in out.stdout
    assert "the log ends inside this hand" not in out.stdout, out.stdout
    (shown,) = build(formats.read(OLD_LOG.read_bytes(), OLD_LOG)).hands
    assert [n["text"] for n in shown["notices"]] == [RESULT_NOT_SENT], shown["notices"]


def test_an_older_log_tells_a_hand_over_only_where_the_messages_say_so() -> None:
    """Read again from its raw messages, an older log tells a hand over at its end_kyoku or,
    where none came, before the next hand's start; a log cut inside a hand (no end_kyoku
    yet) leaves that hand unfinished."""
    from protocols import events as ev
    from protocols.mjai import RESULT_NOT_SENT
    from replay.formats.mjai_log import results_not_sent
    from replay.log import EventFrame, read_log

    frames = read_log(OLD_LOG).frames
    notice = ev.PlatformNotice(RESULT_NOT_SENT)

    def told(fs: list[Any]) -> list[int]:
        return [n for n, f in enumerate(results_not_sent(fs))
                if isinstance(f, EventFrame) and f.event == notice]

    assert told(frames) == [len(frames) - 1]  # after the end_kyoku, before the answer to it
    assert told(frames[:-2]) == []  # cut before it: the hand is not told over
    start = next(n for n, f in enumerate(frames) if isinstance(f, EventFrame)
                 and isinstance(f.event, ev.RoundStarted))
    again = [*frames[:-2], frames[start - 1], frames[start]]  # the next hand's start, no end
    assert told(again) == [len(again) - 1]  # just before that start
    assert told(results_not_sent(frames)) == [len(frames) - 1]  # told once, never twice


def test_a_hand_whose_result_came_in_the_end_kyokus_batch_is_not_told_unsent() -> None:
    """mjai.app's stdin form at our own table (an `mjai:` arena member) sends the hora or
    ryukyoku in the same batch as the end_kyoku (tests/data/upgrade/mjai_client_63b119a, its
    first hand: [..., ryukyoku, end_kyoku]). The result came: the hand is not told over with
    its result not sent, in replay --json or the viewer (a log today's mjai client writes of
    such a game holds the same batches, and no notice either)."""
    from protocols.mjai import RESULT_NOT_SENT
    from replay import formats
    from replay.timeline import build

    log = Path(__file__).resolve().parent / "data" / "upgrade" / "mjai_client_63b119a.mjlog.msgpack"
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "adapter.cli", "replay", "--json", str(log)],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert RESULT_NOT_SENT not in out.stdout
    (shown,) = build(formats.read(log.read_bytes(), log)).hands
    assert shown["result"]["type"] == "draw"
    assert [n["text"] for n in shown["notices"]] == [], shown["notices"]


def test_a_log_cut_after_a_batch_with_its_result_leaves_the_hand_unfinished() -> None:
    """A log cut after the raw [..., ryukyoku, end_kyoku] of a hand's end and before the
    draw's event (tests/data/upgrade/mjai_client_63b119a): the result was sent, only the log
    stops before it; the hand is not told over with its result not sent, it stays
    unfinished."""
    from protocols import events as ev
    from replay.formats.mjai_log import results_not_sent
    from replay.log import EventFrame, read_log

    log = Path(__file__).resolve().parent / "data" / "upgrade" / "mjai_client_63b119a.mjlog.msgpack"
    frames = read_log(log).frames
    drawn = next(n for n, f in enumerate(frames) if isinstance(f, EventFrame)
                 and isinstance(f.event, ev.RoundDrawn))
    cut = frames[:drawn]
    assert results_not_sent(cut) == cut


def test_a_log_holding_json_nested_too_deeply_still_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line of JSON nested too deeply for the parser, sent to `mjbot mjai` in a game: the
    session notes it as an error and goes on, its log keeps the raw line. Replay and the
    viewer read the log's raw frames again (an older mjbot's draws and hands' ends): that
    line is no message to them, as it was none in the game, not a traceback."""
    from replay import formats
    from replay.timeline import build

    lines = [json.dumps([{"type": "start_game", "names": ["0", "1", "2", "3"], "id": 0}]),
             "[" * 100_000 + "]" * 100_000]
    played = _mjai_here("\n".join(lines) + "\n", "0", "--log-dir", str(tmp_path))
    assert played.returncode == 0, played.stderr[-2000:]
    (log,) = tmp_path.rglob("*.mjlog.msgpack")
    out = mjbot_here(capsys, "replay", str(log))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "note: error: not JSON (nested too deeply)" in out.stdout, out.stdout[-2000:]
    assert build(formats.read(log.read_bytes(), log)).hands == []
