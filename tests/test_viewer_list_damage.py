"""The game list on logs damaged where its request does not read: a frame damaged before a
finished log's footer (the list read only the footer, so the game was listed as any finished
one and opened cut), and a header the log reader refuses (listed as a game, opened as a
422). The list's request still reads only headers and footers; a page built, or the viewer's
idle reads of the logs a page showed, find the damage and the list marks it."""

from __future__ import annotations

import asyncio
import copy
import gc
import os
import threading
from pathlib import Path
from typing import Any

import aiohttp
import msgpack
import pytest
from yarl import URL

from adapter.serve.games import GameIndex
from adapter.serve.status import StatusServer
from adapter.serve.viewcache import IDLE_POLL
from adapter.serve.viewer import VIEW_CACHE
from replay import progress
from replay.log import DecisionFrame, EventFrame, LogError, header_refusal, parse_log
from replay.version import build_version
from tests.log_samples import log_frames, write_frames
from tests.serve_helpers import until
from tests.viewer_fixtures import platform_game


def _damaged(sound: Path, path: Path) -> Path:
    """``sound`` with a frame in its middle made undecodable (its first byte 0xc1, which
    msgpack never uses), its footer whole."""
    packed = [msgpack.packb(f, use_bin_type=True) for f in log_frames(sound)]
    middle = len(packed) // 2
    packed[middle] = b"\xc1" + packed[middle][1:]
    path.write_bytes(b"".join(packed))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    sound = platform_game(root / "sound.mjlog.msgpack")
    _damaged(sound, root / "middle.mjlog.msgpack")
    return root


def _games(page: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["name"]: g for g in page["games"]}


def _cut_note(index: GameIndex, name: str) -> str:
    (note,) = [n for n in index.timeline(f"0~{name}").meta["notes"]
               if n.startswith("the log is cut at ")]
    return note


def test_a_log_damaged_before_its_footer_is_marked_once_read_whole(root: Path) -> None:
    """Listed, both logs are finished (their footers say so) and unmarked: the list's
    request reads no log whole, and asks for the finished ones to be read (``unread``).
    Read whole, the damaged one is marked with the note its game page gives; the sound one
    is not, and neither is asked for again. A new version of the file is asked for anew."""
    index = GameIndex([str(root)])
    games = _games(first := index.page())
    assert {n: (g["finished"], "damaged" in g) for n, g in games.items()} == {
        "sound.mjlog.msgpack": (True, False), "middle.mjlog.msgpack": (True, False)}
    assert first["unread"] == 2 and index.logs.counts.read_whole == 0
    while (item := index.logs.next_unread()) is not None:
        index.read_whole(item[0], item[1])
    assert index.logs.next_unread() is None
    page = index.page()
    games = _games(page)
    assert page["unread"] == 0 and index.logs.counts.read_whole == 2
    assert "damaged" not in games["sound.mjlog.msgpack"]
    assert games["middle.mjlog.msgpack"]["damaged"] == _cut_note(index, "middle.mjlog.msgpack")
    assert games["middle.mjlog.msgpack"]["damaged"].endswith("(unreadable bytes ())")

    (root / "middle.mjlog.msgpack").write_bytes((root / "sound.mjlog.msgpack").read_bytes())
    page = index.page()
    assert page["unread"] == 1 and "damaged" not in _games(page)["middle.mjlog.msgpack"]


def test_a_game_page_built_tells_the_list(root: Path) -> None:
    """Opening the damaged game reads it whole: the list marks it from then on, no idle
    read needed (the page's read is the one the list would have made)."""
    index = GameIndex([str(root)])
    index.page()
    note = _cut_note(index, "middle.mjlog.msgpack")
    page = index.page()
    assert _games(page)["middle.mjlog.msgpack"]["damaged"] == note
    assert page["unread"] == 1  # the sound one, not opened


def test_a_header_the_reader_refuses_is_listed_unreadable(root: Path) -> None:
    """A header whose ``extra`` is no map: the list read its fields leniently and listed it
    as a game, whose page was a 422 (the log reader refuses such a header, so the whole
    file). It is listed unreadable now, as the game opens, and not asked to be read whole."""
    frames = log_frames(root / "sound.mjlog.msgpack")
    frames[0]["extra"] = 5
    write_frames(root / "extra.mjlog.msgpack", frames)
    index = GameIndex([str(root)])
    page = index.page()
    shown = _games(page)["extra.mjlog.msgpack"]
    assert shown["unreadable"] is True and "platform" not in shown
    assert "unreadable" not in _games(page)["sound.mjlog.msgpack"]
    assert page["unread"] == 2  # the two others
    with pytest.raises(ValueError, match="extra must be a map"):
        index.timeline("0~extra.mjlog.msgpack")


def test_a_whole_read_keeps_no_frame_for_the_collector_or_the_free(root: Path) -> None:
    """The viewer's whole read of a listed log runs by itself, in a thread beside the event
    loop that drives the sessions, and wants only where the log stops: it keeps no frame now.
    It kept them all (53 MB for a 40-game match log): the first collection after the read's
    collector pause (replay/gcpause.py) walked every one, and their freeing was one call,
    the interpreter held throughout (0.3 s, then 0.06 s for a 40-game log; 0.4 s to free a
    300-game one), the event loop as late, once per log a list page showed. Here, at each of
    the read's checks and at each collection after it, none but the frame in hand is alive
    (frames made since the gc.collect below: the youngest generation's, not other tests')."""
    frames = log_frames(root / "sound.mjlog.msgpack")
    write_frames(root / "long.mjlog.msgpack", [frames[0], *frames[1:-1] * 100, frames[-1]])
    index = GameIndex([str(root)])
    index.page()
    path = str(root / "long.mjlog.msgpack")

    def alive() -> int:
        return sum(isinstance(o, EventFrame | DecisionFrame) for o in gc.get_objects(0))

    held: list[int] = []  # at each check of the read
    walked: list[int] = []  # at each collection after it

    def started(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            walked.append(alive())

    assert gc.isenabled()
    gc.collect()
    gc.callbacks.append(started)
    try:
        with progress.checking(lambda: held.append(alive())):
            index.read_whole(path, os.stat(path))
        [[] for _ in range(10_000)]  # (a collection or more, after the read)
    finally:
        gc.callbacks.remove(started)
    assert index.logs.counts.read_whole == 1 and len(held) >= 2
    assert max(held) <= 1 and max(walked) == 0, (held, walked)


ODD = [200, -1, "x", "", None, [], {}, 1.5, True, b"\x00", {"k": 1}]


def test_header_refusal_says_what_the_reader_does(tmp_path: Path) -> None:
    """The list's check of a header and the reader's own agree: for an odd value in each of
    a header's fields, and a field no header has (written by an unknown mjbot: a newer one's,
    read; by this very build: damage, refused), the list refuses exactly the headers the
    reader refuses, whichever it is."""
    frames = log_frames(platform_game(tmp_path / "game.mjlog.msgpack"))
    cases = [({key: value}) for key in [*frames[0], "colour"] if key != "k" for value in ODD]
    cases += [{"k": "footer"}, {"k": 5}, {"colour": 1, "mjbot_version": build_version()}]
    refused = []
    for changes in cases:
        edited = copy.deepcopy(frames)
        edited[0].update(changes)
        data = b"".join(msgpack.packb(f, use_bin_type=True) for f in edited)
        try:
            parse_log(data)
            reads = True
        except LogError:
            reads = False
        assert (header_refusal(edited[0]) is None) == reads, changes
        if not reads:
            refused.append(changes)
    # extra 9, k 2 (the last case is refused where this checkout is clean, git says)
    assert len([c for c in refused if "colour" not in c]) == 11, refused


async def test_the_viewer_reads_the_listed_logs_whole_only_when_idle(root: Path) -> None:
    """Through a real server: a list page asks its finished logs to be read whole; the
    viewer does it once no build runs or waits (here one slot is held: nothing is read),
    then the list marks the damaged log."""
    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    cache, index = server.runner.app[VIEW_CACHE], server.index
    release = threading.Event()
    holder = asyncio.ensure_future(cache.run(release.wait))
    listed = url.with_path("/api/games")
    try:
        await until(lambda: cache.building == 1)
        async with aiohttp.ClientSession() as session:
            async with session.get(listed) as response:
                assert (await response.json())["unread"] == 2
            await asyncio.sleep(3 * IDLE_POLL)
            assert index.logs.counts.read_whole == 0  # a build runs: not idle
            release.set()
            await holder
            await until(lambda: index.logs.counts.read_whole == 2)
            async with session.get(listed) as response:
                page = await response.json()
        assert page["unread"] == 0
        assert _games(page)["middle.mjlog.msgpack"]["damaged"].startswith(
            "the log is cut at byte ")
        assert "damaged" not in _games(page)["sound.mjlog.msgpack"]
    finally:
        release.set()
        await server.stop()


def test_idle_reads_refused_at_once_leave_the_event_loop_running(root: Path) -> None:
    """A viewer whose builds may not wait at all (max_waiting 0: each new one refused at once,
    as with a full queue) refused each idle read before it yielded to the event loop, and
    the reads asked again at once: a loop that never let the event loop run, the server
    answering nothing more. The idle reads wait a moment after a refusal now."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = StatusServer(roots=[str(root)])

    def on_loop(call: Any) -> Any:
        async def run() -> Any:
            result = call()
            return await result if asyncio.iscoroutine(result) else result
        return asyncio.run_coroutine_threadsafe(run(), loop).result(5)

    try:
        url = URL(on_loop(lambda: server.start("127.0.0.1", 0)))
        assert server.runner is not None
        cache = server.runner.app[VIEW_CACHE]
        release = threading.Event()
        holder = asyncio.run_coroutine_threadsafe(cache.run(release.wait), loop)

        async def listed() -> Any:
            async with aiohttp.ClientSession() as session, session.get(
                    url.with_path("/api/games")) as response:
                return await response.json()

        assert on_loop(listed)["unread"] == 2  # (beside the held slot: nothing read yet)
        on_loop(lambda: setattr(cache, "max_waiting", 0))
        release.set()
        holder.result(5)
        for _ in range(10):  # the loop still runs its other work
            on_loop(lambda: asyncio.sleep(IDLE_POLL / 4))
        assert server.index.logs.counts.read_whole == 0
    finally:
        release.set()
        on_loop(server.stop)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_logs_past_the_index_bound_are_read_whole_once(tmp_path: Path) -> None:
    """Past the index's bound (``max_entries``; 200,000 in serve) a log older than those kept
    is read, not kept: its whole read was recorded nowhere, so each page that showed it asked
    for it again, the viewer read it whole again (a match log: seconds) and the list's
    ``unread`` never reached 0. Now such a read is kept apart (the last MAX_UNCHECKED): once
    read, the page asks for none of them again."""
    from adapter.serve.logindex import LogIndex

    root = tmp_path / "logs"
    sound = platform_game(root / "g00.mjlog.msgpack")
    for i in range(1, 15):
        (root / f"g{i:02d}.mjlog.msgpack").write_bytes(sound.read_bytes())
    for i in range(15):
        os.utime(root / f"g{i:02d}.mjlog.msgpack", (1_700_000_000 + i, 1_700_000_000 + i))
    index = GameIndex([str(root)], logs=LogIndex(max_entries=10))
    assert index.page()["unread"] == 15
    assert len(index.logs) < 15  # some are past the bound
    while (item := index.logs.next_unread()) is not None:
        index.read_whole(item[0], item[1])
    assert index.logs.counts.read_whole == 15
    page = index.page()
    assert page["unread"] == 0 and index.logs.next_unread() is None
    assert not any("damaged" in g for g in page["games"]) and len(page["games"]) == 15
