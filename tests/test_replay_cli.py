"""`mjbot replay` on our own logs and on imports, through the command's entry point (in the
test process: a child per call paid Python's start and the brain's import, and no test here
is about the process; those that are, a reader that leaves early and the stdin client, and
the fixture's match of client processes, start real ones)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.policies import POLICIES, Decision
from protocols import events as ev
from protocols.tiles import parse_mpsz
from replay import replayer
from replay.formats import tenhou6
from replay.log import Footer, GameLogWriter, Header
from replay.record import GameRecord, RecordError
from tests.in_process import mjbot_here
from tests.narrowing import footer_of
from tests.shared_data import DATA, MJAI_GAME

ROOT = Path(__file__).resolve().parent.parent


def _mjbot_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapter.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _own_log(path: Path, stopped: bool = False) -> Path:
    """A short riichi hand as a session would log it: seat 1 draws, riichis, wins by tsumo
    (``stopped``: the session is stopped after the riichi, the log closed unfinished)."""
    hand = tuple(parse_mpsz("123m456p789s1122z"))
    w = GameLogWriter(path, Header("test", "riichi", seat=1, policy="greedy", game_id="g1"))
    w.rx("start")
    w.event(ev.GameStarted("riichi", 1, ("a", "b", "c", "d")))
    w.rx("deal")
    w.event(ev.RoundStarted(0, 0, scores=(25000,) * 4, dora_indicators=(parse_mpsz("1m")[0],),
                            hand=hand))
    w.rx("draw 0")
    w.event(ev.TileDrawn(0, None))
    w.rx("discard 0 9m")
    w.event(ev.TileDiscarded(0, parse_mpsz("9m")[0], True))
    w.rx("draw 1 3z")
    w.event(ev.TileDrawn(1, parse_mpsz("3z")[0]))
    req = ev.DecisionRequest("turn")
    legal = (ev.Discard(parse_mpsz("3z")[0]), ev.Discard(parse_mpsz("3z")[0], riichi=True),
             ev.Discard(hand[0]))
    w.decision(req, legal, legal[1], "greedy", ((legal[1], 5.0), (legal[0], 4.0)), 0.004, "")
    w.tx("riichi 3z")
    w.event(ev.RiichiDeclared(1))
    w.event(ev.TileDiscarded(1, parse_mpsz("3z")[0], True))
    w.event(ev.RiichiAccepted(1))
    if stopped:
        w.close(Footer({"hands": 0, "unfinished": True, "stopped": True}))
        return path
    w.rx("draw 1 1z")
    w.event(ev.TileDrawn(1, parse_mpsz("1z")[0]))
    w.decision(req, (ev.Win(), ev.Discard(parse_mpsz("1z")[0])), ev.Win(), "greedy", (), 0.250,
               "timeout")
    w.tx("tsumo")
    w.event(ev.RoundWon(1, None, (*hand, parse_mpsz("1z")[0]), parse_mpsz("1z")[0], 3,
                        (-1000, 4000, -1000, -1000), ("riichi", "tsumo", "east")))
    w.event(ev.GameEnded((24000, 28000, 24000, 24000)))
    w.close(Footer({"rank": 1}, (24000, 28000, 24000, 24000)))
    return path


def test_summary_of_an_own_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    out = mjbot_here(capsys, "replay", str(path))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "seat 1" in text and "WIN     seat 1 tsumo on 1z value 3" in text
    assert "deltas  [-1000, 4000, -1000, -1000]" in text
    assert "2 decisions, median 127.0 ms, max 250.0 ms" in text
    assert "FALLBACK win (timeout)" in text


def test_json_summary_is_valid_with_per_hand_results(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    out = mjbot_here(capsys, "replay", str(path), "--json", "--policy", "greedy")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    hand = data["summary"]["hands"][0]
    assert hand["results"][0]["winner"] == 1 and hand["results"][0]["self_draw"]
    assert hand["results"][0]["value"] == 3
    assert hand["time_max_ms"] == 250.0 and hand["fallbacks"] == [
        {"action": "win", "why": "timeout", "kind": None}]  # a log from before the kind
    assert data["summary"]["final_scores"] == [24000, 28000, 24000, 24000]
    agreement = data["agreement"]
    assert agreement["decisions"] == 2
    assert agreement["by_kind"]["turn"]["decisions"] == 2
    # greedy wins whenever it may and takes the riichi: it agrees with both recorded choices
    assert agreement["agree"] == 2 and agreement["disagreements"] == []


def test_policy_agreement_lists_disagreements(tmp_path: Path) -> None:
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    result = replayer.agreement(replayer.load(path), "tsumogiri")
    assert result["decisions"] == 2 and result["agree"] == 0
    assert [d["policy"] for d in result["disagreements"]] == ["discard 3z", "discard 1z"]


class _Faulty:
    """A policy that raises on the first decision and answers an action no one offered on
    the second: what a broken policy (or a network of the wrong shape) does."""

    name = "test-faulty"

    def __init__(self) -> None:
        self.asked = 0

    def decide(self, state: object, request: object, legal: list[object],
               budget: float | None = None) -> Decision:
        self.asked += 1
        if self.asked == 1:
            raise ValueError("a broken policy")
        return Decision(ev.Pon((0, 0)))


def test_a_policy_that_gives_no_answer_is_counted_and_fails_the_replay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Its ValueError read as the LOG's ('LOG: a broken policy', exit 2) and its illegal
    answer as a plain disagreement: the figure did not say the policy never played."""
    from adapter.cli import main

    monkeypatch.setitem(POLICIES, _Faulty.name, _Faulty)
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    result = replayer.agreement(replayer.load(path), _Faulty.name)
    assert result["decisions"] == 2 and result["agree"] == 0 and result["failed"] == 2
    assert result["disagreements"] == []
    assert "raised ValueError: a broken policy" in result["failures"][0]["error"]
    assert "illegal action" in result["failures"][1]["error"]
    assert main(["replay", str(path), "--policy", _Faulty.name]) == 1
    out, err = capsys.readouterr()
    assert "FAILED: test-faulty gave no answer on 2/2 decisions" in out
    assert err.strip() == "mjbot replay: --policy test-faulty gave no answer on 2 decision(s)"


def test_missing_opponent_models_are_named_not_the_log(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """mc without its models once read 'LOG: no such file' (its FileNotFoundError was taken
    for the LOG's)."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), "--policy", f"mc@models={tmp_path / 'none'}")
    assert r.returncode == 2 and "no opponent models for 'riichi'" in r.stderr
    assert str(path) not in r.stderr and "Traceback" not in r.stderr


def test_cut_own_log_still_replays_with_a_note(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    out = mjbot_here(capsys, "replay", str(path))
    assert out.returncode == 0, out.stderr
    assert "note: log cut at byte" in out.stdout
    assert "game unfinished: the log ends without a footer" in out.stdout


def test_a_log_that_ends_inside_a_hand_says_unfinished(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = _own_log(tmp_path / "stopped.mjlog.msgpack", stopped=True)
    out = mjbot_here(capsys, "replay", str(path))
    assert out.returncode == 0, out.stderr
    assert "    unfinished (the log ends inside this hand)" in out.stdout
    assert "deltas" not in out.stdout  # no [0, 0, 0, 0] for a hand without a result
    assert out.stdout.rstrip().endswith("game unfinished: stopped on request")
    data = json.loads(mjbot_here(capsys, "replay", str(path), "--json").stdout)
    (hand,) = data["summary"]["hands"]
    assert hand["unfinished"] and hand["deltas"] is None and hand["results"] == []
    assert data["summary"]["unfinished"] == "stopped on request"
    # a whole game says neither
    whole = json.loads(mjbot_here(capsys, "replay", str(_own_log(tmp_path / "whole.mjlog.msgpack")),
                              "--json").stdout)["summary"]
    assert whole["unfinished"] is None and not whole["hands"][0]["unfinished"]


class _LineCodec:
    """A stand-in platform codec for the tests' "test" platform: one event per raw line."""

    def feed(self, raw: str | bytes) -> list[object]:
        text = raw.decode() if isinstance(raw, bytes) else raw
        word, *rest = text.split()
        if word == "draw" and len(rest) == 1:
            return [ev.TileDrawn(int(rest[0]), None)]
        if word == "draw":
            return [ev.TileDrawn(int(rest[0]), parse_mpsz(rest[1])[0]),
                    ev.DecisionRequest("turn")]
        if word == "discard":
            return [ev.TileDiscarded(int(rest[0]), parse_mpsz(rest[1])[0], True)]
        if word == "start":
            return [ev.GameStarted("riichi", 1, ("a", "b", "c", "d"))]
        return []


def test_reparse_compares_codec_output_with_the_recorded_events(tmp_path: Path) -> None:
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    rep = replayer.load(path)
    with pytest.raises(RecordError, match="no codec for platform 'test'"):
        replayer.reparse(rep)
    replayer.register_codec("test", lambda header: _LineCodec())
    try:
        result = replayer.reparse(rep)
    finally:
        replayer._CODECS.pop("test")
    # the stand-in codec knows no deal line: the recorded RoundStarted has no twin
    assert not result["identical"]
    assert result["mismatches"][0]["index"] == 1
    assert result["reparsed_events"] == 5


def test_reparse_prints_where_and_how_the_codec_now_differs(
        capsys: pytest.CaptureFixture[str]) -> None:
    """An older mjbot's mjai log (tests/data/upgrade/, made by 63b119a, whose codec logged a
    draw with no tenpai seat) re-parsed by today's codec: the text says which event differs
    and how, not only 'identical: False'."""
    old_log = ROOT / "tests" / "data" / "upgrade" / "mjai_client_63b119a.mjlog.msgpack"
    r = mjbot_here(capsys, "replay", "--reparse", str(old_log))
    assert r.returncode == 0, r.stderr
    tail = r.stdout.splitlines()[-3:]
    assert tail[0] == "reparse: 147/147 events, identical: False"
    assert tail[1] == ("  event 146: recorded RoundDrawn(reason='exhaustive', "
                       "deltas=(3000, -1000, -1000, -1000), tenpai=())")
    assert tail[2] == ("             reparsed RoundDrawn(reason='exhaustive', "
                       "deltas=(3000, -1000, -1000, -1000), tenpai=(0,))")


def test_export_tenhou6_and_mjai_through_the_cli(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    src = DATA / "tenhou" / "mjx_pairs" / "2017040900gm-00a9-0000-af5434e3.mjlog"
    out6 = tmp_path / "game.json"
    r = mjbot_here(capsys, "replay", str(src), "--export", "tenhou6", "-o", str(out6))
    assert r.returncode == 0, r.stderr
    back = mjbot_here(capsys, "replay", str(out6), "--export", "mjai")
    assert back.returncode == 0, back.stderr
    lines = [json.loads(x) for x in back.stdout.splitlines()]
    assert lines[0]["type"] == "start_game" and lines[-1]["type"] == "end_game"
    r = mjbot_here(capsys, "replay", str(src), "--seat", "2", "--policy", "greedy")
    assert r.returncode == 0 and "policy greedy vs recorded play, seat 2" in r.stdout


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"\x93\x01\x02\x03garbage", "not an mjbot msgpack log (no msgpack header frame at the "
                                   "start"),
    (b'{"log": 3}', "expected an object with a 'log' list"),
])
def test_bad_logs_get_one_clear_line(tmp_path: Path, content: bytes | None,
                                     message: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.log"
    if content is not None:
        path.write_bytes(content)
    r = mjbot_here(capsys, "replay", str(path))
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["replay", "review"])
def test_a_folder_given_as_a_log_says_what_to_give(tmp_path: Path, command: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`make run` says its logs went to logs/local/<date>/ and that `mjbot replay` reads them:
    a newcomer gives that folder, and was told only `is a directory`."""
    folder = tmp_path / "logs" / "local" / "2026-11-29"
    folder.mkdir(parents=True)
    r = mjbot_here(capsys, command, str(folder))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (f"mjbot {command}: {folder}: is a folder; name the game files "
                                f"in it, or see them all with `mjbot view {folder}`")


def test_unknown_policy_is_a_clear_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), "--policy", "nope")
    assert r.returncode == 2 and "unknown policy 'nope'" in r.stderr


def test_export_names_an_output_path_it_cannot_write(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    src = DATA / "mjai" / "local_match_seed10000_2000.mjai.jsonl"
    out = tmp_path / "missing" / "x.mjai.jsonl"
    r = mjbot_here(capsys, "replay", str(src), "--export", "mjai", "-o", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"mjbot replay: -o {out}: no folder {out.parent}"]
    # a folder, in the words of every other output option (it was the OS's 'Is a directory')
    r = mjbot_here(capsys, "replay", str(src), "--export", "mjai", "-o", str(tmp_path))
    assert r.returncode == 2 and r.stderr.splitlines() == [
        f"mjbot replay: -o {tmp_path}: is a folder"], r.stderr


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_reader_that_stops_early_gets_no_traceback(json_flag: tuple[str, ...]) -> None:
    """`mjbot replay LOG | head -1`: enough output (the log 40 times) to fill the pipe after
    the reader has gone."""
    src = str(DATA / "mjai" / "local_match_seed10000_2000.mjai.jsonl")
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "replay", *[src] * 40,
                             *json_flag], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_local_table_game_exports_to_tenhou6_in_tenhou_words(seed: int) -> None:
    """Our own games in Tenhou's viewer: yaku and score lines in Tenhou's Japanese, read back
    with the same han per win and the same final scores (deposits left at the end included)."""
    from adapter.bench.review import local_game

    with tempfile.TemporaryDirectory() as tmp:
        log = local_game(tmp, seed=seed, length="east")
        record = replayer.load(log, 0).record
        assert record is not None
        text = tenhou6.dumps(record)
    again = tenhou6.loads(text)

    def wins(r: GameRecord) -> list[tuple[int, int | None, int, tuple[int, ...]]]:
        return [(e.winner, e.from_seat, e.value, e.deltas) for e in r.events
                if isinstance(e, ev.RoundWon)]

    assert wins(again) == wins(record)
    assert again.events[-1] == record.events[-1]
    for e in again.events:
        if isinstance(e, ev.RoundWon):
            assert all(y.endswith(("飜)", "(役満)")) for y in e.yaku), e.yaku
            assert re.fullmatch(r"(\d+符\d+飜|満貫|跳満|倍満|三倍満|役満)[\d-]+点∀?", e.detail)


# ntpu_match: tests/conftest.py (seed 51, two hands, played once per test process)


def test_the_notices_a_log_holds_are_shown_with_their_hand(
        ntpu_match: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An NTPU client's own log: the server sends no value, so the client logs what our rules
    make of its win (a PlatformNotice); the replay shows it beside the win (text and JSON)
    instead of leaving the user with the codec's 'value 0'."""
    won = [p for p in sorted((ntpu_match / "ntpu").rglob("*.mjlog.msgpack"))
           if any(isinstance(e, ev.PlatformNotice) and e.text.startswith("our win")
                  for e in replayer.load(p).events)]
    assert won, "seed 51's first hand is won by a client"
    text = mjbot_here(capsys, "replay", str(won[0]))
    assert text.returncode == 0, text.stderr
    assert re.search(r"WIN .*\n    notice  our win by mjbot's rules: \d+ tai", text.stdout)
    data = json.loads(mjbot_here(capsys, "replay", str(won[0]), "--json").stdout)
    notices = data["summary"]["hands"][0]["notices"]
    assert any(n.startswith("our win by mjbot's rules") for n in notices)


def test_a_match_log_whose_players_move_names_them_at_each_hand(
        ntpu_match: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ntpu-server's match log holds every game of the match, the clients rotated between
    them. The header named the last game's players while the note named the first game's
    as seat 0's for the whole log; now the header and the note say who sat where, and each
    hand whose players differ from the header's names them."""
    (log,) = (ntpu_match / "ntpu-server").rglob("*.mjlog.msgpack")
    text = mjbot_here(capsys, "replay", str(log))
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.endswith("rulebased-1 / greedy-2 / rulebased-3 / rulebased-4")
    assert "seat 0 played by" not in text.stdout
    assert ("seat 0 is played by rulebased-1 (1 game), greedy-2 (1 game)" in text.stdout)
    hands = text.stdout.split("\n- ")[1:]
    assert len(hands) == 2 and "players" not in hands[0]
    assert "    players greedy-2 / rulebased-3 / rulebased-4 / rulebased-1" in hands[1]
    data = json.loads(mjbot_here(capsys, "replay", str(log), "--json").stdout)["summary"]
    assert data["names"] == ["rulebased-1", "greedy-2", "rulebased-3", "rulebased-4"]
    assert "players" not in data["hands"][0]
    assert data["hands"][1]["players"] == ["greedy-2", "rulebased-3", "rulebased-4",
                                           "rulebased-1"]
    review = mjbot_here(capsys, "review", str(log), "--policy", "rulebased", "--seat", "1")
    assert "seat 1 is played by greedy-2 (1 game), rulebased-3 (1 game)" in review.stdout


def test_reparse_reads_an_ntpu_server_match_log_with_the_ntpu_codec(
        ntpu_match: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--reparse` of ntpu-server's match log said "no codec for platform 'local'" though its
    raw lines are there: each client's lines now go through an NTPU codec of its own, and a
    line no client could read is named. A local table's log says why it has none."""
    (match,) = (ntpu_match / "ntpu-server").rglob("*.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", "--reparse", str(match))
    assert r.returncode == 0 and "no codec" not in r.stderr, r.stderr
    said = re.search(r"reparse: the (\d+) lines sent to the 4 clients read by the NTPU codec "
                     r"as (\d+) events, 0 unreadable", r.stdout)
    assert said and int(said[1]) > 100 and int(said[2]) > 100, r.stdout
    bad = tmp_path / "match.mjlog.msgpack"
    w = GameLogWriter(bad, Header("ntpu-server", "taiwan16", seat=None, policy="a,b,c,d",
                                  game_id="m", extra={"full_information": True}))
    w.tx("2> /start MJ 2 b")
    w.tx("2> /throw 9 999")
    w.rx("2< /ready")
    w.event(ev.GameStarted("taiwan16", 0))
    w.close(Footer({"hands": 0}))
    r = mjbot_here(capsys, "replay", "--reparse", str(bad))
    assert "the 2 lines sent to the 1 clients read by the NTPU codec as" in r.stdout, r.stdout
    assert "  reparse error: client 2, '/throw 9 999': " in r.stdout, r.stdout
    local = tmp_path / "local.mjlog.msgpack"
    w = GameLogWriter(local, Header("local", "taiwan16", seat=None, policy="a,b,c,d",
                                    game_id="l", extra={"full_information": True}))
    w.event(ev.GameStarted("taiwan16", 0))
    w.close(Footer({"hands": 0}))
    r = mjbot_here(capsys, "replay", "--reparse", str(local))
    assert r.returncode != 0 and "no codec" not in r.stderr, r.stderr
    assert "a local log holds the table's own events, no platform's messages" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_reparse_of_a_match_log_counts_every_unreadable_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A match log with more than the 50 errors listed said "50 unreadable" (the count was
    taken of the list cut to 50): it counts them all, and lists the first 50."""
    log = tmp_path / "match.mjlog.msgpack"
    w = GameLogWriter(log, Header("ntpu-server", "taiwan16", seat=None, policy="a,b,c,d",
                                  game_id="m", extra={"full_information": True}))
    w.tx("2> /start MJ 2 b")
    for _ in range(60):
        w.tx("2> /throw 9 999")
    w.event(ev.GameStarted("taiwan16", 0))
    w.close(Footer({"hands": 0}))
    r = mjbot_here(capsys, "replay", "--reparse", str(log))
    assert "the 61 lines sent to the 1 clients read by the NTPU codec as 1 events, " \
           "60 unreadable" in r.stdout, r.stdout
    assert r.stdout.count("  reparse error: client 2, '/throw 9 999': ") == 50, r.stdout
    r = mjbot_here(capsys, "replay", "--reparse", "--json", str(log))
    said = json.loads(r.stdout)["reparse"]
    assert (said["unreadable"], len(said["errors"])) == (60, 50), said


def test_an_ntpu_clients_own_win_reads_as_the_server_scored_it(
        ntpu_match: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The NTPU server sends no value: the replay of a client's own log said 'value 0' and
    deltas [0, 0, 0, 0] for its win, while an import of its command log values the win by
    our rules. Both now value it; here against the server's own record of the hand."""
    (match,) = (ntpu_match / "ntpu-server").rglob("*.mjlog.msgpack")
    table = json.loads(mjbot_here(capsys, "replay", str(match), "--json").stdout)["summary"]
    won = table["hands"][0]["results"][0]
    assert won["type"] == "win" and won["value"] > 0
    winner = table["names"][won["winner"]]  # the client, e.g. rulebased-4 (its seat 4)
    (own,) = (ntpu_match / "ntpu").rglob(f"*-{winner}-g1-*.mjlog.msgpack")
    mine = json.loads(mjbot_here(capsys, "replay", str(own), "--json").stdout)["summary"]
    assert mine["seat"] == won["winner"]
    result = mine["hands"][0]["results"][0]
    assert (result["value"], result["deltas"]) == (won["value"], won["deltas"])
    assert sorted(result["yaku"]) == sorted(won["yaku"])


def test_an_ntpu_own_win_our_rules_cannot_read_replays_and_views(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The platform dealt five of a tile and we won: valuing the win by our rules raised
    HandError out of `mjbot replay` and the viewer's timeline (the live client guarded the
    same call). The win now keeps the platform's value 0, in both."""
    from replay import formats, timeline

    hand = (0, 0, 0, 0, 0, 1, 2, 3, 9, 10, 11, 18, 19, 20, 27, 27)  # five 1m
    path = tmp_path / "ntpu-five.mjlog.msgpack"
    w = GameLogWriter(path, Header("ntpu", "taiwan16", seat=0, policy="rulebased",
                                   game_id="g1"))
    w.event(ev.GameStarted("taiwan16", 0))
    w.event(ev.RoundStarted(0, 0, hand=hand))
    w.event(ev.TileDrawn(0, 28))
    w.event(ev.RoundWon(0, None, (*hand, 28), 28, 0, (0, 0, 0, 0)))
    w.event(ev.GameEnded((0, 0, 0, 0)))
    w.close(Footer({"hands": 1, "errors": 0}))
    r = mjbot_here(capsys, "replay", str(path), "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    result = json.loads(r.stdout)["summary"]["hands"][0]["results"][0]
    assert result["type"] == "win" and result["value"] == 0
    steps = timeline.build(formats.read(path.read_bytes(), path))
    assert steps is not None


def test_an_mjai_game_whose_end_game_names_no_scores_replays_its_final_scores(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mjai.app's ``end_game`` carries no scores. `mjbot mjai` logged the game's end as
    ``GameEnded(())`` and closed its log with no footer scores, and `mjbot replay` then
    printed ``final scores []``: the final scores are what the hands add up to (the start,
    seat 0's riichi deposit, the ron's deltas)."""
    def m(kind: str, **fields: object) -> dict[str, object]:
        return {"type": kind, **fields}

    hidden = ["?"] * 13
    mine = ["1m", "2m", "3m", "5m", "9m", "1p", "1p", "4p", "5p", "6p", "7s", "8s", "9s"]
    batches = [
        [m("start_game", id=3)],
        [m("start_kyoku", bakaze="E", kyoku=1, honba=0, kyotaku=0, oya=0, dora_marker="1s",
           scores=[25000] * 4, tehais=[hidden, hidden, hidden, mine]),
         m("tsumo", actor=0, pai="?"), m("reach", actor=0),
         m("dahai", actor=0, pai="E", tsumogiri=True)],
        [m("reach_accepted", actor=0), m("tsumo", actor=1, pai="?"),
         m("dahai", actor=1, pai="S", tsumogiri=True)],
        [m("hora", actor=2, target=1, pai="S", deltas=[0, -8000, 9000, 0]), m("end_kyoku")],
        [m("end_game")],
    ]
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "mjai", "3", "--log-dir",
                           str(tmp_path)], input="".join(json.dumps(b) + "\n" for b in batches),
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = tmp_path.rglob("*.mjlog.msgpack")
    final = [24000, 17000, 34000, 25000]
    from replay.log import read_log

    assert list(footer_of(read_log(path)).scores) == final
    out = mjbot_here(capsys, "replay", str(path))
    assert out.returncode == 0, out.stderr
    assert f"final scores {final}" in out.stdout
    summary = json.loads(mjbot_here(capsys, "replay", str(path), "--json").stdout)["summary"]
    assert summary["final_scores"] == final


@pytest.mark.parametrize("predictor, message", [
    ("nn@brain/data/nn_mcr.npz", "nn: the weights are for 'mcr', not 'riichi'"),
    ("nn@missing-weights.npz", "nn: no weights file at missing-weights.npz"),
])
def test_commentary_with_a_predictors_bad_weights_names_the_weights_not_the_game(
        tmp_path: Path, predictor: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The predictor's weights load inside the block that reads the game, and their error
    (MissingNetwork, a FileNotFoundError) was reported as ``LOG: no such file``."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), "--commentary", "--predictor", predictor)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert message in r.stderr and "no such file" not in r.stderr


def test_a_mistyped_predictor_is_named_as_such_not_as_the_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`replay GAME --commentary --predictor rulebsed` read "GAME: unknown policy 'rulebsed'",
    as if the game file were at fault; the name is now refused as the predictor's, before any
    game is read (the second file does not exist: it is never reached)."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), str(tmp_path / "none.json"), "--commentary",
                   "--predictor", "rulebsed")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "mjbot replay: --predictor: unknown policy 'rulebsed' (review knows: "), lines
    assert str(path) not in r.stderr and r.stdout == ""


@pytest.mark.parametrize("predictor, message", [
    ("nn@brain/data/nn_mcr.npz", "nn: the weights are for 'mcr', not 'riichi'"),
    ("nn@missing-weights.npz", "nn: no weights file at missing-weights.npz"),
])
def test_a_predictors_bad_weights_are_named_as_the_predictors_not_the_log(
        tmp_path: Path, predictor: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`replay GAME --commentary --predictor nn@missing.npz` read "GAME: nn: no weights file
    at missing.npz", the game file named first as if it were at fault, as a mistyped name
    did; the weights are now refused as the predictor's."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), "--commentary", "--predictor", predictor)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"mjbot replay: --predictor: {message}"], r.stderr


def test_a_top_k_of_zero_is_named_as_such_not_as_the_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--top-k 0` read "GAME: --top-k must be at least 1", the game file named first as if
    it were at fault, and only once that game was read."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), "--commentary", "--top-k", "0")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == ["mjbot replay: --top-k must be at least 1"]


@pytest.mark.parametrize("command", [("replay",), ("review", "--policy", "rulebased")])
def test_a_path_through_a_file_is_one_clear_line(tmp_path: Path,
                                                 command: tuple[str, ...],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``LOG`` = ``a_file/x`` (a folder on its way is a file): NotADirectoryError was no
    error reading() knew, so the command ended in a traceback."""
    game = _own_log(tmp_path / "own.mjlog.msgpack")
    path = f"{game}/x"
    r = mjbot_here(capsys, *command, path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{path}: Not a directory" in r.stderr


def test_export_of_one_seats_own_log_says_why_it_cannot(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A platform session's log (one seat's view) cannot be exported; the refusal said
    '--export works on imported logs', though our local table's logs export too."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(path), "--export", "tenhou6")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--export needs the whole game (an import, or a local-table log); this test log " \
           "holds seat 1's view only" in r.stderr


@pytest.mark.parametrize("command", ["replay", "review"])
def test_help_names_every_format_replay_reads(command: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`--help` named every format but the Tenhou client transcript, which replay and review
    read since the README's table has listed it."""
    out = mjbot_here(capsys, command, "--help").stdout
    words = " ".join(out.split())
    for name in ("tenhou.net/6", "mjlog", "mjai", "Botzone judge log", "human games", "SGF",
                 "NTPU", "Tenhou client transcript"):
        assert name in words, (name, words)


@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
def test_an_export_of_a_game_the_log_ends_inside_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """`mjbot replay` of a file cut short notes the cut and the hand it ends inside; its
    `--export` wrote that hand with no result and said nothing, exit 0, so a converted cut
    game passed for a whole one. Now stderr says what the export lacks, in one line; the
    export is still written, exit 0, as the replay's is, and a whole game's says nothing."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.mjai.jsonl"
    cut.write_text("".join(lines[:40]), encoding="utf-8")  # inside the first hand
    r = mjbot_here(capsys, "replay", str(cut), "--export", fmt)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    assert r.stderr.strip() == (f"mjbot replay: {cut}: exported as far as the log goes: hand "
                                "E1-0 unfinished (the log ends inside it; exported with no "
                                "result)")
    whole = mjbot_here(capsys, "replay", str(MJAI_GAME), "--export", fmt)
    assert whole.returncode == 0 and whole.stderr == ""


def test_an_export_does_not_say_the_log_ends_inside_a_hand_it_goes_on_after(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The real capture kokushi.log (nine games the client left in their first hand, then
    one cut inside E3-6): `--export mjai` said of each left hand "the log ends inside it",
    though the log goes on with the next; each is now said to be a hand the client left
    (the test below: replay said "which goes on with the next hand" of them)."""
    path = DATA / "tenhou" / "dnovikoff_protocol_captures" / "kokushi.log"
    r = mjbot_here(capsys, "replay", str(path), "--export", "mjai")
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    said = r.stderr.strip().split(": exported as far as the log goes: ", 1)[1].split("; hand ")
    assert said == ["hand E1-0 unfinished (the client left the game in it; exported with no "
                    "result)"] + ["E1-0 unfinished (the client left the game in it; exported "
                    "with no result)"] * 8 + [
        "E3-6 unfinished (the client left the game in it; exported with no result)"], r.stderr


def test_a_hand_the_client_left_says_so_not_that_the_log_goes_on_with_the_next_hand(
        capsys: pytest.CaptureFixture[str]) -> None:
    """kokushi.log's ten games each end in a hand the client left (BYE): `mjbot replay`
    printed the notice "the game stops here" and under it "unfinished (no result in the log,
    which goes on with the next hand)", as if a dropped line had lost its result and the game
    went on; the export said the same. Each now reads "the client left the game in this
    hand", as the game list's note counts them."""
    path = DATA / "tenhou" / "dnovikoff_protocol_captures" / "kokushi.log"
    r = mjbot_here(capsys, "replay", str(path))
    assert r.returncode == 0, r.stderr
    assert "10 game(s) the client left (BYE)" in r.stdout
    assert r.stdout.count("    unfinished (the client left the game in this hand)\n") == 10
    assert "which goes on with the next hand" not in r.stdout
    assert "the log ends inside this hand" not in r.stdout


def test_a_policy_with_options_review_does_not_take_says_what_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot replay --policy mc@playouts=64` seats mc so; `mjbot review --policy
    mc@playouts=64` and `replay --commentary --predictor mc@...` refused it as "unknown policy
    'mc@playouts=64' (review knows: greedy, mc, ...)", a list naming the very policy given. Now
    one line says that they take the name alone and where mc's playouts and seed go."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    said = ("'mc@playouts=64': review and the commentary take 'mc' by its name alone, with no "
            "@options (mc's playouts and seed: mjbot review's --playouts and --seed)")
    for args, lead in ((("review", str(path), "--policy", "mc@playouts=64"), "mjbot review: "),
                       (("replay", str(path), "--commentary", "--predictor", "mc@playouts=64"),
                        "mjbot replay: --predictor: ")):
        r = mjbot_here(capsys, *args)
        assert r.returncode == 2 and r.stderr.splitlines() == [lead + said], r.stderr


def test_seed004_with_options_in_review_is_told_review_does_not_take_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot review --policy seed004@x` was told that review takes 'seed004' by its name
    alone; given so, review refuses it (seed004 predicts moves but values none), so the
    advice sent the user on to a second refusal. It is now that refusal at once; the
    commentary's --predictor seed004@x is told that the commentary takes the name alone
    (it said "review and the commentary", and review takes no seed004)."""
    path = _own_log(tmp_path / "own.mjlog.msgpack")
    plain = mjbot_here(capsys, "review", str(path), "--policy", "seed004")
    assert plain.returncode == 2 and "seed004 predicts moves but values none" in plain.stderr
    r = mjbot_here(capsys, "review", str(path), "--policy", "seed004@x")
    assert r.returncode == 2 and r.stderr == plain.stderr, r.stderr
    r = mjbot_here(capsys, "replay", str(path), "--commentary", "--predictor", "seed004@x")
    assert r.returncode == 2 and r.stderr.splitlines() == [
        "mjbot replay: --predictor: 'seed004@x': the commentary takes 'seed004' by its name "
        "alone, with no @options"], r.stderr


def test_export_never_writes_over_its_log_and_dash_is_standard_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o` naming the LOG itself (or a link to it) wrote the export over the game it was
    read from; `-o -` wrote a file named '-' where every other output option reads '-' as
    standard output."""
    log = tmp_path / "game.mjai.jsonl"
    shutil.copy(DATA / "mjai" / "local_match_seed10000_2000.mjai.jsonl", log)
    before = log.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(log)
    for given_path in (log, tmp_path / "link.jsonl", tmp_path / "." / "game.mjai.jsonl"):
        r = mjbot_here(capsys, "replay", str(log), "--export", "tenhou6", "-o",
                       str(given_path))
        assert r.returncode == 2 and r.stderr.splitlines() == [
            f"mjbot replay: -o {given_path}: is the LOG itself; name another file"], r.stderr
    assert log.read_bytes() == before
    plain = mjbot_here(capsys, "replay", str(log), "--export", "tenhou6")
    monkeypatch.chdir(tmp_path)
    r = mjbot_here(capsys, "replay", str(log), "--export", "tenhou6", "-o", "-")
    assert r.returncode == 0 and plain.stdout and r.stdout == plain.stdout, r.stderr
    assert not (tmp_path / "-").exists()


def test_many_logs_with_unreadable_ones_show_every_readable_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot replay logs/*` stopped at the first file no reader took, exit 2, and showed
    none of the logs after it. Each unreadable file is now named in one line (a file of no
    format we know with where to read each format's reason), every readable one is shown,
    and the run exits 2 at the end."""
    first = _own_log(tmp_path / "a.mjlog.msgpack")
    notes = tmp_path / "b-notes.txt"
    notes.write_text("what I played on Sunday\n", encoding="utf-8")
    missing = tmp_path / "c-gone.json"
    last = _own_log(tmp_path / "d.mjlog.msgpack")
    logs = [str(first), str(notes), str(missing), str(last)]
    r = mjbot_here(capsys, "replay", *logs)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stdout.count("WIN     seat 1 tsumo on 1z value 3") == 2, r.stdout
    assert r.stderr.splitlines() == [
        f"mjbot replay: {notes}: not a game log we know (`mjbot replay {notes}` says why each "
        "format refused it)",
        f"mjbot replay: {missing}: no such file",
        "mjbot replay: 2 of 4 files not read (each named above); the others shown"]
    r = mjbot_here(capsys, "replay", "--json", *logs)  # a list, one entry per file read
    assert r.returncode == 2
    assert [s["summary"]["path"] for s in json.loads(r.stdout)] == [str(first), str(last)]
    alone = mjbot_here(capsys, "replay", str(notes))  # alone: every format's reason, as before
    assert alone.returncode == 2 and "tried:" in alone.stderr and "NYCU SGF" in alone.stderr
    # none read: "the others shown" said of none
    r = mjbot_here(capsys, "replay", str(notes), str(missing))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines()[-1] == (
        "mjbot replay: 2 of 2 files not read (each named above); none shown")


def test_many_logs_go_on_past_a_file_the_policy_or_reparse_fails_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Among several LOGs, a file read whose --policy failed (riichi weights, a Taiwan game)
    or whose --reparse failed (an import has no raw messages) stopped the whole run there,
    exit 2, the files after it unshown. It is now named in one line where it is met, the
    others shown, and the run exits 2 at the end, as an unreadable file among them does."""
    riichi = _own_log(tmp_path / "a.mjlog.msgpack")
    taiwan = ROOT / "tests" / "data" / "nycu" / "ron.sgf"
    last = _own_log(tmp_path / "c.mjlog.msgpack")
    weights = f"nn@{ROOT / 'brain' / 'data' / 'nn_riichi.npz'}"
    r = mjbot_here(capsys, "replay", "--policy", weights, str(riichi), str(taiwan), str(last))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stdout.count(f"policy {weights} vs recorded play") == 2, r.stdout
    assert r.stderr.splitlines() == [
        f"mjbot replay: {taiwan}: nn: the weights are for 'riichi', not 'taiwan16'",
        "mjbot replay: 1 of 3 files read but not shown (each named above); the others shown"]
    r = mjbot_here(capsys, "replay", "--json", "--policy", weights, str(riichi), str(taiwan),
                   str(last))
    assert r.returncode == 2
    assert [s["summary"]["path"] for s in json.loads(r.stdout)] == [str(riichi), str(last)]
    alone = mjbot_here(capsys, "replay", "--policy", weights, str(taiwan))  # as before
    assert alone.returncode == 2 and alone.stderr.splitlines() == [
        "mjbot replay: nn: the weights are for 'riichi', not 'taiwan16'"]

    old_log = ROOT / "tests" / "data" / "upgrade" / "mjai_client_63b119a.mjlog.msgpack"
    gone = tmp_path / "gone.json"
    r = mjbot_here(capsys, "replay", "--reparse", str(taiwan), str(gone), str(old_log))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "reparse: 147/147 events" in r.stdout, r.stdout
    assert r.stderr.splitlines() == [
        f"mjbot replay: {taiwan}: --reparse needs one of mjbot's own logs (imports have no "
        "raw messages)",
        f"mjbot replay: {gone}: no such file",
        "mjbot replay: 1 of 3 files not read, 1 read but not shown (each named above); the "
        "others shown"]
    # a policy name no policy has is the option's fault: said once, before any file
    r = mjbot_here(capsys, "replay", "--policy", "rulebsed", str(riichi), str(last))
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "unknown policy 'rulebsed'" in r.stderr


def test_the_command_named_for_an_unreadable_file_runs_as_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Among several LOGs, a file no reader takes is named with the command that says why
    each format refused it; of a file whose name holds a space (`Game notes.txt`, saved
    beside the logs) that command was `mjbot replay .../Game notes.txt`, which a shell runs
    on two files that do not exist. The name is now quoted as a shell reads it, and the
    command, run as given, says why of that file."""
    import shlex

    notes = tmp_path / "Game notes.txt"
    notes.write_text("what I played on Sunday\n", encoding="utf-8")
    log = _own_log(tmp_path / "a.mjlog.msgpack")
    r = mjbot_here(capsys, "replay", str(log), str(notes))
    assert r.returncode == 2
    said = r.stderr.splitlines()[0]
    command = re.fullmatch(r"mjbot replay: .*not a game log we know \(`(mjbot replay .*)` says "
                           r"why each format refused it\)", said)
    assert command is not None, said
    words = shlex.split(command.group(1))
    assert words == ["mjbot", "replay", str(notes)], words
    alone = mjbot_here(capsys, *words[1:])
    assert alone.returncode == 2 and "tried:" in alone.stderr and "NYCU SGF" in alone.stderr


@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
def test_an_export_of_a_game_whose_moves_stop_fitting_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """The real mjai game with seat 0's first discard edited to a tile it does not hold:
    `mjbot replay` names the hand and exits 1, but `--export` wrote the game as recorded
    and exited 0 saying nothing, so a damaged game passed for a sound one (the exported file
    then read as damaged). The export is still written, and stderr names the hand as replay
    does, exit 1."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[3]) == {"type": "dahai", "actor": 0, "pai": "6p",
                                    "tsumogiri": False}, lines[3]
    lines[3] = '{"type":"dahai","actor":0,"pai":"9s","tsumogiri":false}'
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / f"out.{fmt}"
    run = mjbot_here(capsys, "replay", "--export", fmt, str(path), "-o", str(out))
    (err,) = run.stderr.strip().splitlines()
    assert err == (f"mjbot replay: {path}: hand 1 (E1-0) cannot be followed from event 3 "
                   "(TileDiscarded seat 0 9s) at line 4: StateError: tile 9s not in hand "
                   "1167889m6p23s1227z; exported as recorded (a damaged or edited log)"), err
    assert run.returncode == 1 and out.stat().st_size > 0
    again = mjbot_here(capsys, "replay", str(out))  # as replay reads the export: damaged too
    assert again.returncode == 1 and "cannot be followed" in again.stderr
    whole = mjbot_here(capsys, "replay", "--export", fmt, str(MJAI_GAME), "-o", str(out))
    assert whole.returncode == 0 and whole.stderr == ""


def test_an_export_names_a_hand_that_stops_fitting_another_seat_than_the_one_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real mjai game with seat 1's first discard edited to a tile it does not hold: the
    export writes every seat's moves, but only the seat read (0 by default) was checked, so
    it wrote the damaged game, exit 0, nothing said (with --seat 1: named, exit 1). Every
    seat's hand is now followed: named and exit 1 whatever --seat."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[5]) == {"type": "dahai", "actor": 1, "pai": "2s",
                                    "tsumogiri": True}, lines[5]
    lines[5] = '{"type":"dahai","actor":1,"pai":"9s","tsumogiri":false}'
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    run = mjbot_here(capsys, "replay", "--export", "tenhou6", str(path), "-o", str(out))
    (err,) = run.stderr.strip().splitlines()
    assert err == (f"mjbot replay: {path}: hand 1 (E1-0) cannot be followed from event 5 "
                   "(TileDiscarded seat 1 9s) at line 6: StateError: tile 9s not in hand "
                   "39m12233309p278s7z; exported as recorded (a damaged or edited log)"), err
    assert run.returncode == 1 and out.stat().st_size > 0


@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
def test_an_export_of_a_game_cut_between_hands_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """The real mjai game cut after its third hand's end_kyoku: `mjbot replay` notes the
    cut, but `--export` said nothing, exit 0 (its tenhou.net/6 file then read as a whole
    game): the cut was said only by a hand it fell inside. Now stderr says the game is
    unfinished, the file cut short, the export still written, exit 0."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if '"end_kyoku"' in line]
    cut = tmp_path / "cut.mjai.jsonl"
    cut.write_text("".join(lines[:ends[2] + 1]), encoding="utf-8")
    r = mjbot_here(capsys, "replay", str(cut), "--export", fmt)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    assert r.stderr.strip() == (f"mjbot replay: {cut}: exported as far as the log goes: game "
                                f"unfinished: the file is cut short: no end_game: the log ends "
                                f"at line {ends[2] + 1}, the game not over (the lines up to it "
                                "are read)"), r.stderr
