"""A Tenhou mjlog with one hand's tag that cannot be read (a discard of tile id 999, an
``<INIT>`` whose seed is not numbers). The reader refused the whole file (`mjbot replay`: "not
a game log we know (... mjlog: bad <D999> ...)"), the game's other eight hands lost. Now that
hand alone is left out, named (its number, the tag and why), the others read; a log whose every
hand is so, or whose own tags before the first hand cannot be read, is refused as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.formats import mjlog
from replay.record import RecordError
from tests.in_process import mjbot_here, replay_summary
from tests.shared_data import DATA

GAME = DATA / "tenhou" / "dnovikoff_mjlog" / "example.xml"  # nine hands


def _edited(tmp_path: Path, hand: int, what: str) -> Path:
    text = GAME.read_text(encoding="utf-8")
    at = [m.start() for m in re.finditer("<INIT", text)][hand]
    if what == "discard":  # the hand's first discard: a tile id that is none
        i = text.index("<D", at)
        text = text[:i] + "<D999" + text[text.index("/>", i):]
    else:  # its seed: not numbers
        i = text.index('seed="', at) + len('seed="')
        text = text[:i] + "x," + text[i:]
    path = tmp_path / "edited.xml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("hand, what, why", [
    (1, "discard", "bad <D999> (bad Tenhou tile id 999)"),
    (2, "init", "bad <INIT> (invalid literal for int()"),
])
def test_one_damaged_hand_is_left_out_and_named_the_others_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], hand: int, what: str,
        why: str) -> None:
    code, good = replay_summary(capsys, GAME)
    assert code == 0 and len(good["hands"]) == 9 and not good["notes"]
    code, bad = replay_summary(capsys, _edited(tmp_path, hand, what))
    assert code == 1
    (note,) = bad["notes"]
    assert note.startswith(f"hand {hand + 1} (") and why in note, note
    assert "damaged" in bad["hands"][hand]
    assert [h for n, h in enumerate(bad["hands"]) if n != hand] == \
        [h for n, h in enumerate(good["hands"]) if n != hand]
    assert bad["final_scores"] == good["final_scores"]


@pytest.mark.parametrize("text, match", [
    ("<mjloggm><INIT seed='x'/></mjloggm>", r"mjlog: bad <INIT>"),
    ("<mjloggm><GO type='x'/><INIT seed='0,0,0,0,0,0'/></mjloggm>", r"mjlog: bad <GO>"),
])
def test_a_log_with_no_hand_to_read_is_refused_whole(text: str, match: str) -> None:
    with pytest.raises(RecordError, match=match):
        mjlog.loads(text)


@pytest.mark.parametrize("sc", ["", "-1"])
def test_a_win_whose_payments_are_not_given_is_a_damaged_hand_in_a_dataset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], sc: str) -> None:
    """An ``<AGARI>`` with ``sc=""`` (or a cut one): the reader gives the win no payments,
    and `dataset import` ended in a traceback (numpy's ValueError: could not broadcast
    input array from shape (0,) into shape (4,)). That hand is left out, named; the rest
    of the game is imported."""
    text = GAME.read_text(encoding="utf-8")
    at = text.index("<AGARI")
    i = text.index(' sc="', at) + len(' sc="')
    text = text[:i] + sc + text[text.index('"', i):]
    path = tmp_path / "no-payments.xml"
    path.write_text(text, encoding="utf-8")
    whole = mjbot_here(capsys, "dataset", "import", str(GAME), "--out", str(tmp_path / "a"),
                       "--json")
    run = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(tmp_path / "b"),
                     "--json")
    assert "Traceback" not in run.stderr and run.returncode == 1, run.stderr
    assert "payments" in run.stderr and "are not four seats'" in run.stderr, run.stderr
    hand = text[:at].count("<INIT")
    assert f"hand {hand} (" in run.stderr, run.stderr
    assert json.loads(whole.stdout)["decisions"] > json.loads(run.stdout)["decisions"] > 0
