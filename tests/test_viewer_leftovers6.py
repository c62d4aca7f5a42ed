"""The replay viewer's leftovers (viewer6): a log that kills the list's reading process, through
a real server on loopback with real logs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from yarl import URL

from adapter.own_python import own_python
from adapter.serve.status import StatusServer
from adapter.serve.viewcache import IDLE_POLL
from adapter.serve.viewer import VIEW_CACHE, VIEW_READER
from tests.cdp import Chromium, find_chromium
from tests.serve_helpers import until
from tests.viewer_fixtures import platform_game

CHROMIUM = find_chromium()
posix_only = pytest.mark.skipif(os.name != "posix", reason="the child reads on POSIX only")

# The real reading process (wholeread.serve, the real reader) that the kernel kills as it
# reads a log named "killer" (as its out-of-memory kill under a memory limit, or a crash, ends
# it mid-read): always, or (given a marker file) only the first time, a stray kill.
KILLED_ON = """
import os, signal, sys
from adapter.serve import wholeread

real = wholeread.read_here

def read_here(path):
    if "killer" in path and (sys.argv[1] == "-" or not os.path.exists(sys.argv[1])):
        if sys.argv[1] != "-":
            open(sys.argv[1], "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return real(path)

wholeread.read_here = read_here
wholeread.serve(sys.stdin.buffer, sys.stdout.buffer)
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    platform_game(root / "sound.mjlog.msgpack")
    platform_game(root / "killer.mjlog.msgpack")
    # the killer newer, so listed (and asked to be read) first, as the counts of children
    # below assume: written a few ms apart, a filesystem whose clock ticks coarser (a jiffy)
    # gave both one mtime, the sound log listed first (by name) and one child fewer started
    st = (root / "sound.mjlog.msgpack").stat()
    os.utime(root / "killer.mjlog.msgpack", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    return root


async def _page(session: aiohttp.ClientSession, url: URL) -> dict[str, object]:
    async with session.get(url.with_path("/api/games")) as response:
        assert response.status == 200
        page: dict[str, object] = await response.json()
        return page


@posix_only
async def test_a_log_that_kills_the_reader_is_listed_so_and_not_read_again(
        root: Path, tmp_path: Path) -> None:
    """A log whose whole read killed the reading process (a crash, a memory limit) was left
    unread: each page that showed it started a child and read it again, to die again. A fresh
    child tries it once more; one that dies too leaves the log kept, for this version, as
    "could not be read: the reader died", listed so (``unchecked``, not ``damaged``), and
    the next pages start no child for it. The game list in Chromium says so in the row."""
    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    reader, cache = server.runner.app[VIEW_READER], server.runner.app[VIEW_CACHE]
    reader.command = own_python("-c", KILLED_ON, "-")
    index = server.index
    try:
        async with aiohttp.ClientSession() as session:
            assert (await _page(session, url))["unread"] == 2
            await until(lambda: index.logs.counts.read_whole == 2 and not cache.building)
            started = reader.started
            assert started == 3  # killed on the killer; a fresh one, killed; one for the sound
            for _ in range(3):
                page = await _page(session, url)
                await asyncio.sleep(3 * IDLE_POLL)
            assert reader.started == started and index.logs.counts.read_whole == 2
        games = {g["name"]: g for g in page["games"]}  # type: ignore[attr-defined]
        assert page["unread"] == 0
        killer, sound = games["killer.mjlog.msgpack"], games["sound.mjlog.msgpack"]
        assert killer["unchecked"] == "could not be read: the reader died (killed by SIGKILL)"
        assert "damaged" not in killer and "unchecked" not in sound and "damaged" not in sound
        if CHROMIUM is not None:
            cell = await asyncio.to_thread(_result_cell, str(url), tmp_path)
            assert cell == ["1st · 31000 · not checked",
                            "could not be read: the reader died (killed by SIGKILL)"], cell
    finally:
        await server.stop()


def _result_cell(url: str, tmp_path: Path) -> list[str]:
    """The killer log's result cell in the game list, as Chromium shows it: text, title."""
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        b.navigate(f"{url.rstrip('/')}/games")
        row = ("[...document.querySelectorAll('#games tr')].find(r => "
               "r.textContent.includes('killer.mjlog.msgpack'))")
        b.wait_for(f"!!({row} && {row}.querySelector('.result-cell'))")
        cell: list[str] = b.evaluate(f"(c => [c.textContent, c.title])"
                                     f"({row}.querySelector('.result-cell'))")
        assert not b.console_errors()
        b.close()
        return cell
    finally:
        chromium.close()


@posix_only
async def test_a_reader_killed_once_is_no_verdict_on_the_log(root: Path, tmp_path: Path) -> None:
    """A reading process killed once while it read a log (a stray kill) says nothing of the
    log: the fresh child reads it, and it is listed as sound."""
    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    reader, cache = server.runner.app[VIEW_READER], server.runner.app[VIEW_CACHE]
    reader.command = own_python("-c", KILLED_ON, str(tmp_path / "killed-once"))
    index = server.index
    try:
        async with aiohttp.ClientSession() as session:
            assert (await _page(session, url))["unread"] == 2
            await until(lambda: index.logs.counts.read_whole == 2 and not cache.building)
            page = await _page(session, url)
        assert reader.started == 2 and page["unread"] == 0
        assert not any("unchecked" in g or "damaged" in g
                       for g in page["games"])  # type: ignore[attr-defined]
    finally:
        await server.stop()


@posix_only
async def test_a_reader_killed_as_it_starts_marks_no_log(root: Path) -> None:
    """A reading process killed before it reads anything (the kernel's out-of-memory kill of
    each new process while serve's memory limit is reached, a crash in its imports) says
    nothing of any log; since the reader-died verdict, each listed log had two children
    started for it, one after the other, and was listed "could not be read: the reader died"
    until a restart. As for a child that ends (test_viewer_wholeread.py): no log marked, the
    pass waits for the next page, one child started, not two per listed log."""
    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    reader, cache = server.runner.app[VIEW_READER], server.runner.app[VIEW_CACHE]
    reader.command = own_python("-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    try:
        async with aiohttp.ClientSession() as session:
            assert (await _page(session, url))["unread"] == 2
            await until(lambda: reader.started >= 1 and reader._child is None
                        and not cache.building)
            await asyncio.sleep(1.0)
            assert reader.started == 1  # not two per listed log
            page = await _page(session, url)
        assert page["unread"] == 2 and server.index.logs.counts.read_whole == 0
        assert not any("unchecked" in g or "damaged" in g
                       for g in page["games"])  # type: ignore[attr-defined]
    finally:
        await server.stop()


def test_a_reload_naming_the_same_log_folder_otherwise_says_nothing(tmp_path: Path) -> None:
    """`[serve] log_dir` was compared as text on SIGHUP: the folder written another way
    (``a/`` for ``a``, ``./a``, a symlink to it) was warned of as changed and waiting for a
    restart, though the games go on into that very folder. The folders they name are
    compared: only a folder that is another one is warned of (the second reload here)."""
    import signal

    from tests.serve_helpers import ServeProcess, stop_process

    config = tmp_path / "serve.toml"
    config.write_text(f"[serve]\nlog_dir = '{tmp_path / 'a'}'\n")
    (tmp_path / "link").symlink_to(tmp_path / "a", target_is_directory=True)
    serve = ServeProcess(config, None)
    try:
        for n, same in enumerate((f"{tmp_path}/a/", f"{tmp_path}/./a", str(tmp_path / "link"),
                                  str(tmp_path / "b")), start=1):
            config.write_text(f"[serve]\nlog_dir = '{same}'\nstop_deadline = {n}\n")
            serve.signal(signal.SIGHUP)
            serve.wait_for(lambda _, n=n: sum(e.get("event") == "serve: config reloaded"
                                              for e in serve.lines) == n)
        warned = serve.wait_for(lambda e: str(e.get("event")).startswith(
            "serve: [serve] log_dir changed"))
        assert warned["config_log_dir"] == str(tmp_path / "b")
        assert [e["config_log_dir"] for e in serve.lines if str(e.get("event")).startswith(
            "serve: [serve] log_dir changed")] == [str(tmp_path / "b")]
    finally:
        stop_process(serve.proc)


def test_a_reload_naming_a_folder_no_stat_can_take_keeps_serve_running(
        tmp_path: Path) -> None:
    """A SIGHUP reload whose `[serve] log_dir` no folder can be made of (a path through a
    symlink loop, a NUL in it: the config loader takes any non-empty string) ended the whole
    server, every session stopped, with a traceback (RuntimeError: Symlink loop, ValueError:
    embedded null byte) where the value was compared as text and warned of. Each is warned
    of as a changed log_dir, and serve goes on (a later reload is still taken)."""
    import signal

    from tests.serve_helpers import ServeProcess, stop_process

    config = tmp_path / "serve.toml"
    config.write_text(f"[serve]\nlog_dir = '{tmp_path / 'a'}'\n")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    serve = ServeProcess(config, None)
    try:
        for n, other in enumerate((f"'{tmp_path / 'loop' / 'x'}'", '"lo\\u0000gs"',
                                   f"'{tmp_path / 'a'}'"), start=1):
            config.write_text(f"[serve]\nlog_dir = {other}\nstop_deadline = {n}\n")
            serve.signal(signal.SIGHUP)
            serve.wait_for(lambda e, n=n: serve.proc.poll() is not None or sum(
                e.get("event") == "serve: config reloaded" for e in serve.lines) == n)
            assert serve.proc.poll() is None, "".join(serve.raw[-5:])
        warned = [e["config_log_dir"] for e in serve.lines
                  if str(e.get("event")).startswith("serve: [serve] log_dir changed")]
        assert warned == [str(tmp_path / "loop" / "x"), "lo\x00gs"]
    finally:
        stop_process(serve.proc)


def _damaged_games(folder: Path) -> dict[str, Path]:
    """The real mjai game, and two copies: seat 0's first discard edited to a tile it does
    not hold (the CLI's test's), and cut inside its first hand."""
    from tests.shared_data import MJAI_GAME

    folder.mkdir(parents=True)
    lines = MJAI_GAME.read_text(encoding="utf-8").splitlines(keepends=True)
    lines_edited = list(lines)
    lines_edited[3] = '{"type":"dahai","actor":0,"pai":"9s","tsumogiri":false}\n'
    games = {"whole": folder / "whole.mjai.jsonl", "edited": folder / "edited.mjai.jsonl",
             "cut": folder / "cut.mjai.jsonl"}
    games["whole"].write_text("".join(lines), encoding="utf-8")
    games["edited"].write_text("".join(lines_edited), encoding="utf-8")
    games["cut"].write_text("".join(lines[:40]), encoding="utf-8")
    return games


async def test_an_export_of_a_damaged_game_says_what_the_cli_says(tmp_path: Path) -> None:
    """The viewer's export of a cut or damaged game was the CLI's bytes with a 200 and no
    word, where `mjbot replay --export` names the hand written as recorded (exit 1) or how
    far the cut game goes: a damaged game passed for a sound one. The export now carries the
    CLI's lines in X-Mjbot-Export-Note (a JSON list), the same bytes still; a whole game's
    none. In Chromium the game page's export link says them on the page as it saves."""
    import json

    from tests.serve_helpers import mjbot

    games = _damaged_games(tmp_path / "games")
    notes: dict[str, list[str]] = {}
    server = StatusServer(roots=[str(tmp_path / "games")])
    url = URL(await server.start("127.0.0.1", 0))
    try:
        async with aiohttp.ClientSession() as session:
            for name, path in games.items():
                for fmt in ("mjai", "tenhou6"):
                    async with session.get(url.with_path(
                            f"/games/0~{path.name}/export/{fmt}")) as response:
                        assert response.status == 200
                        body = await response.read()
                        note = response.headers.get("X-Mjbot-Export-Note")
                    cli = await asyncio.to_thread(mjbot, "replay", str(path), "--export", fmt,
                                                  "-o", str(tmp_path / f"{name}.{fmt}"))
                    assert cli.returncode == (1 if name == "edited" else 0), cli.stderr
                    assert body == (tmp_path / f"{name}.{fmt}").read_bytes()
                    said = [line.removeprefix(f"mjbot replay: {path}: ")
                            for line in cli.stderr.splitlines()]
                    if name == "whole":
                        assert note is None and said == []
                    else:
                        assert note is not None and json.loads(note) == said and said, note
                        notes[name] = said
        assert notes["edited"][0].startswith("hand 1 (E1-0) cannot be followed from event 3")
        assert notes["cut"] == ["exported as far as the log goes: hand E1-0 unfinished (the "
                                "log ends inside it; exported with no result)"]
        if CHROMIUM is not None:
            shown = await asyncio.to_thread(_export_note, str(url), tmp_path)
            assert shown.startswith("export mjai: hand 1 (E1-0) cannot be followed"), shown
            assert shown.endswith("exported as recorded (a damaged or edited log)"), shown
    finally:
        await server.stop()


def _export_note(url: str, tmp_path: Path) -> str:
    """The edited game's page in Chromium, its mjai export clicked: the note the page shows."""
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        b.navigate(f"{url.rstrip('/')}/games/0~edited.mjai.jsonl")
        b.wait_for("!!document.querySelector('a[data-export=\"mjai\"]')")
        b.evaluate("document.querySelector('a[data-export=\"mjai\"]').click()")
        note: str = b.wait_for("(t => !t.endsWith('…') && t)("
                               "document.getElementById('export-note').textContent)")
        assert not b.console_errors()
        b.close()
        return note
    finally:
        chromium.close()


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium")
async def test_an_export_asked_of_a_busy_viewer_is_asked_again(tmp_path: Path) -> None:
    """The game page's export links became fetches (9e6fe27), but a 503 or 429 with
    `Retry-After: 1` (the viewer's build queue full, this client's share queued) was shown at
    once as "export mjai: 503 the viewer is busy ...", where the page's every other request
    waits that second and asks again (common.js, README). The export now does the same,
    "the viewer is busy, asking again…" meanwhile, and then shows its note and saves."""
    games = _damaged_games(tmp_path / "games")
    server = StatusServer(roots=[str(games["edited"].parent)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    cache = server.runner.app[VIEW_CACHE]
    loop = asyncio.get_running_loop()

    def set_waiting(n: int) -> None:
        loop.call_soon_threadsafe(setattr, cache, "max_waiting", n)

    try:
        busy, note = await asyncio.to_thread(_busy_export, str(url), tmp_path, set_waiting)
        assert busy == "the viewer is busy, asking again…"
        assert note.startswith("export mjai: hand 1 (E1-0) cannot be followed"), note
    finally:
        await server.stop()


def _busy_export(url: str, tmp_path: Path, set_waiting: Any) -> tuple[str, str]:
    """The edited game's page in Chromium, its mjai export clicked while every new build is
    refused (a 503), then let through: the busy line meanwhile, and the note shown."""
    assert CHROMIUM is not None
    chromium = Chromium(CHROMIUM, tmp_path / "profile")
    try:
        b = chromium.page()
        b.navigate(f"{url.rstrip('/')}/games/0~edited.mjai.jsonl")
        b.wait_for("!!document.querySelector('a[data-export=\"mjai\"]')")
        set_waiting(0)  # every new build refused: a 503 with Retry-After: 1
        b.evaluate("document.querySelector('a[data-export=\"mjai\"]').click()")
        busy: str = b.wait_for("(b => !b.hidden && b.textContent)(document.getElementById"
                               "('busy')) || document.getElementById('export-note')"
                               ".textContent.match(/^export mjai: [0-9]/)?.[0]")
        set_waiting(32)
        note: str = b.wait_for("(t => !t.endsWith('…') && t)("
                               "document.getElementById('export-note').textContent)")
        assert not b.console_errors()
        b.close()
        return busy, note
    finally:
        chromium.close()


def test_an_export_note_of_many_hands_fits_a_header() -> None:
    """A game of a thousand damaged hands: the header holds the notes that fit NOTE_CHARS and
    counts the rest (aiohttp's client refuses a header past 8190 characters)."""
    import json

    from adapter.serve.viewer import NOTE_CHARS, note_header

    notes = [f"hand {n} (E1-0) cannot be followed from event {n}: é" for n in range(1000)]
    value = note_header(notes)
    assert len(value) <= NOTE_CHARS and value.isascii()
    kept = json.loads(value)
    assert kept[:-1] == notes[:len(kept) - 1] and len(kept) > 10
    assert kept[-1] == f"and {1001 - len(kept)} more (mjbot replay --export names them all)"
    assert json.loads(note_header(notes[:3])) == notes[:3]


async def test_a_shared_build_is_charged_to_a_client_still_waiting_for_it(
        tmp_path: Path) -> None:
    """A build two clients wait for (the same game's commentary) was charged, every part of
    it, to the client that asked first: once that client hung up, its share went on being
    charged for a build only the other wanted (its next requests queued behind it, the other
    holding no slot in the shares' count). Each run is now charged to a client still waiting:
    here, once A hangs up, the commentary's next parts are B's."""
    from adapter.bench.view import repeated
    from tests.viewer_fixtures import practice_game

    game = practice_game(tmp_path / "made")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "long.mjlog.msgpack").write_bytes(repeated(game.read_bytes(), 40))
    server = StatusServer(roots=[str(tmp_path / "logs")])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    cache = server.runner.app[VIEW_CACHE]
    commentary = url.with_path("/api/games/0~long.mjlog.msgpack/commentary")
    first = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0)))
    other = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.3", 0)))

    async def ask(session: aiohttp.ClientSession) -> int:
        async with session.get(commentary) as response:
            await response.read()
            return response.status

    def flight() -> Any:
        return next((f for f in cache._pending.values() if f.kind == "commentary"), None)

    try:
        a = asyncio.ensure_future(ask(first))
        await until(lambda: (f := flight()) is not None and f.started, timeout=60)
        b = asyncio.ensure_future(ask(other))
        await until(lambda: getattr(flight(), "callers", 0) == 2, timeout=60)
        assert set(cache._shares) <= {"127.0.0.2"}  # the parts so far: A's (the earliest)
        a.cancel()
        await first.close()  # A hangs up: the server sees it within GONE_POLL
        await until(lambda: "127.0.0.3" in cache._shares, timeout=60)
        assert not b.done() and getattr(flight(), "clients", None) == {"127.0.0.3": 1}
        b.cancel()
    finally:
        await first.close()
        await other.close()
        await server.stop()
