"""An MCR entrant studying games offline: the Botzone bot's own logs, the judge's logs and
the tools that read them (`mjbot replay`, `review`, `view`), as the README tells them."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from protocols import events as ev
from protocols import tiles as T
from replay import formats, timeline
from replay.formats import botzone_log
from tests.in_process import mjbot_here
from tests.narrowing import tile_of
from tests.serve_helpers import PYTHON_ENV
from tests.shared_data import BOTZONE_HUMAN_GAMES

# a one-shot turn after our own concealed kong: the judge's `3 0 GANG` names no tile, only
# our earlier answer `GANG W1` does
KONG_TURN = "\n".join([
    "5", "0 0 1", "PASS", "1 0 0 0 0 W1 W1 W1 W2 W3 B4 B5 B6 T7 T8 T9 F1 F1", "PASS",
    "2 W1", "GANG W1", "3 0 GANG", "PASS", "2 B5", "", ""]) + "\n"


def _bot_log(tmp_path: Path, turn: str) -> Path:
    """The game log a real `mjbot botzone` one-shot process writes for ``turn``."""
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "botzone", "--no-keep-running",
                           "--log-dir", str(tmp_path / "logs")], input=turn,
                          capture_output=True, text=True, timeout=120, env=PYTHON_ENV)
    assert done.returncode == 0, done.stderr
    (log,) = (tmp_path / "logs").rglob("*.mjlog.msgpack")
    return log


def test_reparse_reads_the_botzone_bots_own_log_with_its_concealed_kong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --reparse said "no codec for platform 'botzone'" for every log the Botzone bot wrote,
    # and a codec not told our answers could not read our own concealed kong again
    log = _bot_log(tmp_path, KONG_TURN)
    done = mjbot_here(capsys, "replay", str(log), "--reparse")
    assert done.returncode == 0, done.stderr
    assert "reparse: 5/5 events, identical: True" in done.stdout


JUDGE_LOG = Path(__file__).parent / "data" / "botzone_judge_log.json"  # the official judge's


def _mahjonggb_fan(hand13: list[str], win: str, self_drawn: bool) -> int:
    """MahjongGB's total for the concealed hand (Botzone tile names), seat and round East."""
    import MahjongGB

    fans = MahjongGB.MahjongFanCalculator(
        pack=(), hand=tuple(hand13), winTile=win, flowerCount=0, isSelfDrawn=self_drawn,
        is4thTile=False, isAboutKong=False, isWallLast=False, seatWind=0, prevalentWind=0)
    return sum(points for points, _ in fans)


def test_mcr_commentary_says_a_wait_short_of_8_on_a_discard_can_still_win_by_self_draw(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the judge log's seat 2 went ready on 4s 7s: 7s scores 7 on a discard but 9 self-drawn
    # (不求人 for 门前清 and 自摸); the line said "only 4s reach 8 fan", as if 7s could not win
    done = mjbot_here(capsys, "replay", str(JUDGE_LOG), "--seat", "2", "--commentary")
    assert done.returncode == 0, done.stderr
    assert ("seat 2 discards 3s: ready on 4s 7s, but only 4s reach 8 fan on a discard; 7s "
            "only by self-draw.") in done.stdout
    hand = ["W3", "W4", "W5", "W6", "W7", "W8", "B2", "B3", "B4", "T5", "T6", "T8", "T8"]
    assert _mahjonggb_fan(hand, "T7", False) == 7 and _mahjonggb_fan(hand, "T7", True) == 9


def test_mcr_commentary_ready_hand_winnable_only_by_self_draw() -> None:
    from replay.review.commentary import FAN_MINIMUM, explain
    from tests.review_positions import discard, legal, mcr_state

    turn = ev.DecisionRequest("turn")
    state = mcr_state("345678m888s88p35p", draw="7z")
    comment = explain(state, turn, legal(state, turn), discard(state, "7z"))
    assert comment.factor == FAN_MINIMUM
    assert comment.sentence == ("discards 7z: ready on 4p (4 left) but below 8 fan on a "
                                "discard: it can win only by self-draw (on 4p).")
    assert comment.facts["waits_8_fan"] == "" and \
        comment.facts["waits_8_fan_self_draw_only"] == "4p"
    hand = ["W3", "W4", "W5", "W6", "W7", "W8", "T8", "T8", "T8", "B8", "B8", "B3", "B5"]
    assert _mahjonggb_fan(hand, "B4", False) == 7 and _mahjonggb_fan(hand, "B4", True) == 9


def test_replay_reads_botzones_preprocessed_human_games(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    # ../shared/data/botzone's 3 human games were "not a game log we know" to replay, review
    # and the viewer (which listed the file, then answered 422)
    done = mjbot_here(capsys, "replay", str(BOTZONE_HUMAN_GAMES))
    assert done.returncode == 0, done.stderr
    wins = [line.split("WIN", 1)[1].strip().split("  ")[0]
            for line in done.stdout.splitlines() if "WIN " in line]
    assert wins == ["seat 0 ron from seat 3 on 2s value 11",
                    "seat 0 ron from seat 1 on 2m value 9",
                    "seat 3 ron from seat 0 on 5m value 11"]
    assert "deltas  [35, -8, -8, -19]" in done.stdout  # Botzone's payments: 24+F, -(8+F), -8
    assert "E4-0 dealer 3  scores [35, -8, -8, -19]" in done.stdout  # as the viewer runs on
    assert "final scores [49, -33, -24, 8]" in done.stdout
    # the first win's fan as MahjongGB counts it: chow 123m called, 123678p 1366s + 2s
    fans = __import__("MahjongGB").MahjongFanCalculator(
        pack=(("CHI", "W2", 1),), hand=("B1", "B2", "B3", "B6", "B7", "B8", "T1", "T3", "T6",
                                        "T6"),
        winTile="T2", flowerCount=0, isSelfDrawn=False, is4thTile=False, isAboutKong=False,
        isWallLast=False, seatWind=(0 - 2) % 4, prevalentWind=0)
    assert sum(points for points, _ in fans) == 11
    review = mjbot_here(capsys, "review", str(BOTZONE_HUMAN_GAMES), "--seat", "3",
                        "--policy", "rulebased")
    assert review.returncode == 0, review.stderr
    assert "[botzone_human, mcr] seat 3" in review.stdout


def test_a_damaged_preprocessed_game_is_named_in_one_line_the_others_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It was the whole file refused in one line (exit 2); now that game alone is left out,
    named the same way, and the other two read (exit 1)."""
    lines = BOTZONE_HUMAN_GAMES.read_text().splitlines()
    game = json.loads(lines[1])
    game["actions"][0][2] = [2, "W9"]  # player 0 throws a tile it does not hold
    path = tmp_path / "damaged.json"
    path.write_text("\n".join([lines[0], json.dumps(game), lines[2]]) + "\n")
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (err,) = done.stderr.strip().splitlines()
    assert err.startswith(f"mjbot replay: {path}: hand 2 (round unknown) cannot be followed ")
    assert "line 2, step 2: player 0 gives up W9, which it does not hold" in err


def test_the_viewer_shows_the_preprocessed_human_games() -> None:
    # `mjbot view` listed the file and then answered 422 on opening it
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view",
                             str(BOTZONE_HUMAN_GAMES)], stderr=subprocess.PIPE, text=True,
                            env=PYTHON_ENV)
    assert proc.stderr is not None
    try:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)games", proc.stderr.readline())
        assert found
        url = f"{found.group(1)}api/games/0~{BOTZONE_HUMAN_GAMES.name}"
        with urllib.request.urlopen(url, timeout=60) as answer:
            body = answer.read()
            if answer.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
        game = json.loads(body)
    finally:
        proc.terminate()
        proc.wait(10)
    assert game["format"] == "Botzone human games (preprocessed)"
    assert [h["result"]["winner"] for h in game["hands"]] == [0, 0, 3]
    assert game["hands"][0]["result"]["yaku_en"] == ["Mixed Triple Chow", "All Chows",
                                                     "Closed Wait"]


# seat 0, one step from a pure straight: the bot chows seat 3's 3m with the discard after it
CHOW_HISTORY = ["0 0 1", "PASS", "1 0 0 0 0 W1 W2 W4 W5 W6 W7 W8 W9 B2 B3 B4 F1 F2", "PASS",
                "2 T9", "PLAY T9", "3 0 PLAY T9", "PASS", "3 1 DRAW", "PASS", "3 1 PLAY F3",
                "PASS", "3 2 DRAW", "PASS", "3 2 PLAY F4", "PASS", "3 3 DRAW", "PASS",
                "3 3 PLAY W3"]


def _one_shot(requests: list[str], data: str, log_dir: Path) -> str:
    """One one-shot `mjbot botzone` turn (simple interaction); its response line."""
    turns = (len(requests) + 1) // 2
    done = subprocess.run([sys.executable, "-m", "adapter.cli", "botzone", "--no-keep-running",
                           "--log-dir", str(log_dir)],
                          input="\n".join([str(turns), *requests, data, ""]) + "\n",
                          capture_output=True, text=True, timeout=120, env=PYTHON_ENV)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0]


@pytest.mark.parametrize("judge_says", ["3 0 CHI W2 F1", "3 2 PENG F4"])
def test_policy_rechecks_the_discard_a_botzone_chow_carries(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], judge_says: str) -> None:
    # the bot decides its discard with the chow (`CHI W2 F1`) and logs it before the judge's
    # line with the chow comes back: replay --policy asked rulebased for that discard on the
    # table without the chow ("a hand of 12 tiles ...", FAILED, exit 1)
    assert _one_shot(CHOW_HISTORY, "", tmp_path) == "CHI W2 F1"
    (log,) = tmp_path.rglob("*.mjlog.msgpack")
    data = json.dumps({"v": 1, "match": "m", "log": str(log)})
    _one_shot([*CHOW_HISTORY, "CHI W2 F1", judge_says], data, tmp_path)
    done = mjbot_here(capsys, "replay", str(log), "--policy", "rulebased")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAILED" not in done.stdout
    if judge_says.startswith("3 0 CHI"):  # the chow came: its discard is weighed after it
        assert "policy rulebased vs recorded play, seat 0: 2/2 agree" in done.stdout
        assert "turn     1/1" in done.stdout
    else:  # seat 2's pung went first: the discard was never played
        assert "1 discard decision(s) made with a chow or pung that another seat's claim " \
               "overrode are left out" in done.stdout
        assert "turn" not in done.stdout.split("policy rulebased", 1)[1]


def test_a_botzone_log_that_ends_after_our_chow_does_not_say_another_claim_won(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the log of a one-shot bot after its chow turn (or of a match ended there: a win on that
    # discard, a penalty) holds no judge's answer: the note said another seat's claim
    # overrode the chow, which nothing in the log says
    assert _one_shot(CHOW_HISTORY, "", tmp_path) == "CHI W2 F1"
    (log,) = tmp_path.rglob("*.mjlog.msgpack")
    done = mjbot_here(capsys, "replay", str(log), "--policy", "rulebased")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "overrode" not in done.stdout
    assert "the log ends after a chow or pung the bot answered, before the judge said " \
           "whether it was taken" in done.stdout
    assert "turn" not in done.stdout.split("policy rulebased", 1)[1]


def test_a_cut_preprocessed_file_shows_the_whole_games_before_the_cut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = BOTZONE_HUMAN_GAMES.read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[:text.index("\n") + 1000])  # inside the second game
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0, done.stderr
    assert "note: the file is cut short: line 2 ends inside its game: the 1 games before it " \
           "are read" in done.stdout
    assert done.stdout.count("WIN ") == 1


def _preprocessed(record: Any) -> dict[str, Any]:
    """A judge log's game written as ccr-cheng's preprocessing writes Botzone's human games
    (mahjong_data/preprocess.py): every take per player, one action per player and step."""
    events = record.events
    start = next(e for e in events if isinstance(e, ev.RoundStarted))
    tiles = [[T.to_botzone(t) for t in hand] for hand in start.hands]
    actions: list[list[list[Any]]] = [[], [], [], []]

    def step(seat: int, action: list[Any]) -> None:
        for p in range(4):
            actions[p].append(action if p == seat else [0])
    first = True
    rest = iter(events[events.index(start) + 1:])
    for e in rest:
        if isinstance(e, ev.TileDrawn):
            assert e.tile is not None, e  # the record shows every seat's draws
            tiles[e.seat].append(T.to_botzone(e.tile))
            if not first:  # the first player's first draw is its 14th tile
                step(-1, [0])
            first = False
        elif isinstance(e, ev.TileDiscarded):
            step(e.seat, [2, T.to_botzone(e.tile)])
        elif isinstance(e, ev.MeldCalled) and e.kind in ("chi", "pon"):
            after = T.to_botzone(next(rest).tile)  # the discard that goes with the call
            step(e.seat, [3, f"{T.to_botzone(sorted(e.tiles)[1])} {after}"] if e.kind == "chi"
                 else [4, after])
        elif isinstance(e, ev.MeldCalled):
            kans: dict[str, list[Any]] = {"open_kan": [5],
                                          "closed_kan": [5, T.to_botzone(e.tiles[0])],
                                          "added_kan": [6]}
            step(e.seat, kans[e.kind])
        elif isinstance(e, ev.RoundWon):
            step(e.winner, [7])
    return {"round_wind": start.round_wind, "first_player": start.dealer,
            "tiles": [t + [""] * (34 - len(t)) for t in tiles], "actions": actions}


@pytest.mark.parametrize("name", ["botzone_judge_log.json", "botzone_judge_kongs/open_kong.json",
                                  "botzone_judge_kongs/added_kong.json"])
def test_a_judge_log_written_in_the_preprocessed_form_reads_to_the_judges_win(
        name: str) -> None:
    from replay.formats import botzone_human, botzone_log

    judged = botzone_log.loads((Path(__file__).parent / "data" / name).read_text())
    again = botzone_human.loads(json.dumps(_preprocessed(judged)))
    (won,) = [e for e in judged.events if isinstance(e, ev.RoundWon)]
    (read,) = [e for e in again.events if isinstance(e, ev.RoundWon)]
    assert (read.winner, read.from_seat, read.win_tile, read.value, read.deltas) == \
        (won.winner, won.from_seat, won.win_tile, won.value, won.deltas)
    kinds = {e.kind for e in again.events if isinstance(e, ev.MeldCalled)}
    assert kinds == {e.kind for e in judged.events if isinstance(e, ev.MeldCalled)}


def test_mcr_commentary_on_a_refused_call_does_not_say_the_plan_is_lost(
        capsys: pytest.CaptureFixture[str]) -> None:
    # rulebased refuses a call that brings the hand no nearer an 8-fan plan; the line said
    # "leave no 8-fan plan", though the pung of 3z here keeps a plan exactly as near as before
    from brain.policies.mcr_plan import best_distance
    from brain.state import Meld, TableState
    from replay import replayer

    log = Path(__file__).parent / "data" / "botzone_judge_kongs" / "open_kong.json"
    done = mjbot_here(capsys, "replay", str(log), "--seat", "2", "--commentary")
    assert done.returncode == 0, done.stderr
    assert "leave no 8-fan plan" not in done.stdout
    assert ("seat 2 passes on 3z: the call would lower the shanten to 1 but bring the hand no "
            "nearer an 8-fan hand.") in done.stdout
    replay = replayer.load(str(log), 2)
    asked = next(d for d in replay.decisions if d.request.kind == "claim"
                 and d.request.tile == T.parse_mpsz("3z")[0])
    state = TableState("mcr", 2)
    for e in replay.events[:asked.index]:
        state.apply(e)
    counts = state.counts()
    before = best_distance(counts, list(state.melds))
    three_z = tile_of(asked.request)
    counts[T.kind(three_z)] -= 2
    melds = [*state.melds, Meld("pon", (three_z,) * 3, three_z)]
    after = min(best_distance([c - (k == j) for k, c in enumerate(counts)], melds)
                for j in range(34) if counts[j])
    assert after == before < 99  # the plan is still there, no nearer


@pytest.mark.parametrize(("end", "line"), [
    ({"action": "HUANG", "score": [0, 0, 0, 0]}, "    DRAW    exhaustive\n"),
    ({"action": "WA", "player": 1, "score": [10, -30, 10, 10]}, "    ENDED   WA (penalty)\n")])
def test_an_mcr_hand_without_a_win_is_told_without_riichi_terms(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], end: dict[str, Any],
        line: str) -> None:
    # MCR pays nothing for being ready at a draw, yet the summary printed "tenpai []", and a
    # judge's WA (a penalty that ends the match) as "DRAW WA tenpai []"
    log = json.loads(JUDGE_LOG.read_text())
    log["log"][-1]["output"]["display"] = end
    log["scores"] = end["score"]
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(log))
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0, done.stderr
    assert line in done.stdout and "tenpai" not in done.stdout
    assert f"final scores {end['score']}" in done.stdout


@pytest.mark.parametrize("verdict", sorted(botzone_log.PENALTIES))
def test_every_judge_penalty_ends_the_match_alike_in_replay_and_the_viewer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verdict: str) -> None:
    # the codec, replay's summary and the viewer's timeline read the verdicts from one table
    # (there were two, the timeline's copied from the codec's, free to drift apart)
    log = json.loads(JUDGE_LOG.read_text())
    log["log"][-1]["output"]["display"] = {"action": verdict, "player": 1,
                                           "score": [10, -30, 10, 10]}
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(log))
    done = mjbot_here(capsys, "replay", str(path))
    assert f"    ENDED   {verdict} (penalty)\n" in done.stdout, done.stdout + done.stderr
    (hand,) = timeline.build(formats.read(path.read_bytes(), path)).hands
    assert hand["result"]["type"] == "penalty"
    assert hand["result"]["reason"] == f"{verdict} (penalty: {botzone_log.PENALTIES[verdict]})"
