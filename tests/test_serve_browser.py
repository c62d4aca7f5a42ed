"""A real browser on the web pages: headless Chromium (Debian's `chromium`; `.ci/run` installs
it) driven over the DevTools protocol opens the replay viewer that `mjbot view` serves on a
fixture game, steps through it with keys and buttons, checks what the page shows, and saves a
screenshot into the test's folder; a second test opens the dashboard of `mjbot serve`."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cdp import Browser, find_chromium
from tests.serve_helpers import PYTHON_ENV, ROOT, ServeProcess
from tests.viewer_fixtures import practice_game

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium; "
    ".ci/run installs it)")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    assert CHROMIUM is not None
    b = Browser(CHROMIUM, tmp_path / "profile")
    yield b
    b.close()


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    logs = tmp_path / "logs"
    game = practice_game(logs / "practice", game=1)
    proc = subprocess.Popen([sys.executable, "-m", "adapter.cli", "view", str(logs)],
                            cwd=ROOT, env=PYTHON_ENV, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+/)games", line)
    try:
        assert found, line
        yield found.group(1), game.relative_to(logs)
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def text(b: Browser, selector: str) -> str:
    return b.evaluate(f"document.querySelector({json.dumps(selector)}).innerText")


def test_the_viewer_steps_through_a_game(browser: Browser, viewer: tuple[str, Path],
                                         tmp_path: Path) -> None:
    url, relative = viewer
    browser.navigate(url + "games")
    browser.wait_for("document.querySelectorAll('#games tbody tr').length === 1")
    assert relative.name in text(browser, "#games tbody")
    assert "rulebased" in text(browser, "#games tbody") and "riichi" in text(browser, "#games")
    browser.evaluate("document.querySelector('#games tbody a').click()")
    browser.wait_for("location.pathname.startsWith('/games/0~')")
    browser.wait_for("document.getElementById('step-index').textContent.startsWith('step 1 /')")

    # the table from our seat (seat 1 in game 1): four seats, thirteen tiles each, dealer's turn
    assert browser.evaluate("document.querySelector('#seat-bottom').dataset.seat") == "1"
    counts = browser.evaluate("[...document.querySelectorAll('.seat')].map("
                              "s => s.querySelectorAll('.hand .tile').length)")
    assert counts == [13, 13, 13, 13]
    assert text(browser, "#step-text").startswith("E1-0: dealer E")
    assert "E1-0" in text(browser, "#center") and "export tenhou6" in text(browser, "header")

    # step with the keyboard until a decision of the policy shows its candidates
    for _ in range(60):
        browser.key("ArrowRight")
        if browser.evaluate("document.querySelectorAll('#decisions .cand').length > 1"):
            break
    else:
        pytest.fail("no decision with candidates in the first steps")
    step = int(re.match(r"step (\d+)", text(browser, "#step-index")).group(1))
    assert step > 1
    decision = text(browser, "#decisions .decision")
    assert re.search(r"seat \d turn: (discard|riichi) \d[mpsz]", decision), decision
    assert browser.evaluate("document.querySelectorAll('#decisions .cand.chosen').length") == 1
    # the commentary: the next step draws that move, with its sentence as a subtitle
    browser.key("ArrowRight")
    browser.wait_for("document.querySelectorAll('#subtitles .subtitle').length > 0")
    assert re.match(r"seat \d (discards|declares|folds|holds|wins)",
                    text(browser, "#subtitles .subtitle")), text(browser, "#subtitles")
    browser.key("ArrowLeft")
    browser.wait_for(f"document.getElementById('step-index').textContent.startsWith("
                     f"'step {step} /')")
    for _ in range(8):
        browser.evaluate("document.getElementById('next').click()")
    step += 8
    browser.wait_for(f"document.getElementById('step-index').textContent.startsWith("
                     f"'step {step} /')")
    assert browser.evaluate("document.querySelectorAll('.river .tile').length") > 0

    # the buttons: back one step, then the next hand, then its last step (the result)
    browser.evaluate("document.getElementById('prev').click()")
    browser.wait_for(f"document.getElementById('step-index').textContent.startsWith("
                     f"'step {step - 1} /')")
    browser.screenshot(tmp_path / "viewer.png")
    browser.key("ArrowDown")
    browser.wait_for("document.getElementById('hand-select').value === '1'")
    browser.key("End")
    browser.wait_for("document.getElementById('result').innerText.length > 0")
    assert re.search(r"wins|drawn", text(browser, "#result"))
    browser.evaluate("document.getElementById('next-hand').click()")
    browser.wait_for("document.getElementById('hand-select').value === '2'")

    # the export link gives tenhou.net/6 JSON
    exported = browser.evaluate(
        "fetch(document.querySelector('[data-export=tenhou6]').href).then(r => r.json())")
    assert len(exported["log"]) >= 2 and len(exported["name"]) == 4
    assert browser.console_errors() == []
    shot = tmp_path / "viewer.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_the_dashboard_shows_sessions_and_points(browser: Browser, tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text("[sessions.practice]\nkind = 'local'\nvariant = 'mass'\npause = 0.2\n"
                      "[sessions.ladder]\nkind = 'tenhou'\nenabled = false\n")
    serve = ServeProcess(config, tmp_path / "logs")
    try:
        serve.until(lambda s: s["sessions"]["practice"]["games"] >= 2)
        browser.navigate(serve.url)
        browser.wait_for("document.querySelectorAll('#sessions tbody tr').length === 2")
        browser.wait_for("document.querySelectorAll('#chart polyline').length === 1")
        rows = text(browser, "#sessions tbody")
        assert "practice" in rows and "running" in rows and "disabled" in rows
        assert browser.evaluate("document.querySelectorAll('#results tbody tr').length") >= 2
        link = browser.evaluate("document.querySelector('#results tbody a').href")
        assert "/games/0~practice~local~" in link
        browser.screenshot(tmp_path / "dashboard.png")
        # a config that no longer loads: the page says the reload was refused, and why
        config.write_text("[sessions.practice]\nkind = 'local'\nvariant = 42\n")
        serve.signal(signal.SIGHUP)
        browser.wait_for("document.getElementById('updated').textContent"
                         ".includes('degraded (reload refused: ')")
        assert "line 3" in text(browser, "#updated")
        browser.navigate(link)
        browser.wait_for("document.getElementById('step-text').textContent.length > 0")
        assert browser.console_errors() == []
    finally:
        serve.close()
    assert time.time()  # (the serve process is stopped by close)
