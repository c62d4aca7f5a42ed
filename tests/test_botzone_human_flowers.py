"""Botzone's human MCR games (ccr-cheng's preprocessed form) with flowers: a starting hand keeps
its flowers, each replaced by a draw step of all [0] (mahjong_data/preprocess.py drops every
flower drawn in play with its 补花 line). The reader refused every game with a flower in a
starting hand.

No game of ../shared/data/botzone (the 3-game sample, copied under tests/data/shared/botzone
with its MIT licence) holds a flower, so the games here are the sample's first game with a
flower put into a starting hand the way the preprocessing writes one: the flower where a dealt
tile was, that tile moved to the replacement draw, and one step of all [0] for the draw (at the
start, or at the holder's first turn: both orders are read)."""

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
from replay.formats import botzone_human
from replay.record import RecordError
from tests.in_process import mjbot_here
from tests.serve_helpers import PYTHON_ENV
from tests.shared_data import BOTZONE_HUMAN_GAMES

# the sample's first game: first player 2; player 0 wins on player 3's 2s with 11 fan
# (24+11, -(8+11), -8, -8); player 0 first acts at step 4 (2 discards, 3 draws and
# discards, 0 draws at step 3)
GAME = json.loads(BOTZONE_HUMAN_GAMES.read_text().splitlines()[0])


def _with_flower(player: int, flower: str, at: int) -> dict[str, Any]:
    """GAME with ``flower`` dealt to ``player`` in place of its last starting tile (that tile
    its replacement) and the replacement's step of all [0] put in at step ``at``."""
    game = json.loads(json.dumps(GAME))
    dealt = 14 if player == game["first_player"] else 13
    tiles = game["tiles"][player]
    tiles.insert(dealt - 1, flower)
    tiles.pop()  # the padding to 34
    for actions in game["actions"]:
        actions.insert(at, [0])
    return game


def _won(game: dict[str, Any]) -> ev.RoundWon:
    record = botzone_human.loads(json.dumps(game) + "\n")
    (won,) = [e for e in record.events if isinstance(e, ev.RoundWon)]
    return won


def test_the_sample_game_as_it_is() -> None:
    won = _won(GAME)
    assert (won.winner, won.from_seat, won.value, won.deltas) == (0, 3, 11, (35, -8, -8, -19))


@pytest.mark.parametrize("at", [0, 4], ids=["replaced-at-the-start", "replaced-at-its-turn"])
def test_a_starting_flower_is_set_aside_replaced_and_worth_one_fan_to_the_win(at: int) -> None:
    # "a flower (H3) in line 1, player 0's tiles: the preprocessing dropped flowers'
    # replacements" was all the reader said
    game = _with_flower(0, "H3", at)
    record = botzone_human.loads(json.dumps(game) + "\n")
    events = record.events
    # as Botzone's deal tells flowers: the hand dealt with the flower replaced (by the
    # holder's next take), the flower after it
    start = next(e for e in events if isinstance(e, ev.RoundStarted))
    assert start.hands[0] == tuple(T.from_botzone(t) for t in GAME["tiles"][0][:13])
    (flower,) = [e for e in events if isinstance(e, ev.FlowerReplaced)]
    assert (flower.seat, flower.flower) == (0, T.from_botzone("H3"))
    assert events.index(flower) == events.index(start) + 1
    # the rest of the game is the sample's: the same draws, and no extra one
    plain = botzone_human.loads(json.dumps(GAME) + "\n").events
    scored = ev.RoundWon | ev.GameEnded
    assert [e for e in events if not isinstance(e, ev.FlowerReplaced | scored)] == \
        [e for e in plain if not isinstance(e, scored)]
    (won,) = [e for e in events if isinstance(e, ev.RoundWon)]
    # the same hand wins, one fan more (花牌, not counted towards the 8): Botzone pays 8+F
    assert (won.winner, won.from_seat, won.value) == (0, 3, 12)
    assert won.deltas == (24 + 12, -8, -8, -(8 + 12))
    assert "花牌(1)" in won.yaku


def test_the_first_players_flower_among_its_fourteen() -> None:
    game = _with_flower(2, "H6", 0)
    record = botzone_human.loads(json.dumps(game) + "\n")
    (flower,) = [e for e in record.events if isinstance(e, ev.FlowerReplaced)]
    assert flower.seat == 2
    won = _won(game)
    assert (won.winner, won.value) == (0, 11)  # the winner holds no flower


def test_two_seats_flowers_replaced_at_the_start_each_go_to_their_holder() -> None:
    game = _with_flower(0, "H1", 0)
    game["tiles"][3].insert(12, "H2")
    game["tiles"][3].pop()
    for actions in game["actions"]:
        actions.insert(0, [0])
    record = botzone_human.loads(json.dumps(game) + "\n")
    flowers = [(e.seat, T.to_botzone(e.flower)) for e in record.events
               if isinstance(e, ev.FlowerReplaced)]
    assert sorted(flowers) == [(0, "H1"), (3, "H2")]
    assert _won(game).value == 12


def test_a_flower_past_the_starting_hand_is_one_clear_line() -> None:
    game = json.loads(json.dumps(GAME))
    game["tiles"][1][15] = "H4"
    with pytest.raises(RecordError, match=r"line 1, player 1's tiles \(its draw 3\), where "
                                          r"the preprocessing keeps none"):
        botzone_human.loads(json.dumps(game) + "\n")


def test_replay_review_dataset_import_and_the_viewer_read_a_game_with_flowers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flowers.json"
    lines = BOTZONE_HUMAN_GAMES.read_text().splitlines()
    path.write_text("\n".join([json.dumps(_with_flower(0, "H3", 4)), *lines[1:]]) + "\n")
    done = mjbot_here(capsys, "replay", str(path))
    assert done.returncode == 0, done.stderr
    assert "seat 0 ron from seat 3 on 2s value 12" in done.stdout
    review = mjbot_here(capsys, "review", str(path), "--seat", "0", "--policy", "rulebased")
    assert review.returncode == 0, review.stderr
    out = tmp_path / "data"
    imported = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(out))
    assert imported.returncode == 0, imported.stderr
    assert any(out.rglob("*")), imported.stdout
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(path)],
                            stderr=subprocess.PIPE, text=True, env=PYTHON_ENV)
    assert proc.stderr is not None
    try:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)games", proc.stderr.readline())
        assert found
        with urllib.request.urlopen(f"{found.group(1)}api/games/0~{path.name}",
                                    timeout=60) as answer:
            body = answer.read()
            if answer.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
    finally:
        proc.terminate()
        proc.wait(10)
    game = json.loads(body)
    assert [h["result"]["winner"] for h in game["hands"]] == [0, 0, 3]
    assert "Flower Tiles" in game["hands"][0]["result"]["yaku_en"]
