"""The game list in a real browser (Debian's chromium over the DevTools protocol, as
tests/test_serve_browser.py drives it) on the logs an MCR entrant studies: a Botzone bot's own
log, which never gets a footer, is not shown as a game still in progress."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cdp import Browser, Chromium, find_chromium
from tests.serve_helpers import PYTHON_ENV, ROOT
from tests.test_replay_mcr_walk import CHOW_HISTORY, _one_shot

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium; "
    ".ci/run installs it)")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    page = chromium.page()
    try:
        yield page
    finally:
        page.close()
        chromium.close()


def test_a_botzone_bots_log_is_not_listed_as_in_progress(browser: Browser,
                                                        tmp_path: Path) -> None:
    # Botzone tells a bot nothing after its last answer, so its log never gets a footer: the
    # list said "in progress / no footer" of matches long over (replay says why)
    logs = tmp_path / "logs"
    _one_shot(CHOW_HISTORY, "", logs)
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(logs)],
                            cwd=ROOT, env=PYTHON_ENV, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)games", proc.stderr.readline())
        assert found
        browser.navigate(found.group(1) + "games")
        browser.wait_for("document.querySelectorAll('#games tbody tr').length === 1")
        cell = browser.evaluate("document.querySelector(" + json.dumps(
            "#games tbody .result-cell") + ").innerText")
        assert cell == "no footer: Botzone tells the bot no result"
        assert browser.console_errors() == []
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_botzone_penalty_is_shown_as_one_not_as_a_drawn_hand(browser: Browser,
                                                              tmp_path: Path) -> None:
    # a WA ends a Botzone match with -30 / +10: the page said "drawn: WA", as of a draw
    log = json.loads((ROOT / "tests" / "data" / "botzone_judge_log.json").read_text())
    log["log"][-1]["output"]["display"] = {"action": "WA", "player": 1,
                                           "score": [10, -30, 10, 10]}
    log["scores"] = [10, -30, 10, 10]
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "wa.json").write_text(json.dumps(log))
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(logs)],
                            cwd=ROOT, env=PYTHON_ENV, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)games", proc.stderr.readline())
        assert found
        browser.navigate(found.group(1) + "games/0~wa.json#1/45")
        browser.wait_for("document.querySelector('#result .result') !== null")
        shown = browser.evaluate("document.querySelector('#result').innerText")
        assert "ended: WA (penalty: a wrong answer)" in shown and "drawn" not in shown
        assert "score changes 10 / -30 / 10 / 10" in shown
        assert browser.console_errors() == []
    finally:
        proc.terminate()
        proc.wait(10)
