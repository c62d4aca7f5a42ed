"""The game list's index of our logs (adapter/serve/logindex.py): a filter reads each log's
header once per file version, not on every request; the list and the filter say what reading
every file anew says, through games still being written, removed, renamed and new; the index
stays within its bound; and a listing whose client went away reads no more headers."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import shutil
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from yarl import URL

from adapter.serve.games import GameIndex
from adapter.serve.logindex import Cancel, Cancelled, LogIndex
from adapter.serve.status import StatusServer
from adapter.serve.viewer import LIST_SCANS, VIEW_CACHE
from replay import logzip
from replay.log import Footer, GameLogWriter
from tests.log_samples import sample_hand, sample_header, write_steps
from tests.serve_helpers import until
from tests.viewer_fixtures import game_folder

QUERIES = ["", "tenhou", "ladder", "greedy", "alice", "ALICE riichi", "2026-11-21t10",
           "imports", "nobody", "live", "game"]


def own_log(path: Path, players: list[str] | None = None) -> Path:
    """A one-seat log as a platform client writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = sample_header()
    if players:
        header = dataclasses.replace(header, extra={"players": players})
    writer = GameLogWriter(path, header)
    write_steps(writer, sample_hand(0))
    writer.close(Footer({"hands": 1}, (23000, 31000, 23000, 23000)))
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("made") / "logs"
    game_folder(root)
    return root


@pytest.fixture
def root(made: Path, tmp_path: Path) -> Path:
    """Our logs (a practice game, platform logs, one named players' log), imports, a cut log
    and a junk file, a folder of its own for each test."""
    root = tmp_path / "logs"
    shutil.copytree(made, root)
    own_log(root / "ladder" / "tenhou" / "alice.mjlog.msgpack", ["Alice", "Bob", "C", "D"])
    whole = (root / "ladder" / "tenhou" / "game.mjlog.msgpack").read_bytes()
    (root / "ladder" / "tenhou" / "cut.mjlog.msgpack").write_bytes(whole[:40])
    (root / "imports" / "notes.json").write_text("no game here")
    return root


def fresh(root: Path, query: str, **kw: Any) -> dict[str, Any]:
    """What a page says read anew: an index that has read nothing yet."""
    return GameIndex([str(root)], **kw).page(query, 0, 500)


def same(index: GameIndex, root: Path, **kw: Any) -> None:
    for query in QUERIES:
        assert index.page(query, 0, 500) == fresh(root, query, **kw), query


def test_a_warm_filter_reads_no_header_and_says_what_reading_them_all_says(
        root: Path) -> None:
    index = GameIndex([str(root)])
    first = {q: index.page(q, 0, 500) for q in QUERIES}
    counts = index.logs.counts
    read = counts.headers_read
    assert read == len(list(root.rglob("*.mjlog.msgpack")))  # each log's header, once
    for query in QUERIES:
        assert index.page(query, 0, 500) == first[query] == fresh(root, query), query
    assert counts.headers_read == read  # before: every filter read every header again
    alice = first["ALICE riichi"]["games"]
    assert [g["name"] for g in alice] == ["alice.mjlog.msgpack"]
    assert alice[0]["players"] == ["Alice", "Bob", "C", "D"] and alice[0]["our_rank"] == 1
    cut = next(g for g in first[""]["games"] if g["name"] == "cut.mjlog.msgpack")
    assert cut["unreadable"] and cut["finished"] is False
    assert "notes.json" not in {g["name"] for g in first[""]["games"]}
    assert {g["name"] for g in first["nobody"]["games"]} == set()


def test_a_game_still_being_written_shows_its_result_once_it_has_one(root: Path) -> None:
    live = own_log(root / "ladder" / "tenhou" / "live.mjlog.msgpack", ["Live", "B", "C", "D"])
    whole = live.read_bytes()
    live.write_bytes(whole[:whole.rfind(b"\xa1k\xa6footer") - 1])  # its footer not yet written
    index = GameIndex([str(root)])
    (shown,) = index.page("live", 0, 50)["games"]
    assert shown["finished"] is False and "our_rank" not in shown
    assert index.page("live", 0, 50)["games"] == [shown]  # kept: no footer read again
    footers = index.logs.counts.footers_read
    with live.open("ab") as f:  # the game ends
        f.write(whole[live.stat().st_size:])
    (shown,) = index.page("live", 0, 50)["games"]
    assert shown["finished"] is True and shown["our_rank"] == 1, shown
    assert index.logs.counts.footers_read == footers + 1
    same(index, root)


def test_removed_renamed_and_new_logs(root: Path) -> None:
    index = GameIndex([str(root)])
    index.page("nobody", 0, 50)
    kept = len(index.logs)
    (root / "ladder" / "tenhou" / "game.mjlog.msgpack").unlink()  # the retention's doing
    alice = root / "ladder" / "tenhou" / "alice.mjlog.msgpack"
    alice.rename(alice.with_name("renamed.mjlog.msgpack"))
    read = index.logs.counts.headers_read
    found = index.page("alice", 0, 50)["games"]
    assert [g["name"] for g in found] == ["renamed.mjlog.msgpack"]
    assert index.logs.counts.headers_read == read + 1  # the renamed one, read under its name
    assert len(index.logs) == kept - 1 and index.logs.counts.gone == 2
    for n in range(3):
        own_log(root / "new" / f"n{n}.mjlog.msgpack", [f"New{n}", "B", "C", "D"])
    assert [g["name"] for g in index.page("new2", 0, 50)["games"]] == ["n2.mjlog.msgpack"]
    assert index.logs.counts.headers_read == read + 1 + 3  # the new ones only
    same(index, root)


def test_the_index_keeps_the_newest_logs_within_its_bound(tmp_path: Path) -> None:
    """Over the bound, the newest logs are kept and the older ones read by each filter: a
    scan of more logs than the bound does not push out what the next one needs first."""
    root = tmp_path / "logs"
    alice = own_log(root / "g00.mjlog.msgpack", ["Alice", "B", "C", "D"])  # the oldest
    sample = own_log(tmp_path / "sample.mjlog.msgpack", ["Bob", "B", "C", "D"]).read_bytes()
    for n in range(30):
        path = root / f"g{n:02}.mjlog.msgpack"
        if n:
            path.write_bytes(sample)
        os.utime(path, (1_800_000_000 + n, 1_800_000_000 + n))
    index = GameIndex([str(root)], max_files=5, logs=LogIndex(max_entries=10))
    first = index.page("alice", 0, 50)
    assert [g["name"] for g in first["games"]] == [alice.name] and first["total"] == 5
    kept = {Path(p).name for p in index.logs._entries}
    assert len(kept) <= 10 and kept == {f"g{n:02}.mjlog.msgpack"
                                        for n in range(30 - len(kept), 30)}  # the newest
    read = index.logs.counts.headers_read
    assert index.page("alice", 0, 50) == first
    assert index.logs.counts.headers_read == read + 30 - len(kept)  # the older ones, again
    assert len(index.logs) == len(kept) and index.logs.counts.dropped > 0


def test_a_set_cancel_stops_a_listing_before_its_next_file(root: Path) -> None:
    index = GameIndex([str(root)])
    cancel = Cancel()
    cancel.set()
    with pytest.raises(Cancelled):
        index.page("nobody", 0, 50, cancel)
    assert index.logs.counts.headers_read == 0 and index.logs.counts.cancelled == 1


def test_a_cancel_set_mid_scan_stops_it_at_the_next_file(tmp_path: Path) -> None:
    """The scan asks its Cancel before each file, not only at its start: here it is held at
    its first log (the index's lock, as a second scan updating the index would hold it), the
    Cancel set meanwhile, and the scan ends after that one file's header."""
    root = tmp_path / "logs"
    sample = own_log(tmp_path / "sample.mjlog.msgpack").read_bytes()
    root.mkdir()
    for n in range(30):
        (root / f"g{n:02}.mjlog.msgpack").write_bytes(sample)
    index, cancel = GameIndex([str(root)]), Cancel()
    ended: list[BaseException] = []

    def scan() -> None:
        try:
            index.listing("nobody", cancel)  # the filter's walk
        except Cancelled as exc:
            ended.append(exc)

    def held() -> bool:  # the scan's thread is in LogIndex.summary, waiting for the lock
        frame = sys._current_frames().get(thread.ident or 0)
        while frame is not None and frame.f_code is not LogIndex.summary.__code__:
            frame = frame.f_back
        return frame is not None

    with index.logs._lock:
        thread = threading.Thread(target=scan)
        thread.start()
        deadline = time.monotonic() + 30
        while not held():
            assert time.monotonic() < deadline and thread.is_alive(), "the scan was not held"
            time.sleep(0.005)
        cancel.set()
    thread.join()
    assert len(ended) == 1
    assert index.logs.counts.headers_read == 1  # the one it was on; without the ask: all 30


async def test_a_listing_whose_client_went_away_reads_no_header(root: Path) -> None:
    """A filter whose client closed the tab (or whose page sent the next filter) went on
    reading every header in the pool, for nobody, ahead of the requests after it: aiohttp
    (as serve and view run it) does not cancel a handler whose client went away. Here the
    pool's two slots are held, the filter asked and queued, its client gone before it runs:
    it reads no header, and the next request is answered."""
    server = StatusServer(roots=[str(root)])
    url = URL(await server.start("127.0.0.1", 0))
    assert server.runner is not None
    app = server.runner.app
    cache, index = app[VIEW_CACHE], server.index
    release = threading.Event()
    holders = [asyncio.ensure_future(cache.run(release.wait)) for _ in range(2)]
    try:
        await until(lambda: cache.building == 2)
        asked = url.with_path("/api/games").with_query(q="nobody")
        _reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(f"GET {asked.path_qs} HTTP/1.1\r\nHost: {url.host}\r\n\r\n".encode())
        await writer.drain()
        await until(lambda: cache.waiting == 1)
        writer.close()  # the tab closed
        await writer.wait_closed()
        try:
            await until(lambda: any(c.is_set() for c in app[LIST_SCANS]))
        except AssertionError:
            pytest.fail("the server did not see the listing's client gone")
        release.set()
        await asyncio.gather(*holders)
        await until(lambda: not app[LIST_SCANS])
        assert index.logs.counts.cancelled == 1
        assert index.logs.counts.headers_read == 0  # before: every log's header
        async with aiohttp.ClientSession() as session, session.get(
                url.with_path("/api/games").with_query(q="alice")) as response:
            page = await response.json()
        assert [g["name"] for g in page["games"]] == ["alice.mjlog.msgpack"]
    finally:
        release.set()
        await server.stop()


def test_a_compressed_logs_header_read_closes_its_file(root: Path) -> None:
    """A filter reads the headers of logs gzipped in place through logzip.open_stream, whose
    GzipFile left the file under it open at the end of its ``with`` (a GzipFile does not
    close a fileobj it is given): one file for the garbage collector, and a ResourceWarning,
    per compressed log a filter read."""
    logs = sorted(root.rglob("*.mjlog.msgpack"))
    for log in logs:
        logzip.compress(log)
    index = GameIndex([str(root)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = index.page("nobody", 0, 500)
        gc.collect()
    assert index.logs.counts.headers_read >= len(logs) > 0
    assert first["matched"] == 0
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
    gz = next(root.rglob("*" + logzip.GZ))
    with logzip.open_stream(gz) as stream:
        assert stream.read(1)
        fd = stream.fileno()
    with pytest.raises(OSError):
        os.fstat(fd)  # closed with the stream
