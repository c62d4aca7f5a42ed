"""An mjai log one of whose tile names is no tile (``"pai":"0x"`` in a ``dahai``, a
``dora_marker`` of ``0x``): the mjai reader refused the file at that line, so `mjbot dataset
import` left the whole file out ("unread") and `mjbot replay` could not show it, for one
character in one hand. Now the line is read as a damaged event of its hand: that hand alone
is left out, named with its line and the name that is no tile, and the game's other hands
are read as the whole file's are (tests/test_import_damaged.py's form)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.in_process import mjbot_here
from tests.shared_data import DATA, MJAI_GAME
from tests.test_import_damaged import assert_the_rest_is_the_whole_files, shard_arrays


def _edited(tmp_path: Path, line: int, old: str, new: str) -> Path:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


CASES = [  # (line, old, new, what the stderr line says after "hand 1 (E1-0) left out: ")
    (12, '"pai":"9p"', '"pai":"0x"', "event 11 (TileDiscarded seat 0 '0x') at line 12 does not "
     "fit the table: StateError: tile '0x' is not a tile"),
    (11, '"pai":"9p"', '"pai":"9q"', "event 10 (TileDrawn seat 0 '9q') at line 11 does not fit "
     "the table: StateError: tile '9q' is not a tile"),
    (2, '"dora_marker":"2s"', '"dora_marker":"0x"', "event 1 (RoundStarted) at line 2 does not "
     "fit the table: StateError: dora_indicators: '0x' is not a tile"),
    (2, '"6p"', '"6x"', "event 1 (RoundStarted) at line 2 does not fit the table: StateError: "
     "hands: '6x' is not a tile"),
    (63, '"ura_markers":["E"]', '"ura_markers":[7]', "event 62 (RoundWon) at line 63 does not "
     "fit the table: StateError: ura_dora_indicators: '7' is not a tile"),
]


@pytest.mark.parametrize(("line", "old", "new", "said"), CASES)
def test_a_tile_that_is_none_leaves_its_hand_out_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: int, old: str, new: str,
        said: str) -> None:
    path = _edited(tmp_path, line, old, new)
    whole = mjbot_here(capsys, "dataset", "import", str(MJAI_GAME), "--out",
                       str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "ds"))
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    (err,) = run.stderr.strip().splitlines()
    assert err == f"mjbot dataset import: {path}: hand 1 (E1-0) left out: {said}"
    assert "1 games, 4 hands" in run.stdout and "damaged hands left out: 1" in run.stdout
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    (entry,) = manifest["import"]["files"]
    assert "unread" not in entry and entry["hands"] == 4
    # the other four hands, and the game's end, are the whole file's
    good, bad = shard_arrays(tmp_path / "whole"), shard_arrays(tmp_path / "ds")
    first = int((good["hand_index"] == 0).sum())
    assert_the_rest_is_the_whole_files(good, bad, first)


def test_replay_shows_the_game_and_names_the_hand(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`mjbot replay` refused the file ("not a game log we know"), exit 2; now it shows the
    game, the damaged hand named in its notes, the hands after it read, exit 1."""
    path = _edited(tmp_path, *CASES[0][:3])
    whole = json.loads(mjbot_here(capsys, "replay", "--json", str(MJAI_GAME)).stdout)
    run = mjbot_here(capsys, "replay", "--json", str(path))
    assert run.returncode == 1, run.stderr
    summary = json.loads(run.stdout)["summary"]
    assert any("hand 1 (E1-0) cannot be followed from event 11" in n and "line 12" in n
               and "'0x' is not a tile" in n for n in summary["notes"]), summary["notes"]
    assert summary["hands"][1:] == whole["summary"]["hands"][1:]


def test_review_reads_past_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The discard that names no tile was taken as seat 0's decision: `mjbot review` valued a
    discard of '0x' and raised a TypeError (a traceback). That move is no decision now: the
    review names the hand on stderr and exits 1."""
    path = _edited(tmp_path, *CASES[0][:3])
    # mc, the default, with few playouts: the same values asked of every move, in a second
    run = mjbot_here(capsys, "review", str(path), "--playouts", "4")
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert "hand 1 (E1-0) cannot be followed from event 11" in run.stderr


@pytest.mark.parametrize("end", ['{"type":"end_game"}',
                                 '{"type":"end_game","scores":[-4900,77900,6400,20600]}'])
def test_a_damaged_last_hand_keeps_the_games_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], end: str) -> None:
    """A damaged last hand took the game's end with it: the import left out the end_game
    inside that hand, so every row's final ranks became -1 and its final scores the
    previous hand's estimate. The end event is readable (its scores, or those the reader
    adds up), so the game's result stands: the four hands before it hold the whole file's."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert lines[440] == '{"type":"dahai","actor":1,"pai":"F","tsumogiri":true}'
    lines[440] = '{"type":"dahai","actor":1,"pai":"0x","tsumogiri":true}'
    assert lines[459] == '{"type":"end_game"}'
    lines[459] = end
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = mjbot_here(capsys, "dataset", "import", str(MJAI_GAME), "--out",
                       str(tmp_path / "whole"))
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "ds"))
    assert whole.returncode == 0 and run.returncode == 1, run.stderr
    assert "hand 5 (E2-3) left out" in run.stderr
    good, bad = shard_arrays(tmp_path / "whole"), shard_arrays(tmp_path / "ds")
    assert list(bad["h_number"]) == [0, 1, 2, 3]
    for name in ("h_final_scores", "h_final_ranks"):
        assert (bad[name] == good[name][:4]).all(), (name, bad[name], good[name])
    assert list(bad["h_final_ranks"][0]) == [4, 1, 3, 2]


def _called_with_no_tile(tmp_path: Path) -> Path:
    """A real game (tenhou.net/6's ranked_game, written as mjai) whose first call, seat 0's
    pung of C at line 25, names a tile that is no tile among the tiles it shows."""
    from replay.formats import mjai_log, tenhou6

    game = DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json"
    lines = mjai_log.dumps(tenhou6.loads(game.read_text(encoding="utf-8"))).splitlines()
    assert lines[24] == '{"type":"pon","actor":0,"target":2,"pai":"C","consumed":["C","C"]}'
    lines[24] = '{"type":"pon","actor":0,"target":2,"pai":"C","consumed":["0x","C"]}'
    path = tmp_path / "called.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_review_reads_past_a_call_that_names_no_tile(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seat 0's answer to the discard it pung was read off the call that names '0x': `mjbot
    review` valued a pung of ('0x', C) and raised a TypeError (a traceback). That answer is
    no decision now: the hand is named, the rest reviewed."""
    path = _called_with_no_tile(tmp_path)
    run = mjbot_here(capsys, "review", str(path), "--policy", "rulebased")
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert "hand 1 (E1-0) cannot be followed from event" in run.stderr
    assert "'0x' is not a tile" in run.stderr


def test_replay_shows_a_call_that_names_no_tile_as_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The summary wrote each call's tiles in mpsz, which a name that is no tile is not:
    `mjbot replay` (and --reparse, --policy) refused the whole game ("not a tile: '0x'",
    exit 2) for one edited call. Now the call shows its tiles as written, the hand is named
    in the notes, the hands after it are read, exit 1."""
    path = _called_with_no_tile(tmp_path)
    run = mjbot_here(capsys, "replay", "--json", str(path))
    assert run.returncode == 1, run.stderr
    summary = json.loads(run.stdout)["summary"]
    assert "seat 0 pon 0x 7z 7z from 2" in summary["hands"][0]["calls"]
    assert any("hand 1 (E1-0) cannot be followed" in n and "'0x' is not a tile" in n
               for n in summary["notes"]), summary["notes"]
    assert len(summary["hands"]) > 1 and summary["hands"][1]["results"]
    agreement = mjbot_here(capsys, "replay", "--json", "--policy", "rulebased", str(path))
    assert agreement.returncode == 1, agreement.stderr
    assert "Traceback" not in agreement.stderr


@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
@pytest.mark.parametrize("case", [CASES[0], CASES[3]], ids=["dahai", "tehai"])
def test_an_export_names_the_tile_that_is_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str,
        case: tuple[int, str, str, str]) -> None:
    """A game that holds a name that is no tile cannot be written as one that holds tiles:
    `mjbot replay --export tenhou6` died with a TypeError traceback (the reader had refused
    the file before), `--export mjai` said only "not a tile: '0x'". Now either names the
    hand, the event and its line, exit 2, nothing written."""
    path = _edited(tmp_path, *case[:3])
    out = tmp_path / f"out.{fmt}"
    run = mjbot_here(capsys, "replay", "--export", fmt, str(path), "-o", str(out))
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    (err,) = run.stderr.strip().splitlines()
    assert err.startswith(f"mjbot replay: {path}: hand 1 (E1-0) cannot be exported: event "), err
    assert f"at line {case[0]}" in err and "is not a tile" in err, err
    assert not out.exists()


@pytest.mark.parametrize("scores", ["[-4900,77900,6400]", "[-4900,77900,6400,20600,5]"])
@pytest.mark.parametrize("damaged", [True, False], ids=["damaged", "sound"])
def test_an_end_without_four_scores_is_no_result(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], scores: str, damaged: bool) -> None:
    """An end_game whose scores are not four (the end itself damaged) was taken as the
    game's result: three made `mjbot dataset import` die with an IndexError traceback
    (placement), five were cut to four and ranked, as the result of a game whose last hand
    was left out as damaged too. A dataset's result is four seats' scores: such an end gives
    none (final ranks -1, as a game cut short), the hands are imported, no traceback."""
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    if damaged:
        lines[440] = lines[440].replace('"pai":"F"', '"pai":"0x"', 1)
    assert lines[459] == '{"type":"end_game"}'
    lines[459] = f'{{"type":"end_game","scores":{scores}}}'
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "ds"))
    assert run.returncode == (1 if damaged else 0), run.stderr
    assert "Traceback" not in run.stderr
    rows = shard_arrays(tmp_path / "ds")
    assert len(rows["h_number"]) == (4 if damaged else 5)
    assert (rows["h_final_ranks"] == -1).all(), rows["h_final_ranks"]


def _readme() -> str:
    return " ".join((Path(__file__).resolve().parents[1] / "README.md")
                    .read_text(encoding="utf-8").split())


def test_the_readme_says_what_a_tile_that_is_none_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README still gave an mjai tile that is no tile (`bad tile '0x' in line 2`) as the
    example of a file no reader takes, which dc98c6e made one damaged hand. Its examples now
    are what the commands say: a line that is not JSON is the unread file, a tile that is
    none leaves its hand out, and an export of such a game names it."""
    readme = _readme()
    assert "bad tile '0x'" not in readme
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    lines[5] = "<garbage>"
    garbage = tmp_path / "garbage.mjai.jsonl"
    garbage.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = mjbot_here(capsys, "dataset", "import", str(garbage), str(MJAI_GAME), "--out",
                     str(tmp_path / "ds"))
    unread = readme.split("A file no reader takes (an mjai line that is not JSON: `")[1]
    assert unread.split("`")[0] in run.stderr, (unread[:80], run.stderr)
    path = _edited(tmp_path, *CASES[0][:3])
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "ds2"))
    assert "leaves its hand out the same way (`... StateError: tile '0x' is not a tile`)" \
        in readme and "StateError: tile '0x' is not a tile" in run.stderr
    run = mjbot_here(capsys, "replay", "--export", "tenhou6", str(path))
    said = readme.split("is not converted: `")[1].split("`")[0]
    assert run.returncode == 2 and said in run.stderr, (said, run.stderr)
