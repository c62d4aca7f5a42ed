"""A tenhou.net/6 file with one hand ("log" entry) damaged: a tile code that is no tile, a
field of the wrong type. The reader raised for the whole file (`mjbot replay`: "not a game log
we know", `dataset import`: the file left out), every other hand lost. Now that hand alone is
left out and named (its number, round, the log entry and what was wrong), the others read; a
file whose structure is unreadable, or none of whose hands reads, is still refused whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from replay import formats, replayer, timeline
from replay.dataset.imports import record_block
from replay.formats import tenhou6
from replay.record import RecordError
from replay.replayer import from_record
from tests.in_process import mjbot_here, replay_summary
from tests.shared_data import DATA
from tests.test_import_damaged import shard_arrays

GAME = DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json"  # three hands
IN_LINES = DATA / "tenhou" / "mjx_pairs" / "2010110100gm-00a9-0000-de3472e8.tenhou6.json"


def _seat1_discard(log: list[Any]) -> None:
    log[6][3] = 99  # seat 0's fourth discard: a code that is no tile


def _scores(log: list[Any]) -> None:
    log[1][2] = "a"


def _round(log: list[Any]) -> None:
    log[0] = "x"


def _start_tile(log: list[Any]) -> None:
    log[4 + 3 * 2][0] = 0  # seat 2's starting hand: 0 is no tile code


def _win_without_entry(log: list[Any]) -> None:
    log[16] = ["和了"]  # the win marker alone: read as an unfinished hand


# entry edited -> what the note says was wrong
EDITS = {
    "discard": (2, _seat1_discard, "bad tile code 99 in log[2]"),
    "scores": (0, _scores, "log[0]: its scores [25000, 25000, 'a', 25000] are not four whole"),
    "round": (1, _round, "log[1]: its first entry x is not [round, repeats, deposits]"),
    "start": (1, _start_tile, "bad tile code 0 in log[1]"),
    "win": (1, _win_without_entry, "log[1]: a win result with no win entry: ['和了']"),
}


def _edited(tmp_path: Path, entry: int, edit: Any) -> Path:
    game = json.loads(GAME.read_text(encoding="utf-8"))
    edit(game["log"][entry])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(game, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("case", EDITS, ids=list(EDITS))
def test_one_damaged_hand_is_left_out_and_named_the_others_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    entry, edit, why = EDITS[case]
    path = _edited(tmp_path, entry, edit)
    code, good = replay_summary(capsys, GAME)
    assert code == 0 and not good["notes"]
    code, bad = replay_summary(capsys, path)
    assert code == 1
    assert len(bad["hands"]) == len(good["hands"]) == 3
    (note,) = bad["notes"]
    assert note.startswith(f"hand {entry + 1} (") and why in note, note
    assert bad["hands"][entry]["damaged"].startswith(why[:20])
    assert not bad["hands"][entry]["unfinished"]
    for n in range(3):
        if n != entry:  # every other hand as the whole file's
            assert bad["hands"][n] == good["hands"][n]
    assert bad["final_scores"] == good["final_scores"]  # the file's own sc


def test_the_dataset_import_takes_the_other_hands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry, edit, why = EDITS["discard"]
    path = _edited(tmp_path, entry, edit)
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "ds"))
    assert run.returncode == 1, run.stderr
    (err,) = run.stderr.strip().splitlines()
    assert err == (f"mjbot dataset import: {path}: hand 3 (E2-1) left out: it cannot be "
                   f"read: {why}")
    assert "1 games, 2 hands" in run.stdout
    assert list(shard_arrays(tmp_path / "ds")["h_number"]) == [0, 1]  # the first two


def test_a_file_in_lines_names_the_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """mjx's form, one object (of one hand) a line: the damaged hand is named by its line."""
    lines = IN_LINES.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[3])
    obj["log"][0][5][0] = 77  # seat 0's first take
    lines[3] = json.dumps(obj, ensure_ascii=False)
    path = tmp_path / "lines.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, good = replay_summary(capsys, IN_LINES)
    code, bad = replay_summary(capsys, path)
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith("hand 4 (") and "bad tile code 77 in line 4 log[0]" in note, note
    assert [h for n, h in enumerate(bad["hands"]) if n != 3] == \
        [h for n, h in enumerate(good["hands"]) if n != 3]


@pytest.mark.parametrize("text, match", [
    ('{"log": 3}', "expected an object with a 'log' list"),
    ('{"name": ["a", "b"], "log": []}', "expected 4 names"),
])
def test_an_unreadable_structure_is_still_refused_whole(text: str, match: str) -> None:
    with pytest.raises(RecordError, match=match):
        tenhou6.loads(text)


def test_a_file_none_of_whose_hands_reads_is_refused_whole(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = json.loads(GAME.read_text(encoding="utf-8"))
    for hand in game["log"]:
        hand[0] = "x"
    path = tmp_path / "none.json"
    path.write_text(json.dumps(game, ensure_ascii=False), encoding="utf-8")
    run = mjbot_here(capsys, "replay", str(path))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "log[0]: its first entry x is not [round, repeats, deposits]" in run.stderr


def test_a_file_in_lines_cut_after_a_damaged_hand_still_says_it_is_cut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The last whole line's hand damaged and the next line cut: both are said (the cut was
    lost with the damaged hand's unknown scores)."""
    lines = IN_LINES.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[6])
    obj["log"][0][0] = "x"
    lines = [*lines[:6], json.dumps(obj, ensure_ascii=False), lines[7][:50]]
    path = tmp_path / "cut.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    code, bad = replay_summary(capsys, path)
    assert code == 1
    damaged, cut = bad["notes"]
    assert damaged.startswith("hand 7 (round unknown) ") and "line 7 log[0]" in damaged
    assert cut.startswith("the file is cut short: line 8 ends early"), cut
    assert bad["final_scores"] is None


def test_a_file_of_thousands_of_damaged_hands_costs_no_more_than_their_number() -> None:
    """Each damaged hand was placed (its number, its round) by a walk from the file's start:
    5,000 unreadable log entries were some 17 CPU seconds of `mjbot view`'s outline,
    `mjbot replay` and `dataset import` together. Named as before, in one walk: the rounds
    labelled (one label a hand a walk) grow with the hands, not with their square. Counted,
    not timed: ``sys.setprofile`` sees each call of the labelling function."""
    game = json.loads(GAME.read_text(encoding="utf-8"))
    sound = game["log"][0]
    game["log"] = [["x", *sound[1:]]] * 5000 + [sound]
    loaded = formats.read(json.dumps(game).encode(), "many.json")
    record = loaded.record
    assert record is not None
    labelling = replayer.round_label.__code__
    labels = 0

    def count(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal labels
        if event == "call" and frame.f_code is labelling:
            labels += 1

    sys.setprofile(count)
    try:
        outline = timeline.build(loaded)
        replay = from_record(record, 0, "many.json")
        found: list[dict[str, Any]] = []
        record_block(record, 0, found)
    finally:
        sys.setprofile(None)
    assert labels <= 10 * 5001, labels  # a walk a hand: some 12.5 million a command
    assert [d["hand"] for d in replay.damaged] == list(range(1, 5001))
    assert [d["hand"] for d in found] == list(range(1, 5001))
    assert all(h.get("damaged") for h in outline.hands[:5000])
    assert "damaged" not in outline.hands[5000]
    assert replay.notes[4999].startswith("hand 5000 (round unknown) cannot be followed from "
                                         "event 5000 (RoundStarted): log[4999]: its first")
