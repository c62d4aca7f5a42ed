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


def test_a_judge_log_cut_only_at_its_close_is_imported_with_its_game_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Botzone judge log cut only at its closing `]` (or its object's `}`) is read whole,
    its game end the judge's, yet the import said "its 1 hands up to the cut are in, with no
    final ranks": no rank was lost (MCR has none) and its final scores are in. It says that
    its game end was read now, and the manifest's entry has ``game_end``; a judge log cut
    inside its hand says it has no game end, not "no final ranks"."""
    from tests.shared_data import BOTZONE_JUDGE_LOG

    text = BOTZONE_JUDGE_LOG.read_text(encoding="utf-8")
    bare = json.dumps(json.loads(text)["log"], ensure_ascii=False)
    cuts = {"list.json": bare[:-1], "object.json": text.rstrip()[:-1],
            "inside.json": text[:len(text) // 2]}
    finals = {}
    for name, cut in [("whole.json", text), *cuts.items()]:
        (tmp_path / name).write_text(cut, encoding="utf-8")
        out = tmp_path / f"ds-{name}"
        r = mjbot_here(capsys, "dataset", "import", str(tmp_path / name), "--out", str(out))
        assert r.returncode == 0, r.stderr
        entry = json.loads((out / "manifest.json").read_text())["import"]["files"][0]
        finals[name] = np.load(next(out.glob("shard-*.npz")))["h_final_scores"][0].tolist()
        if name == "whole.json":
            assert "cut" not in entry and "cut short" not in r.stdout
        elif name == "inside.json":
            assert entry["game_end"] is False
            assert r.stdout.splitlines()[-1].endswith(
                "its 1 hands up to the cut are in, with no game end (its final scores are "
                "those at the cut)"), r.stdout
        else:
            assert entry["game_end"] is True and "no final ranks" not in r.stdout
            assert r.stdout.splitlines()[-1] == (
                f"cut short {tmp_path / name}: {entry['cut']}; its game end was read: its 1 "
                "hands are in with its final scores"), r.stdout
    assert finals["list.json"] == finals["object.json"] == finals["whole.json"]


def test_a_preprocessed_file_cut_inside_its_last_game_has_no_game_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file of Botzone's human games (ccr-cheng's preprocessing, one game a line) cut
    inside its last line was imported saying "its game end was read: its 2 hands are in with
    its final scores" (``game_end`` true): its reader ended the record with the totals of the
    games before the cut as if they were the file's, and the last game was lost. It has no
    game end now; the totals are the same, the scores at the cut."""
    from tests.shared_data import BOTZONE_HUMAN_GAMES

    lines = BOTZONE_HUMAN_GAMES.read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.json"
    cut.write_text("\n".join(lines[:2]) + "\n" + lines[2][:200], encoding="utf-8")
    head = tmp_path / "head.json"  # the same two games, whole
    head.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    finals = []
    for path in (cut, head):
        out = tmp_path / f"ds-{path.stem}"
        r = mjbot_here(capsys, "dataset", "import", str(path), "--out", str(out))
        assert r.returncode == 0, r.stderr
        entry = json.loads((out / "manifest.json").read_text())["import"]["files"][0]
        finals.append(np.load(next(out.glob("shard-*.npz")))["h_final_scores"][-1].tolist())
        if path == cut:
            assert entry["game_end"] is False, entry
            assert r.stdout.splitlines()[-1] == (
                f"cut short {cut}: {entry['cut']}; its 2 hands up to the cut are in, with no "
                "game end (its final scores are those at the cut)"), r.stdout
    assert finals[0] == finals[1]
