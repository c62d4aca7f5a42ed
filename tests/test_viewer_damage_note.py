"""The viewer's word on a damaged hand, without a browser (tests/test_serve_browser.py's
test_a_damaged_hand_says_what_was_damaged shows it on the page): the outline's ``damaged``
where the hand's reader or the outline's table fails it, the hand's own where only a seat's
table refuses its moves; each the note `mjbot replay` gives, every other hand none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay import formats, timeline
from tests.in_process import mjbot_here
from tests.shared_data import DATA, MJAI_GAME


def _note(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    run = mjbot_here(capsys, "replay", "--json", str(path))
    (note,) = json.loads(run.stdout)["summary"]["notes"]
    return str(note)


def test_a_hand_its_reader_could_not_read_is_noted_in_the_outline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = json.loads((DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json")
                      .read_text(encoding="utf-8"))
    game["log"][2][6][3] = 99
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(game, ensure_ascii=False), encoding="utf-8")
    shown = timeline.build(formats.read(path.read_bytes(), path))
    hands = shown.outline()["hands"]
    assert [h.get("damaged") for h in hands] == [None, None, _note(capsys, path)]
    assert [shown.damage(n) for n in range(3)] == [None, None, _note(capsys, path)]


def test_a_move_only_the_seats_table_refuses_is_noted_when_its_hand_is_asked_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    lines[11] = '{"type":"dahai","actor":0,"pai":"P","tsumogiri":false}'  # no haku held
    path = tmp_path / "edited.mjai.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shown = timeline.build(formats.read(path.read_bytes(), path))
    assert not any("damaged" in h for h in shown.outline()["hands"])  # the outline draws it
    note = _note(capsys, path)
    assert note.startswith("hand 1 (E1-0) cannot be followed from event 11 (TileDiscarded "
                           "seat 0 5z) at line 12: StateError: tile 5z not in hand")
    assert shown.damage(0) == note
    assert [shown.damage(n) for n in range(1, len(shown.hands))] == [None] * 4
