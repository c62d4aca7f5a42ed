"""The viewer's build cache: a hand's JSON is built once per version of the game's file and
served from the cache after that, a changed file is built again, identical concurrent
requests share one build, builds run a bounded number at a time, and the LRU stays bounded.
Through the real routes (aiohttp's test server) where the routes are what is checked."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from adapter.serve.status import StatusServer
from adapter.serve.viewcache import BuildCache
from adapter.serve.viewer import VIEW_CACHE
from tests.serve_helpers import until
from tests.viewer_fixtures import practice_game


async def test_a_hand_is_built_once_per_version_of_its_file(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    path = practice_game(logs)
    game = "~".join(["0", *path.relative_to(logs).parts])
    client = TestClient(TestServer(StatusServer(roots=[str(logs)]).app()))
    await client.start_server()
    cache = client.server.app[VIEW_CACHE]
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
    client = TestClient(TestServer(StatusServer(roots=[str(logs)]).app()))
    await client.start_server()
    cache = client.server.app[VIEW_CACHE]
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
