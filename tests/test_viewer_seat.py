"""The replay viewer on a local-table game (which has no seat of ours) in headless Chromium
(tests/cdp.py): an outside bot's author reads the game from that bot's seat."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.local.arena import ArenaConfig, run_arena
from tests.cdp import Chromium, find_chromium
from tests.serve_helpers import mjbot_view

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium; "
    ".ci/run installs it)")


def test_a_local_game_is_drawn_from_the_seat_its_link_names(tmp_path: Path) -> None:
    """A local-table game was always drawn from seat 0, so the author of a bot seated
    elsewhere (an arena's other seatings) read it from the side and could not put it at the
    bottom. The game list now links each player of such a game to ``/games/ID?seat=N``, and
    the viewer draws the table from that seat (seat 0 still without one)."""
    logs = tmp_path / "logs"
    run_arena(ArenaConfig("riichi", ("greedy", "rulebased", "rulebased", "rulebased"),
                          hands=1, seed=3, log_dir=str(logs)))
    game = next(p for p in logs.rglob("*.mjlog.msgpack") if p.name.endswith("-u0-1.mjlog.msgpack"))
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        with mjbot_view(logs) as url:
            b.navigate(f"{url}games")
            b.wait_for(f"[...document.querySelectorAll('#games a')].some(a => "
                       f"a.textContent === {game.name!r})")
            row = (f"[...document.querySelectorAll('#games tr')].find(r => "
                   f"r.textContent.includes({game.name!r}))")
            links = b.evaluate(f"{row}.querySelectorAll('a[title^=\"from seat\"]').length")
            assert links == 4, links
            seat1 = f"{row}.querySelector('a[title=\"from seat 1\"]')"
            assert b.evaluate(f"{seat1}.textContent") == "greedy"
            href = b.evaluate(f"{seat1}.getAttribute('href')")
            assert href.endswith("?seat=1"), href
            b.navigate(url.rstrip("/") + href)
            b.wait_for("document.getElementById('seat-bottom').dataset.seat !== undefined")
            assert b.evaluate("document.getElementById('seat-bottom').dataset.seat") == "1"
            assert b.evaluate("document.getElementById('seat-top').dataset.seat") == "3"
            assert "greedy" in b.evaluate("document.getElementById('seat-bottom').innerText")
            b.key("ArrowRight")  # stepping keeps the seat (the address keeps ?seat=1)
            b.wait_for("document.getElementById('step-index').textContent.startsWith('step 2 /')")
            assert b.evaluate("location.search") == "?seat=1"
            assert b.evaluate("document.getElementById('seat-bottom').dataset.seat") == "1"
            b.navigate(url.rstrip("/") + href.replace("?seat=1", ""))
            b.wait_for("document.getElementById('seat-bottom').dataset.seat !== undefined")
            assert b.evaluate("document.getElementById('seat-bottom').dataset.seat") == "0"
            assert not b.console_errors()
        b.close()
    finally:
        chromium.close()
