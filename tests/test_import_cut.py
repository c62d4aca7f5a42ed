"""`mjbot dataset import` of a file cut short: the readers read it up to the cut with a note
(README: replay), and the import must say so too, not take it as a whole game that ended at
the cut (its placement is nobody's: the game went on)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.in_process import mjbot_here
from tests.shared_data import DATA, MJAI_GAME

MJX = DATA / "tenhou" / "mjx_pairs" / "2010110100gm-00a9-0000-de3472e8.tenhou6.json"
WHOLE = DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json"


def _cut_tenhou6(tmp: Path) -> Path:
    lines = MJX.read_text(encoding="utf-8").splitlines()
    cut = tmp / "cut.tenhou6.json"
    cut.write_text("\n".join(lines[:2]) + "\n" + lines[2][:300], encoding="utf-8")
    return cut


def _cut_mjai(tmp: Path) -> Path:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    cut = tmp / "cut.mjai.jsonl"
    cut.write_text("\n".join(lines[:224]) + "\n" + lines[224][:35], encoding="utf-8")
    return cut


@pytest.mark.parametrize("make", [_cut_tenhou6, _cut_mjai])
def test_a_cut_file_is_imported_as_cut_with_no_placement(make, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    cut = make(tmp_path)
    out = tmp_path / "ds"
    r = mjbot_here(capsys, "dataset", "import", str(cut), str(WHOLE), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"cut short {cut}: " in r.stdout and "with no final ranks" in r.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    files = {f["file"]: f for f in manifest["import"]["files"]}
    assert "ends early" in files[cut.name]["cut"] and "cut" not in files[WHOLE.name]
    hands = np.load(next(out.glob("shard-*.npz")))
    ranks, games = hands["h_final_ranks"], hands["h_game"]
    assert (ranks[games == 0] == -1).all()  # the cut game: no placement
    assert sorted(ranks[games == 1][0]) == [1, 2, 3, 4]  # the whole one keeps its own


def test_a_tenhou6_file_in_lines_cut_at_a_hand_boundary_is_cut() -> None:
    """mjx's form (a hand a line, no final scores): the file cut at any line's end read as
    a finished game, the hands' sum its final scores and placement. It is cut short now,
    with no game end, as long as Tenhou's rules say the game goes on after its last hand;
    the whole files (one ending in a hand where a seat goes below zero) are not."""
    from protocols import events as ev
    from replay.formats import tenhou6

    lines = MJX.read_text(encoding="utf-8").splitlines()
    for k in range(2, len(lines)):
        record = tenhou6.loads("\n".join(lines[:k]))
        assert "with the game not over" in record.meta.get("cut", ""), k
        assert not isinstance(record.events[-1], ev.GameEnded), k
    for whole in MJX.parent.glob("*.tenhou6.json"):
        record = tenhou6.loads(whole.read_text(encoding="utf-8"))
        assert "cut" not in record.meta and isinstance(record.events[-1], ev.GameEnded), whole
