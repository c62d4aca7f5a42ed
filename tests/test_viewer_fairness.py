"""Each client gets its share of the viewer's builds (adapter/serve/viewcache.py): every free
slot while nobody else waits, the next slot that frees once another client waits, and a few
runs queued. A client holding the token could fill both slots and the queue of 32 (here:
eight exports of long logs at once), and another viewer's request for a short game waited
behind all of them. Real HTTP clients on loopback, told apart by their source
address (127.0.0.1 and 127.0.0.2), or behind a trusted proxy by X-Forwarded-For."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapter.bench.view import repeated
from adapter.serve.metrics import Metrics
from adapter.serve.status import StatusServer
from adapter.serve.viewcache import CLIENT_WAITING, CONCURRENCY
from adapter.serve.viewer import VIEW_CACHE
from tests.serve_helpers import until
from tests.test_serve_metrics import series
from tests.viewer_fixtures import practice_game

LONG_LOGS = 4  # each exported twice (tenhou6, mjai): eight builds of their own
GREEDY = 2 * LONG_LOGS
GUARD = 120.0  # real seconds a stopped server's builds are waited for (never a bound tested)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short game, and LONG_LOGS long ones (20 copies of a game: an export takes a while)."""
    root = tmp_path_factory.mktemp("fair") / "logs"
    game = practice_game(root / "made")
    shutil.copy(game, root / "short.mjlog.msgpack")
    long = repeated(game.read_bytes(), 20)
    for n in range(LONG_LOGS):
        (root / f"long{n}.mjlog.msgpack").write_bytes(long)
    shutil.rmtree(root / "made")
    return root


def _stopped_servers_builds_ended() -> list[str]:
    """Wait till the build threads of every stopped server have ended (its pool's threads,
    ``viewer-build_N``, end with the build under way, given up at its next hand), and name
    those still running after GUARD seconds. A stopped server's build goes on in its thread
    for a moment, with the collector paused while it reads (replay/gcpause.py): the next test
    in the process began with the collector off, as this morning's suite met it (the pause
    ended with the read)."""
    give_up = time.monotonic() + GUARD
    for thread in threading.enumerate():
        if thread.name.startswith("viewer-build"):
            thread.join(max(0.0, give_up - time.monotonic()))
    return [t.name for t in threading.enumerate()
            if t.name.startswith("viewer-build") and t.is_alive()]


def _game(name: str) -> str:
    return urllib.parse.quote(f"0~{name}.mjlog.msgpack")


async def _status(session: aiohttp.ClientSession, url: str,
                  headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    async with session.get(url, headers=headers) as response:
        await response.read()
        return response.status, dict(response.headers)


async def _greedy_and_other(logs: Path, trust_forwarded_for: bool,
                            greedy_headers: list[dict[str, str]],
                            other_headers: dict[str, str], other_source: str) -> dict[str, Any]:
    """The greedy client's GREEDY exports at once, then (once they are all admitted or
    refused) the other client's outline of the short game: what each got, and how many of
    the greedy client's admitted exports were still unanswered when the other's came (those
    are then dropped: the greedy client hangs up)."""
    metrics = Metrics()  # what /metrics serves: the viewer's counters, read when scraped
    server = StatusServer(roots=[str(logs)], metrics=metrics,
                          trust_forwarded_for=trust_forwarded_for)
    url = await server.start("127.0.0.1", 0)
    assert server.runner is not None
    cache = server.runner.app[VIEW_CACHE]
    greedy = aiohttp.ClientSession(connector=aiohttp.TCPConnector(
        local_addr=("127.0.0.2", 0), limit=0))
    other = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(other_source, 0)))
    try:
        exports = [f"{url}games/{_game(f'long{n}')}/export/{fmt}"
                   for n in range(LONG_LOGS) for fmt in ("tenhou6", "mjai")]
        tasks = [asyncio.ensure_future(_status(greedy, u, h))
                 for u, h in zip(exports, greedy_headers, strict=True)]
        await until(lambda: cache.building + cache.waiting + cache.refused_client
                    + sum(t.done() for t in tasks) >= GREEDY, timeout=60)
        status, _ = await _status(other, f"{url}api/games/{_game('short')}", other_headers)
        unanswered = sum(not t.done() for t in tasks)
        results = [t.result() for t in tasks if t.done()]
        for task in tasks:  # the rest hung up: given up at their next hand
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return {"other": status, "greedy": results,
                "unanswered": unanswered, "counters": cache.counters(),
                "metrics": series(metrics.exposition())}
    finally:
        await greedy.close()
        await other.close()
        await server.stop()
        # the greedy client's dropped exports: nothing of theirs still reads in the next test
        await asyncio.to_thread(_stopped_servers_builds_ended)


def _check_fair(seen: dict[str, Any]) -> None:
    share = CONCURRENCY + CLIENT_WAITING  # alone at first: both slots, and 4 queued
    refused = [headers for status, headers in seen["greedy"] if status == 429]
    assert len(refused) == GREEDY - share, seen["greedy"]
    assert {s for s, _ in seen["greedy"]} <= {200, 429}
    assert all(h.get("Retry-After") == "1" for h in refused)
    assert seen["counters"]["refused_client"] == GREEDY - share
    assert seen["metrics"][("mjbot_viewer_refused_client_total", ())] == GREEDY - share
    assert seen["counters"]["refused"] == 0
    # the other client's short game was answered while the greedy client's exports still
    # waited: it had the first slot that freed (before the shares: both slots and the queue
    # were the greedy client's, and the short game came after all eight exports)
    assert seen["other"] == 200
    assert seen["unanswered"] >= CLIENT_WAITING - 1, seen


async def test_a_client_gets_its_turn_and_a_few_queued(logs: Path) -> None:
    """Both from loopback, told apart by their source address."""
    seen = await _greedy_and_other(logs, False, [{}] * GREEDY, {}, "127.0.0.1")
    _check_fair(seen)


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_share(
        logs: Path) -> None:
    """One peer (the proxy, here 127.0.0.2 for both), two browsers by X-Forwarded-For: the
    proxy's own value is the last one, what a client wrote before it is not believed."""
    greedy = [{"X-Forwarded-For": f"10.9.9.{n}, 10.0.0.1"} for n in range(GREEDY)]
    seen = await _greedy_and_other(logs, True, greedy,
                                   {"X-Forwarded-For": "10.0.0.2"}, "127.0.0.2")
    _check_fair(seen)


async def test_an_untrusted_forwarded_header_does_not_buy_more_shares(logs: Path) -> None:
    """Without trust_forwarded_for, a client that writes a new X-Forwarded-For on each request
    is still one client: its peer address."""
    greedy = [{"X-Forwarded-For": f"10.0.0.{n}"} for n in range(GREEDY)]
    seen = await _greedy_and_other(logs, False, greedy, {}, "127.0.0.1")
    _check_fair(seen)


async def test_overlapping_commentaries_some_dropped_leave_nothing_frozen(logs: Path) -> None:
    """The commentary freezes the process's objects out of the collector's walks while it
    runs (replay/gcpause.py): in a long-running serve every freeze must end, or what was
    frozen is never collected. Commentaries of three clients overlapping (each waits for its
    turn at a slot while others run), some dropped after a moment, others read to the
    end: once every build has ended, nothing is frozen and the collector is on."""
    import gc

    # the premise: no read of an earlier test's server (this file's or another's in this
    # process) still has the collector paused
    assert await asyncio.to_thread(_stopped_servers_builds_ended) == []
    server = StatusServer(roots=[str(logs)])
    url = await server.start("127.0.0.1", 0)
    assert server.runner is not None
    cache = server.runner.app[VIEW_CACHE]
    frozen_seen = []

    async def one(n: int) -> None:
        connector = aiohttp.TCPConnector(local_addr=(f"127.0.0.{2 + n % 3}", 0))
        async with aiohttp.ClientSession(connector=connector) as session:
            # a long game's dropped after a moment, the short game's read to the end
            game, wait = ((_game(f"long{n % LONG_LOGS}"), (0.3, 1.0)[n % 2]) if n % 3
                          else (_game("short"), 120.0))
            try:
                async with asyncio.timeout(wait):
                    await _status(session, f"{url}api/games/{game}/commentary")
            except TimeoutError:
                pass  # dropped: the build is given up at its next part or move

    async def watch() -> None:
        while True:
            frozen_seen.append(gc.get_freeze_count())
            await asyncio.sleep(0.05)

    watching = asyncio.ensure_future(watch())
    try:
        assert gc.isenabled() and gc.get_freeze_count() == 0
        await asyncio.gather(*(one(n) for n in range(6)))
        await until(lambda: cache.building == cache.waiting == 0, 120)
    finally:
        watching.cancel()
        await server.stop()
    assert max(frozen_seen) > 0  # (a freeze was on while some ran)
    assert gc.isenabled() and gc.get_freeze_count() == 0


async def test_a_client_alone_uses_every_free_slot(logs: Path) -> None:
    """Fairness costs nothing while nobody else waits: one viewer (the common case, one person
    on loopback running `mjbot view`) asking for two long logs' exports at once has both built
    at once. With one slot a client, its second waited for its first beside a free slot (a
    commentary's parts and a hand's load took turns the same way)."""
    server = StatusServer(roots=[str(logs)])
    url = await server.start("127.0.0.1", 0)
    assert server.runner is not None
    cache = server.runner.app[VIEW_CACHE]
    try:
        async with aiohttp.ClientSession() as session:
            tasks = [asyncio.ensure_future(
                _status(session, f"{url}games/{_game(f'long{n}')}/export/mjai"))
                for n in range(2)]
            await until(lambda: cache.building + cache.waiting == 2
                        or any(t.done() for t in tasks), timeout=60)
            both = (cache.building, cache.waiting)
            answers = await asyncio.gather(*tasks)
        assert both == (2, 0)
        assert [status for status, _ in answers] == [200, 200]
    finally:
        await server.stop()


async def test_a_forwarded_address_with_its_port_is_that_client(logs: Path) -> None:
    """A proxy that writes the port it saw (`1.2.3.4:5678`, `[::1]:80`): such a value fell
    back to the proxy's address, so both browsers behind it were one client again and the
    other's short game was a 429 behind the greedy one's exports. Each is its address now."""
    greedy = [{"X-Forwarded-For": f"10.9.9.{n}, 10.0.0.1:{5000 + n}"} for n in range(GREEDY)]
    seen = await _greedy_and_other(logs, True, greedy,
                                   {"X-Forwarded-For": "[::1]:80"}, "127.0.0.2")
    _check_fair(seen)


@pytest.mark.parametrize(("value", "address"), [
    ("1.2.3.4:5678", "1.2.3.4"), ("[::1]:80", "::1"), ("[2001:db8::1]", "2001:db8::1"),
    ("2001:db8::1", "2001:db8::1"), ("1.2.3.4", "1.2.3.4"), ("1.2.3.4:x", None),
    ("[::1]x", None), ("[::1]:", None), ("host:80", None), ("", None), ("unknown", None)])
def test_a_forwarded_value_gives_its_address(value: str, address: str | None) -> None:
    from adapter.serve.status import forwarded_address

    assert forwarded_address(value) == address
