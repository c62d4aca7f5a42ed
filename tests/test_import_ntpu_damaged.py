"""An NTPU command log with a line the codec refuses (a tile id that is none, a wind that is
none in ``/initGame``). The reader refused the whole file (`mjbot replay`: "not a game log we
know"), every other hand lost. Now the hand that line is in (or, between two hands, the hand
it sets up) is left out alone, named with the line, and the others read."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.formats import ntpu_log
from replay.record import RecordError
from tests.in_process import replay_summary
from tests.shared_data import LAB_REFEREE

FIRST = LAB_REFEREE / "MJServerLog_1795525321_Player1.log"  # one hand each, seat 1
SECOND = LAB_REFEREE / "MJServerLog_1795525388_Player1.log"


def _two_hands() -> list[str]:
    """One game of two hands: the second log's hand after the first's (its /start left out)."""
    return FIRST.read_text(encoding="utf-8").splitlines() + \
        SECOND.read_text(encoding="utf-8").splitlines()[1:]


def _write(tmp_path: Path, lines: list[str], name: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("hand", [0, 1])
def test_a_refused_line_leaves_its_hand_out_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], hand: int) -> None:
    lines = _two_hands()
    whole = _write(tmp_path, lines, "whole.log")
    starts = [n for n, line in enumerate(lines) if line.startswith("/initCard")]
    at = next(n for n in range(starts[hand], len(lines)) if lines[n].startswith("/throw 2 "))
    lines[at] = "/throw 2 999"  # no tile has id 999
    path = _write(tmp_path, lines, "edited.log")
    code, good = replay_summary(capsys, whole)
    assert code == 0 and len(good["hands"]) == 2 and good["hands"][1]["results"]
    code, bad = replay_summary(capsys, path)
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith(f"hand {hand + 1} (E1-0) cannot be followed from event ")
    assert f"at line {at + 1}: the line could not be read: bad tile id" in note, note
    assert "damaged" in bad["hands"][hand] and not bad["hands"][hand]["results"]
    other = 1 - hand
    assert bad["hands"][other] == good["hands"][other]


def test_a_refused_line_between_hands_leaves_the_hand_it_sets_up_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = _two_hands()
    whole = _write(tmp_path, lines, "whole.log")
    at = [n for n, line in enumerate(lines) if line.startswith("/initGame")][1]
    lines[at] = "/initGame East Nowhere 1 1 0"
    code, good = replay_summary(capsys, whole)
    code, bad = replay_summary(capsys, _write(tmp_path, lines, "edited.log"))
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith("hand 2 (E1-0) cannot be followed from event ")
    assert f"line {at + 1}: unknown wind 'Nowhere'" in note, note
    assert bad["hands"][0] == good["hands"][0]
    assert bad["hands"][1]["damaged"] and not bad["hands"][1]["unfinished"]


def test_a_refused_start_refuses_the_file_in_one_line() -> None:
    lines = FIRST.read_text(encoding="utf-8").splitlines()
    lines[0] = "/start MJ 7"
    with pytest.raises(RecordError, match=r"^ntpu log: line 1: seat must be 1..4"):
        ntpu_log.loads("\n".join(lines))


def test_a_refused_line_after_a_hands_end_loses_no_hand(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line refused between two hands that sets nothing up (a move after the hand's end)
    is named with its line, a notice of the finished hand; both hands read whole, and sound:
    the finished hand was marked damaged for it (the viewer's "· damaged", replay's note and
    exit 1), its moves and result read whole."""
    lines = _two_hands()
    whole = _write(tmp_path, lines, "whole.log")
    at = [n for n, line in enumerate(lines) if line.startswith("/initGame")][1]
    lines.insert(at, "/throw 2 999")
    code, good = replay_summary(capsys, whole)
    code, bad = replay_summary(capsys, _write(tmp_path, lines, "edited.log"))
    assert code == 0 and bad["notes"] == []
    (notice,) = bad["hands"][0]["notices"]
    assert notice.startswith(f"line {at + 1}: bad tile id"), notice
    for n in range(2):
        assert "damaged" not in bad["hands"][n], n
        for key in ("discards", "calls", "results", "decisions"):
            assert bad["hands"][n][key] == good["hands"][n][key], (n, key)


def _bad_deal(line: str) -> str:
    """A /initCard with its third id no tile (999)."""
    parts = line.split()
    parts[3] = "999"
    return " ".join(parts)


@pytest.mark.parametrize("hand", [0, 1])
def test_a_refused_deal_leaves_the_hand_it_deals_out_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], hand: int) -> None:
    """A refused /initCard (the line with the most ids) was a notice after the hand before's
    end and its hand's moves were read on as that hand's (another win, 80 discards, a dozen
    notes; or 'hand 0 (before the first hand)'): the hand it deals is left out alone."""
    lines = _two_hands()
    whole = _write(tmp_path, lines, "whole.log")
    at = [n for n, line in enumerate(lines) if line.startswith("/initCard")][hand]
    lines[at] = _bad_deal(lines[at])
    code, good = replay_summary(capsys, whole)
    code, bad = replay_summary(capsys, _write(tmp_path, lines, "edited.log"))
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith(f"hand {hand + 1} (")
    assert f"at line {at + 1}: the line could not be read: bad tile id" in note, note
    assert len(bad["hands"]) == 2
    assert bad["hands"][hand]["damaged"] and not bad["hands"][hand]["results"]
    assert not any(bad["hands"][hand]["discards"].values())
    other = 1 - hand
    assert bad["hands"][other] == good["hands"][other]


def test_a_refused_hand_setup_and_deal_cost_that_hand_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """/initGame and /initCard of one hand both refused: that hand is left out, named by the
    first; the hand after it (whose deal the refused /initGame was held over to) reads."""
    lines = _two_hands() + FIRST.read_text(encoding="utf-8").splitlines()[1:]  # a third
    whole = _write(tmp_path, lines, "whole.log")
    setup = [n for n, line in enumerate(lines) if line.startswith("/initGame")][1]
    deal = [n for n, line in enumerate(lines) if line.startswith("/initCard")][1]
    lines[setup] = "/initGame East Nowhere 1 1 0"
    lines[deal] = _bad_deal(lines[deal])
    code, good = replay_summary(capsys, whole)
    assert code == 0 and len(good["hands"]) == 3
    code, bad = replay_summary(capsys, _write(tmp_path, lines, "edited.log"))
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith("hand 2 (") and f"line {setup + 1}: unknown wind 'Nowhere'" in note
    assert len(bad["hands"]) == 3
    assert bad["hands"][1]["damaged"] and not bad["hands"][1]["results"]
    assert bad["hands"][0] == good["hands"][0] and bad["hands"][2] == good["hands"][2]
