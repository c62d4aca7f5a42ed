"""Botzone's preprocessed human games (one game a line, each a hand of the record) with one
game damaged (a tile name that is none). The reader refused the whole file, the other games
lost. Now that game alone is left out, named with its line, the others read; the file's final
scores, which would lack its payments, are not made up (no game end); a file none of whose
games reads is refused whole, as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay.formats import botzone_human
from replay.record import RecordError
from tests.in_process import replay_summary
from tests.shared_data import BOTZONE_HUMAN_GAMES


def _edited(tmp_path: Path, lines_to_damage: list[int]) -> Path:
    lines = BOTZONE_HUMAN_GAMES.read_text(encoding="utf-8").splitlines()
    for n in lines_to_damage:
        game = json.loads(lines[n])
        game["tiles"][0][0] = "Z9"
        lines[n] = json.dumps(game)
    path = tmp_path / "edited.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_one_damaged_game_is_left_out_and_named_the_others_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, good = replay_summary(capsys, BOTZONE_HUMAN_GAMES)
    assert code == 0 and len(good["hands"]) == 3 and good["final_scores"]
    code, bad = replay_summary(capsys, _edited(tmp_path, [1]))
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith("hand 2 (round unknown) cannot be followed from event ")
    assert "at line 2: bad tile 'Z9' in line 2, player 0's tiles" in note, note
    assert bad["hands"][0] == good["hands"][0]
    assert bad["hands"][1]["damaged"] and not bad["hands"][1]["unfinished"]
    # the third game's moves as read whole (its scores before lack the second's payments)
    for key in ("discards", "calls", "results", "decisions"):
        assert bad["hands"][2][key] == good["hands"][2][key], key
    assert bad["final_scores"] is None


def test_a_file_none_of_whose_games_reads_is_refused_whole(tmp_path: Path) -> None:
    path = _edited(tmp_path, [0, 1, 2])
    with pytest.raises(RecordError, match=r"^botzone human: bad tile 'Z9' in line 1"):
        botzone_human.loads(path.read_text(encoding="utf-8"))


def _lacks_actions(line: str) -> str:
    game = json.loads(line)
    del game["actions"]
    return json.dumps(game)


@pytest.mark.parametrize(("edit", "why"), [
    (_lacks_actions, "line 2 is not a preprocessed game (an object with round_wind, "
                     "first_player, tiles, actions; it lacks actions)"),
    (lambda line: line[:40], "line 2 is not JSON ("),
], ids=["lacks-a-key", "not-json"])
def test_a_line_that_is_no_game_is_left_out_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, why: str) -> None:
    """A line that is valid JSON but lacks one of the four keys, or is not JSON and is not
    the file's last (a file cut short), refused the whole file (exit 2, the other games
    lost): it is now that game left out, named with its line, as a bad tile is."""
    lines = BOTZONE_HUMAN_GAMES.read_text(encoding="utf-8").splitlines()
    lines[1] = edit(lines[1])
    path = tmp_path / "edited.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, good = replay_summary(capsys, BOTZONE_HUMAN_GAMES)
    code, bad = replay_summary(capsys, path)
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith("hand 2 (round unknown) cannot be followed from event ")
    assert f"at line 2: {why}" in note, note
    assert bad["hands"][0] == good["hands"][0] and bad["hands"][1]["damaged"]
    for key in ("discards", "calls", "results", "decisions"):
        assert bad["hands"][2][key] == good["hands"][2][key], key
