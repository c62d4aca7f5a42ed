"""The viewer's build cache: a hand's JSON is built once per version of the game's file and
served from the cache after that, a changed file is built again, identical concurrent
requests share one build, builds run a bounded number at a time, and the LRU stays bounded.
Through the real routes (aiohttp's test server) where the routes are what is checked."""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from adapter.bench.view import repeated
from adapter.serve.status import StatusServer
from adapter.serve.viewcache import Abandoned, BuildCache, Busy, serving
from adapter.serve.viewer import VIEW_CACHE
from tests.serve_helpers import until
from tests.viewer_fixtures import practice_game


async def test_a_hand_is_built_once_per_version_of_its_file(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    path = practice_game(logs)
    game = "~".join(["0", *path.relative_to(logs).parts])
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    try:
        first = await client.get(f"/api/games/{game}/hands/0")
        assert first.status == 200 and first.headers["Content-Encoding"] == "gzip"
        body = await first.json()
        assert body["label"] == "E1-0" and body["steps"]
        assert cache.builds["hand"] == 1 and cache.builds["timeline"] == 1
        hits = cache.hits

        again = await client.get(f"/api/games/{game}/hands/0")
        assert await again.json() == body
        # served from the cache: the parsed game and the hand's gzipped JSON both kept
        assert cache.builds == {"hand": 1, "timeline": 1} and cache.hits == hits + 2
        assert (await client.get(f"/api/games/{game}/hands/99")).status == 404

        # a client that does not take gzip gets the same JSON, unpacked
        plain = await client.get(f"/api/games/{game}/hands/0", auto_decompress=False,
                                 headers={"Accept-Encoding": "identity"})
        assert "Content-Encoding" not in plain.headers
        assert json.loads(await plain.read()) == body
        assert cache.builds["hand"] == 1

        # the file changes (a log still being written): built again
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        await client.get(f"/api/games/{game}/hands/0")
        assert cache.builds["hand"] == 2 and cache.builds["timeline"] == 2

        # many identical requests at once for a hand not built yet: one build
        answers = await asyncio.gather(*(client.get(f"/api/games/{game}/hands/1")
                                         for _ in range(20)))
        bodies = [await a.read() for a in answers]
        assert {a.status for a in answers} == {200} and len(set(bodies)) == 1
        assert cache.builds["hand"] == 3 and cache.builds["timeline"] == 2
    finally:
        await client.close()


async def test_identical_concurrent_builds_share_one() -> None:
    cache = BuildCache(concurrency=2)
    release = threading.Event()
    calls: list[int] = []

    def build() -> bytes:
        calls.append(1)
        release.wait(10)
        return gzip.compress(b"{}")

    try:
        callers = [asyncio.ensure_future(cache.get("k", build, "hand")) for _ in range(10)]
        await until(lambda: cache.building == 1)
        callers[0].cancel()  # a caller that goes away leaves the build to the others
        release.set()
        answers = await asyncio.gather(*callers[1:])
        assert answers == [gzip.compress(b"{}")] * 9
        assert len(calls) == 1 and cache.builds["hand"] == 1
        assert await cache.get("k", build, "hand") == answers[0] and len(calls) == 1
    finally:
        release.set()
        cache.close()


async def test_builds_run_a_bounded_number_at_a_time() -> None:
    cache = BuildCache(concurrency=2)
    release = threading.Event()

    def build(n: int) -> Callable[[], int]:
        def run() -> int:
            release.wait(10)
            return n
        return run

    try:
        callers = [asyncio.ensure_future(cache.get(n, build(n), "hand")) for n in range(5)]
        await until(lambda: cache.building == 2 and cache.waiting == 3)
        release.set()
        assert await asyncio.gather(*callers) == [0, 1, 2, 3, 4]
        assert cache.building == 0 and cache.waiting == 0 and cache.builds["hand"] == 5
    finally:
        release.set()
        cache.close()


async def test_the_cache_is_bounded_and_keeps_failures() -> None:
    cache = BuildCache(max_entries=2, max_bytes=2000)
    built: list[str] = []

    def make(key: str, size: int) -> Callable[[], bytes]:
        def run() -> bytes:
            built.append(key)
            return b"x" * size
        return run

    def refuse() -> bytes:
        built.append("bad")
        raise ValueError("no reader accepts this file")

    try:
        for key in ("a", "b", "c"):
            await cache.get(key, make(key, 10), "hand")
        assert len(cache) == 2
        await cache.get("a", make("a", 10), "hand")  # the oldest was dropped: built again
        assert built == ["a", "b", "c", "a"]
        await cache.get("big", make("big", 1995), "hand")  # over max_bytes: the rest go
        assert len(cache) == 1
        for _ in range(2):
            try:
                await cache.get("bad", refuse, "hand")
            except ValueError as exc:
                assert "no reader" in str(exc)
            else:
                raise AssertionError("the failure was not raised")
        assert built.count("bad") == 1
    finally:
        cache.close()


async def test_a_build_that_raises_stop_iteration_fails_rather_than_hangs() -> None:
    """asyncio cannot set a StopIteration on a future: a build that let one out left the
    request awaiting forever, its build slot held and the same key's later requests queued
    behind it. It is a RuntimeError now (a 500, logged), and the slot is free again."""
    cache = BuildCache(concurrency=1)

    def build() -> bytes:
        return next(iter([]))  # a reader's next() on an exhausted iterator

    try:
        for _ in range(2):  # not kept: the same key fails again, it does not hang
            try:
                await asyncio.wait_for(cache.get("k", build, "hand"), 5)
            except RuntimeError as exc:
                assert "StopIteration" in str(exc)
            else:
                raise AssertionError("the build's StopIteration was swallowed")
        assert cache.building == 0
        assert await asyncio.wait_for(cache.run(lambda: 7), 5) == 7  # the slot is free
    finally:
        cache.close()


async def test_a_build_in_parts_gives_its_slot_up_between_parts() -> None:
    """One slot: a build in parts (the commentary, a hand of one seat a part) and a request
    that came while its first part ran. The request goes before the second part, where it
    waited for the whole build (a 1,600-hand game's commentary: some 35 s)."""
    cache = BuildCache(concurrency=1)
    other_ran = threading.Event()
    seen: list[object] = []

    def parts() -> Any:
        for _ in range(1000):  # until the other request is queued for the slot
            if cache.waiting >= 1:
                break
            time.sleep(0.01)
        yield "first"
        seen.append(other_ran.wait(10))  # False: the other request still waits
        yield "second"

    def other() -> str:
        other_ran.set()
        return "other"

    async def long() -> list[Any]:
        return await cache.run_in_parts(parts())

    built = asyncio.ensure_future(cache.get_built("long", long, "commentary"))
    await until(lambda: cache.building == 1)
    assert await cache.get("other", other, "hand") == "other"
    assert await built == ["first", "second"] and seen == [True]
    cache.close()


async def test_the_commentary_lets_other_requests_through(tmp_path: Path) -> None:
    """Two long commentaries hold both build slots (each a game of three played through);
    a third game's outline asked meanwhile was served only once one of them ended. It is
    served between their hands now, while both are still being worked out."""
    from adapter.bench.view import repeated

    logs = tmp_path / "logs"
    source = practice_game(tmp_path / "source").read_bytes()
    (logs / "imports").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (logs / "imports" / f"{name}.mjlog.msgpack").write_bytes(repeated(source, 3))
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    try:
        for name in ("a", "b"):  # opened first, as the page does
            assert (await client.get(f"/api/games/0~imports~{name}.mjlog.msgpack")).status \
                == 200
        long = [asyncio.ensure_future(client.get(
            f"/api/games/0~imports~{name}.mjlog.msgpack/commentary")) for name in ("a", "b")]
        await until(lambda: cache.builds["commentary"] == 2)
        outline = await client.get("/api/games/0~imports~c.mjlog.msgpack")
        assert outline.status == 200
        assert not any(task.done() for task in long), "the outline waited for a commentary"
        for task in long:
            assert (await task).status == 200
    finally:
        await client.close()


async def _held_slots(cache: BuildCache, release: threading.Event) -> list[asyncio.Task[Any]]:
    """Both build slots taken by work that waits for ``release``: what a viewer's builds
    queue behind (a long commentary, say), made deterministic."""
    held = [asyncio.ensure_future(cache.run(lambda: release.wait(30))) for _ in range(2)]
    await until(lambda: cache.building == 2)
    return held


def _copies(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    """``count`` copies of one practice game under their own names: distinct games, each its
    own builds."""
    logs = tmp_path / "logs"
    path = practice_game(logs)
    games = []
    for i in range(count):
        copy = path.with_name(f"{i:06d}-copy-{i}{''.join(path.suffixes)}")
        copy.write_bytes(path.read_bytes())
        games.append("~".join(["0", *copy.relative_to(logs).parts]))
    return logs, games


async def test_builds_whose_clients_hung_up_before_a_slot_are_not_run(tmp_path: Path) -> None:
    """A client asks for the commentary of many games and hangs up: the builds it queued
    leave the queue. They stayed and all ran, one after the other, for nobody: 40 such
    requests against `mjbot serve` kept both slots busy for 52 s, a viewer's next request
    waited all that time, and the process burned 23 s of CPU beside the games in play."""
    logs, games = _copies(tmp_path, 6)
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    cache.client_waiting = 8  # the five from one client all queued (its share is 4 queued)
    release = threading.Event()
    try:
        held = await _held_slots(cache, release)
        url = client.make_url("/")
        sockets = []
        for game in games[:5]:
            _reader, writer = await asyncio.open_connection(url.host, url.port)
            writer.write(f"GET /api/games/{game}/commentary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"\r\n".encode())
            sockets.append(writer)
        await until(lambda: cache.waiting == 5)  # each game's parse queued
        for writer in sockets:
            writer.close()
        await until(lambda: cache.waiting == 0)  # gone with their clients
        release.set()
        await asyncio.gather(*held)
        answer = await client.get(f"/api/games/{games[5]}/hands/0")
        assert answer.status == 200
        assert cache.builds == {"timeline": 1, "hand": 1} and cache.abandoned == 5
    finally:
        release.set()
        await client.close()


async def test_past_the_queue_bound_a_build_is_a_503_at_once(tmp_path: Path) -> None:
    """At most ``max_waiting`` runs wait for a slot; a request for a new build past that is
    answered 503 with Retry-After at once: each waiting request holds its connection busy,
    and a client that kept a few hundred of them waiting left the server no connection for
    /health."""
    logs, games = _copies(tmp_path, 4)
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    cache.max_waiting = 2
    release = threading.Event()
    try:
        held = await _held_slots(cache, release)
        queued = [asyncio.ensure_future(client.get(f"/api/games/{game}")) for game in games[:2]]
        await until(lambda: cache.waiting == 2)
        refused = await client.get(f"/api/games/{games[2]}/hands/0")
        assert refused.status == 503 and refused.headers["Retry-After"] == "1"
        assert "busy" in await refused.text() and cache.refused == 1
        release.set()
        await asyncio.gather(*held)
        assert [answer.status for answer in await asyncio.gather(*queued)] == [200, 200]
        # the refusal was not kept: asked again with a free slot, the game opens
        assert (await client.get(f"/api/games/{games[2]}/hands/0")).status == 200
    finally:
        release.set()
        await client.close()


async def test_a_build_in_parts_is_admitted_once_and_counted_once() -> None:
    """The queue bound refuses new builds, not the next part of one that has begun: a
    commentary (a hand of one seat a part) refused half-way lost all the work done, and its
    request got a 503 after waiting its turn. Counted in ``builds`` once, not once a part."""
    cache = BuildCache(concurrency=1, max_waiting=1)
    first_ran, go_on = threading.Event(), threading.Event()

    def parts() -> Any:
        first_ran.set()
        go_on.wait(10)
        yield "first"
        yield "second"
        yield "third"

    async def long() -> list[Any]:
        return await cache.run_in_parts(parts())

    try:
        built = asyncio.ensure_future(cache.get_built("long", long, "commentary"))
        await until(first_ran.is_set)
        cache.max_waiting = 0  # from now on every new build is refused
        try:
            await cache.get("new", lambda: "new", "hand")
        except Busy:
            pass
        else:
            raise AssertionError("a new build past the bound was not refused")
        go_on.set()
        assert await built == ["first", "second", "third"]
        assert cache.builds == {"commentary": 1} and cache.refused == 1
    finally:
        go_on.set()
        cache.close()


async def test_a_commentary_its_clients_hung_up_on_is_given_up(tmp_path: Path) -> None:
    """A commentary is the viewer's long build (50 s for a 480-hand file on a 2-core
    machine): a client that asked for two and hung up held both build slots for all that
    time, and could do it again with the next files. It ends at its next part or move once
    no request waits for it; one asked for again is built afresh."""
    logs = tmp_path / "logs"
    path = practice_game(logs)
    path.write_bytes(repeated(path.read_bytes(), 10))  # a match log of ten games
    game = "~".join(["0", *path.relative_to(logs).parts])
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    try:
        url = client.make_url("/")
        _reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(f"GET /api/games/{game}/commentary HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"\r\n".encode())
        await until(lambda: cache.builds["commentary"] == 1 and cache.building == 1, 60)
        writer.close()
        await until(lambda: cache.building == 0 and cache.abandoned == 1, 60)
        assert len(cache) == 0  # nothing kept: not a result
        assert gc.get_freeze_count() == 0  # its read's objects back with the collector
        outline = await client.get(f"/api/games/{game}")  # the slot is free for the others
        assert outline.status == 200 and cache.builds["outline"] == 1
    finally:
        await client.close()


async def test_a_part_is_given_up_at_its_next_check_once_nobody_waits() -> None:
    """One part can be long (a hand of one seat of a long game, every move ranked): the
    build's progress callback (check) ends it at its next move once no request awaits it,
    and the slot is free; the build is not kept."""
    cache = BuildCache(concurrency=1)
    checks = threading.Event()
    outcome: list[str] = []

    def parts() -> Any:
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:  # a long part, asking at each "move"
                cache.check()
                checks.set()
                time.sleep(0.01)
        except Abandoned:
            outcome.append("given up")
            raise
        outcome.append("ran on")
        yield "whole"

    async def long() -> list[Any]:
        return await cache.run_in_parts(parts())

    try:
        caller = asyncio.ensure_future(cache.get_built("long", long, "commentary"))
        await until(checks.is_set)
        caller.cancel()
        await until(lambda: cache.building == 0 and cache.abandoned == 1, 60)
        assert outcome == ["given up"] and len(cache) == 0
        assert await cache.run(lambda: 7) == 7  # the slot is free
    finally:
        cache.close()


async def test_a_request_that_comes_as_its_build_is_given_up_gets_a_fresh_one() -> None:
    """A request for a commentary that its earlier requester had just hung up on joined the
    build as it was being given up: it must get a build of its own, not the given-up one's
    Abandoned (a 500 had it gone past the route, a 503 for nothing at best)."""
    cache = BuildCache(concurrency=1)
    gone, joined, running = threading.Event(), threading.Event(), threading.Event()
    made: list[str] = []

    def parts(name: str) -> Any:
        made.append(name)
        if name == "first":
            running.set()
            try:
                while True:
                    cache.check()
                    time.sleep(0.01)
            except Abandoned:
                gone.set()
                joined.wait(10)  # the second request joins meanwhile
                raise
        yield name

    def build(name: str) -> Callable[[], Any]:
        async def run() -> list[Any]:
            return await cache.run_in_parts(parts(name))
        return run

    try:
        first = asyncio.ensure_future(cache.get_built("k", build("first"), "commentary"))
        await until(running.is_set)
        first.cancel()
        await until(gone.is_set)
        second = asyncio.ensure_future(cache.get_built("k", build("second"), "commentary"))
        for _ in range(5):  # it runs up to its wait on the build being given up
            await asyncio.sleep(0)
        joined.set()
        assert await second == ["second"]
        assert made == ["first", "second"] and cache.abandoned == 1
        assert cache.builds == {"commentary": 2}
    finally:
        joined.set()
        cache.close()


async def test_a_run_whose_request_went_away_keeps_its_slot_until_its_thread_ends() -> None:
    """A route is cancelled when its client hangs up (viewer.py's _while_connected): an
    export asked for and hung up on went on in the pool thread (20 s for a 300-game match
    log), but its slot was given back at once: ``building`` read 0 with both threads busy,
    and the next requests passed the semaphore only to wait in the pool's own queue behind
    work nobody wanted (a hand 42 s), the slot bound and its fair order no longer holding.
    The slot is now the call's until its thread ends."""
    cache = BuildCache(concurrency=1)
    ran, release = threading.Event(), threading.Event()

    def export() -> str:
        ran.set()
        release.wait(30)
        return "export"

    try:
        gone = asyncio.ensure_future(cache.run(export))
        await until(ran.is_set)
        gone.cancel()  # the route cancelled: its client hung up
        await asyncio.gather(gone, return_exceptions=True)
        assert cache.building == 1  # the thread still runs the export
        after = asyncio.ensure_future(cache.run(lambda: "next"))
        await until(lambda: cache.waiting == 1)  # waits for the slot, counted as waiting
        release.set()
        assert await after == "next"
        assert cache.building == 0 and cache.waiting == 0
    finally:
        release.set()
        cache.close()


async def _hung_up_on(client: TestClient[Any, Any], cache: BuildCache, path: str,
                      kind: str) -> None:
    """A raw client asks for ``path`` and hangs up once its ``kind`` build holds a slot;
    returns once that slot is free again and the build has ended (its slot is freed as its
    thread ends, a few turns of the loop before the build's own end is counted)."""
    url = client.make_url("/")
    _reader, writer = await asyncio.open_connection(url.host, url.port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await until(lambda: cache.builds[kind] == 1 and cache.building == 1, 60)
    writer.close()
    await until(lambda: cache.building == 0 and not cache._pending, 120)


def _match_log(tmp_path: Path, games: int) -> tuple[Path, str]:
    """A practice game written ``games`` times into one log, as a match log holds them."""
    logs = tmp_path / "logs"
    path = practice_game(logs)
    path.write_bytes(repeated(path.read_bytes(), games))
    return logs, "~".join(["0", *path.relative_to(logs).parts])


async def test_an_export_its_client_hung_up_on_is_given_up(tmp_path: Path) -> None:
    """An export reads the whole file and writes it out, all in one run (7 s for a 300-game
    match log's tenhou6): a client that asked for two and hung up held both build slots for
    all that time (the next request, a small game's outline, waited 12.6 s against `mjbot
    view`). The read now asks the cache between hands (replay/progress.py) and ends there
    once nobody waits: the build counted abandoned, not finished for nobody."""
    logs, game = _match_log(tmp_path, 60)
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    try:
        await _hung_up_on(client, cache, f"/games/{game}/export/tenhou6", "export")
        assert cache.abandoned == 1 and len(cache) == 0
        # asked again and waited for: read afresh, whole (an export is not kept)
        again = await client.get(f"/games/{game}/export/mjai")
        assert again.status == 200 and (await again.text()).count('"end_kyoku"') >= 60
        assert cache.builds["export"] == 2 and cache.abandoned == 1 and len(cache) == 0
    finally:
        await client.close()


async def test_a_game_parse_its_client_hung_up_on_is_given_up(tmp_path: Path) -> None:
    """Opening a long game parses the whole file in one run (its outline's first step): a
    client that opened one and hung up held a slot until the parse ended, the parsed game
    then kept for nobody. The parse ends at its next hand once nobody waits for it; opened
    again, the game is parsed afresh."""
    logs, game = _match_log(tmp_path, 60)
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    try:
        await _hung_up_on(client, cache, f"/api/games/{game}", "timeline")
        assert cache.abandoned == 1 and cache.counters()["cache"]["games"] == 0
        opened = await client.get(f"/api/games/{game}")
        assert opened.status == 200 and len((await opened.json())["hands"]) >= 60
        assert cache.builds["timeline"] == 2 and cache.counters()["cache"]["games"] == 1
    finally:
        await client.close()


async def test_an_export_given_up_leaves_nothing_for_the_collector(tmp_path: Path) -> None:
    """A given-up read's objects die as it ends: raised with its traceback, the Abandoned (or
    Stopping) of an export whose client hung up held every frame of the read, and with them
    all it had read, in asyncio's reference cycles, until the next full collection walked
    and freed them with the loop held (a 300-game log's export: 936,161 objects, 1.7 s).
    Here the collector is off throughout, so only reference counting frees anything; one
    collection at the end counts what was left for it."""
    logs = tmp_path / "logs"
    path = practice_game(logs)
    path.write_bytes(repeated(path.read_bytes(), 100))
    game = "~".join(["0", *path.relative_to(logs).parts])
    app = StatusServer(roots=[str(logs)]).app()
    client = TestClient(TestServer(app))
    await client.start_server()
    cache = app[VIEW_CACHE]
    gc.collect()
    gc.disable()
    try:
        url = client.make_url("/")
        _reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(f"GET /games/{game}/export/mjai HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"\r\n".encode())
        # well into the read: the collector off, its count grows with what is made
        await until(lambda: cache.building == 1 and gc.get_count()[0] > 50_000, 60)
        writer.close()
        await until(lambda: cache.building == 0 and cache.abandoned == 1, 60)
        left = gc.collect()
    finally:
        gc.enable()
        await client.close()
    assert left < 5_000, left


async def test_a_freed_slot_goes_to_the_waiting_client_with_fewest_running() -> None:
    """The slots are shared out work-conserving: a client alone takes both; once others wait,
    each slot that frees goes to the waiting client with the fewest builds running, in turn
    among equals, and a run given up while it waits leaves no slot held. With one slot a
    client, a lone viewer's second build waited beside a free slot; with the pool's plain
    queue, another client waited behind every run queued before it."""
    cache = BuildCache(concurrency=2)
    started: list[str] = []
    gates: dict[str, threading.Event] = {}

    def run(client: str, name: str) -> asyncio.Future[Any]:
        gates[name] = threading.Event()

        def call() -> None:
            started.append(name)
            gates[name].wait(30)

        with serving(client):
            return asyncio.ensure_future(cache.run(call))

    try:
        runs = [run("A", "a1"), run("A", "a2")]
        await until(lambda: cache.building == 2)  # alone: both slots at once
        runs += [run("A", "a3"), run("B", "b1"), run("C", "c1"), run("B", "b2")]
        gone = run("C", "c2")
        await until(lambda: cache.waiting == 5)
        gone.cancel()  # its client went away while it waited
        await until(lambda: cache.waiting == 4)
        for name, count in [("a1", 3), ("a2", 4), ("b1", 5), ("a3", 6)]:
            gates[name].set()  # a slot frees: the next run in turn starts
            await until(lambda: len(started) == count)  # noqa: B023 (awaited here)
        assert started == ["a1", "a2", "b1", "a3", "c1", "b2"]
        for gate in gates.values():
            gate.set()
        await asyncio.gather(*runs)
        # nothing held: two new runs, both at once
        again = [run("D", "d1"), run("D", "d2")]
        await until(lambda: cache.building == 2)
        gates["d1"].set()
        gates["d2"].set()
        await asyncio.gather(*again)
    finally:
        for gate in gates.values():
            gate.set()
        cache.close()


async def test_idle_work_gives_way_at_its_next_check_once_a_viewer_run_comes() -> None:
    """Work nobody waits for (the game list's whole reads of listed logs, run_idle) starts
    only once no run holds or waits for a slot, and ends at its next check (GaveWay) once a
    viewer's run takes the other slot, where it went on beside it to its end."""
    from adapter.serve.viewcache import GaveWay
    from replay import progress

    cache = BuildCache(concurrency=2)
    started, checks = threading.Event(), list[int]()

    def idle_work() -> None:
        started.set()
        while len(checks) < 500:  # (a read's checks, between hands)
            progress.check()
            checks.append(1)
            time.sleep(0.01)

    release = threading.Event()
    holder = asyncio.ensure_future(cache.run(release.wait))
    await until(lambda: cache.building == 1)
    work = asyncio.ensure_future(cache.run_idle(idle_work))
    await asyncio.sleep(0.5)
    assert not started.is_set()  # a run holds a slot: not idle
    release.set()
    await holder
    await until(started.is_set)
    viewer = threading.Event()
    asked = asyncio.ensure_future(cache.run(viewer.wait))  # a viewer's build, held running
    try:
        await work
        raise AssertionError("the idle work ran to its end beside a viewer's run")
    except GaveWay:
        pass
    finally:
        viewer.set()
    await asked
    assert len(checks) < 500
    cache.close()
