"""`mjbot dataset import` of a file one of whose numbers names no seat: an mjai ``hora`` of
winner 9, a ``start_kyoku`` of dealer (oya) 9, a ``reach`` of seat -1 (read from the end of
the seats' list), a ``start_kyoku`` of hand 99999. Every reader takes such a number as it is
and the table never looks at a winner or a dealer, so the file was imported with exit 0 and
seat 9 written into the hand's row of the dataset (hand 99999: a traceback, the dataset's
round column overflowed). Now that hand is left out, named on stderr with
the field and its value, and the exit status is 1 (tests/test_import_damaged.py's form). The
fuzz sets any one number of a real file of each reader to a value out of range: the import
refuses the file with a DatasetError, or every seat it writes is one."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.dataset import schema as S
from replay.dataset.imports import import_files
from tests.in_process import mjbot_here
from tests.shared_data import BOTZONE_HUMAN_GAMES, DATA, LAB_REFEREE, MJAI_GAME
from tests.test_import_damaged import shard_arrays

HORA = '{"type":"hora","actor":1,"target":0,"deltas":[-8000,9000,0,0],"ura_markers":["E"]}'


def _edited(tmp_path: Path, line: int, old: str, new: str) -> Path:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert old in lines[line]
    lines[line] = lines[line].replace(old, new, 1)
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("line", "old", "new", "said"), [
    (62, '"actor":1', '"actor":9', "(E1-0) left out: event 62 (RoundWon) at line 63 does not "
     "fit the table: StateError: winner 9 is not a seat (0..3)"),
    (53, '"actor":1', '"actor":-1', "(E1-0) left out: event 53 (RiichiDeclared seat -1) at "
     "line 54 does not fit the table: StateError: seat -1 is not a seat (0..3)"),
    (1, '"oya":0', '"oya":9', "(E1-0) left out: event 1 (RoundStarted) at line 2 does not "
     "fit the table: StateError: dealer 9 is not a seat (0..3)"),
    # found by the fuzz below: an OverflowError's traceback (the dataset's int16 column)
    (1, '"kyoku":1', '"kyoku":99999', "(E99999-0) left out: event 1 (RoundStarted) at line 2 "
     "does not fit the table: StateError: round_number 99998 is out of range (0..3)"),
])
def test_a_seat_out_of_range_leaves_its_hand_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: int, old: str, new: str,
        said: str) -> None:
    path = _edited(tmp_path, line, old, new)
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "ds"))
    assert run.returncode == 1, (run.stdout, run.stderr)
    (err,) = run.stderr.strip().splitlines()
    assert err == f"mjbot dataset import: {path}: hand 1 {said}"
    assert "1 games, 4 hands" in run.stdout and "damaged hands left out: 1" in run.stdout
    rows = shard_arrays(tmp_path / "ds")
    assert list(rows["h_number"]) == [1, 2, 3, 4]


SAMPLES = [
    MJAI_GAME,
    DATA / "tenhou" / "convlog_tenhou6_json" / "double_ron.json",
    DATA / "tenhou" / "dnovikoff_mjlog" / "pao.xml",
    BOTZONE_HUMAN_GAMES,
    LAB_REFEREE / "MJServerLog_1795525388.sgf",
]
NUMBER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
OUT_OF_RANGE = [-1, -7, 4, 9, 37, 136, 255, 99999]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.suffix + ":" + p.stem[:20])
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_number_out_of_range_is_refused_or_no_seat_is_written(
        sample: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    text = sample.read_text(encoding="utf-8")
    spots = list(NUMBER.finditer(text))
    assert len(spots) > 20, sample
    m = spots[data.draw(st.integers(0, len(spots) - 1), label="which number")]
    value = data.draw(st.sampled_from(OUT_OF_RANGE), label="set to")
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / sample.name
    path.write_text(text[:m.start()] + str(value) + text[m.end():], encoding="utf-8")
    try:
        import_files([path], folder / "ds")
    except S.DatasetError as exc:
        assert str(path) in str(exc).splitlines()[0] or "variant" in str(exc)
        return
    for shard in (folder / "ds").glob("shard-*.npz"):
        with np.load(shard) as z:
            seats = [z["seat"], z["request_from"], z["h_wins"][:, :, :2],
                     z["h_round"][:, S.ROUND_COLUMNS.index("dealer")]]
            for a in seats:
                assert ((a >= -1) & (a < 4)).all(), (m.group(), value, a)
