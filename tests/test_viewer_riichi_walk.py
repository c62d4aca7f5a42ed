"""The replay viewer as a riichi player reads a real record (tests/data/shared) in headless
Chromium (tests/cdp.py): what the result box shows must be what the record says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cdp import Chromium, find_chromium
from tests.serve_helpers import mjbot_view
from tests.shared_data import DATA

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium; "
    ".ci/run installs it)")


def test_a_riichi_winners_ura_dora_indicators_show_with_the_result(tmp_path: Path) -> None:
    """suukantsu_1, hand 2: seat 3's 四槓子 and seat 0's riichi 倍満 with 裏ドラ(4飜) on one
    discard. The page showed the 裏ドラ(4飜) line but never the ura indicators it counts;
    they show under seat 0's result (7p N 3s 2m Rd: five, one per kan), and not under seat
    3's, who had no riichi."""
    record = tmp_path / "suukantsu_1.json"
    record.write_bytes((DATA / "tenhou" / "convlog_tenhou6_json" / "suukantsu_1.json")
                       .read_bytes())
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        with mjbot_view(record) as url:
            game = "0~suukantsu_1.json"
            b.navigate(f"{url}games/{game}#2/157")
            b.wait_for("document.getElementById('step-index').textContent"
                       ".startsWith('step 157 /')")
            b.wait_for("document.querySelector('#result .result') !== null")
            shown = b.evaluate("[...document.querySelectorAll('#result .ura .tile')]"
                               ".map(t => t.dataset.tile)")
            assert shown == ["7p", "4z", "3s", "2m", "7z"], shown
            assert "ura dora" in b.evaluate("document.getElementById('result').innerText")
            b.screenshot(tmp_path / "ura.png")
            b.key("ArrowLeft")  # one step back: seat 3's win, the first on that discard
            b.wait_for("document.getElementById('step-index').textContent"
                       ".startsWith('step 156 /')")
            b.wait_for("document.querySelector('#result .result') !== null")
            assert b.evaluate("document.querySelector('#result .ura')") is None
            assert "四槓子" in b.evaluate("document.getElementById('result').innerText")
            assert not b.console_errors()
        b.close()
    finally:
        chromium.close()


def test_a_liable_seat_shows_with_the_result(tmp_path: Path) -> None:
    """pao.xml's last hand: seat 2's 大三元 paid whole by seat 0 (責任払い); the result box
    says so, as the record does."""
    record = tmp_path / "pao.xml"
    record.write_bytes((DATA / "tenhou" / "dnovikoff_mjlog" / "pao.xml").read_bytes())
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        with mjbot_view(record) as url:
            b.navigate(f"{url}games/0~pao.xml#4/1")
            b.wait_for("document.getElementById('step-index').textContent"
                       ".startsWith('step 1 /')")
            b.key("End")
            b.wait_for("document.querySelector('#result .result') !== null")
            shown = b.evaluate("document.getElementById('result').innerText")
            assert "pao: seat 0 liable" in shown and "-32300 / 0 / 32300 / 0" in shown
            b.key("ArrowUp")  # the hand before: a plain ron, no liable seat
            b.wait_for("document.getElementById('hand-select').value === '2'")
            b.key("End")
            b.wait_for("document.querySelector('#result .result') !== null")
            assert "pao" not in b.evaluate("document.getElementById('result').innerText")
            assert not b.console_errors()
        b.close()
    finally:
        chromium.close()


def test_a_double_rons_last_step_shows_both_wins(tmp_path: Path) -> None:
    """double_ron.json: seat 0's riichi 跳満 and seat 2's 2,000 on seat 3's 7m. The hand's
    last step (End) showed only seat 2's win, the haneman that decided the game gone from
    the result box; both show, in the order they were paid."""
    record = tmp_path / "double_ron.json"
    record.write_bytes((DATA / "tenhou" / "convlog_tenhou6_json" / "double_ron.json")
                       .read_bytes())
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        with mjbot_view(record) as url:
            b.navigate(f"{url}games/0~double_ron.json#1/1")
            b.wait_for("document.getElementById('step-index').textContent"
                       ".startsWith('step 1 /')")
            b.key("End")
            b.wait_for("document.querySelectorAll('#result .result').length === 2")
            blocks = b.evaluate("[...document.querySelectorAll('#result .result')]"
                                ".map(n => n.innerText.replace(/\\s+/g, ' '))")
            assert "seat 0 wins on seat 3's discard" in blocks[0]
            assert "13000 / 0 / 0 / -12000" in blocks[0]
            assert "seat 2 wins on seat 3's discard" in blocks[1]
            assert "0 / 0 / 2000 / -2000" in blocks[1]
            b.screenshot(tmp_path / "double_ron.png")
            assert not b.console_errors()
        b.close()
    finally:
        chromium.close()
