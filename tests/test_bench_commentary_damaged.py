"""`mjbot bench commentary` on a hand-edited mjai log of our own local table (one discard's tile
changed to a list, or to a name that is no tile). It died with a TypeError traceback (counting
a game given twice took every discard's tile kind); now the hand is left out of the figures and
named as `mjbot replay` names it, one stderr line, the other hands measured, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.in_process import mjbot_here
from tests.shared_data import MJAI_GAME

GOOD_LINE = '{"type":"dahai","actor":0,"pai":"9p","tsumogiri":true}'  # line 12


@pytest.mark.parametrize("pai", ['["9p"]', '"0x"'], ids=["list", "no-tile"])
def test_the_damaged_hand_is_named_and_the_rest_measured(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pai: str) -> None:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    assert lines[11] == GOOD_LINE
    lines[11] = GOOD_LINE.replace('"9p"', pai)
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = mjbot_here(capsys, "bench", "commentary", str(MJAI_GAME), "--policies",
                       "rulebased", "--json", "-")
    assert whole.returncode == 0, whole.stderr
    run = mjbot_here(capsys, "bench", "commentary", str(path), "--policies", "rulebased",
                     "--json", "-")
    assert "Traceback" not in run.stderr
    assert run.returncode == 1, run.stderr
    (err,) = run.stderr.strip().splitlines()
    assert err.startswith(f"mjbot bench commentary: {path}: hand 1 (E1-0) cannot be followed "
                          "from event 11 (TileDiscarded seat 0 "), err
    assert "at line 12: StateError: tile " in err and "the hands after it are" in err
    good, bad = json.loads(whole.stdout), json.loads(run.stdout)
    (damaged,) = bad["damaged_hands"]
    assert damaged["file"] == str(path) and err.endswith(damaged["note"])
    assert good["damaged_hands"] == []
    # the first hand's moves from the bad discard left out, every other move measured
    assert 0 < bad["decisions"] < good["decisions"]
    assert bad["policies"]["rulebased"]["discard_decisions"] > 0
