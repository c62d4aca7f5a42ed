"""A real browser on the web pages: headless Chromium (Debian's `chromium`; `.ci/run` installs
it) driven over the DevTools protocol opens the replay viewer that `mjbot view` serves on
fixture games, steps through them with keys, buttons and links, checks what the page shows as a
person would see it (one tile notation, labelled rivers smaller than hands, 16-tile hands on
one line, no dora row where there is no dora, deep links to a step, a hint while the commentary
loads, yaku in English beside the log's names, the game list's seat and result columns and its
pages), and saves screenshots into the test's folder; another test opens the dashboard of
`mjbot serve`, and one does so in token mode (the documented container setup): a
`?token=` login, then every page styled and its data loaded through the cookie."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter.serve.status import StatusServer
from adapter.serve.viewcache import BuildCache
from tests.cdp import Browser, Chromium, find_chromium
from tests.narrowing import searched
from tests.serve_helpers import ServeProcess, mjbot_view, viewer_in_thread
from tests.viewer_fixtures import practice_game

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium; "
    ".ci/run installs it)")


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    """One Chromium for the module: its start is most of a short test's time."""
    assert CHROMIUM is not None
    c = Chromium(CHROMIUM, tmp_path_factory.mktemp("profile"))
    yield c
    c.close()


@pytest.fixture
def browser(chromium: Chromium) -> Iterator[Browser]:
    """A fresh browser for each test: a tab in a browser context of its own (no cookie,
    storage or cache of an earlier test)."""
    b = chromium.page()
    yield b
    b.close()


# one game per variant, each with a win (our policy in seat 1)
VARIANT_GAMES = {"riichi": 1, "mcr": 3, "taiwan16": 1}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A practice game of each variant, played once for the module (the tests only read
    them, or copy them into folders of their own)."""
    logs = tmp_path_factory.mktemp("played")
    for variant, number in VARIANT_GAMES.items():
        practice_game(logs / variant, variant, game=number)
    return logs


def copy_games(played: Path, logs: Path, variants: Iterable[str]) -> dict[str, Path]:
    """The played games of ``variants`` copied into ``logs`` as they lay; variant -> path."""
    copies = {}
    for variant in variants:
        (game,) = (played / variant).rglob("*.mjlog.msgpack")
        copies[variant] = logs / game.relative_to(played)
        copies[variant].parent.mkdir(parents=True)
        shutil.copy(game, copies[variant])
    return copies


@pytest.fixture
def viewer(played: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`mjbot view` on a folder of one riichi practice game: the URL, the game's path."""
    logs = tmp_path / "logs"
    (game,) = (played / "riichi").rglob("*.mjlog.msgpack")
    copy = logs / "practice" / game.relative_to(played / "riichi")  # as a session logs it
    copy.parent.mkdir(parents=True)
    shutil.copy(game, copy)
    with mjbot_view(logs) as url:
        yield url, copy.relative_to(logs)


def game_ids(logs: Path) -> dict[str, str]:
    return {variant: "~".join(["0", *next((logs / variant).rglob("*.mjlog.msgpack"))
                                         .relative_to(logs).parts])
            for variant in VARIANT_GAMES}


@pytest.fixture(scope="module")
def both_views(played: Path, ntpu_match: Path) -> Iterator[str]:
    """One `mjbot view` on the folder with a practice game of each variant (ids "0~...") and
    on the ntpu-server match's logs ("1~..."), for the tests that only read them: a view
    process's start each fewer."""
    with mjbot_view(played, ntpu_match) as url:
        yield url


@pytest.fixture(scope="module")
def variants(played: Path, both_views: str) -> tuple[str, dict[str, str], Path]:
    """The view of the practice game of each variant: the URL, each game's id, the folder."""
    return both_views, game_ids(played), played


def text(b: Browser, selector: str) -> str:
    return b.evaluate(f"document.querySelector({json.dumps(selector)}).innerText")


def bare_text(b: Browser, selector: str) -> str:
    """The element's text without its tiles: what is left written as words."""
    return b.evaluate(f"(() => {{ const n = document.querySelector({json.dumps(selector)})"
                      ".cloneNode(true); n.querySelectorAll('.tile').forEach(t => t.remove());"
                      " return n.textContent; })()")


def step_shown(b: Browser, hand: int, step: int) -> None:
    """Wait until the page shows hand ``hand`` (counted from 1) at step ``step``."""
    b.wait_for(f"document.getElementById('hand-select').value === '{hand - 1}' && "
               f"document.getElementById('step-index').textContent.startsWith("
               f"'step {step} /')")


def type_filter(b: Browser, value: str) -> None:
    b.evaluate(f"{{ const f = document.getElementById('filter'); f.value = {json.dumps(value)};"
               " f.dispatchEvent(new Event('input')); }")


MPSZ = re.compile(r"\b\d+[mpszf]\b")
HONOURS = {"1": "E", "2": "S", "3": "W", "4": "N", "5": "Wh", "6": "Gr", "7": "Rd"}


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
    step = int(searched(r"^step (\d+)", text(browser, "#step-index")).group(1))
    assert step > 1
    decision = bare_text(browser, "#decisions .decision b")
    assert re.fullmatch(r"seat \d turn: (discard|riichi) ", decision), decision
    assert re.fullmatch(r"\d[mpsz]", browser.evaluate(
        "document.querySelector('#decisions .decision b .tile').dataset.tile"))
    assert browser.evaluate("document.querySelectorAll('#decisions .cand.chosen').length") == 1
    # the commentary: the next step draws that move, with its sentence as a subtitle
    browser.key("ArrowRight")
    browser.wait_for("document.querySelectorAll('#subtitles .subtitle').length > 0")
    assert re.match(r"seat \d (discards|declares|folds|holds|wins)",
                    bare_text(browser, "#subtitles .subtitle")), text(browser, "#subtitles")
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


def test_deep_links_one_notation_and_the_commentary_hint(
        browser: Browser, variants: tuple[str, dict[str, str], Path], tmp_path: Path) -> None:
    url, ids, _logs = variants
    # the commentary is held back: the page says it is coming meanwhile
    browser.hold_requests("*/commentary*")
    browser.navigate(url + "games/" + ids["riichi"] + "#3/12")
    held = browser.wait_event("Fetch.requestPaused")
    step_shown(browser, 3, 12)
    assert browser.evaluate("location.hash") == "#3/12"
    assert browser.evaluate("document.getElementById('subtitles').dataset.state") == "loading"
    assert "commentary loading" in text(browser, "#subtitles")
    browser.release_request(held["requestId"])
    browser.wait_for("document.getElementById('subtitles').dataset.state === 'ready'", 60)

    # the address follows every move, and a link typed in is followed
    browser.key("ArrowRight")
    browser.wait_for("location.hash === '#3/13'")
    browser.key("ArrowDown")
    browser.wait_for("location.hash === '#4/1'")
    browser.evaluate("location.hash = '#2/5'")
    step_shown(browser, 2, 5)
    assert text(browser, "#link-note") == ""
    browser.evaluate("location.hash = '#99/1'")  # no such hand: one line, the first step
    browser.wait_for("document.getElementById('link-note').textContent.length > 0")
    step_shown(browser, 1, 1)
    assert "no hand" in text(browser, "#link-note") and "\n" not in text(browser, "#link-note")
    browser.evaluate("location.hash = '#%E0%A4%A'")  # not even percent-encoding: the same
    browser.wait_for("document.getElementById('link-note').textContent.includes('%E0')")
    step_shown(browser, 1, 1)
    browser.evaluate("location.hash = '#2/9999'")
    browser.wait_for("document.getElementById('link-note').textContent.includes('steps 1 to')")
    step_shown(browser, 2, 1)

    # one notation: a decision's candidates, the step's text and the subtitles draw their
    # tiles as the table does (E S W N Wh Gr Rd), and no mpsz name is left written out
    browser.evaluate("location.hash = '#1/1'")
    step_shown(browser, 1, 1)
    for _ in range(80):
        browser.key("ArrowRight")
        if browser.evaluate("document.querySelectorAll('#decisions .cand .tile').length > 1 "
                            "&& document.querySelectorAll('#subtitles .subtitle').length > 0"):
            break
    else:
        pytest.fail("no step with both a decision's candidates and a subtitle")
    for selector in ("#step-text", "#decisions", "#subtitles", "#center"):
        assert not MPSZ.search(bare_text(browser, selector)), (selector, text(browser, selector))
    honours = browser.evaluate("[...document.querySelectorAll('.tile[data-tile$=z]')].map("
                               "t => [t.dataset.tile, t.querySelector('b').textContent, "
                               "!!t.closest('#decisions')])")
    assert honours and all(HONOURS[name[0]] == label for name, label, _ in honours), honours

    # rivers: labelled, and drawn smaller than the hands
    seats = browser.evaluate("""[...document.querySelectorAll('.seat')].map(s => ({
        label: s.querySelector('.river-box .label').textContent,
        hand: s.querySelector('.hand .tile').getBoundingClientRect().height,
        river: [...s.querySelectorAll('.river .tile')].map(
            t => t.getBoundingClientRect().height)}))""")
    assert [s["label"] for s in seats] == ["river"] * 4
    rivers = [h for s in seats for h in s["river"]]
    assert rivers and max(rivers) < min(s["hand"] for s in seats)
    browser.screenshot(tmp_path / "viewer-riichi.png")
    assert browser.console_errors() == []


@pytest.mark.parametrize("variant", list(VARIANT_GAMES))
def test_each_variant_as_a_person_sees_it(browser: Browser, variant: str,
                                          variants: tuple[str, dict[str, str], Path],
                                          tmp_path: Path) -> None:
    url, ids, _logs = variants
    browser.navigate(url + "games/" + ids[variant] + "#1/2")  # the dealer has drawn
    step_shown(browser, 1, 2)
    # a dora row where the rules have dora, none for MCR and Taiwan
    assert browser.evaluate("!!document.querySelector('#center .dora')") == (variant == "riichi")
    # nor riichi sticks: MCR and Taiwan showed "sticks 0" all game
    assert ("sticks" in text(browser, "#center")) == (variant == "riichi")
    # every hand on one line, the drawn tile beside it (16 + 1 tiles in Taiwan)
    rows = browser.evaluate("""[...document.querySelectorAll('.seat')].map(s =>
        [...s.querySelectorAll('.hand .tile')].map(t => Math.round(
            t.getBoundingClientRect().top)))""")
    size = 16 if variant == "taiwan16" else 13
    assert sorted(len(r) for r in rows) == [size] * 3 + [size + 1], rows
    assert all(len(set(r)) == 1 for r in rows), rows
    browser.screenshot(tmp_path / f"viewer-{variant}.png")

    # a win: each yaku / fan / tai as the log names it, with its English name beside it
    hand = browser.evaluate("view.outline.hands.findIndex(h => h.result && "
                            "h.result.type === 'win') + 1")
    assert hand >= 1
    steps = browser.evaluate(f"view.outline.hands[{hand - 1}].steps")
    browser.evaluate(f"location.hash = '#{hand}/{steps}'")
    step_shown(browser, hand, steps)
    yaku = browser.evaluate("[...document.querySelectorAll('#result .yaku')].map(y => "
                            "[y.firstChild.textContent, y.querySelector('.en') ? "
                            "y.querySelector('.en').textContent : null])")
    assert yaku and any(english for _, english in yaku), yaku
    for name, english in yaku:
        if variant != "riichi":  # MahjongGB's and our Taiwan rules' names are CJK
            assert re.search(r"[\u4e00-\u9fff]", name) and english, (name, english)
        if english:
            assert re.fullmatch(r"[A-Za-z ,()'-]+", english), english
    browser.screenshot(tmp_path / f"viewer-{variant}-win.png")
    assert browser.console_errors() == []


def test_the_game_list_pages_and_shows_our_seat_and_result(
        browser: Browser, played: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"  # the variants' folder and 52 copies: a folder of its own
    riichi = copy_games(played, logs, VARIANT_GAMES)["riichi"]
    (logs / "copies").mkdir()
    for n in range(52):  # 55 games: two pages
        shutil.copy(riichi, logs / "copies" / f"copy{n:02d}.mjlog.msgpack")
    with mjbot_view(logs) as url:
        browser.navigate(url + "games")
        browser.wait_for("document.querySelectorAll('#games tbody tr').length === 50")
        assert text(browser, "#page-info") == "1–50 of 55"
        assert text(browser, "#count") == "55 games"
        assert browser.evaluate("document.getElementById('prev-page').disabled") is True
        browser.evaluate("document.getElementById('next-page').click()")
        browser.wait_for("document.querySelectorAll('#games tbody tr').length === 5")
        assert text(browser, "#page-info") == "51–55 of 55"
        assert browser.evaluate("document.getElementById('next-page').disabled") is True

        type_filter(browser, "taiwan16")
        browser.wait_for("document.querySelectorAll('#games tbody tr').length === 1")
        assert text(browser, "#count") == "1 of 55 games match"
        assert text(browser, "#games tbody .our-seat") == "seat 1 · rulebased"
        assert re.fullmatch(r"(1st|2nd|3rd|4th) · -?\d+",
                            text(browser, "#games tbody .result-cell"))
        headers = text(browser, "#games thead")
        assert "our seat" in headers and "result" in headers
        # a newer request aborts the one still in flight (the server gives its scan up, and
        # a late answer to the older filter cannot replace the newer one's)
        browser.evaluate("{ window.asked = []; const f = window.fetch; window.fetch = (u, o) =>"
                         " { window.asked.push(o.signal); return f(u, o); };"
                         " list.query = 'riichi'; load(); list.query = 'mcr'; load(); }")
        browser.wait_for("document.getElementById('count').textContent === "
                         "'1 of 55 games match'")
        assert browser.evaluate("window.asked.length === 2 && window.asked[0].aborted"
                                " && !window.asked[1].aborted") is True
        assert "mcr" in text(browser, "#games tbody")
        type_filter(browser, "")
        browser.wait_for("document.querySelectorAll('#games tbody tr').length === 50")
        browser.screenshot(tmp_path / "games.png")
        assert browser.console_errors() == []


def test_the_dashboard_shows_sessions_and_points(browser: Browser, tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text("[sessions.practice]\nkind = 'local'\nvariant = 'mass'\nhands = 1\n"
                      "pause = 0.2\n[sessions.ladder]\nkind = 'tenhou'\nenabled = false\n")
    serve = ServeProcess(config, tmp_path / "logs")
    try:
        serve.until(lambda s: s["sessions"]["practice"]["games"] >= 2)
        browser.navigate(serve.url)
        browser.wait_for("document.querySelectorAll('#sessions tbody tr').length === 2")
        browser.wait_for("document.querySelectorAll('#chart polyline').length === 1")
        rows = text(browser, "#sessions tbody")
        assert "practice" in rows and "running" in rows and "disabled" in rows
        # a disabled session's games of the day are not counted: not shown as none played
        ladder = text(browser, "#sessions tr[data-session=ladder]")
        assert "not counted / -" in ladder, ladder
        # the fallbacks' column: count (share of the decisions) / illegal answers
        cell = browser.evaluate("document.querySelector('#sessions tr[data-session=practice] "
                                "td[data-fallbacks]').textContent")
        assert cell.startswith("0 (0.0%) / 0"), cell
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


def test_the_dashboard_warns_of_low_disk_and_its_links_open_compressed_games(
        browser: Browser, tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    body = ("[logs]\ncompress_after = 0\ncheck_every = 0.2\nlow_disk_mb = 1e12\n"
            "[sessions.practice]\nkind = 'local'\nvariant = 'mass'\nhands = 1\npause = 0.2\n")
    config.write_text(body)
    serve = ServeProcess(config, tmp_path / "logs")
    try:
        serve.until(lambda s: s["sessions"]["practice"]["games"] >= 2)
        serve.until(lambda s: s["logs"]["compressed"] >= 2)
        browser.navigate(serve.url)
        browser.wait_for("document.getElementById('warnings').textContent.includes('low disk')")
        assert "degraded" in text(browser, "#updated")
        # the results link to the log as it was written; the log is compressed since
        link = browser.evaluate("document.querySelector('#results tbody a').href")
        assert link.endswith(".mjlog.msgpack"), link
        browser.navigate(link)
        browser.wait_for("document.getElementById('step-text').textContent.length > 0")
        # the threshold taken away on SIGHUP: the warning goes
        config.write_text(body.replace("low_disk_mb = 1e12", "low_disk_mb = 0"))
        serve.signal(signal.SIGHUP)
        browser.navigate(serve.url)
        browser.wait_for("document.getElementById('updated').textContent.startsWith('ok')")
        assert text(browser, "#warnings") == ""
        assert browser.console_errors() == []
    finally:
        serve.close()


STYLED = ("document.styleSheets.length > 0 && [...document.styleSheets].every("
          "s => s.cssRules.length > 0)")


def test_token_mode_pages_are_styled_and_load_their_data(browser: Browser,
                                                         tmp_path: Path) -> None:
    token = "tok-Browser-7f3a"
    config = tmp_path / "serve.toml"
    config.write_text("[sessions.practice]\nkind = 'local'\nvariant = 'mass'\nhands = 1\n"
                      "pause = 0.2\n")
    serve = ServeProcess(config, tmp_path / "logs", env={"MJBOT_STATUS_TOKEN": token})
    try:
        browser.navigate(serve.url + "?token=" + token)
        browser.wait_for("location.pathname === '/' && location.search === ''")
        browser.wait_for(STYLED)
        browser.wait_for("document.querySelectorAll('#sessions tbody tr').length === 1")
        assert "running" in text(browser, "#sessions tbody")
        browser.wait_for("document.querySelectorAll('#results tbody a').length >= 1", 90)
        link = browser.evaluate("document.querySelector('#results tbody a').href")
        assert token not in link and browser.evaluate("document.cookie") == ""  # HttpOnly
        browser.screenshot(tmp_path / "dashboard-token.png")
        browser.navigate(link)
        browser.wait_for(STYLED)
        browser.wait_for("document.getElementById('step-text').textContent.length > 0")
        browser.navigate(serve.url + "games")
        browser.wait_for(STYLED)
        browser.wait_for("document.querySelectorAll('#games tbody tr').length >= 1")
        assert browser.console_errors() == []
        assert not any(token in line for line in serve.raw)  # never logged
    finally:
        serve.close()


@pytest.fixture(scope="module")
def ntpu_view(ntpu_match: Path, both_views: str) -> tuple[str, Path]:
    """The view of the logs of the real `mjbot ntpu-server` match of two hands (one wall,
    the clients rotated once; tests/conftest.py plays it once; their ids start "1~"): the
    URL, the log folder."""
    return both_views, ntpu_match


def test_a_match_log_names_each_hands_players(browser: Browser,
                                              ntpu_view: tuple[str, Path]) -> None:
    """ntpu-server's match log: the clients move between its games. The seats were labelled
    with the last game's players on every hand; each hand now shows its own."""
    url, logs = ntpu_view
    (match,) = (logs / "ntpu-server").rglob("*.mjlog.msgpack")
    game_id = "~".join(["1", *match.relative_to(logs).parts])
    labels = "[...document.querySelectorAll('.seat')].map(s => [s.dataset.seat, " \
             "s.querySelector('h3 span').textContent])"
    seen = []
    browser.navigate(url + "games/" + game_id + "#1/1")
    for hand in (1, 2):
        browser.evaluate(f"location.hash = '#{hand}/1'")
        step_shown(browser, hand, 1)
        seen.append({int(seat): label.split(" · ")[-1]
                     for seat, label in browser.evaluate(labels)})
    assert seen[0] == {0: "rulebased-1", 1: "greedy-2", 2: "rulebased-3", 3: "rulebased-4"}
    assert seen[1] == {0: "greedy-2", 1: "rulebased-3", 2: "rulebased-4", 3: "rulebased-1"}
    assert "rulebased-1, greedy-2, rulebased-3, rulebased-4" in text(browser, "#game-info")
    assert browser.console_errors() == []


def test_a_logs_notices_show_with_their_hand(browser: Browser,
                                            ntpu_view: tuple[str, Path]) -> None:
    """What a game log says beside the table (here an NTPU client's own win valued by our
    rules: the server sends no value; the other seats' logs value it too) was shown by
    `mjbot replay` and nowhere in the viewer. The hand now lists its notices, each linked to
    the step it follows, and the hand list says which hands have some."""
    from protocols import events as ev
    from replay.log import EventFrame, read_log

    url, logs = ntpu_view
    noticed = {path: [f.event.text for f in read_log(path).frames
                      if isinstance(f, EventFrame) and isinstance(f.event, ev.PlatformNotice)]
               for path in (logs / "ntpu").rglob("*.mjlog.msgpack")}
    # every seat's log values the hand's one win (the others' as "seat N's win"): the winner's
    (own, (notice,)), = [(p, n) for p, n in noticed.items()
                         if n and n[0].startswith("our win by mjbot's rules: ")]
    assert sum(1 for n in noticed.values() if n) == 4, noticed
    game_id = "~".join(["1", *own.relative_to(logs).parts])
    browser.navigate(url + "games/" + game_id + "#1/1")
    step_shown(browser, 1, 1)
    assert "1 notice" in text(browser, "#hand-select option")
    assert "notices in this hand" in text(browser, "#notices")
    assert notice in text(browser, "#notices .notice")
    browser.evaluate("document.querySelector('#notices .notice a').click()")
    step = int(browser.evaluate("document.querySelector('#notices .notice').dataset.step"))
    step_shown(browser, 1, step + 1)
    browser.wait_for("document.querySelector('#notices .notice.here') !== null")
    assert browser.console_errors() == []


def _a_discard_not_in_the_hand(game: Path, out: Path) -> Path:
    """``game`` written to ``out`` with its first hand's third discard by our seat changed
    to a tile whose kind that seat does not hold then: the table of the steps draws it, the
    commentary's table (which keeps the seat's tiles) cannot follow the hand."""
    from brain.state import TableState
    from protocols import events as ev
    from protocols import tiles as T
    from replay import replayer
    from tests.log_samples import log_frames, write_frames
    from tests.test_viewer_damaged import _edited

    rep = replayer.load(game)
    ours = [i for i, e in enumerate(rep.events)
            if isinstance(e, ev.TileDiscarded) and e.seat == rep.seat][2]
    assert not any(isinstance(e, ev.RoundWon | ev.RoundDrawn) for e in rep.events[:ours])
    state = TableState(rep.variant, rep.seat)
    for e in rep.events[:ours]:
        state.apply(e)
    held = {T.kind(t) for t in state.hand}
    tile = next(t for t in range(0, 136, 4) if T.kind(t) not in held)
    frames = log_frames(game)
    frame = [i for i, f in enumerate(frames) if f.get("k") == "event"
             and f["event"]["type"] == "TileDiscarded" and f["event"]["seat"] == rep.seat][2]
    return write_frames(out, _edited(frames, frame, ("event", "tile"), tile))


def test_a_damaged_hand_says_it_has_no_commentary_and_the_next_shows_its_own(
        browser: Browser, played: Path, tmp_path: Path) -> None:
    """A log whose first hand holds a discard of a tile not in the hand (damaged or edited):
    its steps show, but the commentary was a 422 for the whole game, every hand saying "no
    commentary: cannot show this file". Now the first hand says in one line that it has
    none, and the second hand shows its sentences."""
    (game,) = (played / "riichi").rglob("*.mjlog.msgpack")
    logs = tmp_path / "logs"
    logs.mkdir()
    damaged = _a_discard_not_in_the_hand(game, logs / "damaged.mjlog.msgpack")
    with viewer_in_thread(logs) as (url, _loop, _cache):
        browser.navigate(url + "games/0~" + damaged.name + "#1/1")
        step_shown(browser, 1, 1)
        browser.wait_for("document.getElementById('subtitles').dataset.state === 'ready'", 60)
        said = text(browser, "#subtitles")
        assert said == ("no commentary for hand 1: the log's moves there do not fit the table "
                        "(a damaged or edited log)"), said
        browser.key("ArrowDown")
        step_shown(browser, 2, 1)
        for _ in range(80):
            browser.key("ArrowRight")
            if browser.evaluate("document.querySelectorAll('#subtitles .subtitle').length"):
                break
        else:
            pytest.fail("no subtitle in the second hand's first steps")
        assert "no commentary" not in text(browser, "#subtitles")
        assert browser.console_errors() == []


def test_a_damaged_hand_says_what_was_damaged(browser: Browser, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The outline listed a damaged hand (an mjai discard of a tile the seat does not hold;
    a tenhou.net/6 log entry whose round is no numbers) like any other, nothing saying what
    was damaged: its steps showed, or "cannot show hand 2: ..." said only that the table
    failed. Now the hand's entry in the list says "damaged", and while it is shown (or where
    its steps cannot be, under "cannot show hand 2") the page gives the note `mjbot replay`
    gives of it; the hands after it say nothing."""
    from tests.in_process import mjbot_here
    from tests.shared_data import DATA, MJAI_GAME

    logs = tmp_path / "logs"
    logs.mkdir()
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines()
    lines[11] = '{"type":"dahai","actor":0,"pai":"P","tsumogiri":false}'  # no haku held
    mjai = logs / "edited.mjai.jsonl"
    mjai.write_text("\n".join(lines) + "\n", encoding="utf-8")
    game = json.loads((DATA / "tenhou" / "convlog_tenhou6_json" / "ranked_game.json")
                      .read_text(encoding="utf-8"))
    game["log"][1][0] = "x"
    tenhou6 = logs / "edited.json"
    tenhou6.write_text(json.dumps(game, ensure_ascii=False), encoding="utf-8")
    said = {}
    for path in (mjai, tenhou6):
        run = mjbot_here(capsys, "replay", "--json", str(path))
        (said[path.name],) = json.loads(run.stdout)["summary"]["notes"]
    with viewer_in_thread(logs) as (url, _loop, _cache):
        browser.navigate(url + "games/0~" + mjai.name + "#1/1")
        step_shown(browser, 1, 1)
        assert text(browser, "#hand-damage") == said[mjai.name]
        assert said[mjai.name].startswith("hand 1 (E1-0) cannot be followed from event 11")
        assert browser.evaluate("document.querySelector('#hand-select option').textContent"
                                ).endswith(" · damaged")
        browser.key("ArrowDown")
        step_shown(browser, 2, 1)
        assert browser.evaluate("document.getElementById('hand-damage').hidden") is True
        assert "damaged" not in browser.evaluate(
            "document.querySelectorAll('#hand-select option')[1].textContent")

        browser.navigate(url + "games/0~" + tenhou6.name + "#2/1")
        browser.wait_for("document.getElementById('link-note').textContent !== ''")
        assert text(browser, "#link-note").startswith("cannot show hand 2: 422 ")
        assert text(browser, "#hand-damage") == said[tenhou6.name]
        assert "its first entry x is not [round, repeats, deposits]" in said[tenhou6.name]
        assert browser.evaluate("document.querySelectorAll('#hand-select option')[1]"
                                ".textContent") == "2. round unknown · damaged"


def test_a_busy_viewer_is_asked_again_after_its_retry_after(
        browser: Browser, played: Path, tmp_path: Path) -> None:
    """A 503 (the viewer's build queue full) or a 429 (this client's share queued) says
    `Retry-After: 1`; the page showed it as an error ("cannot open this game: 503 ..."). Now
    it waits that second and asks again, a line saying so meanwhile, and shows the game once
    a slot is free; a viewer still busy after its tries is the error."""
    logs = tmp_path / "logs"
    copies = copy_games(played, logs, ["riichi", "mcr"])
    ids = {v: "0~" + "~".join(p.relative_to(logs).parts) for v, p in copies.items()}

    def set_waiting(cache: BuildCache, n: int) -> None:
        loop.call_soon_threadsafe(setattr, cache, "max_waiting", n)

    with viewer_in_thread(logs) as (url, loop, cache):
        set_waiting(cache, 0)  # every new build refused: a 503 with Retry-After: 1
        browser.navigate(url + "games/" + ids["riichi"])
        browser.wait_for("!document.getElementById('busy').hidden")
        assert text(browser, "#busy") == "the viewer is busy, asking again…"
        assert "cannot open" not in text(browser, "#game-info")
        set_waiting(cache, 32)
        step_shown(browser, 1, 1)
        assert browser.evaluate("document.getElementById('busy').hidden")
        assert "riichi" in text(browser, "#game-info")

        set_waiting(cache, 0)  # refused every time: the error, after its tries
        refused = cache.refused
        browser.navigate(url + "games/" + ids["mcr"])
        browser.wait_for("document.getElementById('game-info').textContent"
                         ".startsWith('cannot open this game: 503')", 30)
        assert cache.refused - refused == 5  # the first ask and four more
        assert browser.evaluate("document.getElementById('busy').hidden")


def test_the_list_marks_a_damaged_log_and_links_no_unopenable_one(
        browser: Browser, played: Path, tmp_path: Path) -> None:
    """A finished log with a frame damaged before its footer was listed with its result as
    any other (the list reads the footer), and a log whose header the reader refuses was a
    link to a 422. In the viewer `mjbot view` serves (real HTTP, in a thread here): the list
    asks itself again while the viewer reads the page's logs whole, then shows "· damaged" on
    the first (its note as the title); the second is listed damaged, its name no link; the
    sound game is unmarked."""
    from tests.log_samples import log_frames, write_frames
    from tests.test_viewer_list_damage import _damaged

    logs = tmp_path / "logs"
    sound = copy_games(played, logs, ["riichi"])["riichi"]
    _damaged(sound, logs / "middle.mjlog.msgpack")
    frames = log_frames(sound)
    frames[0]["extra"] = 5
    write_frames(logs / "header.mjlog.msgpack", frames)
    with viewer_in_thread(logs) as (url, _loop, _cache):
        browser.navigate(url + "games")
        row = "document.querySelector('tr[data-id=\"0~{}.mjlog.msgpack\"] td.result-cell')"
        browser.wait_for(row.format("middle") + "?.textContent.endsWith(' · damaged')", 30)
        assert browser.evaluate(row.format("middle") + ".title").startswith(
            "the log is cut at byte ")
        assert browser.evaluate(row.format("header") + ".textContent") == \
            "damaged: the viewer cannot open it"
        assert browser.evaluate(
            "document.querySelector('tr[data-id=\"0~header.mjlog.msgpack\"] a') === null")
        sound_id = "0~" + "~".join(sound.relative_to(logs).parts)
        sound_row = f"document.querySelector('tr[data-id={json.dumps(sound_id)}]')"
        assert "damaged" not in browser.evaluate(sound_row + ".textContent")
        assert browser.evaluate(sound_row + ".querySelector('a') !== null")
        assert browser.console_errors() == []


def test_a_game_that_cannot_be_opened_does_not_say_its_commentary_is_loading(
        browser: Browser, tmp_path: Path) -> None:
    """A file the viewer lists but no reader takes (the real sanma.log capture: a
    three-player game) opened as 'cannot open this game: 422 ...' above an empty table, and
    under it 'commentary loading…' for good: nothing was being loaded. It now says there is
    no commentary, the game not opening."""
    from tests.shared_data import DATA

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DATA / "tenhou" / "dnovikoff_protocol_captures" / "sanma.log", logs)
    with mjbot_view(logs) as url:
        browser.navigate(url + "games/0~sanma.log")
        browser.wait_for("document.getElementById('game-info').textContent"
                         ".startsWith('cannot open this game: 422')")
        assert text(browser, "#subtitles") == "no commentary: the game cannot be opened"
        assert browser.evaluate("document.getElementById('subtitles').dataset.state") == \
            "failed"


def test_a_busy_server_is_asked_again_with_a_line_on_the_dashboard(
        browser: Browser, tmp_path: Path) -> None:
    """The dashboard asks /api/status every two seconds; a 503 with Retry-After (the status
    server's every connection busy: the connection guard refuses the next) was waited out and
    asked again with nothing said, the page's numbers standing still. It now says so in a
    line beside the update time while it waits, gone once an answer comes."""
    from adapter.serve.config import loads
    from adapter.serve.supervisor import Supervisor
    from tests.test_serve_status import CONFIG
    from tests.test_serve_status import played as played_run

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def on_loop(call: Any) -> Any:
        async def run() -> Any:
            result = call()
            return await result if asyncio.iscoroutine(result) else result
        return asyncio.run_coroutine_threadsafe(run(), loop).result(10)

    sup = on_loop(lambda: Supervisor(loads(CONFIG, environ={}), log_dir=str(tmp_path / "logs"),
                                     runners={"local": played_run, "tenhou": played_run}))
    on_loop(sup.start)
    server = StatusServer(sup, sup.metrics)
    try:
        url = on_loop(lambda: server.start("127.0.0.1", 0))
        browser.navigate(url)
        browser.wait_for("document.querySelectorAll('#sessions tbody tr').length > 0")
        assert browser.evaluate("document.getElementById('busy').hidden")
        cap = server.guard.cap

        def refuse_new_connections() -> None:  # the cap reached, every connection busy
            server.guard.cap = 0
            for conn in server.guard.conns.values():
                conn.transport.abort()  # (the page's keep-alive: its next ask is a new one)

        on_loop(refuse_new_connections)
        browser.wait_for("!document.getElementById('busy').hidden")
        assert text(browser, "#busy") == "the server is busy, asking again…"
        on_loop(lambda: setattr(server.guard, "cap", cap))
        browser.wait_for("document.getElementById('busy').hidden")
        assert not text(browser, "#updated").startswith("cannot reach")
    finally:
        on_loop(server.stop)
        on_loop(lambda: sup.stop(2))
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
